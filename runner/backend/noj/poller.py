"""The poller: claims jobs while there is capacity, prepares and dispatches them.

Every claim ends in exactly one of: dispatched, or an abort queued on the
result sender (which releases the claim's tracker count). Claims are
prepared at once, each on a thread of its own (runner/prep_workers.py), up
to the capacity the tracker counts: the poller claims the next one while
the last one downloads. After a claim, the rest of the capacity is claimed
at once, each claim on an idle thread of the same pool (`_claim_more`): a
claim is a round trip, and one at a time a backend 20 ms away could hand
out at most 50 jobs a second. A claim in flight holds its place in the
capacity until the job it brought is counted. While jobs come, every place
let go is claimed so at once, and the loop only waits for places (a place
let go while the loop made a claim of its own would wait out its round
trip). The loop asks itself at the start, once the queue was found empty
(then as a long poll, never beside claims in flight), and after a failed
claim (backing off from it). The order of the steps is the point of this
module:

- the claim is added to the tracker before preparing, so the heartbeat
  renews its lease during slow downloads, and so the capacity counts it;
- stop is checked at the top of every prep attempt, after a successful prep
  and on the exhausted path, and a dispatch failure during a stop is a drain:
  a claim returned because of a shutdown is `drain`, never `prep_failed`
  (which would spend one of the submission's attempts);
- dispatch is attempted exactly once;
- a fault of the host (HostFault, in prep or dispatch) hands the claim back
  as `drain` at once, reports the fault, and nothing is claimed until the
  host is healthy again;
- a job whose memory limit this host's sandboxes cannot give is checked
  before prep and handed back alone (`drain`, for a runner with more
  memory): the host is healthy for every other job. Handed back jobs come
  first in the queue again, so one that keeps coming back (no runner could
  take it) goes as `prep_failed` after MEMORY_REFUSALS, and ends as a Judge
  Error instead of blocking the queue.

During a backend outage the polls back off (with jitter, so a fleet does not
poll in step), and the outage is logged when it starts and when it ends.
"""
import collections
import functools
import logging
import random
import threading
import time
from typing import Callable, Dict, Optional, Protocol

from dispatcher.job import Job
from runner import metrics
from runner.active_jobs import ActiveJobs
from runner.backend.noj.client import (BackendClient, BackendError, TransportError, Unauthorized,
                                       UnexpectedStatus)
from runner.backend.noj.inbound import BadClaim, Claim, JobPayload
from runner.backend.noj.outbound import AbortReason
from runner.host_health import HostHealth
from runner.logs import about_job, current_submission_id
from runner.prep_workers import PrepWorkers
from runner.backend.noj.reports import AbortReport, Report
from runner.threads import LoopThread
from runner.waiting import Wait, backoff_delay, jittered, wait_on
from sandbox.faults import FaultKind, HostFault

log = logging.getLogger(__name__)

PREP_ATTEMPTS = 3
PREP_BACKOFF_SEC = (1, 2)
OUTAGE_BACKOFF_SEC = (1, 2, 4, 8, 16, 30)  # then 30 s until the backend answers
MEMORY_REFUSALS = 3
_REMEMBERED_REFUSALS = 1000


class Preparing(Protocol):

    def prepare(self, payload: JobPayload, stop: threading.Event) -> Job:
        ...


class Dispatching(Protocol):

    def handle(self, job: Job) -> bool:
        """True when it superseded a live older generation of the same job_id."""

    def check_limits(self, memory_limit_kb: int) -> None:
        """HostFault(MEMORY) when this host cannot give a case that much memory."""


class Submitting(Protocol):

    def submit(self, report: Report) -> None:
        ...


class Workers(Protocol):
    """Where a claim's preparation runs (PrepWorkers)."""

    def start(self) -> None:
        ...

    def submit(self, task: Callable[[], None]) -> None:
        ...

    def offer(self, task: Callable[[], None]) -> bool:
        """Runs `task` on a thread idle now; False (nothing done) when none is."""

    def stop(self) -> None:
        ...

    def join(self, timeout: Optional[float] = None) -> bool:
        ...


class Poller(LoopThread):

    def __init__(self,
                 client: BackendClient,
                 tracker: ActiveJobs,
                 preparer: Preparing,
                 dispatcher: Dispatching,
                 sender: Submitting,
                 *,
                 max_concurrent_jobs: int,
                 poll_interval_sec: float,
                 long_poll_sec: float = 0,
                 long_poll_client: Optional[BackendClient] = None,
                 health: Optional[HostHealth] = None,
                 workers: Optional[Workers] = None,
                 clock: Callable[[], float] = time.monotonic,
                 wait: Wait = wait_on,
                 rng: Optional[random.Random] = None):
        """`workers`: where preparations run (by default one thread per job
        the capacity allows); `long_poll_client`: the loop's long polls' own
        (by default `client`), which a stop hangs up without cutting."""
        super().__init__('poller')
        self._workers = workers or PrepWorkers(max_concurrent_jobs)
        self._client = client
        self._long_poll_client = long_poll_client or client
        self._health = health
        self._memory_refusals: Dict[str, int] = collections.OrderedDict()
        self._tracker = tracker
        # Claims in flight on the pool's threads (`_claim_more`), each
        # holding its place in the capacity.
        self._in_flight = 0
        self._in_flight_lock = threading.Lock()
        # Polls failed in a row (under the lock: a claim beside the loop
        # answered ends the outage too).
        self._failed_polls = 0
        # No claim before this time (the clock's), by any thread: a job
        # handed back for memory comes first in the queue again.
        self._held_until = float('-inf')
        # The loop asks next, alone: at the start, once a claim found the
        # queue empty (its ask may then be a long poll) and after a failed
        # claim (it backs off from it). While jobs come, every free place is
        # claimed on the pool's threads at once, each ask without waiting.
        self._loop_asks = True
        self._preparer = preparer
        self._dispatcher = dispatcher
        self._sender = sender
        self._max_concurrent_jobs = max_concurrent_jobs
        self._poll_interval_sec = poll_interval_sec
        self._long_poll_sec = long_poll_sec
        self._clock = clock
        self._wait = wait
        self._rng = rng or random.Random()

    def start(self) -> None:
        self._workers.start()
        super().start()

    def join(self, timeout: Optional[float] = None) -> bool:
        """True once the poll loop and every preparation have ended (each
        preparation cut by the stop has queued its claim's abort)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        ended = super().join(timeout)
        return self._workers.join(None if deadline is None else max(0.0, deadline -
                                                                    time.monotonic())) and ended

    def _wake(self) -> None:
        # A stop cuts short a download or a claim in progress (the client
        # must be the poller's own: its other users are cut too), and the
        # wait for capacity; the preparations still queued see the stop. A
        # long poll is hung up but not cut: the contract lets a backend hold
        # it, unaware of the hang-up, and lease a job to it until its wait is
        # over; cut, that answer would be lost and its job left to lease
        # expiry, an attempt spent. Read, the job goes back at once (drain).
        # The drain waits for it (its step 5), at most the wait and a margin.
        self._client.interrupt()
        if self._long_poll_client is not self._client:
            self._long_poll_client.hang_up()
        self._tracker.freed.set()
        self._workers.stop()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.poll_once()
            except Exception:
                log.exception('poll loop error; going on')
                self._wait(self._stop, jittered(self._poll_interval_sec, self._rng))

    def poll_once(self) -> None:
        """One round: wait for capacity, or claim one job and see it through
        prep and dispatch (the thread's body; public so tests can drive it)."""
        if not self._healthy():
            self._wait(self._stop, self._poll_interval_sec)
            return
        held = self._held()
        if held > 0:
            self._wait(self._stop, held)
            return
        if not self._loop_asks:
            # Jobs come: every free place is claimed at once on a thread of
            # the pool, and the loop only waits for the next place. Were the
            # loop to claim one itself, a place freed during that claim's
            # round trip would wait for it. Cleared before the claims start:
            # a place freed after the counts are read sets the event.
            self._tracker.freed.clear()
            if self._claim_more():
                if not self._stop.is_set():
                    self._wait(self._tracker.freed, self._poll_interval_sec)
                return
            # A free place and no idle thread to claim it: the loop does.
        long_poll = self._long_poll_sec if self._loop_asks else 0
        if self._free() <= 0 or (long_poll and self._claims_in_flight()):
            # Cleared before the counts are read again: a release in between
            # is seen by the count, one after it by the event. With claims
            # in flight beside it, the loop waits for them rather than mix
            # a long poll with them (a backend may cut a runner's earlier
            # long poll short when another call comes).
            self._tracker.freed.clear()
            if (self._free() <= 0 or
                (long_poll and self._claims_in_flight())) and not self._stop.is_set():
                self._wait(self._tracker.freed, self._poll_interval_sec)
            return
        asked_at = self._clock()
        try:
            claim = (self._long_poll_client if long_poll else self._client).next_job(long_poll)
        except BackendError as exc:
            if self._stop.is_set():
                return  # our own stop cut the request short: nothing to say
            self._loop_asks = True
            metrics.POLL_FAILURES.labels(_failure_kind(exc)).inc()
            self._wait(self._stop, self._after_failed_poll(exc))
            return
        self._answered()
        if claim is None:
            log.debug('next-job: nothing to claim')
            self._loop_asks = True
            if self._long_poll_sec and not long_poll:
                return  # asked without waiting: the next ask is a long poll
            # A backend that ignores `wait` answers at once: fall back to the
            # poll interval, counted from when we asked.
            rest = self._poll_interval_sec - (self._clock() - asked_at)
            if rest > 0:
                self._wait(self._stop, jittered(rest, self._rng))
            return
        self._loop_asks = False
        with about_job(claim.job_id, getattr(claim, 'submission_id', None)):
            self._take(claim, in_loop=True)
        self._claim_more()

    def _held(self) -> float:
        """Seconds before anything may be claimed again (0 or less: none)."""
        with self._in_flight_lock:
            return self._held_until - self._clock()

    def _claims_in_flight(self) -> int:
        with self._in_flight_lock:
            return self._in_flight

    def _free(self) -> int:
        """The capacity left: live claims and claims in flight count."""
        with self._in_flight_lock:
            return self._max_concurrent_jobs - len(self._tracker) - self._in_flight

    def _claim_more(self) -> bool:
        """The rest of the capacity claimed at once, each claim on a thread
        idle now: a backend that just handed out a job likely has more.
        False when a place is left free for want of an idle thread."""
        while not self._stop.is_set() and self._healthy():
            with self._in_flight_lock:
                if (self._max_concurrent_jobs - len(self._tracker) - self._in_flight <= 0
                        or self._held_until > self._clock()):
                    return True
                self._in_flight += 1
            if not self._workers.offer(self._claim_one):
                self._claim_ended()
                return False
        return True

    def _claim_one(self) -> None:
        """One claim beside the poll loop (on a pool thread). What goes wrong
        is the poll loop's to say and back off from, at its own next poll."""
        try:
            if self._stop.is_set() or not self._healthy() or self._held() > 0:
                return
            try:
                claim = self._client.next_job(0)
            except BackendError as exc:
                if not self._stop.is_set():
                    # Counted and said as the loop's own failures are (a
                    # body without a usable job id is left to lease expiry);
                    # an outage the loop meets and backs off from itself:
                    # its next ask is its own.
                    metrics.POLL_FAILURES.labels(_failure_kind(exc)).inc()
                    if not _is_outage(exc):
                        log.warning('next-job failed: %s', exc)
                    self._loop_asks = True
                return
            self._answered()
            if claim is None:
                self._loop_asks = True
                return
            self._loop_asks = False
            with about_job(claim.job_id, getattr(claim, 'submission_id', None)):
                self._take(claim)
        except Exception:
            log.exception('a claim beside the poll loop failed unexpectedly; going on')
        finally:
            # After the claim is counted (in _take), never before: the
            # capacity never lets a claim more through.
            self._claim_ended()

    def _claim_ended(self) -> None:
        with self._in_flight_lock:
            self._in_flight -= 1
        self._tracker.freed.set()  # a place the poll loop may take again

    def _answered(self) -> None:
        """A claim was answered, by the loop or beside it: an outage is over,
        and the next one backs off from its first step again (while jobs
        come, the loop's own asks are few)."""
        metrics.POLL_LAST_SUCCESS.set_to_current_time()
        with self._in_flight_lock:
            failed, self._failed_polls = self._failed_polls, 0
        if failed:
            log.info('the backend answers again (after %d failed polls)', failed)

    def _after_failed_poll(self, exc: BackendError) -> float:
        """How long to wait after a failed poll. An outage (no answer, or a 5xx)
        backs off and is said once; a body without a usable job_id (it cannot
        be aborted: lease expiry) or another refusal is said each time."""
        if not _is_outage(exc):
            log.warning('next-job failed: %s', exc)
            return jittered(self._poll_interval_sec, self._rng)
        with self._in_flight_lock:
            failed = self._failed_polls
            self._failed_polls += 1
        if not failed:
            log.warning('the backend does not answer (%s); polling with backoff until it does', exc)
        return jittered(backoff_delay(OUTAGE_BACKOFF_SEC, failed), self._rng)

    def _healthy(self) -> bool:
        return self._health is None or self._health.healthy

    def _refuse_for_memory(self, job_id: str, fault: HostFault, job_dir, in_loop: bool) -> None:
        # Not at once again, by any thread of this runner: a handed back job
        # is first in the queue. Held before the abort is queued (its release
        # wakes the loop, which must find the hold). The loop waits here; a
        # claim beside it lets its thread and its place go at once.
        pause = jittered(self._poll_interval_sec, self._rng)
        with self._in_flight_lock:
            self._held_until = max(self._held_until, self._clock() + pause)
            refusals = self._memory_refusals.pop(job_id, 0) + 1
            self._memory_refusals[job_id] = refusals
            while len(self._memory_refusals) > _REMEMBERED_REFUSALS:
                self._memory_refusals.popitem(last=False)
        metrics.HOST_FAULTS.labels(fault.kind.value).inc()
        if refusals < MEMORY_REFUSALS:
            log.warning('job %s: %s; handing it back for a runner with more memory', job_id,
                        fault.cause)
            self._abort(job_id, AbortReason.DRAIN, job_dir)
        else:
            log.error(
                'job %s: %s; refused %d times (no runner took it): handing it back as '
                'prep_failed, so that it ends as a Judge Error', job_id, fault.cause, refusals)
            self._abort(job_id, AbortReason.PREP_FAILED, job_dir)
        if in_loop:
            self._wait(self._stop, pause)

    def _host_fault(self, fault: HostFault, job_id: str, problem_id: int, job_dir) -> None:
        """Hand the claim back unjudged (drain spends no attempt) and say why."""
        if fault.kind is FaultKind.MEMORY:
            self._refuse_for_memory(job_id, fault, job_dir, in_loop=False)
            return
        recheck = None
        if fault.kind is FaultKind.TOKEN:
            # Asked of no one problem, so that no one problem's answer keeps
            # the host unhealthy.
            recheck = self._client.sandbox_token_refusal
        if self._health is not None:
            self._health.report(fault, recheck)
        else:
            log.error('host fault: %s', fault.cause)
        self._abort(job_id, AbortReason.DRAIN, job_dir)

    def _take(self, claim: Claim, in_loop: bool = False) -> None:
        # Before prep: from here on the heartbeat renews this claim's lease.
        self._tracker.add(claim.job_id)
        metrics.JOBS_CLAIMED.inc()
        try:
            if isinstance(claim, BadClaim):
                log.error('job %s cannot be judged: %s', claim.job_id, claim.problem)
                self._abort(claim.job_id, AbortReason.PREP_FAILED, None)
                return
            log.info('claimed job %s (submission %s, problem %d, %s, %d case(s))', claim.job_id,
                     claim.submission_id, claim.problem_id, claim.language.name,
                     sum(t.case_count for t in claim.tasks))
            try:
                self._dispatcher.check_limits(max(t.memory_limit_kb for t in claim.tasks))
            except HostFault as fault:
                self._refuse_for_memory(claim.job_id, fault, None, in_loop)
                return
            self._workers.submit(functools.partial(self._see_through, claim))
        except Exception:
            # Counted, so never left without its report (it would hold its
            # lease and its place for ever).
            log.exception('taking job %s failed', claim.job_id)
            self._abort(claim.job_id, self._failure_reason(), None)

    def _see_through(self, claim: JobPayload) -> None:
        """A claim prepared and dispatched (on a preparation's thread)."""
        with about_job(claim.job_id, claim.submission_id):
            if not self._healthy():
                # A fault another preparation met while this claim came in:
                # nothing is prepared on a host that cannot judge.
                self._abort(claim.job_id, AbortReason.DRAIN, None)
                return
            job = self._prepare(claim)
            if job is not None:
                self._dispatch(job)

    def _prepare(self, payload: JobPayload) -> Optional[Job]:
        """The prepared job, or None once its abort is queued."""
        for attempt in range(1, PREP_ATTEMPTS + 1):
            if self._stop.is_set():
                break
            try:
                return self._preparer.prepare(payload, self._stop)
            except HostFault as fault:
                self._host_fault(fault, payload.job_id, payload.problem_id, None)
                return None
            except Exception as exc:
                log.warning('preparing job %s failed (attempt %d of %d): %s: %s', payload.job_id,
                            attempt, PREP_ATTEMPTS,
                            type(exc).__name__, exc)
            if attempt < PREP_ATTEMPTS:
                self._wait(self._stop, jittered(PREP_BACKOFF_SEC[attempt - 1], self._rng))
        # Stop may have landed during the last attempt, after the loop's check.
        self._abort(payload.job_id, self._failure_reason(), None)
        return None

    def _dispatch(self, job: Job) -> None:
        if self._stop.is_set() or not self._healthy():
            # Nothing starts judging once a shutdown began, nor on a host
            # that a fault made unable to judge meanwhile.
            self._abort(job.job_id, AbortReason.DRAIN, job.job_dir)
            return
        try:
            superseded = self._dispatcher.handle(job)
        except HostFault as fault:
            self._host_fault(fault, job.job_id, job.problem_id, job.job_dir)
            return
        except Exception:
            # Never retried: one claim, one dispatch.
            log.exception('dispatching job %s failed', job.job_id)
            self._abort(job.job_id, self._failure_reason(), job.job_dir)
            return
        if superseded:
            # The older generation will never report: release its count here.
            log.info('job %s superseded an older claim of itself', job.job_id)
            self._tracker.remove(job.job_id)

    def _failure_reason(self) -> AbortReason:
        return AbortReason.DRAIN if self._stop.is_set() else AbortReason.PREP_FAILED

    def _abort(self, job_id: str, reason: AbortReason, job_dir) -> None:
        if reason is AbortReason.DRAIN:
            log.info('returning job %s to the queue (drain)', job_id)
        self._sender.submit(
            AbortReport(job_id, reason, job_dir, submission_id=current_submission_id()))


def _is_outage(exc: BackendError) -> bool:
    """No answer, or a 5xx: the backend is away, not refusing the call."""
    return isinstance(exc, TransportError) or (isinstance(exc, UnexpectedStatus)
                                               and exc.status >= 500)


def _failure_kind(exc: BackendError) -> str:
    """The `kind` label of a failed poll."""
    if isinstance(exc, TransportError):
        return 'transport'
    if isinstance(exc, (UnexpectedStatus, Unauthorized)):
        return 'status'
    return 'protocol'  # an answer that is not what the protocol says
