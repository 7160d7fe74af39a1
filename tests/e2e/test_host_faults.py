"""Faults of the judge host are never a student's verdict: the jobs go back to
the queue without spending an attempt, the runner says why and stops
claiming, and it claims again once the host is healthy."""
import pytest

from localbackend.problems import Problem
from tests.e2e import programs
from tests.e2e.harness import FAST_CONFIG, TIMEOUT
from tests.e2e.socket_proxy import SocketProxy

pytestmark = [pytest.mark.e2e, pytest.mark.docker]

SUBMISSIONS = 6


def _attempts_spent(backend, sids):
    """Attempts the backend still counts against each submission's job."""
    spent = {}
    for sid in sids:
        job_id = backend.submission(sid).current_job_id
        claims = backend.events.list('claim', outcome='ok', job_id=job_id)
        aborts = backend.events.list('abort', job_id=job_id)
        last = max(claims + aborts, key=lambda e: e.seq)
        spent[sid] = last.attempts
    return spent


def test_an_engine_outage_mid_batch_costs_no_verdict_and_no_attempt(e2e, tmp_path):
    proxy = SocketProxy(tmp_path / 'docker.sock')
    backend = e2e.backend()
    runner = e2e.runner(backend, DOCKER_URL=proxy.url)
    assert runner.wait_for_line(r'running: '), runner.log()
    try:
        proxy.cut()
        sids = [backend.submit(1, 'python', programs.AC_PYTHON) for _ in range(SUBMISSIONS)]
        assert runner.wait_for_line(r'host fault \(engine\), claiming nothing'), runner.log()
        backend.events.wait_for('abort', timeout=TIMEOUT, reason='drain')
        proxy.restore()
        assert runner.wait_for_line(r'host healthy again'), runner.log()
        results = backend.wait_results(sids, TIMEOUT * 2)
    finally:
        proxy.restore()
    assert [r.verdict for r in results] == ['AC'] * SUBMISSIONS, runner.log()
    assert backend.events.count('abort', reason='prep_failed') == 0
    assert backend.events.count('abort', reason='rejected') == 0
    assert set(_attempts_spent(backend, sids).values()) == {1}  # the final claim only
    assert len([l for l in runner.lines if 'host fault (engine)' in l]) == 1
    assert e2e.stop(runner) == 0
    proxy.close()


def test_a_wrong_sandbox_token_pauses_the_runner_and_judges_nothing(e2e):
    backend = e2e.backend()
    wrong = e2e.runner(backend, SANDBOX_TOKEN='not-the-token')
    sids = [backend.submit(1, 'python', programs.AC_PYTHON) for _ in range(2)]
    assert wrong.wait_for_line(
        r'host fault \(token\), claiming nothing.*SANDBOX_TOKEN'), wrong.log()
    backend.events.wait_for('abort', timeout=TIMEOUT, reason='drain')
    assert backend.events.count('complete') == 0
    assert e2e.stop(wrong) == 0
    claims = backend.events.count('claim', outcome='ok')
    # Paused after the first refusal: what was claimed before the fault was
    # known (preparations run at once, up to the capacity) and a poll then
    # in flight went back unjudged, as drain, spending no attempt.
    assert claims <= FAST_CONFIG['max_concurrent_jobs'] + 1
    assert backend.events.count('abort', reason='drain') == claims
    assert len([l for l in wrong.lines if 'host fault (token)' in l]) == 1

    right = e2e.runner(backend)
    results = backend.wait_results(sids, TIMEOUT)
    assert [r.verdict for r in results] == ['AC', 'AC']
    assert set(_attempts_spent(backend, sids).values()) == {1}
    assert e2e.stop(right) == 0


def test_a_memory_limit_no_sandbox_can_hold_never_stops_the_host(e2e):
    backend = e2e.backend()
    backend.add_problem(Problem.from_cases(60, [[('1 2\n', '3\n')]], memory_limit_kb=2 << 20))
    runner = e2e.runner(backend)  # SANDBOX_MEMORY_MB=1536: 2 GiB does not fit
    big = backend.submit(60, 'python', programs.AC_PYTHON)
    small = backend.submit(1, 'python', programs.AC_PYTHON)

    assert backend.wait_result(small, TIMEOUT).verdict == 'AC'  # the host judges the rest
    assert backend.wait_result(big, TIMEOUT).verdict == 'JE'  # no runner could take it
    job_id = backend.submission(big).current_job_id
    reasons = [a.reason for a in backend.events.list('abort', job_id=job_id)]
    assert reasons[:2] == ['drain', 'drain'] and set(reasons[2:]) == {'prep_failed'}
    assert runner.wait_for_line(r'SANDBOX_MEMORY_MB=1536 cannot hold a memoryLimit of 2097152 KB')
    assert 'host fault' not in runner.log()
    assert e2e.stop(runner) == 0
