"""The lease keeper: every held claim's lease renewed every quarter of the
lease its server granted, until its report has landed, and a heartbeat on
its own timer while nothing is held (docs/algojudge.md §4, §8).

Renewals due together go in one batch call (one per job on an older server
without the batch route). A renewal that fails (network, 5xx) loses no
lease: the timer goes on, and two in a row may fail safely. A renewal the
server refuses as not this runner's any more (stale, foreign, `job.state`,
an unknown job) is the job's cancel signal: `on_lost` stops judging it at
once and drops it, with no report. Deadlines are this host's monotonic
clock from the moment of each renewal: never arithmetic on the server's
instants.
"""
import logging
import time
from typing import Callable, Dict, List, Optional

from runner.backend.algojudge.client import UNKNOWN_KEY, AlgoJudgeClient, Refused
from runner.backend.algojudge.enrolment import Rejoin
from runner.backend.algojudge.held import Held, HeldJobs
from runner.backend.algojudge.wire import NOT_MINE
from runner.backend.http_session import BackendError
from runner.threads import LoopThread

log = logging.getLogger(__name__)

HEARTBEAT_SEC = 60.0
MAX_BATCH = 512
# Bare 404s in a row on the batch route before it is taken for an older
# server's missing route (a proxy's 404 during a deploy is not that).
BATCH_404S = 3
MAX_WAIT_SEC = 3600.0


class LeaseKeeper(LoopThread):

    def __init__(self,
                 client: AlgoJudgeClient,
                 held: HeldJobs,
                 *,
                 lease_sec: int,
                 on_lost: Callable[[Held], None],
                 rejoin: Optional[Rejoin] = None,
                 heartbeat_sec: float = HEARTBEAT_SEC,
                 clock: Callable[[], float] = time.monotonic):
        super().__init__('lease-keeper')
        self._client = client
        self._held = held
        self._lease_sec = lease_sec
        self._on_lost = on_lost
        self._rejoin = rejoin or Rejoin()
        self._heartbeat_sec = heartbeat_sec
        self._batch_404s = 0
        self._clock = clock
        self._batch = True  # until an older server says it has no batch route
        self._last_contact: Optional[float] = None
        self._next_heartbeat = clock()

    @property
    def interval_sec(self) -> float:
        """How often the server hears from this runner: its heartbeat, or the
        renewal of the longest lease held (/healthz allows a few of these)."""
        return max([self._heartbeat_sec] + [h.lease_sec / 4 for h in self._held.snapshot()])

    def accepted_within(self, seconds: float) -> bool:
        """The server took a renewal or a heartbeat that recently (/healthz)."""
        last = self._last_contact
        return last is not None and self._clock() - last <= seconds

    def _wake(self) -> None:
        self._held.poke()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.tick()
            except Exception:
                log.exception('lease keeper: unexpected error; going on')
            version = self._held.version
            self._held.wait(lambda: self._stop.is_set() or self._held.version != version,
                            self._until_next())

    def _until_next(self) -> float:
        now = self._clock()
        due = [h.next_renewal for h in self._held.snapshot()]
        when = min(due) if due else self._next_heartbeat
        return min(MAX_WAIT_SEC, max(0.0, when - now))

    def tick(self) -> None:
        """One round: renew what is due, else heartbeat when nothing is held
        and its time has come (the loop's body; public so tests drive it)."""
        now = self._clock()
        held = self._held.snapshot()
        due = [h for h in held if h.next_renewal <= now]
        if due:
            for h in due:
                # The timer goes on whatever the answer: a failed renewal is
                # not a lost lease.
                h.next_renewal = now + h.lease_sec / 4
            for start in range(0, len(due), MAX_BATCH):
                self._renew(due[start:start + MAX_BATCH])
        elif not held and now >= self._next_heartbeat:
            self._next_heartbeat = now + self._heartbeat_sec
            try:
                self._client.heartbeat()
                self._last_contact = self._clock()
            except Refused as exc:
                self._refused(exc, 'heartbeat')
            except BackendError as exc:
                log.info('heartbeat failed: %s', exc)

    def _renew(self, due: List[Held]) -> None:
        # A batch answers by job id: two claims of one job (an older one not
        # yet ended, a newer one) never share a batch.
        first: Dict[str, Held] = {}
        for h in due:
            first.setdefault(h.job_id, h)
        alone = [h for h in due if first[h.job_id] is not h]
        if not self._batch or not self._renew_batch(list(first.values())):
            alone = due
        for h in alone:
            self._renew_one(h)

    def _renew_batch(self, due: List[Held]) -> bool:
        """False when the route is not there (renew them one by one now)."""
        try:
            items = self._client.renew_all([(h.job_id, h.token) for h in due], self._lease_sec)
        except Refused as exc:
            if exc.bare_404:
                # An older server, or a proxy's 404 for a moment: this round
                # goes job by job either way, and after a few in a row, every
                # round (a lease must never wait for the route to come back).
                self._batch_404s += 1
                if self._batch_404s >= BATCH_404S:
                    log.info('the server has no batch renewal: renewing one job at a time')
                    self._batch = False
                return False
            self._refused(exc, 'lease renewal')
            # The server away or this runner's standing: single renewals
            # would be refused the same. Any other refusal is of the batch
            # call itself (its size, its route): its jobs are renewed one by
            # one this round, as a lease must never lapse for the route.
            return exc.transient or exc.standing
        except BackendError as exc:
            log.warning('lease renewal of %d job(s) failed: %s; the timer goes on', len(due), exc)
            return True
        self._batch_404s = 0
        self._last_contact = self._clock()
        codes = {item.job_id: item.code for item in items}
        for h in due:
            code = codes.get(h.job_id)
            if code in NOT_MINE:
                self._lost(h, code)
            elif code is not None:
                log.warning('job %s: lease renewal refused (%s)', h.job_id, code)
        return True

    def _renew_one(self, h: Held) -> None:
        try:
            self._client.renew(h.job_id, h.token, self._lease_sec)
            self._last_contact = self._clock()
        except Refused as exc:
            if exc.not_mine:
                self._lost(h, exc.code)
            else:
                self._refused(exc, f'lease renewal of job {h.job_id}')
        except BackendError as exc:
            log.warning('job %s: lease renewal failed: %s; the timer goes on', h.job_id, exc)

    def _lost(self, held: Held, code: str) -> None:
        if not self._held.holds(held):
            return  # reported or released meanwhile
        log.info('job %s: no longer this runner\'s (%s): stopping it, nothing is reported',
                 held.job_id, code)
        self._on_lost(held)

    def _refused(self, exc: Refused, what: str) -> None:
        if not exc.bare_404:
            # The server itself answered (in maintenance, busy, or waiting
            # for an administrator): this runner is alive and in touch.
            self._last_contact = self._clock()
        if exc.code in ('runner.notApproved', UNKNOWN_KEY):
            self._rejoin.ask(f'{what}: {exc}')
        elif exc.transient:
            log.info('%s: the server is away (%s); the timer goes on', what, exc)
        else:
            log.error('%s refused: %s', what, exc)
