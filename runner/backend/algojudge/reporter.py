"""The reporter: the one channel through which every AlgoJudge claim ends,
reported or released (docs/algojudge.md §5 to §7).

- A report: its attachments uploaded and attached first (a failed one is a
  warning, never a reason not to report), then the report, resent as the
  same body after a lost answer, a 5xx, 429 or maintenance, with backoff,
  for at most the granted lease's length; the lease keeper renews the lease
  meanwhile, since the claim is held until the report lands.
- A release: the claim is finalized first, then released; the job is back
  in the queue at once and this runner may claim it again, under a new
  lease token that the older claim's end never touches.
- Stale, foreign or `job.state`: the job is not this runner's any more; it
  is dropped silently (no further call with that token).
"""
import logging
import random
import threading
import time
from typing import Callable, Optional, Tuple, Union

from runner.backend.algojudge.client import AlgoJudgeClient, Refused
from runner.backend.algojudge.enrolment import Rejoin
from runner.backend.algojudge.held import Held, HeldJobs
from runner.backend.algojudge.reports import JobReport, failure
from runner.backend.http_session import BackendError
from runner.threads import WorkerThreads
from runner.waiting import jittered

log = logging.getLogger(__name__)

BACKOFF_SEC = (1, 2, 4, 8, 16, 30)


class Release:
    """Hand the claim back: the runner is stopping, or its host cannot judge."""

    def __init__(self, held: Held, why: str):
        self.held = held
        self.why = why


class Reporter:

    def __init__(self,
                 client: AlgoJudgeClient,
                 held: HeldJobs,
                 finalize: Callable[[Held], None],
                 *,
                 workers: int = 4,
                 rejoin: Optional[Rejoin] = None,
                 wait: Optional[Callable[[float], None]] = None,
                 clock: Callable[[], float] = time.monotonic,
                 rng: Optional[random.Random] = None):
        """`finalize(held)`: the claim's files go (called once per claim)."""
        self._client = client
        self._held = held
        self._finalize = finalize
        self._rejoin = rejoin or Rejoin()
        self._wait = wait or time.sleep
        self._clock = clock
        self._rng = rng or random.Random()
        self._lock = threading.Lock()
        self._given_up = 0
        self._workers = WorkerThreads('reporter', workers, self._handle)

    def submit(self,
               item: Union[JobReport, Release, Callable[[], JobReport]],
               held: Optional[Held] = None) -> None:
        """A report of `held`'s claim (or what makes it, called on a
        reporter's thread: the dispatcher's lock is no place to score), or a
        Release (which names its own claim). Enqueues only."""
        self._workers.submit((item, held))

    def queued(self) -> int:
        return self._workers.queued()

    @property
    def given_up(self) -> int:
        with self._lock:
            return self._given_up

    def start(self) -> None:
        self._workers.start()

    def stop(self) -> None:
        """The threads end once everything queued before has been handled."""
        self._workers.stop()

    def join(self, timeout: Optional[float] = None) -> bool:
        return self._workers.join(timeout)

    def is_alive(self) -> bool:
        return self._workers.is_alive()

    def _handle(self, entry: Tuple[object, Optional[Held]]) -> None:
        item, held = entry
        try:
            if isinstance(item, Release):
                self._release(item)
            else:
                self._report(self._made(item, held), held)
        except Exception:
            log.exception('reporting failed unexpectedly; going on')
            if held is not None and self._held.remove(held):
                self._finalize(held)  # its lease runs out: the job is judged again

    def _made(self, item: Union[JobReport, Callable[[], JobReport]], held: Held) -> JobReport:
        if isinstance(item, JobReport):
            return item
        try:
            return item()
        except Exception as exc:
            log.exception('job %s: making its report failed', held.job_id)
            return failure(held.job_id, held.token,
                           f'the runner failed making the report ({type(exc).__name__})')

    def _release(self, item: Release) -> None:
        held = item.held
        if not self._held.remove(held):
            return  # ended already
        try:
            self._finalize(held)
        finally:
            self._send_release(held, item.why)

    def _send_release(self, held: Held, why: str) -> None:
        log.info('job %s: released (%s)', held.job_id, why)
        try:
            self._client.release(held.job_id, held.token)
        except Refused as exc:
            if not exc.not_mine:
                log.warning('job %s: the release was refused (%s); the lease expires instead',
                            held.job_id, exc)
        except BackendError as exc:
            log.warning('job %s: the release failed (%s); the lease expires instead', held.job_id,
                        exc)

    def _report(self, report: JobReport, held: Held) -> None:
        if not self._held.holds(held):
            return  # dropped: not this runner's any more
        try:
            if not self._attach(report, held):
                return
            self._send(report, held)
        finally:
            if self._held.remove(held):
                self._finalize(held)

    def _attach(self, report: JobReport, held: Held) -> bool:
        """Upload and attach; False when the job turned out not to be ours."""
        for attachment in report.attachments:
            if not self._held.holds(held):
                return False  # taken back meanwhile: no further call with its token
            try:
                file_id = self._client.upload(attachment.file_name, attachment.content_type,
                                              attachment.data)
                self._client.attach(held.job_id, held.token, file_id, attachment.name)
            except Refused as exc:
                if exc.not_mine:
                    log.info('job %s: no longer this runner\'s (%s); dropped', held.job_id,
                             exc.code)
                    return False
                log.warning('job %s: attaching %s failed (%s); reporting without it', held.job_id,
                            attachment.name, exc)
            except BackendError as exc:
                log.warning('job %s: attaching %s failed (%s); reporting without it', held.job_id,
                            attachment.name, exc)
        return True

    def _send(self, report: JobReport, held: Held) -> None:
        deadline = self._clock() + held.lease_sec
        attempt = 0
        while True:
            if not self._held.holds(held):
                return  # taken back meanwhile: no further call with its token
            try:
                answer = self._client.report(held.job_id, report.body)
            except Refused as exc:
                if exc.not_mine:
                    log.info('job %s: no longer this runner\'s (%s); dropped', held.job_id,
                             exc.code)
                    return
                if exc.standing:
                    # Perhaps for a moment: the result is kept and sent again
                    # within its lease while the runner asks where it stands.
                    self._rejoin.ask(f'job {held.job_id}: reporting: {exc}')
                    delay = self._delay(attempt)
                elif not exc.transient:
                    # Our bug (422 and the like): loudly, and never the same body again.
                    log.error('job %s: the report was refused: %s (%s)', held.job_id, exc,
                              exc.problem.detail)
                    self._gave_up()
                    return
                else:
                    delay = max(self._delay(attempt), exc.problem.retry_after_sec or 0)
            except BackendError as exc:
                delay = self._delay(attempt)
                log.warning('job %s: reporting failed (%s); sending it again', held.job_id, exc)
            else:
                what = 'an infrastructure failure' if report.infrastructure_failure else \
                    f'{report.body.get("verdict")} {report.body.get("score")}'
                log.info('job %s: reported %s (%s%s)', held.job_id, what, answer.state,
                         ', again' if answer.duplicate else '')
                return
            if self._clock() + delay > deadline:
                log.error(
                    'job %s: the report did not land within the lease (%.0f s); the '
                    'job is judged again elsewhere', held.job_id, held.lease_sec)
                self._gave_up()
                return
            attempt += 1
            self._wait(delay)

    def _delay(self, attempt: int) -> float:
        return jittered(BACKOFF_SEC[min(attempt, len(BACKOFF_SEC) - 1)], self._rng)

    def _gave_up(self) -> None:
        with self._lock:
            self._given_up += 1
