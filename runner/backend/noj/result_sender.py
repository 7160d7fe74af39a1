"""The result sender: the one channel through which every claim is reported.

Each report is delivered with retries, then the claim is finalized: its
tracker count released and its job folder removed (or kept in the backup
folder), exactly once.

- abort: finalize BEFORE sending. After a 202 the job is back in the queue and
  this same runner may claim the same job_id at once; a late finalize would
  delete the new claim's folder and release its tracker count (ABA).
- complete: send first, then finalize. A delivered complete deletes the job
  on the backend (no requeue), and holding the tracker count during retries
  keeps the lease renewed, so a result delivered late is not judged again.
"""
import collections
import logging
import random
import threading
import time
from typing import Callable, Optional

from runner import metrics
from runner.active_jobs import ActiveJobs
from runner.backend.noj.client import Answer, BackendClient, Outcome
from runner.backend.noj.outbound import AbortReason, Results, complete_body
from runner.logs import about_job
from runner.prep.job_folders import JobFolders
from runner.backend.noj.reports import AbortReport, CompleteReport, Report
from runner.threads import WorkerThreads
from runner.waiting import jittered

log = logging.getLogger(__name__)

RETRY_DELAYS_SEC = (1, 2, 4, 8, 16)  # at most 5 retries
DEFAULT_BODY_LIMIT = 512 * 1024
# 401 is retried: the heartbeat alone decides that the identity is gone.
_RETRIED = frozenset({Outcome.FAILED, Outcome.UNAUTHORIZED})

Sleep = Callable[[float], None]


class ResultSender:
    """`submit` queues a report; a few threads deliver them, so one report
    waiting out its retries does not hold up the others (a drain's aborts
    behind a failing complete).

    `stop()` asks the threads to end once everything queued before it has been
    sent or given up on; `join(timeout)` waits for that. Retry backoffs do not
    wake on `stop()`: stopping means flushing, and giving up early would turn
    deliverable drain aborts into lease expiries that spend an attempt. The
    drain deadline bounds the flush through `join(timeout)`.
    """

    def __init__(self,
                 client: BackendClient,
                 tracker: ActiveJobs,
                 folders: JobFolders,
                 *,
                 body_limit: int = DEFAULT_BODY_LIMIT,
                 sleep: Optional[Sleep] = None,
                 rng: Optional[random.Random] = None,
                 workers: int = 4):
        self._client = client
        self._body_limit = body_limit
        self._tracker = tracker
        self._folders = folders
        self._sleep = sleep or time.sleep
        self._rng = rng or random.Random()
        self._workers = WorkerThreads('result-sender', workers, self._handle)
        self._lock = threading.Lock()
        self._given_up = 0

    def submit(self, report: Report) -> None:
        self._workers.submit(report)

    def queued(self) -> int:
        """Reports waiting for a sender thread (approximate: the drain's
        progress line)."""
        return self._workers.queued()

    def start(self) -> None:
        self._workers.start()

    def stop(self) -> None:
        self._workers.stop()

    def join(self, timeout: Optional[float] = None) -> bool:
        """True when the threads have ended (or never started)."""
        return self._workers.join(timeout)

    def is_alive(self) -> bool:
        """Every thread runs."""
        return self._workers.is_alive()

    @property
    def given_up(self) -> int:
        """Reports given up on after every retry (left to lease expiry)."""
        with self._lock:
            return self._given_up

    def _handle(self, report: Report) -> None:
        try:
            self.process(report)  # looked up per report: tests replace it
        except Exception:
            # Never reached by design (every step is guarded); the channel
            # survives a bug in one report, and says which.
            with about_job(report.job_id, report.submission_id):
                log.exception('job %s: reporting failed unexpectedly; going on', report.job_id)

    def process(self, report: Report) -> None:
        """Delivers one report and finalizes its claim (the thread's body;
        public so tests can drive it without a thread)."""
        with about_job(report.job_id, report.submission_id):
            if isinstance(report, CompleteReport):
                self._complete(report)
            else:
                self._abort(report)

    def _complete(self, report: CompleteReport) -> None:
        # Bounded before the first attempt (outputs shortened, verdicts kept):
        # an oversized body would be refused by every attempt alike.
        try:
            body = complete_body(report.results, self._body_limit)
        except Exception:  # never a claim left held for a bug in the encoding
            log.exception('could not encode the result of %s; its lease will expire', report.job_id)
            self._count_given_up()
            self._finalize(report.job_id, report.job_dir, keep=True)
            return
        outcome = self._send(f'complete {report.job_id}',
                             lambda: self._client.complete(report.job_id, body))
        if outcome is Outcome.TOO_LARGE:
            # The report's fault, not the submission's: the verdicts alone.
            log.warning(
                'the backend refused the result of %s as too large (413); sending it '
                'without outputs (REPORT_BODY_LIMIT is %d bytes)', report.job_id, self._body_limit)
            small = body.without_outputs()
            outcome = self._send(f'complete {report.job_id}',
                                 lambda: self._client.complete(report.job_id, small))
            if outcome is Outcome.TOO_LARGE:
                outcome = None
        _count('complete', outcome)
        if outcome is Outcome.BAD_REQUEST:
            log.error('the backend refused the result of %s (400); aborting it as rejected',
                      report.job_id)
            self._abort(AbortReport(report.job_id, AbortReason.REJECTED, report.job_dir))
        elif outcome is None:
            self._count_given_up()
            log.error('giving up on the result of %s; its lease will expire', report.job_id)
            self._finalize(report.job_id, report.job_dir, keep=True)
        else:
            self._finalize(report.job_id, report.job_dir, keep=False)
            if outcome is Outcome.ACCEPTED:
                log.info('reported job %s: %s', report.job_id, _verdicts(report.results))
            else:
                log.warning('result of %s dropped by the backend (%s)', report.job_id,
                            outcome.value)

    def _abort(self, report: AbortReport) -> None:
        # Before sending: see the module docstring (ABA on re-claim).
        self._finalize(report.job_id, report.job_dir, keep=report.reason is AbortReason.REJECTED)
        # A retry must not abort a later claim of the same job: once this
        # runner holds more claims of it than right after the finalize, the
        # backend had requeued it, so an earlier attempt landed (its answer
        # was lost) or the lease expired. (No re-claim can come between the
        # finalize and the first attempt: the job is not requeued yet.)
        if report.release_only:
            log.info('job %s: a newer claim of it is held; this one lets go without an abort',
                     report.job_id)
            return
        held = self._tracker.claims_of(report.job_id)
        outcome = self._send(f'abort({report.reason.value}) {report.job_id}',
                             lambda: self._client.abort(report.job_id, report.reason),
                             settled=lambda: self._tracker.claims_of(report.job_id) > held)
        _count(f'abort_{report.reason.value}', outcome)
        if outcome is None:
            self._count_given_up()
            log.error('giving up on abort(%s) of %s; its lease will expire', report.reason.value,
                      report.job_id)
        elif outcome is Outcome.ACCEPTED:
            log.info('returned job %s to the backend: abort(%s) accepted', report.job_id,
                     report.reason.value)
        else:
            log.warning('abort(%s) of %s dropped by the backend (%s)', report.reason.value,
                        report.job_id, outcome.value)

    def _count_given_up(self) -> None:
        with self._lock:
            self._given_up += 1

    def _send(self,
              what: str,
              call: Callable[[], Answer],
              settled: Optional[Callable[[], bool]] = None) -> Optional[Outcome]:
        """The final outcome, or None when every retry failed. `settled()`,
        asked before each retry, says the report is known to have landed."""
        for attempt in range(len(RETRY_DELAYS_SEC) + 1):
            if attempt:
                metrics.REPORT_RETRIES.inc()
                self._sleep(jittered(RETRY_DELAYS_SEC[attempt - 1], self._rng))
                if settled is not None and settled():
                    log.info('%s: the job is claimed again, so an earlier attempt landed', what)
                    return Outcome.ACCEPTED
            try:
                answer = call()
            except Exception:
                log.exception('%s: the call failed unexpectedly', what)
                answer = Answer(Outcome.FAILED, 'local error')
            if answer.outcome not in _RETRIED:
                return answer.outcome
            log.warning('%s failed (%s), attempt %d of %d', what, answer.detail, attempt + 1,
                        len(RETRY_DELAYS_SEC) + 1)
        return None

    def _finalize(self, job_id: str, job_dir, keep: bool) -> None:
        """Releases the claim's tracker count and its folder, exactly once.

        The count first: its place is claimed again at once, while the
        folder is removed. Nothing else uses the folder by then (a claim
        generation's own, never reused; its job has left the dispatcher),
        and a drain waits for this thread anyway. So the folders may
        outnumber the places by the sender's threads, for a moment."""
        self._tracker.remove(job_id)
        try:
            if job_dir is not None:
                if keep:
                    self._folders.back_up(job_dir)
                else:
                    self._folders.remove(job_dir)
        except Exception:
            log.exception('could not finalize the folder of %s', job_id)


_OUTCOME_NAMES = {
    Outcome.ACCEPTED: 'accepted',
    Outcome.CONFLICT: 'dropped_409',
    Outcome.NOT_FOUND: 'dropped_404',
    Outcome.BAD_REQUEST: 'rejected',
    None: 'exhausted',
}


def _count(kind: str, outcome: Optional[Outcome]) -> None:
    metrics.REPORTS.labels(kind, _OUTCOME_NAMES.get(outcome, 'other')).inc()


def _verdicts(results: Results) -> str:
    """'AC 3, WA 1': how many cases got each verdict."""
    counts = collections.Counter(case.status.value for cases in results for case in cases)
    return ', '.join(f'{status} {n}' for status, n in counts.most_common())
