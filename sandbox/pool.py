"""Sandbox containers: how many are alive, which job each serves, spares kept ready.

A container serves the cases of one job generation, never two: it is given to
a job when the job first needs one and destroyed when the job is released.
Starting a container (~100 ms) is taken off the critical path by keeping a
few spares started and unassigned. At most `max_alive` containers exist at any
moment, counting those being created and those being destroyed.

The caller (the dispatcher) runs at most `max_alive` sandbox runs at once, so
an acquire can always be served: by the job's own idle container, a spare, a
new container, or by destroying another job's idle container.
"""
import collections
import logging
import threading
import time
from typing import Callable, Dict, List, Optional

from sandbox.container import SandboxBroken, SandboxContainer

log = logging.getLogger(__name__)

Factory = Callable[[str], SandboxContainer]


class SandboxPool:

    def __init__(self,
                 factory: Factory,
                 max_alive: int,
                 spares: Dict[str, int],
                 max_starting: int = 2,
                 acquire_timeout: float = 120.0,
                 on_start_failure: Callable[[], None] = lambda: None):
        """`on_start_failure()` is told of every container that did not start."""
        self._factory = factory
        self._on_start_failure = on_start_failure
        # Only reached if callers run more at once than `max_alive`; a run
        # that cannot get a container becomes JE instead of waiting forever.
        self._acquire_timeout = acquire_timeout
        self._max_alive = max_alive
        self._spare_target = dict(spares)
        self._cond = threading.Condition()
        self._alive = 0
        self._spares: Dict[str, List[SandboxContainer]] = collections.defaultdict(list)
        self._idle: Dict[str, List[SandboxContainer]] = collections.defaultdict(list)
        self._job_of: Dict[SandboxContainer, str] = {}
        # Engine calls that create containers are bounded: a burst of starts
        # once wedged the engine on these hosts.
        self._starting = threading.BoundedSemaphore(max_starting)
        self._stopping = False
        self._spawner = threading.Thread(target=self._keep_spares,
                                         name='sandbox-spares',
                                         daemon=True)

    def start(self) -> None:
        self._spawner.start()

    def stop(self) -> None:
        """Destroy every container; later acquires fail."""
        with self._cond:
            self._stopping = True
            doomed = [c for cs in self._spares.values() for c in cs]
            doomed += [c for cs in self._idle.values() for c in cs]
            self._spares.clear()
            self._idle.clear()
            for c in doomed:
                self._forget(c)
            self._cond.notify_all()
        for c in doomed:
            self._destroy(c)

    def join(self, timeout: Optional[float] = None) -> bool:
        """True when the spawner has ended (or never started)."""
        if self._spawner.ident is not None:
            self._spawner.join(timeout)
        return not self._spawner.is_alive()

    def acquire(self, job_key: str, image: str, stage: Callable[[SandboxContainer],
                                                                None]) -> SandboxContainer:
        """A container for `job_key`, already holding the job's files."""
        victim = None
        with self._cond:
            while True:
                if self._stopping:
                    raise SandboxBroken('sandbox pool is stopped')
                own = [c for c in self._idle[job_key] if c.image == image]
                if own:
                    self._idle[job_key].remove(own[0])
                    return own[0]
                if self._spares[image]:
                    container = self._spares[image].pop()
                    self._assign(container, job_key)
                    self._cond.notify_all()  # the spawner may replace it
                    break
                if self._alive < self._max_alive:
                    self._alive += 1
                    container = None
                    break
                victim = self._victim(image)
                if victim is not None:
                    # Its slot passes to the new container, so `alive` stays.
                    self._forget(victim, keep_slot=True)
                    container = None
                    break
                if not self._cond.wait(timeout=self._acquire_timeout):
                    raise SandboxBroken('no sandbox became free in time')
        if victim is not None:
            victim.destroy()
        if container is None:
            container = self._create(image)
            with self._cond:
                self._assign(container, job_key)
        try:
            stage(container)
        except Exception:
            self.give_back(container, broken=True)
            raise
        return container

    def give_back(self, container: SandboxContainer, broken: bool = False) -> None:
        """End of one run. A broken container, or one whose job was released
        meanwhile, is destroyed."""
        with self._cond:
            job_key = self._job_of.get(container)
            if broken or job_key is None or self._stopping:
                self._forget(container)
                doomed = container
            else:
                self._idle[job_key].append(container)
                doomed = None
            self._cond.notify_all()
        if doomed is not None:
            self._destroy(doomed)

    def release(self, job_key: str) -> None:
        """Destroy the job's idle containers; busy ones go when given back."""
        with self._cond:
            idle = self._idle.pop(job_key, [])
            for c in list(self._job_of):
                if self._job_of[c] == job_key:
                    del self._job_of[c]
            for c in idle:
                self._alive -= 1
            self._cond.notify_all()
        for c in idle:
            c.destroy()

    def alive(self) -> int:
        """Containers alive now, spares included (a metric)."""
        with self._cond:
            return self._alive

    def _assign(self, container, job_key):
        self._job_of[container] = job_key

    def _forget(self, container, keep_slot=False):
        job_key = self._job_of.pop(container, None)
        if job_key is not None and container in self._idle.get(job_key, ()):
            self._idle[job_key].remove(container)
        if not keep_slot:
            self._alive -= 1

    def _victim(self, image: str) -> Optional[SandboxContainer]:
        """A container nobody is using: a spare of another image, else the idle
        container of another job (that job gets a new one when it needs it)."""
        for spare_image, spares in self._spares.items():
            if spare_image != image and spares:
                return spares.pop()
        for containers in self._idle.values():
            if containers:
                return containers[0]
        return None

    def _destroy(self, container):
        container.destroy()

    def _create(self, image: str) -> SandboxContainer:
        try:
            with self._starting:
                container = self._factory(image)
                container.start()
                return container
        except BaseException:
            with self._cond:
                self._alive -= 1
                self._cond.notify_all()
            self._on_start_failure()
            raise

    def _spare_wanted(self) -> Optional[str]:
        if self._alive >= self._max_alive:
            return None
        for image, target in self._spare_target.items():
            if len(self._spares[image]) < target:
                return image
        return None

    def _keep_spares(self) -> None:
        failures = 0
        while True:
            with self._cond:
                while not self._stopping and self._spare_wanted() is None:
                    self._cond.wait()
                if self._stopping:
                    return
                image = self._spare_wanted()
                self._alive += 1
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
                if self._stopping:
                    self._forget(container)
                    doomed = container
                else:
                    self._spares[image].append(container)
                    doomed = None
                    self._cond.notify_all()
            if doomed is not None:
                doomed.destroy()
