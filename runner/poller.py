"""The poller: claims jobs while there is capacity, prepares and dispatches them.

Every claim ends in exactly one of: dispatched, or an abort queued on the
result sender (which releases the claim's tracker count). The order of the
steps is the point of this module:

- the claim is added to the tracker before preparing, so the heartbeat
  renews its lease during slow downloads;
- stop is checked at the top of every prep attempt, after a successful prep
  and on the exhausted path, and a dispatch failure during a stop is a drain:
  a claim returned because of a shutdown is `drain`, never `prep_failed`
  (which would spend one of the submission's attempts);
- dispatch is attempted exactly once.
"""
import logging
import random
import threading
import time
from typing import Callable, Optional, Protocol

from dispatcher.job import Job
from dispatcher.job_log import about_job, current_submission_id
from runner import metrics
from runner.active_jobs import ActiveJobs
from runner.client import BackendClient, BackendError
from runner.reports import AbortReason, AbortReport, Report
from runner.waiting import Wait, jittered, wait_on
from runner.wire import BadClaim, Claim, JobPayload

log = logging.getLogger(__name__)

PREP_ATTEMPTS = 3
PREP_BACKOFF_SEC = (1, 2)


class Preparing(Protocol):

    def prepare(self, payload: JobPayload, stop: threading.Event) -> Job:
        ...


class Dispatching(Protocol):

    def handle(self, job: Job) -> bool:
        """True when it superseded a live older generation of the same job_id."""


class Submitting(Protocol):

    def submit(self, report: Report) -> None:
        ...


class Poller:

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
                 clock: Callable[[], float] = time.monotonic,
                 wait: Wait = wait_on,
                 rng: Optional[random.Random] = None):
        self._client = client
        self._tracker = tracker
        self._preparer = preparer
        self._dispatcher = dispatcher
        self._sender = sender
        self._max_concurrent_jobs = max_concurrent_jobs
        self._poll_interval_sec = poll_interval_sec
        self._long_poll_sec = long_poll_sec
        self._clock = clock
        self._wait = wait
        self._rng = rng or random.Random()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name='poller', daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Stop now: also cuts short a long poll or a download in progress (the
        client must be the poller's own: its other users are cut too)."""
        self._stop.set()
        self._client.interrupt()

    def join(self, timeout: Optional[float] = None) -> bool:
        """True when the thread has ended (or never started)."""
        if self._thread.ident is not None:
            self._thread.join(timeout)
        return not self._thread.is_alive()

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
        if len(self._tracker) >= self._max_concurrent_jobs:
            self._wait(self._stop, self._poll_interval_sec)
            return
        asked_at = self._clock()
        try:
            claim = self._client.next_job(self._long_poll_sec)
        except BackendError as exc:
            # Includes a body without a usable job_id: it cannot be aborted
            # and is left to lease expiry.
            log.warning('next-job failed: %s', exc)
            self._wait(self._stop, jittered(self._poll_interval_sec, self._rng))
            return
        if claim is None:
            # A backend that ignores `wait` answers at once: fall back to the
            # poll interval, counted from when we asked.
            rest = self._poll_interval_sec - (self._clock() - asked_at)
            if rest > 0:
                self._wait(self._stop, jittered(rest, self._rng))
            return
        with about_job(claim.job_id, getattr(claim, 'submission_id', None)):
            self._take(claim)

    def _take(self, claim: Claim) -> None:
        # Before prep: from here on the heartbeat renews this claim's lease.
        self._tracker.add(claim.job_id)
        metrics.JOBS_CLAIMED.inc()
        if isinstance(claim, BadClaim):
            log.error('job %s cannot be judged: %s', claim.job_id, claim.problem)
            self._abort(claim.job_id, AbortReason.PREP_FAILED, None)
            return
        log.info('claimed job %s (submission %s, problem %d, %s, %d case(s))', claim.job_id,
                 claim.submission_id, claim.problem_id, claim.language.name,
                 sum(t.case_count for t in claim.tasks))
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
        if self._stop.is_set():
            # Nothing starts judging once a shutdown began.
            self._abort(job.job_id, AbortReason.DRAIN, job.job_dir)
            return
        try:
            superseded = self._dispatcher.handle(job)
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
