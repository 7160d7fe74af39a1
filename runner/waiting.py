"""Waits that wake on stop, and jittered backoff delays.

Every thread of the runner waits through an injected `Wait` so tests replace
time with a fake and production waits on the thread's stop event.
"""
import random
import threading
from typing import Callable, Protocol, Sequence

# wait(stop, seconds) -> True when stop is set (woken early or already set).
Wait = Callable[[threading.Event, float], bool]

# A fleet that started together must not act in lockstep (protocol §7): every
# backoff and poll delay is stretched by up to this fraction, at random.
JITTER_FRACTION = 0.2


def wait_on(stop: threading.Event, seconds: float) -> bool:
    return stop.wait(max(0.0, seconds))


def jittered(base: float, rng: random.Random) -> float:
    return base * (1 + JITTER_FRACTION * rng.random())


def backoff_delay(schedule: Sequence[float], retry: int) -> float:
    """The base delay before retry number `retry` (0-based); the last one repeats."""
    return schedule[min(retry, len(schedule) - 1)]


class Interruptible(Protocol):

    def interrupt(self) -> None:
        ...


def interrupt_on(stop: threading.Event, client: Interruptible, name: str) -> None:
    """Cuts `client`'s requests short once `stop` is set, from a thread of its
    own: a request out when the stop comes (a backend that took the connection
    and does not answer) would otherwise hold the main thread for its whole read
    timeout. The thread ends with the stop, or with the process."""

    def cut() -> None:
        stop.wait()
        client.interrupt()

    threading.Thread(target=cut, name=name, daemon=True).start()
