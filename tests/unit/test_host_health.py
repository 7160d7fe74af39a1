"""Host health: a fault is said once, hands back what has not started, stops
claims, and is probed with backoff until the host is healthy again."""
import logging
import queue

from runner import metrics
from runner.host_health import PROBE_BACKOFF_SEC, HostHealth
from sandbox.faults import FaultKind, HostFault
from tests.unit.fakes import NoJitter

GUARD_SEC = 10  # only guards against a hang

ENGINE = HostFault(FaultKind.ENGINE, 'sandboxes cannot start (Docker engine, DOCKER_URL)')


class Probes:
    """The probe answers from a script; each wait is recorded and handed to
    the test, which lets it end (no real time passes)."""

    def __init__(self, answers):
        self.answers = queue.Queue()
        for answer in answers:
            self.answers.put(answer)
        self.waits = queue.Queue()
        self.now = 0.0

    def probe(self):
        answer = self.answers.get(timeout=GUARD_SEC)
        if isinstance(answer, Exception):
            raise answer
        return answer

    def wait(self, stop, seconds):
        self.waits.put(seconds)
        self.now += seconds
        return stop.is_set()

    def clock(self):
        return self.now


def make(answers, on_fault=lambda fault: None):
    probes = Probes(answers)
    health = HostHealth(probes.probe,
                        on_fault,
                        wait=probes.wait,
                        clock=probes.clock,
                        rng=NoJitter())
    return health, probes


def test_a_fault_is_said_once_and_hands_back_what_has_not_started(caplog):
    handed_back = []
    health, _ = make([], on_fault=handed_back.append)
    with caplog.at_level(logging.ERROR, logger='runner.host_health'):
        health.report(ENGINE)
        health.report(HostFault(FaultKind.DISK, 'a second cause while unhealthy'))
    assert not health.healthy and health.fault is ENGINE
    assert handed_back == [ENGINE]
    assert len(caplog.records) == 1 and 'DOCKER_URL' in caplog.records[0].getMessage()
    assert metrics.REGISTRY.get_sample_value('oj_runner_host_healthy') == 0


def test_probes_back_off_until_one_passes():
    health, probes = make(['engine down', 'engine down', None])
    health.start()
    try:
        health.report(ENGINE)
        waits = [probes.waits.get(timeout=GUARD_SEC) for _ in range(3)]
        assert waits == list(PROBE_BACKOFF_SEC[:3])
        assert health.wait_healthy(GUARD_SEC)
        assert metrics.REGISTRY.get_sample_value('oj_runner_host_healthy') == 1
    finally:
        health.stop()
        assert health.join(GUARD_SEC)


def test_the_faults_own_recheck_must_pass_too():
    rechecks = queue.Queue()
    for answer in ('token refused', None):
        rechecks.put(answer)
    health, probes = make([None, None])
    health.start()
    try:
        health.report(HostFault(FaultKind.TOKEN, 'SANDBOX_TOKEN refused'),
                      recheck=lambda: rechecks.get(timeout=GUARD_SEC))
        probes.waits.get(timeout=GUARD_SEC)
        probes.waits.get(timeout=GUARD_SEC)  # the first recheck failed: a second probe
        assert health.wait_healthy(GUARD_SEC)
    finally:
        health.stop()
        assert health.join(GUARD_SEC)


def test_a_fault_soon_after_a_recovery_continues_the_backoff():
    health, probes = make([None, None])
    health.start()
    try:
        health.report(ENGINE)
        first = probes.waits.get(timeout=GUARD_SEC)
        assert health.wait_healthy(GUARD_SEC)
        health.report(ENGINE)  # the same job came back, or the engine flaps
        second = probes.waits.get(timeout=GUARD_SEC)
        assert second > first
    finally:
        health.stop()
        assert health.join(GUARD_SEC)


def test_a_probe_that_raises_is_a_failed_probe():
    health, probes = make([RuntimeError('a bug in the probe'), None])
    health.start()
    try:
        health.report(ENGINE)
        assert probes.waits.get(timeout=GUARD_SEC) == PROBE_BACKOFF_SEC[0]
        assert probes.waits.get(timeout=GUARD_SEC) == PROBE_BACKOFF_SEC[1]  # failed: again
        assert health.wait_healthy(GUARD_SEC)
    finally:
        health.stop()
        assert health.join(GUARD_SEC)


def test_a_fault_reported_during_a_probe_is_not_cleared_by_it():
    second = HostFault(FaultKind.TOKEN, 'SANDBOX_TOKEN refused')
    rechecked, probes_run = [], []
    health = None

    def probe():
        probes_run.append(1)
        if len(probes_run) == 1:  # the first probe: a token fault comes in while it runs
            health.report(second, recheck=lambda: rechecked.append(1) or None)
        return None

    health, probes = make([])
    health._probe = probe
    health.start()
    try:
        health.report(ENGINE)
        probes.waits.get(timeout=GUARD_SEC)
        probes.waits.get(timeout=GUARD_SEC)  # cleared only by a probe begun after it
        assert health.wait_healthy(GUARD_SEC)
        assert len(probes_run) == 2 and rechecked == [1]  # and its own recheck was asked
    finally:
        health.stop()
        assert health.join(GUARD_SEC)


def test_recovery_is_told():
    recovered = queue.Queue()
    health = HostHealth(lambda: None,
                        on_recover=lambda: recovered.put(True),
                        wait=lambda stop, seconds: stop.is_set(),
                        rng=NoJitter())
    health.start()
    try:
        health.report(ENGINE)
        assert recovered.get(timeout=GUARD_SEC) and health.healthy
    finally:
        health.stop()
        assert health.join(GUARD_SEC)
