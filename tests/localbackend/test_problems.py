"""Problem folders, testdata zips, submission folders, and the bundled samples."""
import json
import pathlib
import shutil
import subprocess
import sys

import pytest

from localbackend import Problem, build_zip, load_problem, load_problems
from localbackend.languages import parse_language
from localbackend.problems import ProblemError, TaskSpec
from localbackend.reports import ReportError, parse_report, shape_error
from localbackend.submission_files import SubmissionFileError, load_submission, load_submissions
from localbackend.zips import read_zip

SAMPLES = pathlib.Path(__file__).resolve().parents[2] / 'localbackend' / 'samples'


def write_problem(folder: pathlib.Path, document, files) -> pathlib.Path:
    folder.mkdir(parents=True)
    (folder / 'problem.json').write_text(json.dumps(document))
    for name, data in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return folder


ONE_TASK = {
    'id': 3,
    'tasks': [{
        'taskScore': 100,
        'memoryLimit': 1024,
        'timeLimit': 100,
        'caseCount': 1
    }]
}


def test_a_problem_folder_with_chaos_files(tmp_path):
    folder = write_problem(
        tmp_path / 'p', ONE_TASK, {
            'testdata/0000.in': b'1\n',
            'testdata/0000.out': b'2\n',
            'chaos/lib.h': b'#define X\n',
            'chaos/sub/data.txt': b'd'
        })
    problem = load_problem(folder)
    assert problem.problem_id == 3 and problem.tasks == (TaskSpec(100, 1024, 100, 1), )
    assert read_zip(problem.testdata_zip) == {
        '0000.in': b'1\n',
        '0000.out': b'2\n',
        'chaos/lib.h': b'#define X\n',
        'chaos/sub/data.txt': b'd'
    }


@pytest.mark.parametrize('document, files, message', [
    (ONE_TASK, {
        'testdata/0000.in': b''
    }, 'missing testdata 0000.out'),
    (dict(ONE_TASK, tasks=[dict(ONE_TASK['tasks'][0], taskScore=90)]), {
        'testdata/0000.in': b'',
        'testdata/0000.out': b''
    }, 'sum to 100'),
    (dict(ONE_TASK, tasks=[dict(ONE_TASK['tasks'][0], caseCount='1')]), {}, 'caseCount'),
    (dict(ONE_TASK, id='3'), {}, 'id must be an integer'),
    (dict(ONE_TASK, tasks=[]), {
        'testdata/x': b''
    }, 'at least one task'),
    ([], {}, 'JSON object'),
])
def test_bad_problem_folders_are_refused_with_a_reason(tmp_path, document, files, message):
    folder = write_problem(tmp_path / 'p', document, files)
    with pytest.raises(ProblemError, match=message):
        load_problem(folder)


def test_duplicate_problem_ids_are_refused(tmp_path):
    files = {'testdata/0000.in': b'', 'testdata/0000.out': b''}
    write_problem(tmp_path / 'a', ONE_TASK, files)
    write_problem(tmp_path / 'b', ONE_TASK, files)
    with pytest.raises(ProblemError, match='defined twice'):
        load_problems(tmp_path)


def test_checksum_is_deterministic_and_follows_content():
    problem = Problem.from_cases(1, [[('1', '1')]])
    same = Problem.from_cases(1, [[('1', '1')]])
    assert problem.checksum == same.checksum
    changed = problem.with_files({'0000.out': '2'})
    assert changed.checksum != problem.checksum
    assert problem.with_files({'0000.out': '1'}).checksum == problem.checksum
    assert changed.with_files({'0000.out': None}).issues() == ['missing testdata 0000.out']


def test_from_cases_splits_scores_to_sum_100():
    problem = Problem.from_cases(1, [[('', '')]] * 3, chaos={'a.h': ''})
    assert [t.task_score for t in problem.tasks] == [33, 33, 34]
    assert 'chaos/a.h' in problem.files
    assert problem.validate() is problem


def test_zips_keep_hostile_names():
    data = build_zip({'../up': b'1', '/abs': b'2', 'dir/': b''})
    assert read_zip(data) == {'../up': b'1', '/abs': b'2'}


def test_report_parsing_and_shape():
    report = parse_report({
        'tasks': [[{
            'status': 'RE',
            'exitCode': -11,
            'execTime': 0,
            'memoryUsage': 0,
            'stdout': 'a',
            'stderr': 'b',
            'extra': 1
        }]]
    })
    assert report.shape == (1, ) and report.statuses == ('RE', )
    assert report.tasks[0][0].exit_code == -11
    assert shape_error(report, (1, )) is None
    assert 'expected 2 tasks' in shape_error(report, (1, 1))
    assert 'expected 2 cases' in shape_error(report, (2, ))
    assert shape_error(report, None)
    with pytest.raises(ReportError, match=r'tasks\[0\]\[0\].status'):
        parse_report({'tasks': [[{'status': 'ac'}]]})


@pytest.mark.parametrize('value, expected', [(0, 0), ('c', 0), ('C++', 1), ('cpp', 1),
                                             ('python3', 2), ('2', 2)])
def test_languages(value, expected):
    assert parse_language(value) == expected


@pytest.mark.parametrize('value', [3, -1, True, 'rust', None, 1.0])
def test_unknown_languages(value):
    with pytest.raises(ValueError):
        parse_language(value)


def test_submission_folder_errors(tmp_path):
    folder = tmp_path / 's'
    folder.mkdir()
    (folder / 'manifest.json').write_text('{"problem": 1, "language": "c"}')
    with pytest.raises(SubmissionFileError, match='main.c'):
        load_submission(folder)
    (folder / 'main.c').write_text('int main(){}')
    assert load_submission(folder).expected is None
    (folder / 'manifest.json').write_text('{"problem": 1, "language": "c", "expected": "OK"}')
    with pytest.raises(SubmissionFileError, match='expected'):
        load_submission(folder)
    (folder / 'manifest.json').write_text('{"problem": 1, "language": "c", "source": "../x"}')
    with pytest.raises(SubmissionFileError, match='source'):
        load_submission(folder)


# -------------------------------------------------------------------- samples


def test_sample_problems_load():
    problems = load_problems(SAMPLES / 'problems')
    assert [p.problem_id for p in problems] == [1, 2, 3, 4, 5, 6]
    assert [t.case_count for t in problems[0].tasks] == [2, 2]
    assert any(name.startswith('chaos/') for name in problems[1].files)
    assert 'checker/checker.py' in problems[2].files
    assert {'checker/checker.cpp', 'checker/testlib.h'} <= set(problems[3].files)
    assert all('interactor/interactor.c' in p.files and p.interactive for p in problems[4:])
    assert not any(p.interactive for p in problems[:4])
    assert all(t.time_limit_ms <= 1000 for p in problems for t in p.tasks)


def test_sample_submissions_cover_every_verdict_in_all_languages():
    samples = load_submissions(SAMPLES / 'submissions')
    assert 10 <= len(samples) <= 30
    assert {s.expected for s in samples} == {'AC', 'WA', 'CE', 'RE', 'TLE', 'MLE', 'OLE', 'JE'}
    assert {s.language for s in samples} == {0, 1, 2}
    problem_ids = {p.problem_id for p in load_problems(SAMPLES / 'problems')}
    assert {s.problem_id for s in samples} <= problem_ids
    assert all(s.expected_score is not None for s in samples)


def _run(argv, stdin: bytes, cwd) -> subprocess.CompletedProcess:
    return subprocess.run(argv, input=stdin, cwd=cwd, capture_output=True, timeout=60)


def _verdict_of_quick_sample(sample, problem, workdir: pathlib.Path) -> str:
    """Judge a sample natively; only for samples that are quick and harmless to run."""
    for name, data in problem.files.items():
        if name.startswith('chaos/'):
            (workdir / name[len('chaos/'):]).write_bytes(data)
    source = workdir / ('main.c', 'main.cpp', 'main.py')[sample.language]
    source.write_bytes(sample.source)
    if sample.language == 2:
        compiled = _run([sys.executable, '-m', 'py_compile', source.name], b'', workdir)
        run = [sys.executable, source.name]
    else:
        compiler = ['gcc', '-std=c11'] if sample.language == 0 else ['g++', '-std=c++17']
        compiled = _run(compiler + ['-O2', '-o', 'main', source.name], b'', workdir)
        run = ['./main']
    if compiled.returncode != 0:
        return 'CE'
    checker = _native_checker(problem, workdir)
    statuses = []
    for t, task in enumerate(problem.tasks):
        for c in range(task.case_count):
            done = _run(run, problem.files[f'{t:02d}{c:02d}.in'], workdir)
            expected = problem.files[f'{t:02d}{c:02d}.out']
            if done.returncode != 0:
                statuses.append('RE')
            elif checker is not None:
                statuses.append(checker(problem.files[f'{t:02d}{c:02d}.in'], done.stdout, expected))
            else:
                statuses.append('AC' if done.stdout.split() == expected.split() else 'WA')
    return next((s for s in statuses if s != 'AC'), 'AC')


def _native_checker(problem, workdir: pathlib.Path):
    """The problem's checker built on this host, as a function of (input,
    output, answer) to a verdict by testlib's exit codes; None without one."""
    folder = workdir / 'checker'
    for name, data in problem.files.items():
        if name.startswith('checker/'):
            folder.mkdir(exist_ok=True)
            (folder / name[len('checker/'):]).write_bytes(data)
    if not folder.is_dir():
        return None
    if (folder / 'checker.py').is_file():
        argv = [sys.executable, 'checker.py']
    else:
        assert _run(['g++', '-O2', '-o', 'checker', 'checker.cpp'], b'', folder).returncode == 0
        argv = ['./checker']

    def check(given: bytes, output: bytes, answer: bytes) -> str:
        for name, data in (('in', given), ('got', output), ('ans', answer)):
            (folder / name).write_bytes(data)
        code = _run(argv + ['in', 'got', 'ans'], b'', folder).returncode
        return {0: 'AC', 1: 'WA', 2: 'WA'}.get(code, 'JE')

    return check


QUICK = ('AC', 'WA', 'CE', 'RE')


@pytest.mark.parametrize(
    'sample', [s for s in load_submissions(SAMPLES / 'submissions') if s.expected in QUICK],
    ids=lambda s: s.name)
def test_quick_samples_give_their_expected_verdict_natively(sample, tmp_path):
    if sample.language != 2 and shutil.which('gcc' if sample.language == 0 else 'g++') is None:
        pytest.skip('no C/C++ compiler here')
    problems = {p.problem_id: p for p in load_problems(SAMPLES / 'problems')}
    if problems[sample.problem_id].interactive:
        pytest.skip('interactive: judged in sandboxes only (tests/sandbox, the demo)')
    assert _verdict_of_quick_sample(sample, problems[sample.problem_id],
                                    tmp_path) == sample.expected
