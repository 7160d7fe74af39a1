"""The shutdown drain (protocol §7): its order and its one deadline.

1. latch the dispatcher, so nothing unstarted starts — the first act;
2. stop the poller and join it, with a capped share of the budget;
3. abort every unstarted job with reason `drain`;
4. wait for in-flight jobs, keeping a reserve of the budget for reporting;
5. scan again for unstarted jobs (a late dispatch) and abort them as drain;
   a poller still busy then is joined again (its claim's abort must reach
   the sender before the sender stops), and the scan repeated;
6. stop the dispatcher; 7. stop the result sender, which flushes its queue;
8. stop the heartbeat, last: leases stay renewed until the final report.

Every wait is granted what remains of one deadline, never a fresh budget.
What outlives it is logged and left to lease expiry. Meanwhile a progress
line says every few seconds how far the drain is (`DrainProgress`), in the
log and in the drain gauges.
"""
import dataclasses
import logging
import time
from typing import Callable, List, Optional, Protocol

from dispatcher.job import Job
from runner import metrics
from runner.threads import LoopThread

log = logging.getLogger(__name__)

# Waiting for the poller is the least valuable wait of the drain (it may be
# stuck in a long poll or a slow download): it never gets more than this.
POLLER_SHARE_SEC = 5.0
# Kept back from the in-flight wait for the sender to report what was computed.
REPORT_RESERVE_FRACTION = 0.2
REPORT_RESERVE_MAX_SEC = 60.0
DISPATCHER_SHARE_SEC = 5.0
# After the jobs that did not finish were given up: what a worker finishing a
# step may hold the dispatcher's lock for (a wait of 0 took that for a job
# still running, and a clean drain exited 3).
GIVEN_UP_SETTLE_SEC = 1.0
# How often a long wait of the drain says where it stands.
PROGRESS_EVERY_SEC = 5.0


class Deadline:

    def __init__(self, budget_sec: float, clock: Callable[[], float] = time.monotonic):
        self._clock = clock
        self._end = clock() + budget_sec

    def remaining(self, cap: Optional[float] = None, keep: float = 0.0) -> float:
        """What is left of the budget, less `keep`, at most `cap`; never negative."""
        left = max(0.0, self._end - self._clock() - keep)
        return left if cap is None else min(cap, left)


class Stoppable(Protocol):

    def stop(self) -> None:
        ...

    def join(self, timeout: Optional[float] = None) -> bool:
        """True when the part's threads have ended."""


class Draining(Stoppable, Protocol):
    """The dispatcher, as the drain sees it."""

    def stop_accepting(self) -> None:
        ...

    def drain_unstarted(self, hand_back: Optional[Callable[[Job], None]] = None) -> List[Job]:
        ...

    def wait_in_flight(self, timeout: float) -> bool:
        ...

    def jobs_started(self) -> int:
        ...


@dataclasses.dataclass
class DrainOutcome:
    aborted: int = 0
    in_flight_finished: bool = True
    reports_flushed: bool = True
    reports_given_up: int = 0
    claims_left: int = 0

    @property
    def clean(self) -> bool:
        """Nothing was left to lease expiry."""
        return (self.in_flight_finished and self.reports_flushed and self.reports_given_up == 0
                and self.claims_left == 0)


def drain(*,
          dispatcher: Draining,
          poller: Stoppable,
          sender,
          heartbeat: Stoppable,
          claims: Callable[[], int],
          budget_sec: float,
          hand_back: Callable[[Job], None],
          give_up_unfinished: Optional[Callable[[], int]] = None,
          clock: Callable[[], float] = time.monotonic) -> DrainOutcome:
    """Run the drain; `sender` is the result sender (stop, join, queued,
    given_up), `claims()` counts the live claims left and `hand_back(job)`
    queues an unstarted job's return to the backend on the sender (the
    protocol's own way: an abort, a release). `give_up_unfinished()`, when
    given, stops the started jobs still running at the deadline and hands
    them back (a protocol that can release them; without it they are left
    to lease expiry), returning how many."""
    deadline = Deadline(budget_sec, clock)
    outcome = DrainOutcome()
    progress = DrainProgress(dispatcher, sender, claims, deadline, clock)
    progress.start()
    try:
        _drain(dispatcher, poller, sender, heartbeat, claims, budget_sec, deadline, outcome,
               hand_back, give_up_unfinished)
    finally:
        progress.stop()
        progress.join()
        progress.report(log_line=False)  # the gauges as the drain left them
    return outcome


def _drain(dispatcher, poller, sender, heartbeat, claims, budget_sec, deadline,
           outcome: DrainOutcome, hand_back: Callable[[Job], None],
           give_up_unfinished: Optional[Callable[[], int]]) -> None:
    given_up_before = sender.given_up
    log.info('drain: started, budget %.0f s', budget_sec)

    dispatcher.stop_accepting()

    # Kept for reporting by every wait before it, the poller's too (a long
    # poll the backend holds waits for its answer).
    reserve = min(REPORT_RESERVE_MAX_SEC, budget_sec * REPORT_RESERVE_FRACTION)
    poller.stop()
    if not poller.join(deadline.remaining(cap=POLLER_SHARE_SEC, keep=reserve)):
        log.warning('drain: the poller is still busy (a request or a download); going on')

    outcome.aborted += _abort_unstarted(dispatcher, hand_back)

    outcome.in_flight_finished = dispatcher.wait_in_flight(deadline.remaining(keep=reserve))
    if outcome.in_flight_finished:
        log.info('drain: every started job has finished')
    elif give_up_unfinished is not None:
        given_up = give_up_unfinished()
        log.warning('drain: %d started job(s) did not finish in time; handed back', given_up)
        outcome.in_flight_finished = dispatcher.wait_in_flight(GIVEN_UP_SETTLE_SEC)
    else:
        log.error('drain: started jobs did not finish in time; left to lease expiry')

    outcome.aborted += _abort_unstarted(dispatcher, hand_back)

    if not poller.join(0):
        # Still busy past its share (a slow step of a prep): its claim must go
        # back through the sender, so give it what remains but the reserve,
        # then look for a late dispatch once more.
        poller.join(deadline.remaining(keep=reserve))
        outcome.aborted += _abort_unstarted(dispatcher, hand_back)

    dispatcher.stop()
    # Workers still running a case would only eat into the reporting reserve.
    dispatcher.join(deadline.remaining(cap=DISPATCHER_SHARE_SEC, keep=reserve))

    sender.stop()
    outcome.reports_flushed = sender.join(deadline.remaining())
    if outcome.reports_flushed:
        log.info('drain: every report was sent or given up on')
    else:
        log.error('drain: reports still unsent at the deadline; left to lease expiry')

    # A report given up on released its claim, but its job waits for lease expiry.
    outcome.reports_given_up = sender.given_up - given_up_before
    outcome.claims_left = claims()
    heartbeat.stop()
    heartbeat.join(deadline.remaining())
    if outcome.clean:
        log.info('drain: done, %d unstarted job(s) handed back', outcome.aborted)
    else:
        log.error('drain: %d claim(s) and %d undelivered report(s) left to lease expiry',
                  outcome.claims_left, outcome.reports_given_up)


class DrainProgress(LoopThread):
    """Says where the drain stands every PROGRESS_EVERY_SEC, in a log line and
    in the drain gauges, from its own thread: the drain's waits stay whole."""

    def __init__(self, dispatcher: Draining, sender, claims: Callable[[], int], deadline: Deadline,
                 clock: Callable[[], float]):
        super().__init__('drain-progress')
        self._dispatcher = dispatcher
        self._sender = sender
        self._claims = claims
        self._deadline = deadline
        self._clock = clock
        self._started = clock()

    def report(self, log_line: bool = True) -> None:
        claims = self._claims()
        metrics.DRAIN_SECONDS.set(self._clock() - self._started)
        metrics.DRAIN_LEFT.set(claims)
        if log_line:
            log.info(
                'drain: %d job(s) running, %d report(s) queued, %d claim(s) held, '
                '%.0f s of the budget left', self._dispatcher.jobs_started(), self._sender.queued(),
                claims, self._deadline.remaining())

    def _run(self) -> None:
        while not self._stop.wait(PROGRESS_EVERY_SEC):
            try:
                self.report()
            except Exception:
                log.exception('drain progress failed')


def _abort_unstarted(dispatcher: Draining, hand_back: Callable[[Job], None]) -> int:

    def handed_back(job: Job) -> None:
        log.info('drain: job %s (submission %s) never started; handing it back', job.job_id,
                 job.submission_id)
        hand_back(job)

    return len(dispatcher.drain_unstarted(handed_back))
