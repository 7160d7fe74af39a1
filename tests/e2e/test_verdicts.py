"""Every verdict a submission can earn, in C, C++ and Python, judged end to end:
a real runner process, the local backend over HTTP, Docker sandboxes."""
import pytest

from tests.e2e import programs
from tests.e2e.harness import TIMEOUT, sample_source

pytestmark = [pytest.mark.e2e, pytest.mark.docker]

# (language, expected verdict): (problem, source, expected score)
MATRIX = {
    ('c', 'AC'): (1, sample_source('01-c-ac'), 100),
    ('c', 'WA'): (1, sample_source('02-c-wa-int-overflow'), 40),
    ('c', 'CE'): (1, sample_source('03-c-ce'), 0),
    ('c', 'RE'): (1, sample_source('06-c-re-null-pointer'), 0),
    ('c', 'TLE'): (1, sample_source('04-c-tle'), 0),
    ('c', 'MLE'): (1, programs.C_MLE, 0),
    ('c', 'OLE'): (1, sample_source('05-c-ole'), 0),
    ('cpp', 'AC'): (2, sample_source('07-cpp-ac-chaos-header'), 100),
    ('cpp', 'WA'): (1, programs.CPP_WA, 0),
    ('cpp', 'CE'): (1, programs.CPP_CE, 0),
    ('cpp', 'RE'): (1, programs.CPP_RE, 0),
    ('cpp', 'TLE'): (1, programs.CPP_TLE, 0),
    ('cpp', 'MLE'): (1, sample_source('08-cpp-mle'), 0),
    ('cpp', 'OLE'): (1, programs.CPP_OLE, 0),
    ('python', 'AC'): (1, sample_source('09-python-ac'), 100),
    ('python', 'WA'): (1, sample_source('11-python-wa'), 0),
    ('python', 'CE'): (1, sample_source('12-python-ce'), 0),
    ('python', 'RE'): (1, sample_source('13-python-re'), 0),
    ('python', 'TLE'): (1, programs.PYTHON_TLE, 0),
    ('python', 'MLE'): (1, sample_source('14-python-mle'), 0),
    ('python', 'OLE'): (1, programs.PYTHON_OLE, 0),
}


def test_every_verdict_in_every_language(e2e):
    backend = e2e.backend()
    runner = e2e.runner(backend, MAX_CONTAINER_NUMBER='4')
    submitted = {
        key: backend.submit(problem, key[0], source)
        for key, (problem, source, _) in MATRIX.items()
    }
    results = dict(zip(submitted, backend.wait_results(submitted.values(), TIMEOUT * 3)))

    got = {key: (result.verdict, result.score) for key, result in results.items()}
    assert got == {key: (key[1], score) for key, (_, _, score) in MATRIX.items()}, runner.log()
    for key, sid in submitted.items():
        assert backend.events.count('complete', outcome='landed', submission_id=sid) == 1, key
    assert backend.events.count('abort') == 0, runner.log()
    # What a student reads beside the verdict.
    for language in ('c', 'cpp', 'python'):
        compile_error = results[(language, 'CE')].report.tasks[0][0]
        assert compile_error.stderr.strip(), f'{language}: CE without the compiler message'
    null_pointer = results[('c', 'RE')].report.tasks[0][0]
    assert null_pointer.exit_code == -11  # SIGSEGV, reported as -N
    assert results[('python', 'RE')].report.tasks[0][0].exit_code == 1
    assert 'ValueError' in results[('python', 'RE')].report.tasks[0][0].stderr
    flooded = results[('python', 'OLE')].report.tasks[0][0]
    assert 0 < len(flooded.stdout.encode()) <= 8192  # REPORT_OUTPUT_LIMIT keeps reports small
    wrong = results[('c', 'WA')].report.tasks[1][0]
    assert wrong.status == 'WA' and wrong.stdout.strip()  # the overflowed int, as printed
    assert e2e.stop(runner) == 0
