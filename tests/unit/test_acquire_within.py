"""The bounded wait for a cache lock: tried at least once, a stop noticed
before each slice, False once the wait ran out."""
import threading

import pytest

from runner.backend.http_session import Interrupted
from runner.prep.locks import acquire_within


class Lock:

    def __init__(self, free):
        self.free = free
        self.tries = []

    def acquire(self, timeout):
        self.tries.append(timeout)
        return self.free


def test_a_free_lock_is_taken_even_with_no_wait():
    lock = Lock(free=True)
    assert acquire_within(lock, 0, threading.Event(), 'the lock')
    assert lock.tries == [0.0]


def test_a_held_lock_is_given_up_at_the_deadline():
    now = [0.0]

    def clock():
        return now[0]

    lock = Lock(free=False)
    original = lock.acquire

    def acquire(timeout):
        now[0] += timeout  # as a wait that timed out would
        return original(timeout)

    lock.acquire = acquire
    assert not acquire_within(lock, 2, threading.Event(), 'the lock', clock=clock)
    assert sum(lock.tries) == pytest.approx(2) and max(lock.tries) <= 0.5


def test_a_stop_ends_the_wait():
    stop = threading.Event()
    stop.set()
    with pytest.raises(Interrupted, match='stopped while waiting for the lock'):
        acquire_within(Lock(free=False), 30, stop, 'the lock')
