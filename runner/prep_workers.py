"""The threads that prepare claims, so that one claim's downloads never hold
up the next claim: the poller claims while there is capacity and hands each
claim here (its tracker count is taken before).

Each task runs to its end on one of a fixed set of daemon threads (each
keeps its own connections to the backend: BackendClient gives each thread a
session). After `stop()` the queued tasks still run (each sees the stop and
hands its claim back as a drain) and the threads end once nothing is left;
a task submitted when every thread has ended runs in the caller's thread, so
no claim is ever left without its report. `offer()` hands a task over only
to a thread that is idle now (a preparation's helper: the caller runs it
itself otherwise, so it never waits on a task nobody will take).
"""
import collections
import logging
import threading
from typing import Callable, Deque, List, Optional

from runner.threads import join_all

log = logging.getLogger(__name__)

Task = Callable[[], None]


class PrepWorkers:

    def __init__(self, count: int, name: str = 'prep'):
        self._cond = threading.Condition()
        self._tasks: Deque[Task] = collections.deque()
        self._stopping = False
        self._alive = 0
        self._idle = 0  # threads waiting for a task
        self._observers = 0  # callers of wait_idle, woken as a thread becomes idle
        self._threads: List[threading.Thread] = [
            threading.Thread(target=self._work, name=f'{name}-{i}', daemon=True)
            for i in range(max(1, count))
        ]

    def start(self) -> None:
        with self._cond:
            self._alive = len(self._threads)
        for thread in self._threads:
            thread.start()

    def submit(self, task: Task) -> None:
        with self._cond:
            if self._alive:
                self._tasks.append(task)
                self._cond.notify()
                return
        task()

    def offer(self, task: Task) -> bool:
        """Hands `task` to a thread that is idle now; False (nothing done)
        when none is, or after stop()."""
        with self._cond:
            if self._stopping or self._idle <= len(self._tasks):
                return False
            self._tasks.append(task)
            self._cond.notify()
            return True

    def wait_idle(self, timeout: float) -> bool:
        """Whether a thread is idle (for observers), waiting up to `timeout`."""
        with self._cond:
            self._observers += 1
            try:
                return self._cond.wait_for(lambda: self._idle > len(self._tasks), timeout)
            finally:
                self._observers -= 1

    def stop(self) -> None:
        """The threads end once every queued task has run."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()

    def join(self, timeout: Optional[float] = None) -> bool:
        return join_all(self._threads, timeout)

    def _work(self) -> None:
        while True:
            with self._cond:
                self._idle += 1
                if self._observers:
                    self._cond.notify_all()
                self._cond.wait_for(lambda: self._tasks or self._stopping)
                self._idle -= 1
                if not self._tasks:
                    self._alive -= 1  # stopping, and nothing left: a later task runs in place
                    return
                task = self._tasks.popleft()
            try:
                task()
            except Exception:
                log.exception('preparing a claim failed unexpectedly; going on')
