"""Time as the backend's rules see it: injected, so lease expiry is testable without waiting."""
import threading
import time
from typing import Protocol


class Clock(Protocol):

    def now(self) -> float:
        """Seconds on a monotonic scale; only differences are meaningful."""
        ...


class MonotonicClock:
    """The real clock: `time.monotonic()`, immune to wall-clock jumps."""

    def now(self) -> float:
        return time.monotonic()

    def __repr__(self) -> str:
        return 'MonotonicClock()'


class ManualClock:
    """A clock that moves only when a test says so.

    Lease expiry is evaluated lazily at the next call to the backend, so
    `advance(31)` followed by any runner call is enough to see a reclaim.
    """

    def __init__(self, start: float = 1000.0):
        self._lock = threading.Lock()
        self._now = float(start)

    def now(self) -> float:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> float:
        if seconds < 0:
            raise ValueError('a monotonic clock cannot go back')
        with self._lock:
            self._now += seconds
            return self._now

    def __repr__(self) -> str:
        return f'ManualClock(now={self.now()!r})'
