"""The claimer: claims AlgoJudge jobs while there is capacity, prepares each
on a thread of its own and dispatches it (docs/algojudge.md §3).

Every claim ends in exactly one of: dispatched (its report comes from the
dispatcher's result), a report queued (refused before a build, or an
infrastructure failure), a release queued (a stop, a fault of this host),
or dropped (not this runner's any more, or the server away before a result
existed: left to its lease). The order of the steps is the point:

- the claim is held before its downloads, so its lease is renewed while
  they run and the capacity counts it;
- a claim is long-polled with a request timeout above the wait; after a
  held 204 the next claim is asked at once, after an immediate one it
  backs off (jittered), and `Retry-After` only ever lengthens a wait;
- on a stop, a claim in flight is given CLAIM_SETTLE_SEC to answer, and
  what it returns is released, never left to its lease;
- a stop during preparation, or a fault of this host, releases the claim.
"""
import logging
import random
import threading
import time
from typing import Callable, Optional

from runner.backend.algojudge.client import AlgoJudgeClient, Refused, Unreachable
from runner.backend.algojudge.enrolment import Rejoin
from runner.backend.algojudge.held import Held, HeldJobs
from runner.backend.algojudge.preparation import Preparer
from runner.backend.algojudge.reporter import Release, Reporter
from runner.backend.algojudge import reports
from runner.backend.http_session import BackendError, Interrupted
from runner.host_health import HostHealth
from runner.prep_workers import PrepWorkers
from runner.threads import LoopThread
from runner.waiting import jittered
from sandbox.faults import HostFault, disk_fault
from standard_io.errors import NotJudgeable

log = logging.getLogger(__name__)

WAIT_SEC = 25  # proxies cut silent requests (Azure at 20 s... nginx at 60 s)
CLAIM_SETTLE_SEC = 2.0
BACKOFF_SEC = (1, 2, 4, 8, 16, 30)
MIN_LEASE_SEC = 0.5  # the contract's floor is 5 s; a test server grants less
MAX_LEASE_SEC = 3600


class Claimer(LoopThread):

    def __init__(self,
                 client: AlgoJudgeClient,
                 held: HeldJobs,
                 preparer: Preparer,
                 dispatcher,
                 reporter: Reporter,
                 *,
                 capacity: int,
                 lease_sec: int,
                 health: Optional[HostHealth] = None,
                 finalize: Callable[[Held], None] = lambda held: None,
                 on_not_approved: Callable[[], bool] = lambda: True,
                 rejoin: Optional[Rejoin] = None,
                 wait_sec: int = WAIT_SEC,
                 clock: Callable[[], float] = time.monotonic,
                 rng: Optional[random.Random] = None):
        super().__init__('claimer')
        self._client = client
        self._held = held
        self._preparer = preparer
        self._dispatcher = dispatcher
        self._reporter = reporter
        self._capacity = capacity
        self._lease_sec = lease_sec
        self._health = health
        self._finalize = finalize
        self._on_not_approved = on_not_approved
        self._rejoin = rejoin or Rejoin()
        self._wait_sec = wait_sec
        self._clock = clock
        self._rng = rng or random.Random()
        self._workers = PrepWorkers(capacity, name='prep')
        self._claiming = threading.Event()
        self._settled = threading.Event()
        self._empty_answers = 0

    def start(self) -> None:
        self._workers.start()
        super().start()

    def stop(self) -> None:
        super().stop()
        self._workers.stop()
        # A claim in flight is given a moment to answer (what it returns is
        # released; an answer lost here would orphan the job until its lease
        # ends), then this client's requests are cut: downloads end at once,
        # and their claims are released.
        threading.Thread(target=self._cut_short, name='claim-settle', daemon=True).start()

    def join(self, timeout: Optional[float] = None) -> bool:
        deadline = None if timeout is None else self._clock() + timeout
        ended = super().join(timeout)
        left = None if deadline is None else max(0.0, deadline - self._clock())
        return self._workers.join(left) and ended

    def _wake(self) -> None:
        self._held.poke()

    def _cut_short(self) -> None:
        if self._claiming.is_set():
            self._settled.wait(CLAIM_SETTLE_SEC)
        self._client.interrupt()

    def _run(self) -> None:
        while not self._stop.is_set():
            if self._rejoin.take():
                # Approval withdrawn, or the key forgotten: nothing is
                # claimed until the server says where this runner stands.
                if not self._on_not_approved():
                    return  # revoked, or stopped meanwhile
                continue
            if self._health is not None and not self._health.healthy:
                # Nothing is claimed until the host can judge again.
                self._health.wait_healthy(1.0)
                continue
            if len(self._held) >= self._capacity:
                self._held.wait(lambda: self._stop.is_set() or len(self._held) < self._capacity, 60)
                continue
            delay = self.claim_once()
            if delay:
                self._stop.wait(delay)

    def claim_once(self) -> float:
        """One claim; the delay before the next one."""
        asked = self._clock()
        self._settled.clear()
        self._claiming.set()
        try:
            claimed, granted = self._client.claim(self._lease_sec, self._wait_sec)
        except Refused as exc:
            return self._refused(exc)
        except (Unreachable, BackendError) as exc:
            if self._stop.is_set():
                return 0
            log.warning('claiming failed: %s', exc)
            return self._backoff()
        except Exception:  # a bug of ours, or an answer none of the above foresaw
            log.exception('claiming failed unexpectedly')  # and the claimer goes on
            return self._backoff()
        finally:
            self._claiming.clear()
            self._settled.set()
        if claimed is None:
            if self._clock() - asked >= self._wait_sec / 2:
                self._empty_answers = 0
                return 0  # a held 204: ask again at once
            return self._backoff()
        self._empty_answers = 0
        lease = self._clamped_lease()
        if granted is not None and MIN_LEASE_SEC <= granted <= MAX_LEASE_SEC:
            lease = granted  # else a skewed or absurd answer: what was asked, clamped
        held = self._held.add(claimed, lease, self._clock())
        log.info('job %s (submission %s, attempt %d): claimed, lease %.0f s', claimed.job_id,
                 claimed.submission_id, claimed.attempt, lease)
        if self._stop.is_set():
            self._reporter.submit(Release(held, 'the runner is stopping'))
        else:
            self._workers.submit(lambda: self._prepare(held))
        return 0

    def _prepare(self, held: Held) -> None:
        """Every path ends the claim one way (module docstring), whatever is raised."""
        claimed = held.claimed
        try:
            prepared = self._prepared(held)
            if prepared is not None:
                self._dispatch(held, prepared)
        except Exception as exc:  # a bug of ours: the claim still ends, as a failure of the judge
            log.exception('job %s: preparing it failed unexpectedly', claimed.job_id)
            self._reporter.submit(
                reports.failure(claimed.job_id, claimed.lease_token,
                                f'the runner failed preparing it ({type(exc).__name__})'), held)

    def _prepared(self, held: Held):
        """The Prepared, or None when the claim already ended here."""
        claimed = held.claimed
        started = self._clock()
        attempt = 0
        while True:
            if self._stop.is_set():
                self._reporter.submit(Release(held, 'the runner is stopping'))
                return None
            try:
                return self._preparer.prepare(claimed, self._stop)
            except NotJudgeable as exc:
                log.warning('job %s: cannot be judged here: %s', claimed.job_id, exc)
                self._reporter.submit(
                    reports.failure(claimed.job_id, claimed.lease_token, str(exc)), held)
                return None
            except Interrupted:
                self._reporter.submit(Release(held, 'the runner is stopping'))
                return None
            except HostFault as exc:
                self._host_fault(held, exc)
                return None
            except OSError as exc:
                fault = disk_fault(exc, 'DATA_DIR')
                if fault is None:
                    raise
                self._host_fault(held, fault)
                return None
            except Refused as exc:
                if exc.not_mine:
                    log.info('job %s: its files were refused (%s): not this runner\'s any more',
                             claimed.job_id, exc)
                    self._held.remove(held)
                    return None
                if exc.standing:
                    self._rejoin.ask(f'job {claimed.job_id}: downloading: {exc}')
                elif not exc.transient:
                    log.error('job %s: its files were refused: %s', claimed.job_id, exc)
                    self._reporter.submit(
                        reports.failure(claimed.job_id, claimed.lease_token,
                                        f'the server refused its files ({exc})'), held)
                    return None
                else:
                    log.warning('job %s: the server is away (%s)', claimed.job_id, exc)
                delay = max(self._delay(attempt), exc.problem.retry_after_sec or 0)
            except BackendError as exc:
                log.warning('job %s: downloading failed (%s)', claimed.job_id, exc)
                delay = self._delay(attempt)
            attempt += 1
            if self._stop.is_set():
                # Most likely cut by the stop itself (its interrupt comes after
                # the claims' settle and the answers' grace, 2.5 s in, when a
                # short lease may be near its end): released at the top, never
                # left to its lease.
                continue
            if self._clock() + delay - started > held.lease_sec:
                # The server is away before a result exists: nothing is
                # reported, the job returns to the queue when its lease ends.
                log.error('job %s: its files could not be fetched within its lease; left to it',
                          claimed.job_id)
                self._held.remove(held)
                return None
            self._stop.wait(delay)

    def _dispatch(self, held: Held, prepared) -> None:
        claimed = held.claimed
        held.prepared = prepared
        if prepared.job is None:
            self._reporter.submit(
                reports.refused(claimed.job_id, claimed.lease_token, prepared, prepared.refusal),
                held)
            return
        if not self._held.holds(held):
            self._finalize(held)  # taken back while it was prepared
            return
        if self._stop.is_set():
            self._reporter.submit(Release(held, 'the runner is stopping'))
            return
        if self._health is not None and not self._health.healthy:
            # Dispatched now, it would wait, its lease renewed, for as long
            # as the host stays broken: back to the queue for another runner.
            self._reporter.submit(Release(held, 'this host cannot judge now'))
            return
        job = prepared.job
        try:
            self._dispatcher.check_limits(max(meta.memory_limit_kb for meta in job.tasks))
        except HostFault as exc:
            # This job's alone: the host is healthy for every other. Not a
            # release (never "I cannot judge this"): a failure naming why.
            log.warning('job %s: %s', claimed.job_id, exc.cause)
            self._reporter.submit(
                reports.failure(
                    claimed.job_id, claimed.lease_token,
                    f'this runner\'s sandboxes cannot give the memory limit '
                    f'({exc.cause})'), held)
            return
        try:
            self._dispatcher.handle(job)
        except HostFault as exc:
            self._host_fault(held, exc)
            return
        except ValueError as exc:
            log.error('job %s: the dispatcher refused it: %s', claimed.job_id, exc)
            self._reporter.submit(
                reports.failure(claimed.job_id, claimed.lease_token, f'the runner: {exc}'), held)
            return
        if not self._held.holds(held):
            # Taken back between the check above and the dispatch: stopped now.
            self._dispatcher.cancel(job)

    def _host_fault(self, held: Held, fault: HostFault) -> None:
        """Never a verdict: the claim goes back for a runner whose host can judge."""
        log.error('job %s: this host cannot judge now (%s): releasing it', held.job_id, fault.cause)
        self._reporter.submit(Release(held, f'this host cannot judge: {fault.kind.value}'))
        if self._health is not None:
            self._health.report(fault)

    def _refused(self, exc: Refused) -> float:
        if exc.standing:
            self._rejoin.ask(f'claiming: {exc}')
            # The loop's top joins again first, after a backoff: a server
            # that refuses every claim, joined or not, is not hammered.
            return self._backoff()
        if exc.transient:
            log.info('claiming: the server is away (%s)', exc)
            return max(self._backoff(), exc.problem.retry_after_sec or 0)
        log.error('claiming refused: %s (%s)', exc, exc.problem.detail)
        return self._backoff()

    def _delay(self, attempt: int) -> float:
        return jittered(BACKOFF_SEC[min(attempt, len(BACKOFF_SEC) - 1)], self._rng)

    def _backoff(self) -> float:
        delay = BACKOFF_SEC[min(self._empty_answers, len(BACKOFF_SEC) - 1)]
        self._empty_answers += 1
        return jittered(delay, self._rng)

    def _clamped_lease(self) -> float:
        return float(min(max(self._lease_sec, 60), MAX_LEASE_SEC))
