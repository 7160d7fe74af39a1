"""`main.py` as a real process against a stub backend over HTTP, stopped with
real signals. Each test waits for evidence that the process is where the
test's name says before acting (a request seen, a log line), never for time."""
import threading

import pytest

from tests.process.stub_backend import reply

pytestmark = pytest.mark.docker

SLEEPER = b'#include <unistd.h>\nint main(void) { sleep(2); return 0; }\n'


def test_sigterm_while_a_claim_is_in_prep_returns_it_as_drain(backend, start_runner):
    in_prep, release = threading.Event(), threading.Event()

    def held_checksum(call):
        in_prep.set()
        release.wait(60)
        return reply(500)

    backend.serve_defaults()
    backend.add_job('jb_prep')
    backend.route('GET', r'^/problem/1/checksum', held_checksum)
    runner = start_runner(backend.url)
    assert in_prep.wait(60), runner.log()  # the runner is inside prep, attempt 1
    runner.signal()
    assert runner.wait_for_line('SIGTERM received'), runner.log()
    release.set()  # the attempt fails after the stop: the claim goes back as drain
    assert runner.wait(60) == 0, runner.log()
    aborts = backend.matching('PUT', r'/jobs/jb_prep/abort$')
    assert [a.json() for a in aborts] == [{'reason': 'drain'}]
    assert backend.matching('PUT', r'/complete$') == []


def test_a_second_sigterm_does_not_skip_reporting_an_in_flight_job(backend, start_runner):
    backend.serve_defaults()
    backend.add_job('jb_busy', time_limit_ms=3000, source=SLEEPER)
    runner = start_runner(backend.url)
    assert runner.wait_for_line(r'job jb_busy .*judging started'), runner.log()
    runner.signal()
    assert runner.wait_for_line('SIGTERM received: stopping'), runner.log()
    runner.signal()
    assert runner.wait_for_line('received again'), runner.log()
    assert runner.wait(90) == 0, runner.log()
    completes = backend.matching('PUT', r'/jobs/jb_busy/complete$')
    assert len(completes) == 1
    assert completes[0].json()['tasks'][0][0]['status'] == 'WA'  # printed nothing
    assert backend.matching('PUT', r'/abort$') == []


def test_identity_loss_exits_1_without_a_drain(backend, start_runner):
    backend.serve_defaults(heartbeat_sec=0.2)
    backend.route('POST', r'/heartbeat$', lambda c: reply(401))
    runner = start_runner(backend.url)
    assert runner.wait(60) == 1, runner.log()
    assert len(backend.matching('POST', r'/heartbeat$')) >= 2
    assert 'drain: started' not in runner.log()


def test_registration_refused_exits_1(backend, start_runner):
    backend.route('POST', r'^/runners/register$', lambda c: reply(401))
    runner = start_runner(backend.url)
    assert runner.wait(60) == 1, runner.log()
    assert 'refused' in runner.log()


def test_sigterm_during_registration_exits_0_and_claims_nothing(backend, start_runner):
    backend.route('POST', r'^/runners/register$', lambda c: reply(503))
    runner = start_runner(backend.url)
    assert backend.wait_for(lambda calls: any('register' in c.path for c in calls))
    runner.signal()
    assert runner.wait(30) == 0, runner.log()
    assert backend.matching('GET', r'next-job') == []


def test_sigterm_while_the_registration_waits_for_its_answer_exits_0_at_once(backend, start_runner):
    # A backend that took the request and does not answer: the stop cuts the
    # request short instead of waiting out its 30 s read timeout.
    asked, release = threading.Event(), threading.Event()

    def held(call):
        asked.set()
        release.wait(60)
        return reply(503)

    backend.route('POST', r'^/runners/register$', held)
    runner = start_runner(backend.url)
    try:
        assert asked.wait(60), runner.log()
        runner.signal()
        assert runner.wait(20) == 0, runner.log()
    finally:
        release.set()
    assert backend.matching('GET', r'next-job') == []


@pytest.mark.parametrize('env, setting', [
    ({
        'RUNNER_REGISTRATION_TOKEN': ''
    }, 'RUNNER_REGISTRATION_TOKEN'),
    ({
        'MAX_CONTAINER_NUMBER': 'many'
    }, 'MAX_CONTAINER_NUMBER'),
    ({
        'DRAIN_TIMEOUT_SEC': '-1'
    }, 'DRAIN_TIMEOUT_SEC'),
    ({
        'BACKEND_URL': 'ftp://x'
    }, 'BACKEND_URL'),
    ({
        'METRICS_PORT': '70000'
    }, 'METRICS_PORT'),
])
def test_bad_configuration_exits_2_naming_the_setting(backend, start_runner, env, setting):
    runner = start_runner(backend.url, **env)
    assert runner.wait(30) == 2
    lines = [line for line in runner.lines if line.strip()]
    assert len(lines) == 1 and setting in lines[0], lines
    assert 'regtok' not in lines[0]
    assert backend.calls == []


def test_a_job_a_backend_leases_to_a_long_poll_after_the_sigterm_goes_back_as_drain(
        backend, start_runner):
    # The contract lets a backend hold a long poll, unaware that its caller
    # hung up, and lease a job to it until the wait is over: the stopping
    # runner still reads that answer and hands the job back at once, instead
    # of leaving it to lease expiry (an attempt spent).
    polling, lease = threading.Event(), threading.Event()
    backend.serve_defaults()
    backend.add_job('jb_late')
    job = backend._pending.pop()

    def long_poll(call):
        if 'wait=' not in call.path:
            return reply(204)
        polling.set()
        assert lease.wait(60)  # work arrives, long after the stop
        return reply(200, job)

    backend.route('GET', r'/next-job', long_poll)
    runner = start_runner(backend.url, LONG_POLL_SEC='25')
    try:
        assert polling.wait(60), runner.log()
        runner.signal()
        # Seconds after the stop: the drain went on without the poller.
        assert runner.wait_for_line('poller is still busy'), runner.log()
    finally:
        lease.set()
    assert runner.wait(60) == 0, runner.log()
    aborts = backend.matching('PUT', r'/jobs/jb_late/abort$')
    assert [a.json() for a in aborts] == [{'reason': 'drain'}]


def test_an_idle_runner_hangs_up_its_long_poll_and_exits_once_it_is_answered(backend, start_runner):
    polling, answer = threading.Event(), threading.Event()

    def long_poll(call):
        if 'wait=' in call.path:
            polling.set()
            assert answer.wait(60)  # a backend holding the request until its wait is over
        return reply(204)

    backend.serve_defaults()
    backend.route('GET', r'/next-job', long_poll)
    runner = start_runner(backend.url, LONG_POLL_SEC='25')
    try:
        assert polling.wait(60), runner.log()
        runner.signal()
        assert runner.wait_for_line('SIGTERM received'), runner.log()
    finally:
        answer.set()
    assert runner.wait(60) == 0, runner.log()
    assert backend.matching('PUT', r'/abort$') == []


def test_identity_loss_during_a_drain_exits_1_at_once(backend, start_runner):
    refused = threading.Event()
    backend.serve_defaults(heartbeat_sec=0.2)
    backend.route('POST', r'/heartbeat$', lambda c: reply(401 if refused.is_set() else 204))
    backend.add_job('jb_long',
                    time_limit_ms=3000,
                    source=SLEEPER.replace(b'sleep(2)', b'sleep(100)'))
    runner = start_runner(backend.url)
    assert runner.wait_for_line(r'job jb_long .*judging started'), runner.log()
    runner.signal()
    assert runner.wait_for_line('drain: started'), runner.log()
    refused.set()
    assert runner.wait(60) == 1, runner.log()
    assert 'during the drain' in runner.log()
    assert backend.matching('PUT', r'/complete$') == []
