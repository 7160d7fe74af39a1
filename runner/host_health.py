"""Whether this host can judge now, and why not (protocol §6).

A fault of the host (the engine, an image, the disk, the testdata token, a
memory limit the sandboxes cannot give) is never a verdict: whatever it
touched goes back to the queue with `abort(drain)`, which spends no attempt.
The first fault makes the host unhealthy at once: its cause is logged once,
`on_fault` hands back what has not started, and the poller claims nothing
more. A thread then probes the host with backoff (a known program judged in a
fresh sandbox, the folders written, and what the fault itself needs checked
again) and marks it healthy when a probe passes, so claiming resumes.
"""
import logging
import random
import threading
import time
from typing import Callable, Dict, Optional

from runner import metrics
from runner.threads import LoopThread
from runner.waiting import Wait, backoff_delay, jittered, wait_on
from sandbox.faults import FaultKind, HostFault

log = logging.getLogger(__name__)

PROBE_BACKOFF_SEC = (2, 4, 8, 15, 30, 60)  # then 60 s forever
# A fault within this long of the last recovery continues the backoff (a host
# that keeps failing, or a job that keeps coming back) instead of starting it
# over.
STABLE_SEC = 600.0

Probe = Callable[[], Optional[str]]  # None when healthy, else what is wrong


class HostHealth(LoopThread):

    def __init__(self,
                 probe: Probe,
                 on_fault: Callable[[HostFault], None] = lambda fault: None,
                 on_recover: Callable[[], None] = lambda: None,
                 *,
                 wait: Wait = wait_on,
                 clock: Callable[[], float] = time.monotonic,
                 rng: Optional[random.Random] = None):
        super().__init__('host-health')
        self._probe = probe
        self._on_fault = on_fault
        self._on_recover = on_recover
        self._wait = wait
        self._clock = clock
        self._rng = rng or random.Random()
        self._cond = threading.Condition()
        self._fault: Optional[HostFault] = None
        # Every fault reported while unhealthy adds its own recheck (by kind),
        # and counts: a probe clears only the faults reported before it began.
        self._rechecks: Dict[FaultKind, Probe] = {}
        self._reports = 0
        self._recovered_at: Optional[float] = None
        self._failed_probes = 0
        metrics.HOST_HEALTHY.set(1)

    @property
    def healthy(self) -> bool:
        with self._cond:
            return self._fault is None

    @property
    def fault(self) -> Optional[HostFault]:
        with self._cond:
            return self._fault

    def wait_healthy(self, timeout: float) -> bool:
        """True once the host is healthy (at once when it is), False at the timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: self._fault is None, timeout)

    def report(self, fault: HostFault, recheck: Optional[Probe] = None) -> None:
        """From any thread. `recheck()` (None when fixed) joins the probe."""
        metrics.HOST_FAULTS.labels(fault.kind.value).inc()
        with self._cond:
            self._reports += 1
            if recheck is not None:
                self._rechecks[fault.kind] = recheck
            if self._fault is not None:
                return  # already unhealthy: said once
            self._fault = fault
            recent = (self._recovered_at is not None
                      and self._clock() - self._recovered_at < STABLE_SEC)
            if not recent:
                self._failed_probes = 0
            self._cond.notify_all()
        metrics.HOST_HEALTHY.set(0)
        log.error('host fault (%s), claiming nothing until the host is healthy again: %s',
                  fault.kind.value, fault.cause)
        try:
            self._on_fault(fault)
        except Exception:
            log.exception('handing back the jobs of a host fault failed')

    def _wake(self) -> None:
        with self._cond:
            self._cond.notify_all()

    def _run(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._fault is not None or self._stop.is_set())
                if self._stop.is_set():
                    return
                delay = jittered(backoff_delay(PROBE_BACKOFF_SEC, self._failed_probes), self._rng)
            if self._wait(self._stop, delay):
                return
            with self._cond:
                reports, rechecks = self._reports, list(self._rechecks.values())
            problem = _asked(self._probe)
            for recheck in rechecks:
                problem = problem or _asked(recheck)
            with self._cond:
                if problem is not None or self._reports != reports:
                    # Still failing, or a fault came in meanwhile: probe again.
                    self._failed_probes += 1
                    log.debug('host still unhealthy: %s', problem or 'a new fault meanwhile')
                    continue
                fault, self._fault = self._fault, None
                self._rechecks.clear()
                self._failed_probes += 1  # kept for a fault soon after (STABLE_SEC)
                self._recovered_at = self._clock()
                self._cond.notify_all()
            metrics.HOST_HEALTHY.set(1)
            log.info('host healthy again (%s fault over): claiming again', fault.kind.value)
            try:
                self._on_recover()
            except Exception:
                log.exception('resuming after a host fault failed')


def _asked(probe: Probe) -> Optional[str]:
    try:
        return probe()
    except Exception as exc:  # a probe that breaks is a probe that failed
        return f'the probe failed: {type(exc).__name__}: {exc}'
