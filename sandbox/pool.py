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

The caller (the dispatcher) runs at most `max_alive` sandbox runs at once, so
an acquire can always be served: by the job's own idle container, a free one,
another job's idle one, a new container, or one in place of a doomed
container, a free container of another image or another job's idle one.
"""
import collections
import logging
import threading
import time
from typing import Callable, Dict, List, Optional, Tuple

from sandbox.container import SandboxBroken, SandboxContainer

log = logging.getLogger(__name__)

Factory = Callable[[str], SandboxContainer]


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
                 on_start_failure: Callable[[], None] = lambda: None,
                 clock: Callable[[], float] = time.monotonic):
        """`cores`: runs that fill the host (no spare is started while that
        many containers are in runs). `on_start_failure()` is told of every
        container that did not start."""
        self._factory = factory
        self._on_start_failure = on_start_failure
        # Only reached if callers run more at once than `max_alive`; a run
        # that cannot get a container becomes JE instead of waiting forever.
        self._acquire_timeout = acquire_timeout
        self._max_alive = max_alive
        self._cores = cores
        self._max_jobs = max_jobs
        self._max_age_sec = max_age_sec
        self._clock = clock
        self._spare_target = dict(spares)
        self._cond = threading.Condition()
        self._alive = 0
        self._in_runs = 0  # containers acquired and not given back yet
        self._free: Dict[str, List[SandboxContainer]] = collections.defaultdict(list)
        self._idle: Dict[str, List[SandboxContainer]] = collections.defaultdict(list)
        self._job_of: Dict[SandboxContainer, str] = {}
        self._born: Dict[SandboxContainer, float] = {}
        self._jobs_served: Dict[SandboxContainer, int] = {}
        self._doomed: List[SandboxContainer] = []
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
            doomed = [c for cs in self._free.values() for c in cs]
            doomed += [c for cs in self._idle.values() for c in cs]
            doomed += self._doomed
            self._free.clear()
            self._idle.clear()
            self._doomed = []
            for c in doomed:
                self._forget(c)
            self._cond.notify_all()
        for c in doomed:
            c.destroy()

    def join(self, timeout: Optional[float] = None) -> bool:
        """True when the pool's thread has ended (or never started)."""
        if self._keeper.ident is not None:
            self._keeper.join(timeout)
        return not self._keeper.is_alive()

    def acquire(self,
                job_key: str,
                image: str,
                stage: Callable[[SandboxContainer], None],
                engine_work: bool = True) -> Optional[SandboxContainer]:
        """A container for `job_key`, already holding the job's files.

        With `engine_work` False only one that needs neither the engine nor
        a wait (the job's own, a free one, another job's idle one taken
        over), else None: a caller holding a core asks that way first."""
        obtained = self._obtain(job_key, image, engine_work)
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

    def _obtain(self, job_key: str, image: str,
                engine_work: bool) -> Optional[Tuple[SandboxContainer, bool]]:
        """A container of `image` assigned to `job_key` and counted in a run,
        and whether it holds the job's files already.

        In order: the job's own idle container, a free one; without engine
        work another job's idle container, reset for this one (about a
        millisecond; that job gets another when it needs one), else None.
        With engine work: a new one while there is room; at capacity a
        container taken over, else a new one in place of a doomed container,
        a free one of another image or another job's idle one of another
        image; else a wait."""
        while True:
            victim = taken = None
            with self._cond:
                while True:
                    if self._stopping:
                        raise SandboxBroken('sandbox pool is stopped')
                    own = [c for c in self._idle[job_key] if c.image == image]
                    if own:
                        self._idle[job_key].remove(own[0])
                        self._in_runs += 1
                        return own[0], True
                    container = self._take_free(image)
                    if container is not None:
                        self._assign(container, job_key)
                        self._in_runs += 1
                        self._cond.notify_all()  # the keeper may start a spare
                        return container, False
                    if not engine_work or self._alive >= self._max_alive:
                        taken = self._idle_of_another_job(image)
                        if taken is not None:
                            self._detach(taken)
                            break
                        if not engine_work:
                            return None
                    if self._alive < self._max_alive:
                        self._alive += 1
                        break
                    victim = self._victim()
                    if victim is not None:
                        # Its slot passes to the new container, so `alive` stays.
                        self._forget(victim, keep_slot=True)
                        break
                    if not self._cond.wait(timeout=self._acquire_timeout):
                        raise SandboxBroken('no sandbox became free in time')
                self._in_runs += 1
            if taken is None:
                return self._new(job_key, image, victim), False
            try:
                taken.reset()
            except BaseException as exc:
                with self._cond:
                    self._in_runs -= 1
                self._doom(taken)
                if not isinstance(exc, SandboxBroken):
                    raise
                log.warning('a sandbox could not be reset for another job: %s', exc)
                continue
            with self._cond:
                if not self._stopping:
                    self._assign(taken, job_key)
                    return taken, False
                self._in_runs -= 1
                self._forget(taken)
            # stop() passed while it was being reset: nothing may run after it.
            taken.destroy()
            raise SandboxBroken('sandbox pool is stopped')

    def _new(self, job_key: str, image: str,
             victim: Optional[SandboxContainer]) -> SandboxContainer:
        """A new container in the slot reserved for it (or `victim`'s)."""
        try:
            if victim is not None:
                victim.destroy()
            with self._cond:
                stopped = self._stopping
            if stopped:
                raise SandboxBroken('sandbox pool is stopped')
        except BaseException:
            with self._cond:
                self._in_runs -= 1
                self._alive -= 1
                self._cond.notify_all()
            raise
        try:
            container = self._create(image)  # frees the slot when it fails
        except BaseException:
            with self._cond:
                self._in_runs -= 1
                self._cond.notify_all()
            raise
        with self._cond:
            self._assign(container, job_key)
            if not self._stopping:
                return container
            self._in_runs -= 1
            self._forget(container)
        # stop() has passed: nothing may be left running after it.
        container.destroy()
        raise SandboxBroken('sandbox pool is stopped')

    def give_back(self, container: SandboxContainer, broken: bool = False) -> None:
        """End of one run. A broken container is destroyed; one whose job was
        released meanwhile is reset for the next job."""
        with self._cond:
            self._in_runs -= 1
            self._cond.notify_all()
            reusable = not broken and not self._stopping
            job_key = self._job_of.get(container)
            if reusable and job_key is not None:
                self._idle[job_key].append(container)
                return
        if reusable:
            self._put_back(container)
        else:
            self._doom(container)

    def release(self, job_key: str) -> None:
        """Reset the job's idle containers for other jobs; busy ones follow
        when given back."""
        with self._cond:
            idle = self._idle.pop(job_key, [])
            for c in list(self._job_of):
                if self._job_of[c] == job_key:
                    del self._job_of[c]
        for c in idle:
            self._put_back(c)  # never raises: a container it cannot reset is doomed

    def alive(self) -> int:
        """Containers alive now, free ones included (a metric)."""
        with self._cond:
            return self._alive

    def _put_back(self, container: SandboxContainer) -> None:
        """Free for another job once reset; destroyed when it cannot be, or is worn."""
        with self._cond:
            worn = self._worn(container)
        if worn:
            self._doom(container)
            return
        try:
            container.reset()
        except Exception as exc:
            # Whatever went wrong, the container is not known to be clean.
            log.warning('a sandbox could not be reset for another job, destroying it: %s', exc)
            self._doom(container)
            return
        with self._cond:
            if not self._stopping:
                self._free[container.image].append(container)
                self._cond.notify_all()
                return
        self._doom(container)

    def _doom(self, container: SandboxContainer) -> None:
        """Destroyed by the keeper (it keeps its slot until then), or here once
        the pool stops."""
        with self._cond:
            if not self._stopping:
                self._job_of.pop(container, None)
                self._doomed.append(container)
                self._cond.notify_all()
                return
            self._forget(container)
            self._cond.notify_all()
        container.destroy()

    def _expire_free(self) -> None:
        """Lock held. Free containers past their age are doomed, so that no
        job is given one and a fresh spare replaces it."""
        for free in self._free.values():
            for container in [c for c in free if self._worn(c)]:
                free.remove(container)
                self._doomed.append(container)
                self._cond.notify_all()  # the keeper removes it

    def _next_expiry(self) -> Optional[float]:
        """Lock held. Seconds until the oldest free container is past its age."""
        born = [self._born.get(c, 0.0) for cs in self._free.values() for c in cs]
        if not born:
            return None
        return max(0.0, min(born) + self._max_age_sec - self._clock())

    def _take_free(self, image: str) -> Optional[SandboxContainer]:
        """The most recently used free container of `image` that is not past
        its age (the others age out first)."""
        self._expire_free()
        free = self._free[image]
        return free.pop() if free else None

    def _idle_of_another_job(self, image: str) -> Optional[SandboxContainer]:
        """Another job's idle container of `image` that may serve more jobs."""
        for containers in self._idle.values():
            for container in containers:
                if container.image == image and not self._worn(container):
                    return container
        return None

    def _worn(self, container) -> bool:
        return (self._jobs_served.get(container, 0) >= self._max_jobs
                or self._clock() - self._born.get(container, 0.0) >= self._max_age_sec)

    def _detach(self, container):
        """No job's any more (its age and uses stay)."""
        job_key = self._job_of.pop(container)
        self._idle[job_key].remove(container)

    def _assign(self, container, job_key):
        self._job_of[container] = job_key
        self._jobs_served[container] = self._jobs_served.get(container, 0) + 1

    def _forget(self, container, keep_slot=False):
        job_key = self._job_of.pop(container, None)
        if job_key is not None and container in self._idle.get(job_key, ()):
            self._idle[job_key].remove(container)
        self._born.pop(container, None)
        self._jobs_served.pop(container, None)
        if not keep_slot:
            self._alive -= 1

    def _victim(self) -> Optional[SandboxContainer]:
        """A container nobody is using, its slot for another: a doomed one, a
        free one of another image (one of this image would have been taken),
        else the idle container of another job (that job gets a new one when
        it needs it)."""
        if self._doomed:
            return self._doomed.pop()
        for free in self._free.values():
            if free:
                return free.pop()
        for containers in self._idle.values():
            if containers:
                return containers[0]
        return None

    def _create(self, image: str) -> SandboxContainer:
        try:
            with self._starting:
                container = self._factory(image)
                container.start()
        except BaseException:
            with self._cond:
                self._alive -= 1
                self._cond.notify_all()
            self._on_start_failure()
            raise
        with self._cond:
            self._born[container] = self._clock()
        return container

    def _spare_wanted(self) -> Optional[str]:
        if self._alive >= self._max_alive or self._in_runs >= self._cores:
            return None
        for image, target in self._spare_target.items():
            if len(self._free[image]) < target:
                return image
        return None

    def _keep(self) -> None:
        """Removes doomed containers and starts spares, one at a time."""
        failures = 0
        while True:
            with self._cond:
                while not self._stopping:
                    self._expire_free()
                    if self._doomed or self._spare_wanted() is not None:
                        break
                    self._cond.wait(timeout=self._next_expiry())
                if self._stopping:
                    return
                doomed = self._doomed.pop() if self._doomed else None
                if doomed is None:
                    image = self._spare_wanted()
                    self._alive += 1
            if doomed is not None:
                try:
                    doomed.destroy()
                except Exception:
                    # Its slot is freed all the same: the engine's leftovers
                    # are removed by label (remove_exited, remove_leftovers).
                    log.exception('removing a sandbox failed')
                with self._cond:
                    self._forget(doomed)
                    self._cond.notify_all()
                continue
            try:
                container = self._create(image)
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
                    until = time.monotonic() + min(30.0, 2.0**failures)
                    self._cond.wait_for(lambda: self._stopping or time.monotonic() >= until,
                                        timeout=until - time.monotonic())
                continue
            with self._cond:
                if not self._stopping:
                    self._free[image].append(container)
                    self._cond.notify_all()
                    continue
                self._forget(container)
            container.destroy()
