"""The host's cores, as the run engine hands them to runs.

A run holds a slot while it is under way: its program's time, and the
runner's Python work around it (its container taken, its input staged, its
request sent, its answer read), during which no program of it uses the
core. At an exam's end that work waits on the runner's other threads (they
share one interpreter lock): with a slot for each core alone, a core idled
about a tenth of a batch of tiny jobs.

So on a host of two cores or more there is one slot more than the cores,
for a run that may share a core: a plain case's program, whose wall bound
(3 times its time limit and 1 s) leaves it room to, and whose judged time,
its CPU time, sharing hardly moves (the README's known limits). A run that
may not share one holds a core of its own: it is let in only while fewer
runs than the cores are under way, and while it runs no run takes the slot
beyond the cores. Those are the runs whose wall time is bounded
tightly or credited: a compile (its wall bound is its CPU bound), an
interactive pair (the program's wall bound credits its interactor's CPU time
once), a checker (twice its time and 1 s), the host's self-test.

Runs are let in first come first: a run that may not share a core is never
passed by a later one.
"""
import collections
import dataclasses
import threading
from typing import Deque


@dataclasses.dataclass(eq=False)
class _Waiter:
    shares: bool
    let_in: threading.Condition  # on the slots' lock
    admitted: bool = False


class RunSlots:

    def __init__(self, cores: int):
        if type(cores) is not int or cores < 1:
            raise ValueError(f'cores must be a positive int, got {cores!r}')
        self._cores = cores
        # On one core, two programs sharing it would each take twice their
        # CPU time in wall time, with the runner's own work on top.
        self._beyond = 1 if cores >= 2 else 0
        self._lock = threading.Lock()
        self._running = 0  # runs holding a slot
        self._alone = 0  # of them, those that may not share a core
        self._waiting: Deque[_Waiter] = collections.deque()

    def acquire(self, *, shares: bool) -> None:
        """A slot for a run; `shares`: the run may share a core."""
        with self._lock:
            waiter = _Waiter(shares, threading.Condition(self._lock))
            self._waiting.append(waiter)
            self._let_in()
            try:
                while not waiter.admitted:
                    waiter.let_in.wait()
            except BaseException:
                if waiter.admitted:
                    self._end(shares)
                else:
                    self._waiting.remove(waiter)
                    self._let_in()  # it may have held back those behind it
                raise

    def release(self, *, shares: bool) -> None:
        """The slot of a run `acquire`d with the same `shares`."""
        with self._lock:
            self._end(shares)

    def _end(self, shares: bool) -> None:
        """Lock held."""
        if self._running <= 0 or (not shares and self._alone <= 0):
            raise RuntimeError('a run slot released more often than it was taken')
        self._running -= 1
        if not shares:
            self._alone -= 1
        self._let_in()

    def _fits(self, waiter: _Waiter) -> bool:
        """Lock held; `waiter` first in line."""
        if self._running < self._cores:
            return True
        return waiter.shares and self._running < self._cores + self._beyond and self._alone == 0

    def _let_in(self) -> None:
        """Lock held: the runs first in line, while each fits."""
        while self._waiting and self._fits(self._waiting[0]):
            waiter = self._waiting.popleft()
            self._running += 1
            if not waiter.shares:
                self._alone += 1
            waiter.admitted = True
            waiter.let_in.notify()
