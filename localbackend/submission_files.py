"""Submissions kept as files: one folder per submission, a manifest and the source.

`manifest.json`:

    {"problem": 1, "language": "c", "expected": "AC", "score": 100, "note": "…"}

`language` is c, cpp or python (or 0/1/2); the source is `main.c`, `main.cpp`
or `main.py` beside it (`"source": "other.c"` names another file).
`expected` (the overall verdict: AC, or the first case that is not) and
`score` are optional and used by the demo to check the judge.
"""
import dataclasses
import json
import pathlib
from typing import List, Optional, Union

from localbackend import languages
from localbackend.reports import STATUSES


class SubmissionFileError(ValueError):
    pass


@dataclasses.dataclass(frozen=True)
class SubmissionFile:
    name: str
    problem_id: int
    language: int
    source: bytes = dataclasses.field(repr=False)
    expected: Optional[str] = None
    expected_score: Optional[int] = None
    note: str = ''


def load_submission(folder: Union[str, pathlib.Path]) -> SubmissionFile:
    folder = pathlib.Path(folder)
    manifest_path = folder / 'manifest.json'
    try:
        manifest = json.loads(manifest_path.read_text(encoding='utf-8'))
    except (OSError, ValueError) as error:
        raise SubmissionFileError(f'{manifest_path}: {error}') from None
    if not isinstance(manifest, dict):
        raise SubmissionFileError(f'{manifest_path}: must be a JSON object')
    problem_id = manifest.get('problem')
    if isinstance(problem_id, bool) or not isinstance(problem_id, int):
        raise SubmissionFileError(f'{manifest_path}: problem must be an integer')
    try:
        language = languages.parse_language(manifest.get('language'))
    except ValueError as error:
        raise SubmissionFileError(f'{manifest_path}: {error}') from None
    expected = manifest.get('expected')
    if expected is not None and expected not in STATUSES:
        raise SubmissionFileError(f'{manifest_path}: expected must be one of {STATUSES}')
    score = manifest.get('score')
    if score is not None and (isinstance(score, bool) or not isinstance(score, int)):
        raise SubmissionFileError(f'{manifest_path}: score must be an integer')
    source_name = manifest.get('source', languages.SOURCE_NAMES[language])
    if not isinstance(source_name, str) or pathlib.PurePath(source_name).name != source_name:
        raise SubmissionFileError(f'{manifest_path}: source must be a file name in the folder')
    try:
        source = (folder / source_name).read_bytes()
    except OSError as error:
        raise SubmissionFileError(f'{folder / source_name}: {error}') from None
    return SubmissionFile(folder.name, problem_id, language, source, expected, score,
                          str(manifest.get('note', '')))


def load_submissions(root: Union[str, pathlib.Path]) -> List[SubmissionFile]:
    """Every submission folder (one holding `manifest.json`) directly under `root`, by name."""
    root = pathlib.Path(root)
    if not root.is_dir():
        raise SubmissionFileError(f'{root}: not a folder')
    return [
        load_submission(child) for child in sorted(root.iterdir())
        if (child / 'manifest.json').is_file()
    ]
