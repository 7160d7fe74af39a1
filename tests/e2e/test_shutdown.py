"""Stopping a runner: SIGTERM drains (in-flight jobs finish, unstarted ones go back
without spending an attempt); SIGKILL leaves its claims to lease expiry, and the
next runner judges them once."""
import pathlib
import re
import signal

import pytest

from tests.e2e import programs
from tests.e2e.harness import TIMEOUT

pytestmark = [pytest.mark.e2e, pytest.mark.docker]


def job_of(backend, sid):
    return backend.submission(sid).current_job_id


def started(job_id):
    return rf'job {job_id} \(submission \w+\): judging started'


def test_sigterm_finishes_in_flight_jobs_and_hands_back_unstarted_ones(e2e):
    backend = e2e.backend()  # max_concurrent_jobs 4
    # A slow backend: the drain must wait for its reports, not exit before them.
    backend.faults.latency('abort', seconds=1, count=3)
    backend.faults.latency('complete', seconds=1, count=1)
    # One sandbox: the slow job (4 cases of 1 s) keeps the others from starting
    # (their code comes late, so their steps queue behind its cases).
    runner = e2e.runner(backend, MAX_CONTAINER_NUMBER='1')
    slow = backend.submit(1, 'c', programs.SLOW_AC_C)
    assert runner.wait_for_line(started(job_of(backend, slow))), runner.log()
    backend.faults.latency('code', seconds=1, count=3)
    waiting = [backend.submit(1, 'python', programs.AC_PYTHON) for _ in range(3)]
    for sid in waiting:
        # The runner's own word: the backend's claim event only says the
        # answer was sent, and a stop cuts an answer still on the wire.
        job_id = backend.events.wait_for('claim', timeout=TIMEOUT, outcome='ok',
                                         submission_id=sid).job_id
        assert runner.wait_for_line(rf'claimed job {job_id} '), runner.log()
    runner_id = runner.runner_id(backend)

    assert e2e.stop(runner, signal.SIGTERM) == 0, runner.log()

    assert backend.wait_result(slow, 0).verdict == 'AC'
    assert backend.events.count('complete', outcome='landed', submission_id=slow) == 1
    assert backend.events.count('abort', submission_id=slow) == 0
    for sid in waiting:
        job_id = job_of(backend, sid)
        assert not re.search(started(job_id), runner.log())
        aborts = backend.events.list('abort', job_id=job_id)
        assert [(a.reason, a.outcome) for a in aborts] == [('drain', 'requeued')]
        assert backend.events.count('complete', job_id=job_id) == 0
        # The shutdown spent none of the submission's attempts.
        assert backend.store.job_attempts(job_id) == 0
    assert 'drain: done' in runner.log()
    held = {view.runner_id: view.held_job_ids for view in backend.runners()}
    assert held[runner_id] == ()

    # Nothing was lost: the next runner judges them, each on its first attempt.
    successor = e2e.runner(backend)
    for result in backend.wait_results(waiting, TIMEOUT):
        assert result.verdict == 'AC'
    for sid in waiting:
        claims = backend.events.list('claim', outcome='ok', submission_id=sid)
        assert [c.attempts for c in claims] == [1, 1]
        assert backend.events.count('complete', outcome='landed', submission_id=sid) == 1
    assert e2e.stop(successor) == 0


def test_after_sigkill_the_lease_expires_and_the_next_runner_judges_the_job_once(e2e, tmp_path):
    backend = e2e.backend(lease_ttl_sec=3)  # heartbeats every 0.5 s keep it renewed
    host = tmp_path / 'host'
    first = e2e.runner(backend, data_dir=host)
    sid = backend.submit(1, 'c', programs.SLOW_AC_C)
    job_id = job_of(backend, sid)
    assert first.wait_for_line(started(job_id)), first.log()
    first_id = first.runner_id(backend)
    first_home = first.sandbox_home
    first.kill()  # SIGKILL: no drain, no report, its sandbox container left running
    left = [p for p in (host / 'submissions').glob('*/jb_*')]
    assert left and e2e.containers(first), 'the kill should leave a job folder and a container'

    # The same host restarted: a new identity, the same folders.
    second = e2e.runner(backend, data_dir=host)
    assert second.wait_for_line(r'removed the job folders a runner left'), second.log()
    assert second.wait_for_line(
        r'removed \d+ sandbox container\(s\) and 1 folder\(s\) of runners'), (second.log())
    assert not any(p.exists() for p in left)
    assert e2e.containers(first) == [] and not pathlib.Path(first_home).exists()
    result = backend.wait_result(sid, TIMEOUT)
    second_id = second.runner_id(backend)

    assert result.verdict == 'AC'
    claims = backend.events.list('claim', outcome='ok', job_id=job_id)
    assert [(c.runner_id, c.attempts) for c in claims] == [(first_id, 1), (second_id, 2)]
    reclaim = backend.events.wait_for('reclaim', timeout=0, job_id=job_id)
    assert (reclaim.runner_id, reclaim.outcome) == (first_id, 'requeued')
    assert claims[0].seq < reclaim.seq < claims[1].seq
    completes = backend.events.list('complete', job_id=job_id)
    assert [(c.runner_id, c.outcome) for c in completes] == [(second_id, 'landed')]
    assert backend.events.count('abort') == 0
    # The killed runner's container was removed when the host's runner came back.
    assert e2e.stop(second) == 0


def test_a_job_submitted_after_an_idle_runner_stopped_is_not_claimed_by_it(e2e):
    # The runner hangs up its held long poll when it stops, and the backend
    # leases nothing to a caller that has gone (had it leased the job, the
    # runner would have read it and handed it back as drain): otherwise the
    # job would wait for lease expiry and lose an attempt.
    backend = e2e.backend(lease_ttl_sec=3)
    idle = e2e.runner(backend, LONG_POLL_SEC='25')
    idle_id = idle.runner_id(backend)
    backend.events.wait_for('long_poll', timeout=TIMEOUT, runner_id=idle_id)
    assert e2e.stop(idle) == 0, idle.log()

    sid = backend.submit(1, 'python', programs.AC_PYTHON)
    successor = e2e.runner(backend)
    assert backend.wait_result(sid, TIMEOUT).verdict == 'AC'
    successor_id = successor.runner_id(backend)
    assert e2e.stop(successor) == 0

    # No lease expiry, no attempt spent: the stopped runner never held the job
    # (or handed it back as drain before it exited).
    assert backend.events.count('reclaim', submission_id=sid) == 0
    landed = backend.events.wait_for('claim', timeout=0, runner_id=successor_id, outcome='ok')
    assert (landed.submission_id, landed.attempts) == (sid, 1)


def test_a_drain_out_of_budget_exits_3_and_the_job_is_judged_after_lease_expiry(e2e):
    backend = e2e.backend(lease_ttl_sec=3)
    hurried = e2e.runner(backend, DRAIN_TIMEOUT_SEC='1')
    sid = backend.submit(1, 'c', programs.SLOW_AC_C)  # about 4 s of judging
    job_id = job_of(backend, sid)
    assert hurried.wait_for_line(started(job_id)), hurried.log()

    # Its busy sandbox container is removed too (checked by stop).
    assert e2e.stop(hurried) == 3, hurried.log()
    assert hurried.wait_for_line(r'drain: .*left to lease expiry'), hurried.log()

    successor = e2e.runner(backend)
    assert backend.wait_result(sid, TIMEOUT).verdict == 'AC'
    assert backend.events.count('reclaim', job_id=job_id, outcome='requeued') == 1
    assert backend.events.count('complete', outcome='landed', job_id=job_id) == 1
    assert e2e.stop(successor) == 0


def test_a_revoked_runner_exits_1_at_once_and_its_job_is_judged_by_another(e2e, tmp_path):
    backend = e2e.backend(lease_ttl_sec=3)
    host = tmp_path / 'host'
    revoked = e2e.runner(backend, data_dir=host)
    sid = backend.submit(1, 'c', programs.SLOW_AC_C)
    job_id = job_of(backend, sid)
    assert revoked.wait_for_line(started(job_id)), revoked.log()

    backend.revoke(revoked.runner_id(backend))
    assert revoked.wait(TIMEOUT) == 1, revoked.log()
    assert 'drain: started' not in revoked.log()

    # Its busy sandboxes are left to end with their run; the host's next
    # runner removes them when it starts (checked by stop).
    successor = e2e.runner(backend, data_dir=host)
    assert backend.wait_result(sid, TIMEOUT).verdict == 'AC'
    # The revoked runner may have tried to report before it noticed: refused.
    completes = backend.events.list('complete', job_id=job_id)
    assert {c.outcome for c in completes} <= {'unauthorized', 'landed'}
    landed = [c for c in completes if c.outcome == 'landed']
    assert [c.runner_id for c in landed] == [successor.runner_id(backend)]
    assert e2e.stop(successor) == 0


def test_a_second_runner_on_the_same_data_dir_leaves_the_first_ones_sandboxes_alone(e2e, tmp_path):
    # Several runners on one host share the testdata cache (the reason it has a
    # cross-process lock); `docker compose up --scale runner=2` with the
    # shipped compose file gives them one DATA_DIR.
    backend = e2e.backend()
    host = tmp_path / 'host'
    first = e2e.runner(backend, data_dir=host)
    sid = backend.submit(1, 'c', programs.SLOW_AC_C)
    assert first.wait_for_line(started(job_of(backend, sid))), first.log()

    second = e2e.runner(backend, data_dir=host)
    assert second.wait_for_line(r'running: up to'), second.log()

    assert backend.wait_result(sid, TIMEOUT).statuses == ('AC', ) * 4
    assert e2e.stop(second) == 0, second.log()
    assert e2e.stop(first) == 0, first.log()
