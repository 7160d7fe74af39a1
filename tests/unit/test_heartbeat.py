import threading

import pytest

from runner.active_jobs import ActiveJobs
from runner.backend.noj.client import Answer, Outcome
from runner.backend.noj.heartbeat import Heartbeat
from tests.unit.fakes import FakeTime

OK = Answer(Outcome.ACCEPTED, 'HTTP 204')
REFUSED = Answer(Outcome.UNAUTHORIZED, 'HTTP 401')
FAILED = Answer(Outcome.FAILED, 'HTTP 503')
UNANSWERED = Answer(Outcome.FAILED, 'ConnectTimeout', answered=False)
JOIN_GUARD_SEC = 60  # only guards against a hang; nothing asserts on time


class FakeClient:
    """Answers from a script; each call takes `duration` fake seconds.
    When the script runs out, it stops the heartbeat."""

    def __init__(self, time, answers, duration=0.0):
        self.time = time
        self.answers = list(answers)
        self.duration = duration
        self.sent = []
        self.heartbeat_obj = None

    def heartbeat(self, job_ids):
        self.sent.append(job_ids)
        self.time.now += self.duration
        if len(self.answers) == 1:
            self.heartbeat_obj.stop()
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


def run(answers, duration=0.0, interval=15, tracker=None):
    time = FakeTime(now=100.0, advance=True)
    client = FakeClient(time, answers, duration)
    lost = []
    heartbeat = Heartbeat(client,
                          tracker or ActiveJobs(),
                          interval,
                          lambda: lost.append(True),
                          clock=time.clock,
                          wait=time.wait)
    client.heartbeat_obj = heartbeat
    heartbeat.start()
    assert heartbeat.join(JOIN_GUARD_SEC)
    return client, time, lost


def test_beats_on_a_fixed_cadence_despite_slow_calls():
    client, time, lost = run([OK] * 4, duration=4, interval=15)
    assert len(client.sent) == 4
    assert time.waits == [0, 11, 11, 11]


def test_a_call_slower_than_an_interval_is_followed_by_a_beat_at_once():
    time = FakeTime(now=100.0, advance=True)
    durations = iter([20, 1, 1])
    client = FakeClient(time, [OK, OK, OK])
    client.heartbeat = _timed(client.heartbeat, time, durations)
    heartbeat = Heartbeat(client, ActiveJobs(), 15, lambda: None, clock=time.clock, wait=time.wait)
    client.heartbeat_obj = heartbeat
    heartbeat.start()
    assert heartbeat.join(JOIN_GUARD_SEC)
    assert time.waits == [0, 0, 14]


def _timed(call, time, durations):

    def timed(job_ids):
        time.now += next(durations)
        return call(job_ids)

    return timed


def test_sends_distinct_ids_and_beats_when_idle():
    tracker = ActiveJobs()
    tracker.add('jb_2')
    tracker.add('jb_1')
    tracker.add('jb_1')
    client, _, _ = run([OK], tracker=tracker)
    assert client.sent == [['jb_1', 'jb_2']]
    client, _, _ = run([OK])
    assert client.sent == [[]]


def test_two_consecutive_401_lose_the_identity():
    client, _, lost = run([OK, REFUSED, REFUSED, OK, OK])
    assert lost == [True]
    assert len(client.sent) == 3  # ends at once: no further beat


def test_any_other_answer_resets_the_401_count():
    client, _, lost = run([REFUSED, OK, REFUSED, FAILED, REFUSED, OK])
    assert lost == []
    assert len(client.sent) == 6


@pytest.mark.parametrize('between', [UNANSWERED, RuntimeError('boom')])
def test_no_answer_between_two_401_does_not_reset_the_count(between):
    # Protocol §2: any other *answer* resets it; a network failure (or a
    # local error) says nothing about the identity.
    client, _, lost = run([REFUSED, between, REFUSED, OK])
    assert lost == [True]
    assert len(client.sent) == 3


def test_failures_do_not_stop_the_beat():
    client, _, lost = run([FAILED, RuntimeError('boom'), FAILED, OK])
    assert lost == []
    assert len(client.sent) == 4


def test_stop_wakes_the_wait():
    """Real waiting: a stop ends an hour-long wait between beats."""
    beaten = threading.Event()

    class Client:

        def heartbeat(self, job_ids):
            beaten.set()
            return OK

    heartbeat = Heartbeat(Client(), ActiveJobs(), 3600, lambda: None)
    heartbeat.start()
    beaten.wait(JOIN_GUARD_SEC)
    heartbeat.stop()
    assert heartbeat.join(JOIN_GUARD_SEC)


def test_thread_is_a_daemon():
    """Identity loss exits the process at once: no heartbeat may hold it."""
    heartbeat = Heartbeat(None, ActiveJobs(), 15, lambda: None)
    assert heartbeat._thread.daemon
    assert heartbeat.join(0)  # never started: nothing to wait for
