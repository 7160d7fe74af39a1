"""A backend that misbehaves and payloads that cannot be judged: every result
lands exactly once, every bad claim ends in one clear abort, the runner lives on."""
import pytest

from localbackend import build_zip
from tests.e2e import programs
from tests.e2e.harness import TIMEOUT

pytestmark = [pytest.mark.e2e, pytest.mark.docker]


def test_5xx_bursts_on_complete_still_land_every_result_exactly_once(e2e):
    # A short lease: the retries outlast it, so only heartbeats keep the claims.
    backend = e2e.backend(lease_ttl_sec=3)
    for status in (503, 502, 500):
        backend.faults.burst('complete', count=1, status=status)
    runner = e2e.runner(backend)
    sids = [
        backend.submit(1, language, programs.AC_PYTHON if language == 'python' else source)
        for language, source in (('python', None), ('c', programs.SLOW_AC_C), ('python', None))
    ]

    results = backend.wait_results(sids, TIMEOUT)

    assert [r.verdict for r in results] == ['AC'] * 3
    for sid in sids:
        assert backend.events.count('complete', outcome='landed', submission_id=sid) == 1
        assert backend.events.count('claim', outcome='ok', submission_id=sid) == 1
    assert backend.events.count('fault') == 3
    assert backend.faults.rules() == []
    assert backend.events.count('reclaim') == 0 and backend.events.count('abort') == 0
    # Every burst was met and retried (by whichever sender thread held a report).
    for status in (503, 502, 500):
        assert runner.wait_for_line(rf'complete jb_\w+ failed \(HTTP {status}\), attempt \d of 6')
    assert e2e.stop(runner) == 0


def test_a_lost_complete_answer_is_not_judged_again(e2e):
    backend = e2e.backend()
    backend.faults.drop('complete', after=True)  # landed, but the 204 never arrives
    runner = e2e.runner(backend)
    sid = backend.submit(1, 'python', programs.AC_PYTHON)

    assert backend.wait_result(sid, TIMEOUT).verdict == 'AC'
    retried = backend.events.wait_for('complete', timeout=TIMEOUT, outcome='not_found')
    assert retried.job_id == backend.submission(sid).current_job_id
    assert backend.events.count('complete', outcome='landed') == 1
    assert backend.events.count('claim', outcome='ok') == 1
    assert runner.wait_for_line(rf'result of {retried.job_id} dropped by the backend \(not_found\)')
    assert e2e.stop(runner) == 0


def _wrong_typed(backend):
    payload = backend.job_payload(1, 'python')
    payload['tasks'] = 'all of them'
    return payload, build_zip({'main.py': programs.AC_PYTHON}), r'tasks: expected a list'


def _not_a_zip(backend):
    return backend.job_payload(1, 'python'), b'this is not a zip', r'not a readable zip file'


def _path_traversal(backend):
    return (backend.job_payload(1, 'python'), build_zip({'../main.py': programs.AC_PYTHON}),
            r"unsafe path '\.\./main\.py'")


def _more_cases_than_testdata(backend):
    payload = backend.job_payload(1, 'python')
    payload['tasks'][0]['caseCount'] = 3  # problem 1 has two cases per task
    return payload, build_zip({'main.py': programs.AC_PYTHON}), r'has no 0002\.in'


@pytest.mark.parametrize('bad',
                         [_wrong_typed, _not_a_zip, _path_traversal, _more_cases_than_testdata])
def test_a_malformed_payload_is_aborted_as_prep_failed_and_the_next_job_is_judged(e2e, bad):
    # One attempt: the first prep_failed turns the poison job into a Judge Error.
    backend = e2e.backend(max_attempts=1)
    payload, code_zip, why = bad(backend)
    poison = backend.inject_job(payload, code_zip=code_zip)
    runner = e2e.runner(backend)
    good = backend.submit(1, 'python', programs.AC_PYTHON)

    assert backend.wait_result(good, TIMEOUT).verdict == 'AC'
    abort = backend.events.wait_for('abort', timeout=TIMEOUT, job_id=poison)
    assert (abort.reason, abort.outcome) == ('prep_failed', 'converged')
    assert backend.events.count('abort') == 1
    assert backend.events.count('judge_error', job_id=poison) == 1
    claims = [e.job_id for e in backend.events.list('claim', outcome='ok')]
    assert claims == [poison, backend.submission(good).current_job_id]
    assert runner.wait_for_line(rf'{poison}.*({why})'), runner.log()
    assert e2e.stop(runner) == 0


def test_a_payload_that_is_not_json_is_left_to_lease_expiry_and_the_next_job_is_judged(e2e):
    backend = e2e.backend(lease_ttl_sec=3, max_attempts=1)
    backend.inject_job(b'{"job_id": "jb_half')
    runner = e2e.runner(backend)
    good = backend.submit(1, 'python', programs.AC_PYTHON)

    assert backend.wait_result(good, TIMEOUT).verdict == 'AC'
    expired = backend.events.wait_for('reclaim', timeout=TIMEOUT)
    assert expired.outcome == 'converged'  # its only attempt was spent: a Judge Error
    assert backend.events.count('abort') == 0
    assert runner.wait_for_line(r'next-job failed: .*JSON'), runner.log()
    assert 'jb_half' not in runner.log()
    assert e2e.stop(runner) == 0


def test_a_poison_job_claimed_again_by_the_same_runner_converges_to_je_after_three_attempts(e2e):
    backend = e2e.backend()  # three attempts
    payload, code_zip, _ = _wrong_typed(backend)
    poison = backend.inject_job(payload, code_zip=code_zip)
    runner = e2e.runner(backend)
    runner_id = runner.runner_id(backend)

    backend.events.wait_for('judge_error', timeout=TIMEOUT, job_id=poison)
    good = backend.submit(1, 'python', programs.AC_PYTHON)
    assert backend.wait_result(good, TIMEOUT).verdict == 'AC'

    # After each 202 the same runner claimed the same job_id again at once.
    claims = backend.events.list('claim', outcome='ok', job_id=poison)
    assert [(c.runner_id, c.attempts) for c in claims] == [(runner_id, 1), (runner_id, 2),
                                                           (runner_id, 3)]
    aborts = backend.events.list('abort', job_id=poison)
    assert [(a.reason, a.outcome)
            for a in aborts] == [('prep_failed', 'requeued')] * 2 + [('prep_failed', 'converged')]
    # Each claim was released exactly once: nothing is left held at the drain.
    assert e2e.stop(runner) == 0, runner.log()
    assert 'drain: done' in runner.log()
