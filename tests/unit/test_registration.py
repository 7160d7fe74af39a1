import threading

import pytest

from runner.backend.noj.client import ProtocolError, TransportError, Unauthorized, UnexpectedStatus
from runner.backend.noj.inbound import Registration, RunnerConfig, RunnerIdentity
from runner.backend.noj.registration import RegistrationRefused, register
from tests.unit.fakes import NoJitter

REGISTRATION = Registration(RunnerIdentity('rn_1', 'rk_secret'), RunnerConfig())


class FakeClient:

    def __init__(self, answers):
        self.answers = list(answers)
        self.calls = []

    def register(self, token, name, version):
        self.calls.append((token, name))
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


class FakeWait:
    """Records each requested delay; `stop_after` sets the stop event during that wait."""

    def __init__(self, stop_after=None):
        self.delays = []
        self.stop_after = stop_after

    def __call__(self, stop, seconds):
        self.delays.append(seconds)
        if self.stop_after is not None and len(self.delays) >= self.stop_after:
            stop.set()
        return stop.is_set()


class FullJitter:

    def random(self):
        return 1.0


def test_registers_at_once():
    client = FakeClient([REGISTRATION])
    wait = FakeWait()
    assert register(client, 'reg', 'judge-7', threading.Event(), wait=wait) == REGISTRATION
    assert client.calls == [('reg', 'judge-7')]
    assert wait.delays == []


def test_backoff_schedule_then_30_forever():
    failures = [TransportError('down'), UnexpectedStatus('POST', 503), ProtocolError('bad')] * 3
    client = FakeClient(failures + [REGISTRATION])
    wait = FakeWait()
    assert register(client, 'reg', 'x', threading.Event(), wait=wait,
                    rng=NoJitter()) == REGISTRATION
    assert wait.delays == [1, 2, 4, 8, 16, 30, 30, 30, 30]


def test_backoff_has_jitter():
    client = FakeClient([TransportError('down'), REGISTRATION])
    wait = FakeWait()
    register(client, 'reg', 'x', threading.Event(), wait=wait, rng=FullJitter())
    assert 1 < wait.delays[0] <= 1.2


def test_401_raises_at_once():
    client = FakeClient([TransportError('down'), Unauthorized('401'), REGISTRATION])
    wait = FakeWait()
    with pytest.raises(RegistrationRefused) as caught:
        register(client, 'reg-secret', 'x', threading.Event(), wait=wait, rng=NoJitter())
    assert len(client.calls) == 2
    assert 'reg-secret' not in str(caught.value)


def test_stop_during_backoff_returns_none():
    client = FakeClient([TransportError('down'), REGISTRATION])
    stop = threading.Event()
    assert register(client, 'reg', 'x', stop, wait=FakeWait(stop_after=1)) is None
    assert len(client.calls) == 1  # woken by stop: no further attempt


def test_stopped_before_start_never_calls():
    client = FakeClient([REGISTRATION])
    stop = threading.Event()
    stop.set()
    assert register(client, 'reg', 'x', stop, wait=FakeWait()) is None
    assert client.calls == []


def test_real_wait_wakes_on_stop(monkeypatch):
    """With the default wait, a stop set from another thread ends an hour-long backoff."""
    monkeypatch.setattr('runner.backend.noj.registration.BACKOFF_SEC', (3600, ))
    attempted = threading.Event()

    class Client:

        def register(self, token, name, version):
            attempted.set()
            raise TransportError('down')

    stop = threading.Event()
    result = []
    worker = threading.Thread(target=lambda: result.append(register(Client(), 'reg', 'x', stop)),
                              daemon=True)
    worker.start()
    assert attempted.wait(60)
    stop.set()
    worker.join(timeout=60)  # a guard against hanging, not a timing assertion
    assert not worker.is_alive()
    assert result == [None]
