"""A submission's results as a document (admin API) and as a verdict table (people)."""
from typing import Iterable, List, Mapping

from localbackend import languages
from localbackend.store import SubmissionView


def submission_document(view: SubmissionView) -> dict:
    result = view.result if view.done else None
    return {
        'submission_id': view.submission_id,
        'problem_id': view.problem_id,
        'language': view.language,
        'current_job_id': view.current_job_id,
        'injected': view.injected,
        'done': view.done,
        'verdict': result.verdict if result else None,
        'score': result.score if result else None,
        'judge_error': result.judge_error if result else None,
        'tasks': result.report.to_wire()['tasks'] if result else None,
    }


def _language_name(value: object) -> str:
    return languages.DISPLAY_NAMES.get(value, repr(value)) if isinstance(value,
                                                                         int) else repr(value)


def format_submission(document: Mapping) -> str:
    """A verdict table: one row per case with status, time and memory."""
    head = (f'submission {document["submission_id"]}  problem {document["problem_id"]}  '
            f'{_language_name(document["language"])}  ')
    if not document['done']:
        return head + 'pending'
    score = document['score']
    lines = [head + f'{document["verdict"]}' + (f'  score {score}' if score is not None else '')]
    lines.append(
        f'  {"task":>4} {"case":>4}  {"status":<6} {"time ms":>8} {"mem KB":>8} {"exit":>5}')
    for t, cases in enumerate(document['tasks']):
        for c, case in enumerate(cases):
            lines.append(f'  {t:>4} {c:>4}  {case["status"]:<6} {case["execTime"]:>8} '
                         f'{case["memoryUsage"]:>8} {case["exitCode"]:>5}')
    return '\n'.join(lines)


def format_summary(documents: Iterable[Mapping]) -> str:
    """One line per submission."""
    rows: List[str] = [f'{"submission":<24} {"problem":>7} {"lang":<6} {"verdict":<7} {"score":>5}']
    for document in documents:
        verdict = document['verdict'] if document['done'] else 'pending'
        score = document['score'] if document['score'] is not None else '-'
        rows.append(f'{document["submission_id"]:<24} {str(document["problem_id"]):>7} '
                    f'{_language_name(document["language"]):<6} {verdict:<7} {score!s:>5}')
    return '\n'.join(rows)
