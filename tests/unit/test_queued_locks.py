"""Cache locks whose waiters of one process queue among themselves first
(runner/prep/locks.py): a key let go by a thread is handed to the next
thread of the process at once, and only the head of the queue tries the
cross-process lock."""
import threading

import pytest

from runner.prep.locks import QueuedLocks, make_locks

GUARD_SEC = 10


class CrossProcess:
    """A cross-process lock that never waits: free or not, at once (as one
    try of a polled lock). `other_process` holds keys from outside."""

    def __init__(self):
        self.held = set()
        self.other_process = set()
        self.tries = []
        self.timeouts = []
        self.fail_next = False
        self.fail_release = False
        self.events = []

    def lock(self, key):
        locks = self

        class Lock:

            def acquire(self, timeout):
                if locks.fail_next:
                    locks.fail_next = False
                    raise ConnectionError('the lock server went away')
                free = key not in locks.held and key not in locks.other_process
                locks.tries.append((threading.current_thread().name, free))
                locks.timeouts.append(timeout)
                if free:
                    locks.held.add(key)
                return free

            def release(self):
                if locks.fail_release:
                    raise ConnectionError('the lock server went away')
                locks.held.remove(key)
                locks.events.append('cross-process lock let go')

        return Lock()


class Watched:
    """A lock of the process that says when a thread has to wait for it."""
    waiting = threading.Event()
    made = []
    events = []

    def __init__(self):
        self._lock = threading.Lock()
        Watched.made.append(self._lock)

    def acquire(self, blocking=True, timeout=-1):
        if self._lock.acquire(blocking=False):
            return True
        if blocking:
            Watched.waiting.set()
        return self._lock.acquire(blocking, timeout)

    def release(self):
        Watched.events.append('lock of the process let go')
        self._lock.release()


@pytest.fixture
def locks():
    Watched.waiting.clear()
    Watched.made.clear()
    inner = CrossProcess()
    Watched.events = inner.events
    return inner, QueuedLocks(inner, new_lock=Watched)


def test_a_key_let_go_goes_to_the_waiting_thread_which_tried_the_cross_process_lock_once(locks):
    """Red without the queue: the waiter tries the cross-process lock while
    it is held (and would poll it), and never waits here."""
    inner, queued = locks
    first = queued.lock(7)
    assert first.acquire(0)
    got = []
    waiter = threading.Thread(target=lambda: got.append(queued.lock(7).acquire(GUARD_SEC)),
                              name='waiter')
    waiter.start()
    assert Watched.waiting.wait(GUARD_SEC)
    assert [name for name, _ in inner.tries] == ['MainThread']
    first.release()
    waiter.join(GUARD_SEC)
    assert got == [True]
    assert inner.tries == [('MainThread', True), ('waiter', True)]
    # Only what the wait here left of its bound.
    assert 0 <= inner.timeouts[1] < GUARD_SEC


def test_the_cross_process_lock_is_let_go_before_this_process_s_next_thread_may_try_it(locks):
    """Red in the other order: the next thread found it still held, and
    waited for its next poll."""
    inner, queued = locks
    held = queued.lock(7)
    assert held.acquire(0)
    held.release()
    assert inner.events == ['cross-process lock let go', 'lock of the process let go']


def test_a_failing_release_still_frees_the_key_here(locks):
    """Red when the failure leaves it held: every later preparation of the
    problem in this process would wait for it until its bound."""
    inner, queued = locks
    held = queued.lock(7)
    assert held.acquire(0)
    inner.fail_release = True
    with pytest.raises(ConnectionError):
        held.release()
    assert queued._local == {}
    inner.fail_release = False
    inner.held.clear()  # the server's TTL
    assert queued.lock(7).acquire(0)


def test_the_runner_s_cache_locks_are_queued(tmp_path):
    assert isinstance(make_locks(None, tmp_path), QueuedLocks)


def test_other_keys_do_not_wait(locks):
    _, queued = locks
    assert queued.lock(7).acquire(0)
    assert queued.lock(8).acquire(0)
    assert not Watched.waiting.is_set()


def test_a_key_held_by_another_process_is_not_kept_from_this_process_s_next_thread(locks):
    """Red when a failed try of the cross-process lock keeps the key of this
    process: the next thread would wait for a holder that is not there."""
    inner, queued = locks
    inner.other_process.add(7)
    assert not queued.lock(7).acquire(0)
    assert not any(lock.locked() for lock in Watched.made)
    inner.other_process.clear()
    assert queued.lock(7).acquire(0)


def test_a_failing_cross_process_lock_leaves_the_key_free_here(locks):
    inner, queued = locks
    inner.fail_next = True
    with pytest.raises(ConnectionError):
        queued.lock(7).acquire(0)
    assert not any(lock.locked() for lock in Watched.made)
    assert queued.lock(7).acquire(0)


def test_a_key_is_forgotten_once_no_thread_uses_it(locks):
    """The process keeps no lock for every problem it ever saw."""
    _, queued = locks
    held = queued.lock(7)
    assert held.acquire(0)
    assert not queued.lock(7).acquire(0)  # busy here: its use ends with the try
    held.release()
    assert queued._local == {}
