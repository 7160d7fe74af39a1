"""The AlgoJudge claims this runner holds, one entry per claim.

A claim is known by its lease token, not its job id: after a release or an
expiry the same job may be claimed again by this runner, under a new token,
while the older claim's report or release is still on its way. Every
removal names the claim it removes, so the older one's end can never drop
the newer one's lease renewal or capacity count (the ABA the Normal-OJ side
counts claims against).
"""
import dataclasses
import threading
from typing import Callable, Dict, List, Optional

from runner.backend.algojudge.wire import Claimed


@dataclasses.dataclass
class Held:
    claimed: Claimed
    lease_sec: float  # as granted: renewed every quarter of it
    next_renewal: float  # monotonic
    prepared: object = None  # the Prepared, once ready (preparation.py)

    @property
    def job_id(self) -> str:
        return self.claimed.job_id

    @property
    def token(self) -> str:
        return self.claimed.lease_token

    @property
    def job(self):
        """The dispatcher's job, once prepared (None before, or refused)."""
        return getattr(self.prepared, 'job', None)


class HeldJobs:

    def __init__(self):
        self._changed = threading.Condition()
        self._held: Dict[str, Held] = {}  # by lease token
        self.version = 0  # counts every change, for a waiter to see one

    def add(self, claimed: Claimed, lease_sec: float, now: float) -> Held:
        held = Held(claimed, lease_sec, now + lease_sec / 4)
        with self._changed:
            self._held[claimed.lease_token] = held
            self.version += 1
            self._changed.notify_all()
        return held

    def remove(self, held: Held) -> bool:
        """False when that claim was not held (removed already)."""
        with self._changed:
            gone = self._held.pop(held.token, None) is not None
            self.version += 1
            self._changed.notify_all()
        return gone

    def holds(self, held: Held) -> bool:
        with self._changed:
            return self._held.get(held.token) is held

    def find(self, predicate: Callable[[Held], bool]) -> Optional[Held]:
        with self._changed:
            return next((h for h in self._held.values() if predicate(h)), None)

    def snapshot(self) -> List[Held]:
        with self._changed:
            return list(self._held.values())

    def __len__(self) -> int:
        with self._changed:
            return len(self._held)

    def wait(self, predicate: Callable[[], bool], timeout: float) -> bool:
        """Until `predicate()` (called under the lock) holds, or the timeout."""
        with self._changed:
            return self._changed.wait_for(predicate, timeout)

    def poke(self) -> None:
        """Wake every waiter (a stop)."""
        with self._changed:
            self._changed.notify_all()
