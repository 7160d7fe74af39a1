"""The runner's thread-owning parts, started, stopped and joined one way.

Every part exposes `start()`, `stop()` and `join(timeout) -> bool` (True once
its threads have ended, or never started), so the drain joins them all alike
within its one deadline.
"""
import logging
import queue
import threading
import time
from typing import Callable, Iterable, List, Optional

log = logging.getLogger(__name__)


def join_all(threads: Iterable[threading.Thread], timeout: Optional[float] = None) -> bool:
    """Join every started thread within one deadline shared by all; True when
    all have ended."""
    threads = list(threads)
    deadline = None if timeout is None else time.monotonic() + timeout
    for thread in threads:
        if thread.ident is not None:
            thread.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
    return not any(thread.is_alive() for thread in threads)


class LoopThread:
    """A part that owns one thread running `_run()` until `stop()`.

    `stop()` sets `self._stop`, which every wait of the loop wakes on, then
    calls `_wake()` for whatever else the loop may block on. A daemon thread:
    a fatal exit never waits on a blocked request.
    """

    def __init__(self, name: str):
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._wake()

    def join(self, timeout: Optional[float] = None) -> bool:
        return join_all([self._thread], timeout)

    def is_alive(self) -> bool:
        return self._thread.is_alive()

    def _wake(self) -> None:
        """Wake the loop from a block other than a wait on `self._stop`."""

    def _run(self) -> None:
        raise NotImplementedError


class WorkerThreads:
    """`count` daemon threads that hand each submitted item to `handle`, in
    the order submitted, several at once (one item slow in its retries
    does not hold up the others).

    `stop()` lets the threads end once every item submitted before it has
    been handled, a flush; `join(timeout)` waits for that, within the
    caller's deadline. An exception out of `handle` is logged, and its
    thread goes on: the channel survives a bug in one item.
    """

    _STOP = object()

    def __init__(self, name: str, count: int, handle: Callable[[object], None]):
        self._name = name
        self._handle = handle
        self._queue: 'queue.Queue[object]' = queue.Queue()
        self._threads: List[threading.Thread] = [
            threading.Thread(target=self._run, name=f'{name}-{n}', daemon=True)
            for n in range(max(1, count))
        ]

    def submit(self, item: object) -> None:
        self._queue.put(item)

    def queued(self) -> int:
        """Items waiting for a thread (approximate: for progress lines)."""
        return self._queue.qsize()

    def start(self) -> None:
        for thread in self._threads:
            thread.start()

    def stop(self) -> None:
        # FIFO: every item submitted before the stop is taken before a sentinel.
        for _ in self._threads:
            self._queue.put(self._STOP)

    def join(self, timeout: Optional[float] = None) -> bool:
        """True when the threads have ended (or never started)."""
        return join_all(self._threads, timeout)

    def is_alive(self) -> bool:
        """Every thread runs."""
        return all(thread.is_alive() for thread in self._threads)

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is self._STOP:
                return
            try:
                self._handle(item)
            except Exception:
                # Never the item's repr: it may hold a lease token.
                log.exception('%s: handling an item failed; going on', self._name)
