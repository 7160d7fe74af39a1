"""A cache lock is taken first among the threads of one process, then
among processes (runner/prep/locks.py): a thread never polls the shared lock
for another thread of its own process."""
import queue
import threading

import pytest

from runner.prep import locks
from runner.prep.locks import FileLocks

WAIT_SEC = 10


class Shared:
    """Shared locks by file, saying when one was asked for while held."""
    held = set()
    contended = 0
    answer = True

    def __init__(self, path):
        self.path = path

    def acquire(self, timeout):
        if self.path in Shared.held:
            Shared.contended += 1
            return False
        if not Shared.answer:
            return False
        Shared.held.add(self.path)
        return True

    def release(self):
        Shared.held.remove(self.path)


@pytest.fixture
def shared(monkeypatch):
    monkeypatch.setattr(locks, '_FileLock', Shared)
    Shared.held, Shared.contended, Shared.answer = set(), 0, True
    return Shared


def test_a_thread_waits_for_another_of_its_process_before_the_shared_lock(tmp_path, shared):
    cache_locks = FileLocks(tmp_path)
    first = cache_locks.lock(7)
    assert first.acquire(0)
    got: 'queue.Queue[bool]' = queue.Queue()
    threading.Thread(target=lambda: got.put(cache_locks.lock(7).acquire(WAIT_SEC)),
                     daemon=True).start()
    with pytest.raises(queue.Empty):
        got.get(timeout=0.3)
    first.release()
    assert got.get(timeout=WAIT_SEC) is True
    assert shared.contended == 0  # never asked for while the other thread held it


def test_a_wait_that_runs_out_leaves_nothing_held(tmp_path, shared):
    cache_locks = FileLocks(tmp_path)
    first = cache_locks.lock(7)
    assert first.acquire(0)
    assert cache_locks.lock(7).acquire(0) is False
    assert cache_locks.lock(8).acquire(0) is True  # another key is another lock
    first.release()
    assert cache_locks.lock(7).acquire(0) is True


def test_when_the_shared_lock_is_not_had_the_process_lets_go_of_its_own(tmp_path, shared):
    cache_locks = FileLocks(tmp_path)
    shared.answer = False  # another process holds it
    assert cache_locks.lock(7).acquire(0) is False
    shared.answer = True
    assert cache_locks.lock(7).acquire(0) is True


def test_file_locks_of_one_key_exclude_each_other_in_one_process(tmp_path):
    cache_locks = FileLocks(tmp_path)
    first, second = cache_locks.lock(3), cache_locks.lock(3)
    assert first.acquire(0)
    assert not second.acquire(0)
    first.release()
    assert second.acquire(0)
    second.release()
