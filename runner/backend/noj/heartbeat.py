"""The heartbeat: renews the lease of every held job, and keeps the identity alive."""
import logging
import threading
import time
from typing import Callable, Optional

from runner import metrics
from runner.active_jobs import ActiveJobs
from runner.backend.noj.client import BackendClient, Outcome
from runner.threads import LoopThread
from runner.waiting import Wait, wait_on

log = logging.getLogger(__name__)

# One 401 may be a glitch; two in a row (nothing else in between) mean the
# identity was revoked or expired.
UNAUTHORIZED_LIMIT = 2


class Heartbeat(LoopThread):
    """Beats every `interval_sec` on a monotonic clock, idle or not.

    `on_identity_lost` is called once, from this thread, after two consecutive
    401s; the thread then ends. It is the last thread to stop in a drain:
    leases stay renewed until the final report.
    """

    def __init__(self,
                 client: BackendClient,
                 tracker: ActiveJobs,
                 interval_sec: float,
                 on_identity_lost: Callable[[], None],
                 *,
                 clock: Callable[[], float] = time.monotonic,
                 wait: Wait = wait_on):
        super().__init__('heartbeat')
        self._client = client
        self._tracker = tracker
        self._interval_sec = interval_sec
        self._on_identity_lost = on_identity_lost
        self._clock = clock
        self._wait = wait
        self._lock = threading.Lock()
        # Counted from the creation until the first beat is accepted.
        self._last_accepted = clock()

    def accepted_within(self, seconds: float) -> bool:
        """Whether the backend accepted a beat in the last `seconds` (or the
        heartbeat is younger than that)."""
        with self._lock:
            return self._clock() - self._last_accepted <= seconds

    @property
    def interval_sec(self) -> float:
        return self._interval_sec

    def _run(self) -> None:
        unauthorized = 0
        next_beat = self._clock()
        while not self._stop.is_set():
            if self._wait(self._stop, next_beat - self._clock()):
                return
            refused = self._beat()
            if refused:
                unauthorized += 1
                log.error('heartbeat refused (401), %d in a row', unauthorized)
                if unauthorized >= UNAUTHORIZED_LIMIT:
                    log.critical('the backend no longer knows this runner: identity lost')
                    self._on_identity_lost()
                    return
            elif refused is not None:
                unauthorized = 0
            # The cadence is anchored to the schedule, not to when the call
            # returned, so a slow call does not push later beats back; a call
            # slower than a whole interval is followed by a beat at once.
            next_beat = max(next_beat + self._interval_sec, self._clock())

    def _beat(self) -> Optional[bool]:
        """One beat: True when it was refused with 401, False for any other
        answer (which resets the count), None when no answer came (a network
        failure says nothing about the identity: the count stays)."""
        try:
            answer = self._client.heartbeat(self._tracker.snapshot())
        except Exception:
            metrics.HEARTBEAT_FAILURES.inc()
            log.exception('heartbeat failed unexpectedly; next beat tries again')
            return None
        if answer.outcome is Outcome.ACCEPTED:
            log.debug('heartbeat accepted (%s)', answer.detail)
            with self._lock:
                self._last_accepted = self._clock()
            metrics.HEARTBEAT_LAST_SUCCESS.set_to_current_time()
        else:
            metrics.HEARTBEAT_FAILURES.inc()
        if answer.outcome is Outcome.UNAUTHORIZED:
            return True
        if answer.outcome is not Outcome.ACCEPTED:
            log.warning('heartbeat failed (%s); next beat tries again', answer.detail)
        return False if answer.answered else None
