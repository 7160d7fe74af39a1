"""Two jobs of one submission or of one problem: a rejudge while the first job is
in flight, and a testdata fix between two jobs."""
import pytest

from localbackend import Problem
from tests.e2e import programs
from tests.e2e.harness import TIMEOUT

pytestmark = [pytest.mark.e2e, pytest.mark.docker]


def test_rejudge_while_the_first_job_is_in_flight_lands_only_the_current_job(e2e):
    backend = e2e.backend()
    runner = e2e.runner(backend)
    sid = backend.submit(1, 'c', programs.SLOW_AC_C)
    first = backend.submission(sid).current_job_id
    assert runner.wait_for_line(rf'job {first} .*judging started'), runner.log()

    second = backend.rejudge(sid)
    result = backend.wait_result(sid, TIMEOUT)
    stale = backend.events.wait_for('complete', timeout=TIMEOUT, job_id=first)

    assert result.job_id == second and result.verdict == 'AC'
    # Both jobs were judged; the backend answered the stale one 204 and dropped it.
    assert stale.outcome == 'stale_dropped'
    assert [e.outcome
            for e in backend.events.list('complete', submission_id=sid)].count('landed') == 1
    assert backend.events.count('complete', job_id=second) == 1
    assert runner.wait_for_line(rf'reported job {first}: AC 4')
    assert runner.wait_for_line(rf'reported job {second}: AC 4')
    assert backend.events.count('abort') == 0
    assert e2e.stop(runner) == 0


A_PLUS_B_PLUS_1 = b'a, b = map(int, input().split())\nprint(a + b + 1)\n'


def test_a_job_after_a_testdata_fix_is_judged_against_the_new_data(e2e):
    backend = e2e.backend(samples=False)
    backend.add_problem(Problem.from_cases(7, [[('1 2\n', '3\n')]]))
    runner = e2e.runner(backend)
    plain = backend.submit(7, 'python', programs.AC_PYTHON)
    assert backend.wait_result(plain, TIMEOUT).verdict == 'AC'

    # The "fix": the answer is now a + b + 1, on a new input.
    backend.set_testdata(7, {'0000.in': '10 20\n', '0000.out': '31\n'})
    backend.rejudge(plain)
    plus_one = backend.submit(7, 'python', A_PLUS_B_PLUS_1)

    # Judged against the old data these would be AC and WA.
    assert backend.wait_result(plain, TIMEOUT).verdict == 'WA'
    assert backend.wait_result(plus_one, TIMEOUT).verdict == 'AC'
    assert backend.wait_result(plain, 0).report.tasks[0][0].stdout == '30\n'
    assert backend.events.count('testdata', outcome='ok') == 2
    assert e2e.stop(runner) == 0
