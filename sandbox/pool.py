"""Sandbox containers: how many are alive, which job each serves, which are free.

A container serves one job generation at a time, and many in turn. When a
job is released its containers are reset (`SandboxContainer.reset`: nothing
runs, nothing written is left, both checked by the supervisor; the next job's
runs get a uid of their own and an empty job folder) and become free for the
next job of their image. A container whose reset fails, that broke, or that
has served `max_jobs` jobs or lived `max_age_sec` is destroyed instead.

Creating (~100 ms) and removing (~50 ms) a container are the engine's work
on the same cores as the judging, so they are kept off the jobs' path: jobs
take free containers or another job's idle one (reset for them), the pool's
own thread removes the doomed ones and starts spares, and starts none while
every core is judging; a caller holding a core asks for a container without
engine work first (`engine_work=False`). At most `max_alive` containers exist
at any moment, counting those being created and those waiting to be removed.

The caller (the run engine) runs at most `max_alive` sandbox runs at once, so
an acquire can always be served: by the job's own idle container, a free one,
another job's idle one, one being put back, a new container, or one in place
of a doomed container, a free container of another image or another job's
idle one.

Each container has one record (`_Record`): its state, the job it serves, its
birth and the jobs it has served. Every decision reads the records under one
condition; engine work and resets happen outside it.
"""
import dataclasses
import enum
import itertools
import logging
import threading
import time
from typing import Callable, Dict, FrozenSet, List, Mapping, Optional, Tuple

from sandbox.container import SandboxBroken, SandboxContainer

log = logging.getLogger(__name__)

Factory = Callable[[str], SandboxContainer]
# Why a container was made (SandboxPool's `on_created`): a spare the keeper
# keeps; an acquire with room; an acquire at capacity, in the slot of a
# doomed container, or of a free or idle container of another image, which
# was destroyed for it (the churn a host of several images can have).
CREATION_CAUSES = ('spare', 'room', 'replacement', 'eviction')
# The longest an acquire waits, in all, for containers being put back: about
# what a new container takes. A reset takes milliseconds, but a job can
# make its own folder's removal take seconds (negative dentries of names
# looked up and never found, freed one by one), and a wait longer than a
# new container takes is never a gain.
PUT_BACK_WAIT_SEC = 0.1


class _State(enum.Enum):
    FREE = 'free'  # reset, no job's: any job of its image may have it
    IDLE = 'idle'  # its job's, between two of that job's runs
    IN_RUN = 'in run'  # acquired and not given back yet
    TAKEN_OVER = 'taken over'  # being reset for a run of another job
    PUT_BACK = 'put back'  # being reset after its job, to be free
    DOOMED = 'doomed'  # to be destroyed by the keeper
    REMOVING = 'removing'  # being destroyed by the keeper (its slot held until it is gone)


class _Way(enum.Enum):
    """How an acquire is served (SandboxPool._choose)."""
    OWN = 'own'  # the job's own idle container, holding its files
    FREE = 'free'  # a free one
    TAKE_OVER = 'take over'  # another job's idle one, to be reset
    NEW = 'new'  # a new one (in a victim's slot)
    NONE = 'none'  # none without engine work


@dataclasses.dataclass(eq=False)
class _Record:
    container: SandboxContainer
    born: float
    state: _State
    job: Optional[str] = None  # the job it serves; None once that job is released
    jobs_served: int = 0
    freed: int = 0  # when it last became free (a sequence number: the most recent first)

    @property
    def image(self) -> str:
        return self.container.image


@dataclasses.dataclass(frozen=True)
class PoolStats:
    """What the pool holds at one moment. `alive` counts every container
    that exists, slots being created included; `in_runs` the containers
    acquired (or being made or reset for an acquire) and not given back;
    `free` the free containers by image, the most recently used last;
    `spare_wanted` the image the keeper would start a spare of now;
    `awaiting_put_back` the acquires waiting for a container being put back."""
    alive: int
    creating: int
    in_runs: int
    idle: int
    doomed: int
    jobs: int
    free: Mapping[str, Tuple[SandboxContainer, ...]]
    spare_wanted: Optional[str]
    created: Mapping[str, int]  # since the start, by cause (CREATION_CAUSES)
    awaiting_put_back: int = 0


class SandboxPool:

    def __init__(self,
                 factory: Factory,
                 max_alive: int,
                 spares: Dict[str, int],
                 cores: int = 1,
                 max_jobs: int = 100,
                 max_age_sec: float = 3600.0,
                 max_starting: int = 2,
                 acquire_timeout: float = 120.0,
                 put_back_wait_sec: float = PUT_BACK_WAIT_SEC,
                 on_start_failure: Callable[[], None] = lambda: None,
                 on_created: Callable[[str], None] = lambda cause: None,
                 clock: Callable[[], float] = time.monotonic):
        """`cores`: runs that fill the host (no spare is started while that
        many containers are in runs). `on_start_failure()` is told of every
        container that did not start, `on_created(cause)` of every one made
        (CREATION_CAUSES)."""
        self._factory = factory
        self._on_start_failure = on_start_failure
        self._on_created = on_created
        self._created = {cause: 0 for cause in CREATION_CAUSES}
        # Only reached if callers run more at once than `max_alive`; a run
        # that cannot get a container becomes JE instead of waiting forever.
        self._acquire_timeout = acquire_timeout
        self._put_back_wait_sec = put_back_wait_sec
        self._max_alive = max_alive
        self._cores = cores
        self._max_jobs = max_jobs
        self._max_age_sec = max_age_sec
        self._clock = clock
        self._spare_target = dict(spares)
        self._cond = threading.Condition()
        self._records: Dict[SandboxContainer, _Record] = {}
        self._creating_for_runs = 0  # slots of containers being made for an acquire
        self._creating_spares = 0  # and for the keeper
        # Acquires waiting for a container being put back, by image: as
        # many wait as are being put back, the others make new ones.
        self._awaiting_put_back: Dict[str, int] = {}
        self._put_backs_ended = 0  # each put back ended (free, or doomed)
        self._freed = itertools.count(1)
        # Engine calls that create containers are bounded: a burst of starts
        # once wedged the engine on these hosts.
        self._starting = threading.BoundedSemaphore(max_starting)
        self._stopping = False
        self._keeper = threading.Thread(target=self._keep, name='sandbox-pool', daemon=True)

    def start(self) -> None:
        self._keeper.start()

    def stop(self) -> None:
        """Destroy every container not in a run (the rest when given back);
        later acquires fail."""
        with self._cond:
            self._stopping = True
            doomed = [
                r.container for r in self._records.values()
                if r.state in (_State.FREE, _State.IDLE, _State.DOOMED)
            ]
            for c in doomed:
                del self._records[c]
            self._cond.notify_all()
        for c in doomed:
            c.destroy()

    def join(self, timeout: Optional[float] = None) -> bool:
        """True when the pool's thread has ended (or never started)."""
        if self._keeper.ident is not None:
            self._keeper.join(timeout)
        return not self._keeper.is_alive()

    def stats(self) -> PoolStats:
        with self._cond:
            return self._stats()

    def wait_for(self, predicate: Callable[[PoolStats], bool], timeout: float) -> bool:
        """Wait until `predicate(stats)` holds (for observers: nothing in the
        pool's own work waits on it); False when `timeout` passed first."""
        with self._cond:
            return self._cond.wait_for(lambda: predicate(self._stats()), timeout)

    def alive(self) -> int:
        """Containers alive now, free ones included (a metric)."""
        with self._cond:
            return self._alive()

    def acquire(
        self,
        job_key: str,
        image: str,
        stage: Callable[[SandboxContainer], None],
        engine_work: bool = True,
        keep: FrozenSet[str] = frozenset()) -> Optional[SandboxContainer]:
        """A container for `job_key`, already holding the job's files.

        With `engine_work` False only one that needs neither the engine nor
        a wait (the job's own, a free one, another job's idle one taken
        over), else None: a caller holding a core asks that way first.
        `keep`: jobs about to run again, whose idle containers are taken
        over only when no other job's is idle."""
        obtained = self._obtain(job_key, image, engine_work, keep)
        if obtained is None:
            return None
        container, staged = obtained
        if staged:
            return container
        try:
            stage(container)
        except BaseException:
            self.give_back(container, broken=True)
            raise
        return container

    def give_back(self, container: SandboxContainer, broken: bool = False) -> None:
        """End of one run. A broken container is destroyed; one whose job was
        released meanwhile is reset for the next job."""
        with self._cond:
            record = self._records[container]
            self._cond.notify_all()
            reusable = not broken and not self._stopping
            if reusable and record.job is not None:
                record.state = _State.IDLE
                return
            if reusable:
                record.state = _State.PUT_BACK
        if reusable:
            self._put_back(record)
        else:
            self._doom(record)

    def release(self, job_key: str) -> None:
        """Reset the job's idle containers for other jobs; busy ones follow
        when given back."""
        with self._cond:
            idle = []
            for record in self._records.values():
                if record.job != job_key:
                    continue
                record.job = None
                if record.state is _State.IDLE:
                    record.state = _State.PUT_BACK
                    idle.append(record)
        for record in idle:
            self._put_back(record)  # never raises: a container it cannot reset is doomed

    def abort_runs(self, job_key: str) -> None:
        """Kill the job's containers that are in a run now (from any
        thread); they are thrown away when given back."""
        with self._cond:
            running = [
                record.container for record in self._records.values()
                if record.job == job_key and record.state is _State.IN_RUN
            ]
        for container in running:
            container.abort()

    def _obtain(self, job_key: str, image: str, engine_work: bool,
                keep: FrozenSet[str]) -> Optional[Tuple[SandboxContainer, bool]]:
        """A container of `image` assigned to `job_key` and counted in a run,
        and whether it holds the job's files already (see `_choose`)."""
        while True:
            with self._cond:
                way, record = self._choose(job_key, image, engine_work, keep)
            if way is _Way.NONE:
                return None
            if way is not _Way.TAKE_OVER:
                if way is _Way.NEW:
                    cause = 'room' if record is None else (
                        'replacement' if record.state is _State.DOOMED else 'eviction')
                    return self._new(job_key, image, record, cause), False
                return record.container, way is _Way.OWN
            try:
                # The caller may hold a core: the last job's folder is
                # removed off its path (SandboxContainer.reset).
                record.container.reset(set_aside=True)
            except BaseException as exc:
                self._doom(record)
                if not isinstance(exc, SandboxBroken):
                    raise
                log.warning('a sandbox could not be reset for another job: %s', exc)
                continue
            with self._cond:
                if not self._stopping:
                    self._assign(record, job_key)
                    return record.container, False
                del self._records[record.container]
                self._cond.notify_all()
            # stop() passed while it was being reset: nothing may run after it.
            record.container.destroy()
            raise SandboxBroken('sandbox pool is stopped')

    def _choose(self, job_key: str, image: str, engine_work: bool,
                keep: FrozenSet[str]) -> Tuple['_Way', Optional[_Record]]:
        """Lock held: how the acquire is served, waiting until it can be.

        In order: the job's own idle container, a free one (both in a run
        now); without engine work another job's idle container, to be reset
        for this one (about a millisecond; that job gets another when it
        needs one), else none. With engine work: while there is room, one
        being put back (waited for: its reset is about done) as long as the
        acquires waiting so are fewer, else a new one; at capacity a
        container taken over, else a new one in place of a victim (a doomed
        container, a free one of another image or another job's idle one of
        another image, its record gone and its slot the new one's); else a
        wait."""
        # Until when it may wait for containers being put back.
        patient_until: Optional[float] = None
        while True:
            if self._stopping:
                raise SandboxBroken('sandbox pool is stopped')
            own = self._own_idle(job_key, image)
            if own is not None:
                own.state = _State.IN_RUN
                return _Way.OWN, own
            free = self._take_free(image)
            if free is not None:
                self._assign(free, job_key)
                self._cond.notify_all()  # the keeper may start a spare
                return _Way.FREE, free
            if not engine_work or self._alive() >= self._max_alive:
                taken = (self._first(_State.IDLE, image,
                                     lambda r: not self._worn(r) and r.job not in keep)
                         or self._first(_State.IDLE, image, lambda r: not self._worn(r)))
                if taken is not None:
                    taken.state, taken.job = _State.TAKEN_OVER, None
                    return _Way.TAKE_OVER, taken
                if not engine_work:
                    return _Way.NONE, None
            if self._alive() < self._max_alive:
                # The condition's own clock: a wait's timeout is in it.
                if patient_until is None:
                    patient_until = time.monotonic() + self._put_back_wait_sec
                left = patient_until - time.monotonic()
                if left > 0 and self._put_back_unawaited(image):
                    self._await_put_back(job_key, image, left)
                    continue
                self._creating_for_runs += 1
                return _Way.NEW, None
            victim = self._victim()
            if victim is not None:
                del self._records[victim.container]
                self._creating_for_runs += 1
                return _Way.NEW, victim
            if not self._cond.wait(timeout=self._acquire_timeout):
                raise SandboxBroken('no sandbox became free in time')

    def _put_back_unawaited(self, image: str) -> bool:
        """More containers of `image` being put back than acquires waiting for them."""
        put_back = sum(r.state is _State.PUT_BACK and r.image == image
                       for r in self._records.values())
        return put_back > self._awaiting_put_back.get(image, 0)

    def _await_put_back(self, job_key: str, image: str, timeout: float) -> None:
        """Lock held. Until a container being put back is free (its reset
        takes milliseconds, where a new container takes the engine 100 ms on
        the cores that judge) or doomed, or another the acquire may have is
        there, for `timeout` at most: a burst of jobs as others end then
        makes no new containers."""
        ended = self._put_backs_ended

        def ended_or_other() -> bool:
            return (self._put_backs_ended != ended or self._stopping or bool(self._free_of(image))
                    or self._own_idle(job_key, image) is not None)

        self._awaiting_put_back[image] = self._awaiting_put_back.get(image, 0) + 1
        try:
            self._cond.wait_for(ended_or_other, timeout=timeout)
        finally:
            self._awaiting_put_back[image] -= 1

    def _new(self, job_key: str, image: str, victim: Optional[_Record],
             cause: str) -> SandboxContainer:
        """A new container in the slot reserved for it (or `victim`'s)."""
        try:
            if victim is not None:
                victim.container.destroy()
            with self._cond:
                stopped = self._stopping
            if stopped:
                raise SandboxBroken('sandbox pool is stopped')
        except BaseException:
            with self._cond:
                self._creating_for_runs -= 1
                self._cond.notify_all()
            raise
        container, record = self._create(image, job_key, cause)  # frees the slot when it fails
        if record is None:
            # stop() has passed: nothing may be left running after it.
            container.destroy()
            raise SandboxBroken('sandbox pool is stopped')
        return container

    def _put_back(self, record: _Record) -> None:
        """Free for another job once reset; destroyed when it cannot be, or is worn."""
        with self._cond:
            worn = self._worn(record)
        if worn:
            self._doom(record)
            return
        try:
            # The last job's folder removed here, on no run's path (the
            # caller is its job's release or last run, which holds no core,
            # and an acquire waits PUT_BACK_WAIT_SEC at most for it): the
            # next job in it reclaims nothing of that job's.
            record.container.reset()
        except Exception as exc:
            # Whatever went wrong, the container is not known to be clean.
            log.warning('a sandbox could not be reset for another job, destroying it: %s', exc)
            self._doom(record)
            return
        with self._cond:
            if not self._stopping:
                self._put_backs_ended += 1
                record.state, record.freed = _State.FREE, next(self._freed)
                self._cond.notify_all()
                return
        self._doom(record)

    def _doom(self, record: _Record) -> None:
        """Destroyed by the keeper (it keeps its slot until then), or here once
        the pool stops."""
        with self._cond:
            self._cond.notify_all()
            if record.state is _State.PUT_BACK:
                self._put_backs_ended += 1  # in the change of state: see _await_put_back
            if not self._stopping:
                record.state, record.job = _State.DOOMED, None
                return
            self._records.pop(record.container, None)
        record.container.destroy()

    # The rest: the lock held, unless they say otherwise.

    def _alive(self) -> int:
        return len(self._records) + self._creating_for_runs + self._creating_spares

    def _stats(self) -> PoolStats:
        by_state = {state: 0 for state in _State}
        for record in self._records.values():
            by_state[record.state] += 1
        free = {
            image: tuple(r.container for r in self._free_of(image))
            for image in {*self._spare_target, *(r.image for r in self._records.values())}
        }
        return PoolStats(alive=self._alive(),
                         creating=self._creating_for_runs + self._creating_spares,
                         in_runs=self._in_runs(),
                         idle=by_state[_State.IDLE],
                         doomed=by_state[_State.DOOMED],
                         jobs=len({r.job
                                   for r in self._records.values() if r.job is not None}),
                         free=free,
                         spare_wanted=self._spare_wanted(),
                         created=dict(self._created),
                         awaiting_put_back=sum(self._awaiting_put_back.values()))

    def _in_runs(self) -> int:
        """Containers acquired, or being made or reset for an acquire."""
        return self._creating_for_runs + sum(r.state in (_State.IN_RUN, _State.TAKEN_OVER)
                                             for r in self._records.values())

    def _first(self, state: _State, image: str, also: Callable[[_Record],
                                                               bool]) -> Optional[_Record]:
        for record in self._records.values():
            if record.state is state and record.image == image and also(record):
                return record
        return None

    def _own_idle(self, job_key: str, image: str) -> Optional[_Record]:
        return self._first(_State.IDLE, image, lambda r: r.job == job_key)

    def _free_of(self, image: str) -> List[_Record]:
        """Free containers of `image`, the most recently used last."""
        return sorted(
            (r for r in self._records.values() if r.state is _State.FREE and r.image == image),
            key=lambda r: r.freed)

    def _expire_free(self) -> None:
        """Free containers past their age are doomed, so that no job is given
        one and a fresh spare replaces it."""
        for record in self._records.values():
            if record.state is _State.FREE and self._worn(record):
                record.state = _State.DOOMED
                self._cond.notify_all()  # the keeper removes it

    def _next_expiry(self) -> Optional[float]:
        """Seconds until the oldest free container is past its age."""
        born = [r.born for r in self._records.values() if r.state is _State.FREE]
        if not born:
            return None
        return max(0.0, min(born) + self._max_age_sec - self._clock())

    def _take_free(self, image: str) -> Optional[_Record]:
        """The most recently used free container of `image` that is not past
        its age (the others age out first)."""
        self._expire_free()
        free = self._free_of(image)
        return free[-1] if free else None

    def _worn(self, record: _Record) -> bool:
        return (record.jobs_served >= self._max_jobs
                or self._clock() - record.born >= self._max_age_sec)

    def _assign(self, record: _Record, job_key: str) -> None:
        record.state, record.job = _State.IN_RUN, job_key
        record.jobs_served += 1

    def _victim(self) -> Optional[_Record]:
        """A container nobody is using, its slot for another: a doomed one, a
        free one of another image (one of this image would have been taken),
        else the idle container of another job (that job gets a new one when
        it needs it)."""
        for state in (_State.DOOMED, _State.FREE, _State.IDLE):
            for record in self._records.values():
                if record.state is state:
                    return record
        return None

    def _spare_wanted(self) -> Optional[str]:
        if self._alive() >= self._max_alive or self._in_runs() >= self._cores:
            return None
        for image, target in self._spare_target.items():
            if len(self._free_of(image)) < target:
                return image
        return None

    def _create(self, image: str, job_key: Optional[str],
                cause: str) -> Tuple[SandboxContainer, Optional[_Record]]:
        """Lock not held. A container made in the slot reserved for it: an
        acquire's, in a run of `job_key`, or (None) a spare, free. Its record
        is made with it, unless the pool stopped meanwhile: then None, and
        the caller destroys it. The slot is freed when it fails."""
        try:
            with self._starting:
                container = self._factory(image)
                container.start()
        except BaseException:
            with self._cond:
                self._slot_made(job_key)
            self._on_start_failure()
            raise
        self._on_created(cause)
        with self._cond:
            self._created[cause] += 1
            self._slot_made(job_key)
            if self._stopping:
                return container, None
            record = self._records[container] = _Record(container, self._clock(), _State.FREE)
            if job_key is not None:
                self._assign(record, job_key)
            else:
                record.freed = next(self._freed)
            return container, record

    def _slot_made(self, job_key: Optional[str]) -> None:
        """The slot reserved for a container being made is its record's now,
        or free."""
        if job_key is not None:
            self._creating_for_runs -= 1
        else:
            self._creating_spares -= 1
        self._cond.notify_all()

    def _keep(self) -> None:
        """Lock not held. Removes doomed containers and starts spares, one at
        a time."""
        failures = 0
        while True:
            with self._cond:
                while not self._stopping:
                    self._expire_free()
                    if self._first_doomed() is not None or self._spare_wanted() is not None:
                        break
                    self._cond.wait(timeout=self._next_expiry())
                if self._stopping:
                    return
                doomed = self._first_doomed()
                if doomed is None:
                    image = self._spare_wanted()
                    self._creating_spares += 1
                else:
                    # Its slot is freed once it is gone, not before.
                    doomed.state = _State.REMOVING
            if doomed is not None:
                try:
                    doomed.container.destroy()
                except Exception:
                    # Its slot is freed all the same: the engine's leftovers
                    # are removed by label (remove_exited, remove_leftovers).
                    log.exception('removing a sandbox failed')
                with self._cond:
                    self._records.pop(doomed.container, None)
                    self._cond.notify_all()
                continue
            try:
                container, record = self._create(image, None, 'spare')
                if failures:
                    log.info('spare sandboxes start again (after %d failures)', failures)
                failures = 0
            except Exception as exc:
                failures += 1
                # Said once an outage (the host's health says the rest).
                (log.warning if failures == 1 else log.debug)(
                    'could not start a spare sandbox (%s): %s', image, exc)
                with self._cond:
                    # Back off before trying again, whatever else wakes the
                    # pool meanwhile; stop() ends the wait.
                    until = self._clock() + min(30.0, 2.0**failures)
                    self._cond.wait_for(lambda: self._stopping or self._clock() >= until,
                                        timeout=until - self._clock())
                continue
            if record is None:
                container.destroy()  # stop() has passed

    def _first_doomed(self) -> Optional[_Record]:
        for record in self._records.values():
            if record.state is _State.DOOMED:
                return record
        return None
