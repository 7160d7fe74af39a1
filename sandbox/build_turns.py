"""Turns for builds: jobs of this process that want the same build at once
(a class resubmitting one program at the end of an exam, a rejudge) compile
it one at a time, so that the first compiles and the others find its entry
in the compile cache instead of compiling it again beside it.

A turn is held while the compile runs, which is bounded (its time limits,
its retry); a waiter holds no container and no core. A waiter whose job is
cancelled stops waiting: the cancel wakes every waiter (`wake`), and each
looks at its own job again.
"""
import contextlib
import threading
from typing import Callable, Iterator, Set

from sandbox.faults import Cancelled


class BuildTurns:

    def __init__(self):
        self._cond = threading.Condition()
        self._taken: Set[str] = set()
        self._waiting = 0

    @contextlib.contextmanager
    def turn(self, key: str, cancelled: Callable[[], bool]) -> Iterator[None]:
        """Holds the turn of build `key`, after whoever holds it now; raises
        Cancelled once `cancelled()` says so while waiting."""
        with self._cond:
            self._waiting += 1
            self._cond.notify_all()  # for `wait_for`, as below
            try:
                while key in self._taken:
                    # Looked at under the condition's lock, which `wake` takes
                    # after the cancel is recorded: a cancel is never missed.
                    if cancelled():
                        raise Cancelled('the job was cancelled')
                    self._cond.wait()
            finally:
                self._waiting -= 1
            self._taken.add(key)
            self._cond.notify_all()
        try:
            yield
        finally:
            with self._cond:
                self._taken.discard(key)
                self._cond.notify_all()

    def wait_for(self, predicate: Callable[[int, int], bool], timeout: float) -> bool:
        """Wait until `predicate(turns held, jobs waiting for one)` holds
        (for observers); False when `timeout` passed first."""
        with self._cond:
            return self._cond.wait_for(lambda: predicate(len(self._taken), self._waiting), timeout)

    def wake(self) -> None:
        """Every waiter looks at its job again (after a cancel)."""
        with self._cond:
            self._cond.notify_all()
