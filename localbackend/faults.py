"""Injected faults: what the server does to the next calls of an endpoint kind.

A rule applies to the next `count` calls of its endpoint (`None`: until
cleared); `*` matches every endpoint. On one call at most one rule of each
fault type applies, in this order:

1. `latency`: wait before doing anything;
2. `drop` (before): close the connection without answering, the call unprocessed;
3. `burst`: answer a 5xx, the call unprocessed;
4. the call is processed;
5. `drop` with `after=True`: close without answering, the call processed (a lost answer);
6. `drip`: send the answer's body `chunk_size` bytes every `interval` seconds.

Revoking an identity is a state change, not a transport fault: see `Store.revoke`.
"""
import dataclasses
import threading
from typing import List, Optional, Union

ENDPOINTS = ('register', 'heartbeat', 'next-job', 'complete', 'abort', 'checksum', 'testdata',
             'code')
ANY = '*'


@dataclasses.dataclass(frozen=True)
class Burst:
    status: int = 503


@dataclasses.dataclass(frozen=True)
class Latency:
    seconds: float


@dataclasses.dataclass(frozen=True)
class Drop:
    after: bool = False


@dataclasses.dataclass(frozen=True)
class Drip:
    chunk_size: int = 16
    interval: float = 0.05


Fault = Union[Burst, Latency, Drop, Drip]


@dataclasses.dataclass
class Rule:
    endpoint: str
    fault: Fault
    remaining: Optional[int]

    def to_wire(self) -> dict:
        return {
            'endpoint': self.endpoint,
            'fault': type(self.fault).__name__.lower(),
            'remaining': self.remaining,
            **dataclasses.asdict(self.fault)
        }


@dataclasses.dataclass(frozen=True)
class Applied:
    """The faults chosen for one call."""
    latency: Optional[Latency] = None
    drop: Optional[Drop] = None
    burst: Optional[Burst] = None
    drip: Optional[Drip] = None

    def __bool__(self) -> bool:
        return any((self.latency, self.drop, self.burst, self.drip))

    def names(self) -> List[str]:
        return [name for name in ('latency', 'drop', 'burst', 'drip') if getattr(self, name)]


def _check(fault: Fault) -> Fault:
    if isinstance(fault,
                  Burst) and not (isinstance(fault.status, int) and 500 <= fault.status <= 599):
        raise ValueError('a burst answers a 5xx status')
    if isinstance(fault, Latency) and not fault.seconds >= 0:
        raise ValueError('latency must be >= 0 seconds')
    if isinstance(fault, Drip) and not (fault.chunk_size >= 1 and fault.interval >= 0):
        raise ValueError('drip needs chunk_size >= 1 and interval >= 0')
    return fault


class FaultPlan:
    """Thread-safe; the server asks `take(endpoint)` once per call."""

    def __init__(self):
        self._lock = threading.Lock()
        self._rules: List[Rule] = []

    def add(self, endpoint: str, fault: Fault, count: Optional[int] = 1) -> Rule:
        if endpoint != ANY and endpoint not in ENDPOINTS:
            raise ValueError(f'unknown endpoint {endpoint!r}; one of {", ".join(ENDPOINTS)} or *')
        if count is not None and (isinstance(count, bool) or not isinstance(count, int)
                                  or count < 1):
            raise ValueError('count must be a positive integer, or None for "until cleared"')
        rule = Rule(endpoint, _check(fault), count)
        with self._lock:
            self._rules.append(rule)
        return rule

    def burst(self, endpoint: str, count: int = 1, status: int = 503) -> Rule:
        """The next `count` calls answer `status` (5xx) without being processed."""
        return self.add(endpoint, Burst(status), count)

    def latency(self, endpoint: str, seconds: float, count: Optional[int] = 1) -> Rule:
        return self.add(endpoint, Latency(seconds), count)

    def drop(self, endpoint: str, count: int = 1, after: bool = False) -> Rule:
        """Close without answering; `after=True` processes the call first (a lost answer)."""
        return self.add(endpoint, Drop(after), count)

    def drip(self,
             endpoint: str,
             chunk_size: int = 16,
             interval: float = 0.05,
             count: Optional[int] = 1) -> Rule:
        return self.add(endpoint, Drip(chunk_size, interval), count)

    def clear(self, endpoint: Optional[str] = None) -> None:
        with self._lock:
            self._rules = [
                r for r in self._rules if endpoint is not None and r.endpoint != endpoint
            ]

    def rules(self) -> List[Rule]:
        with self._lock:
            return [dataclasses.replace(rule) for rule in self._rules]

    def take(self, endpoint: str) -> Applied:
        chosen = {}
        with self._lock:
            for rule in self._rules:
                name = type(rule.fault).__name__.lower()
                if name in chosen or rule.endpoint not in (endpoint, ANY):
                    continue
                chosen[name] = rule.fault
                if rule.remaining is not None:
                    rule.remaining -= 1
            self._rules = [r for r in self._rules if r.remaining is None or r.remaining > 0]
        return Applied(**chosen)

    def __repr__(self) -> str:
        return f'FaultPlan(rules={len(self.rules())})'


def fault_from_wire(spec: object) -> tuple:
    """(endpoint, fault, count) from an admin request body; raises ValueError."""
    if not isinstance(spec, dict):
        raise ValueError('body must be an object')
    kind = spec.get('fault')
    endpoint = spec.get('endpoint')
    count = spec.get('count', 1)
    if not isinstance(endpoint, str):
        raise ValueError('endpoint must be a string')
    try:
        if kind == 'burst':
            fault = Burst(int(spec.get('status', 503)))
        elif kind == 'latency':
            fault = Latency(float(spec['seconds']))
        elif kind == 'drop':
            fault = Drop(bool(spec.get('after', False)))
        elif kind == 'drip':
            fault = Drip(int(spec.get('chunk_size', 16)), float(spec.get('interval', 0.05)))
        else:
            raise ValueError('fault must be one of burst, latency, drop, drip')
    except (KeyError, TypeError) as error:
        raise ValueError(f'bad {kind} fault: {error}') from None
    return endpoint, _check(fault), count
