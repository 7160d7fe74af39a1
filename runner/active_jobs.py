"""The active-job tracker: the runner's live claims (protocol §6).

It counts claims, not ids. After an abort answered 202 the same runner may
claim the same job_id again at once, so one id can be held by two claim
generations; with a set, the older generation's release would also drop the
newer one's lease renewal and capacity count. Every claim is `add`ed exactly
once and `remove`d exactly once.
"""
import collections
import logging
import threading
from typing import List

log = logging.getLogger(__name__)


class ActiveJobs:

    def __init__(self):
        self._counts = collections.Counter()
        self._changed = threading.Condition()
        # Set at every release: a poller waiting for capacity claims again at
        # once instead of at its next poll interval (cores idle meanwhile).
        self.freed = threading.Event()

    def add(self, job_id: str) -> None:
        with self._changed:
            self._counts[job_id] += 1
            self._changed.notify_all()

    def remove(self, job_id: str) -> None:
        with self._changed:
            if self._counts[job_id] <= 0:
                # A bookkeeping bug, not a reason to crash the reporting thread.
                del self._counts[job_id]
                log.error('released job %s more often than it was claimed', job_id)
                return
            self._counts[job_id] -= 1
            if self._counts[job_id] == 0:
                del self._counts[job_id]
            self._changed.notify_all()
        self.freed.set()

    def __len__(self) -> int:
        """The number of live claims (the capacity gate counts these)."""
        with self._changed:
            return sum(self._counts.values())

    def claims_of(self, job_id: str) -> int:
        with self._changed:
            return self._counts.get(job_id, 0)

    def snapshot(self) -> List[str]:
        """The distinct held job ids, for the heartbeat (one lease per id)."""
        with self._changed:
            return sorted(self._counts)
