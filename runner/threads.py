"""The runner's thread-owning parts, started, stopped and joined one way.

Every part exposes `start()`, `stop()` and `join(timeout) -> bool` (True once
its threads have ended, or never started), so the drain joins them all alike
within its one deadline.
"""
import threading
import time
from typing import Iterable, Optional


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
