"""The event log: every call the backend answered and every rule it applied, in order.

Tests assert on it ("every result landed exactly once", "the drain abort was
refunded"), so it records facts with the store's own words, never tokens.

Kinds and their outcomes:
- `register`: ok | unauthorized | rejected
- `heartbeat`: ok | unauthorized | rejected (data: renewed, ignored)
- `claim`: ok | no_job | unauthorized | abandoned (the caller had gone: nothing leased)
  (data of ok: held = claims this runner holds after it)
- `long_poll`: waiting (a `next-job?wait=N` found nothing and is holding the call)
- `complete`: landed | stale_dropped | unauthorized | not_found | conflict | rejected
- `abort`: requeued | converged | dropped | unauthorized | not_found | conflict | rejected
- `reclaim`: requeued | converged | dropped (a lease expired)
- `judge_error`: the job converged to JE after its last attempt
- `submit`, `rejudge`, `cancel`, `inject`, `testdata_changed`, `revoke`: admin actions
- `checksum`, `testdata`, `code`: downloads: ok | unauthorized | not_found
- `fault`: an injected fault was applied (data: endpoint, fault)
"""
import dataclasses
import threading
from typing import Any, Callable, List, Mapping, Optional


@dataclasses.dataclass(frozen=True)
class Event:
    seq: int
    at: float
    kind: str
    outcome: str = ''
    runner_id: Optional[str] = None
    job_id: Optional[str] = None
    submission_id: Optional[str] = None
    reason: Optional[str] = None
    attempts: Optional[int] = None
    data: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    def matches(self, kind: Optional[str], match: Mapping[str, Any]) -> bool:
        if kind is not None and self.kind != kind:
            return False
        return all(getattr(self, key) == value for key, value in match.items())

    def to_wire(self) -> dict:
        return dataclasses.asdict(self)


class EventLog:
    """Append-only and thread-safe; waiters are woken on every append."""

    def __init__(self, clock):
        self._clock = clock
        self._cond = threading.Condition()
        self._events: List[Event] = []

    def append(self, kind: str, **fields) -> Event:
        with self._cond:
            event = Event(seq=len(self._events) + 1, at=self._clock.now(), kind=kind, **fields)
            self._events.append(event)
            self._cond.notify_all()
            return event

    def list(self, kind: Optional[str] = None, *, since: int = 0, **match) -> List[Event]:
        """Events of `kind` (all kinds when None) after seq `since`, whose fields equal `match`."""
        with self._cond:
            return [e for e in self._events[since:] if e.matches(kind, match)]

    def count(self, kind: Optional[str] = None, **match) -> int:
        return len(self.list(kind, **match))

    def wait_for(self,
                 kind: Optional[str] = None,
                 *,
                 timeout: float,
                 since: int = 0,
                 where: Optional[Callable[[Event], bool]] = None,
                 **match) -> Event:
        """The first event after seq `since` that matches; waits for it up to `timeout` s."""
        found: List[Event] = []

        def seen() -> bool:
            for event in self._events[since:]:
                if event.matches(kind, match) and (where is None or where(event)):
                    found.append(event)
                    return True
            return False

        with self._cond:
            if not self._cond.wait_for(seen, timeout):
                raise TimeoutError(f'no {kind or "event"} matching {match} within {timeout} s')
        return found[0]

    @property
    def last_seq(self) -> int:
        with self._cond:
            return len(self._events)

    def __repr__(self) -> str:
        return f'EventLog(events={self.last_seq})'
