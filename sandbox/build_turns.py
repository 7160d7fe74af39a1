"""Turns for builds: jobs of this process that want the same build at once
(a class resubmitting one program at the end of an exam, a rejudge) compile
it once: the first takes the build's turn and compiles, the others wait for
that compile and then find its entry in the compile cache.

A job waits for one compile at most, the one it found in progress, never for
a chain of them. A submission's compile that used up its CPU time (the
student's CE over the bound, not kept in the cache) leaves that outcome to
the jobs that waited for it: the same source would use it up again in each
of them, holding their workers for a second bound each. A compile that left
neither (a judge failure, a cache that cannot be written) lets every job
that waited for it compile for itself at once, as without turns. A waiter
holds no container and no core, and one whose job is cancelled stops
waiting: the cancel wakes every waiter (`wake`), and each looks at its own
job again.
"""
import contextlib
import threading
from typing import Callable, Dict, Generic, Iterator, Optional, TypeVar

from sandbox.faults import Cancelled

Outcome = TypeVar('Outcome')


class _Round(Generic[Outcome]):
    """One holder's compile of a build, and what it leaves its waiters."""

    def __init__(self):
        self.left: Optional[Outcome] = None


class Turn(Generic[Outcome]):
    """A job's turn at a build. `held`: this job compiles (the others wait)
    and may `leave` them its outcome. Else the holder's compile has ended,
    and `left` is what it left (None: look in the cache again)."""

    def __init__(self, held: bool, round_: _Round[Outcome]):
        self.held = held
        self._round = round_

    @property
    def left(self) -> Optional[Outcome]:
        return self._round.left

    def leave(self, outcome: Outcome) -> None:
        """The holder's outcome, for the jobs that waited for this compile."""
        assert self.held
        self._round.left = outcome


class BuildTurns:

    def __init__(self):
        self._cond = threading.Condition()
        self._rounds: Dict[str, _Round] = {}  # by build key, while its holder compiles
        self._waiting = 0

    @contextlib.contextmanager
    def turn(self, key: str, cancelled: Callable[[], bool]) -> Iterator[Turn]:
        """This job's turn at build `key`: held until the block ends, or
        another's waited out (see Turn). Raises Cancelled once `cancelled()`
        says so while waiting."""
        mine = _Round()
        try:
            with self._cond:
                found = self._rounds.get(key)
                if found is None:
                    self._rounds[key] = mine
                    self._cond.notify_all()  # for `wait_for`
                else:
                    self._wait_out(key, found, cancelled)
            # What the holder leaves is set before its round ends, which is
            # under the condition's lock: a waiter woken by that end sees it.
            yield Turn(True, mine) if found is None else Turn(False, found)
        finally:
            with self._cond:
                if self._rounds.get(key) is mine:
                    del self._rounds[key]
                    self._cond.notify_all()

    def wait_for(self, predicate: Callable[[int, int], bool], timeout: float) -> bool:
        """Wait until `predicate(turns held, jobs waiting for one)` holds
        (for observers); False when `timeout` passed first."""
        with self._cond:
            return self._cond.wait_for(lambda: predicate(len(self._rounds), self._waiting), timeout)

    def wake(self) -> None:
        """Every waiter looks at its job again (after a cancel)."""
        with self._cond:
            self._cond.notify_all()

    def _wait_out(self, key: str, found: _Round, cancelled: Callable[[], bool]) -> None:
        """Condition held: until `found`'s round of `key` ends (a later
        holder's round is not waited for)."""
        try:
            self._waiting += 1
            self._cond.notify_all()  # for `wait_for`, as below
            while self._rounds.get(key) is found:
                # Looked at under the condition's lock, which `wake` takes
                # after the cancel is recorded: a cancel is never missed.
                if cancelled():
                    raise Cancelled('the job was cancelled')
                self._cond.wait()
        finally:
            self._waiting -= 1
            self._cond.notify_all()
