"""Cross-process locks for the testdata cache: Redis when configured, a file lock otherwise.

Both work across the threads of one process and across processes on one
host. A lock held by a process that crashed is released by the OS (file
lock) or by its TTL (Redis).
"""
import logging
import pathlib
import re
import threading
import time
from typing import Callable, Optional, Protocol, Union

import filelock
import redis
import redis.exceptions

from runner.backend.http_session import Interrupted

log = logging.getLogger(__name__)

# A Redis lock outlives a crashed holder for at most this long. It must exceed
# the longest refresh (download deadline + extraction + copy), or a second
# process could enter while the first still writes.
REDIS_LOCK_TTL_SEC = 900
REDIS_SOCKET_TIMEOUT_SEC = 10
REDIS_CONNECT_TIMEOUT_SEC = 5


class CacheLock(Protocol):

    def acquire(self, timeout: float) -> bool:
        """True when acquired within `timeout` seconds (0: one try)."""

    def release(self) -> None:
        ...


class Locks(Protocol):

    def lock(self, key: Union[int, str]) -> CacheLock:
        """A new lock object for one cache entry (not yet acquired): a
        problem's testdata (its id) or a package (its SHA-256)."""


_SHA256 = re.compile(r'[0-9a-f]{64}')

# A wait for a lock is sliced so that a stop is noticed within a slice.
LOCK_SLICE_SEC = 0.5
# Neither lock wakes a waiter when it is let go: a waiter tries again this
# often. Every waiter, of this process or another, tries as often, so none
# is shut out; at 50 ms a preparation of a problem another thread was
# preparing waited about that long for a lock held a millisecond (the p90 of
# a preparation 74 ms with a backend 20 ms away, 54 ms at 10 ms).
LOCK_POLL_SEC = 0.01


def acquire_within(lock: CacheLock,
                   wait_sec: float,
                   stop: threading.Event,
                   what: str,
                   clock: Callable[[], float] = time.monotonic) -> bool:
    """Acquires `lock` within `wait_sec`: False when the wait ran out first.
    Raises Interrupted once `stop` is set meanwhile (`what`: the lock, for
    its message)."""
    deadline = clock() + wait_sec
    while True:
        if stop.is_set():
            raise Interrupted(f'stopped while waiting for {what}')
        remaining = max(0.0, deadline - clock())
        if lock.acquire(min(remaining, LOCK_SLICE_SEC)):  # tried once even with no wait left
            return True
        if remaining <= 0:
            return False


def _name(key: Union[int, str]) -> str:
    """A lock's name: it becomes a file name, so nothing but digits or hex."""
    if isinstance(key, str):
        if not _SHA256.fullmatch(key):
            raise ValueError('a lock key is a problem id or a SHA-256')
        return key
    return str(int(key))


class FileLocks:

    def __init__(self, root: pathlib.Path):
        self._root = pathlib.Path(root)

    def lock(self, key: Union[int, str]) -> CacheLock:
        self._root.mkdir(parents=True, exist_ok=True)
        return _FileLock(self._root / f'{_name(key)}.lock')

    def __repr__(self) -> str:
        return f'FileLocks({str(self._root)!r})'


class _FileLock:

    def __init__(self, path: pathlib.Path):
        # One lock object (one open file) per acquisition: flock excludes
        # other threads of this process too, not only other processes.
        self._lock = filelock.FileLock(str(path), thread_local=False)

    def acquire(self, timeout: float) -> bool:
        try:
            self._lock.acquire(timeout=max(0.0, timeout), poll_interval=LOCK_POLL_SEC)
        except filelock.Timeout:
            return False
        return True

    def release(self) -> None:
        self._lock.release()


class RedisLocks:

    def __init__(self, client: redis.Redis, ttl_sec: float = REDIS_LOCK_TTL_SEC):
        self._client = client
        self._ttl_sec = ttl_sec

    @classmethod
    def from_url(cls, url: str) -> 'RedisLocks':
        return cls(
            redis.Redis.from_url(url,
                                 socket_timeout=REDIS_SOCKET_TIMEOUT_SEC,
                                 socket_connect_timeout=REDIS_CONNECT_TIMEOUT_SEC))

    def lock(self, key: Union[int, str]) -> CacheLock:
        return _RedisLock(self._client, f'runner:testdata-lock:{_name(key)}', self._ttl_sec)

    def __repr__(self) -> str:
        return 'RedisLocks()'  # the URL may carry a password


class _RedisLock:

    def __init__(self, client: redis.Redis, name: str, ttl_sec: float):
        # thread_local=False: the token lives on this object, which is used
        # by one preparation only.
        self._lock = client.lock(name, timeout=ttl_sec, sleep=LOCK_POLL_SEC, thread_local=False)
        self._name = name

    def acquire(self, timeout: float) -> bool:
        if timeout <= 0:
            return self._lock.acquire(blocking=False)
        return self._lock.acquire(blocking=True, blocking_timeout=timeout)

    def release(self) -> None:
        try:
            self._lock.release()
        except redis.exceptions.LockError:
            # The TTL ran out first: someone else may hold it now; nothing to undo.
            log.warning('%s expired before it was released', self._name)


def make_locks(redis_url: Optional[str], testdata_root: pathlib.Path) -> Locks:
    """Redis when `REDIS_URL` is set, else file locks beside the cache."""
    if redis_url:
        return RedisLocks.from_url(redis_url)
    return FileLocks(pathlib.Path(testdata_root) / '.locks')
