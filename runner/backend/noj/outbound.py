"""What the runner sends the backend, encoded at the boundary (protocol §2, §4).

Inside the runner results are typed (`CaseResult`, `AbortReason`); the
backend's JSON keys (camelCase `execTime`, `memoryUsage`, ...) are written
here and nowhere else, as the bodies the client sends.
"""
import dataclasses
import enum
import json
import logging
from typing import List, Sequence

from sandbox.results import CaseResult

log = logging.getLogger(__name__)

# A grid of results: a sequence per task of a sequence per case, in index order.
Results = Sequence[Sequence[CaseResult]]

_OUTPUTS = ('stdout', 'stderr')


class AbortReason(str, enum.Enum):
    # Returned by a shutdown: does not count against the job's attempts.
    DRAIN = 'drain'
    # The job could not be prepared or dispatched: counts.
    PREP_FAILED = 'prep_failed'
    # The backend refused our complete body (400): counts.
    REJECTED = 'rejected'


def register_body(registration_token: str, name: str, version: str) -> dict:
    # `version` is for the backend's runner list; a backend may ignore it.
    body = {'registration_token': registration_token, 'name': name}
    if version:
        body['version'] = version
    return body


def heartbeat_body(job_ids: Sequence[str]) -> dict:
    return {'active_job_ids': list(job_ids)}


def abort_body(reason: AbortReason) -> dict:
    return {'reason': AbortReason(reason).value}


def case_object(result: CaseResult) -> dict:
    """One case of the `complete` body."""
    return {
        'status': result.status.value,
        'exitCode': result.exit_code,
        'execTime': result.exec_time_ms,
        'memoryUsage': result.memory_kb,
        'stdout': result.stdout,
        'stderr': result.stderr,
    }


@dataclasses.dataclass(frozen=True)
class CompleteBody:
    """A `complete` body, encoded once: every attempt sends the same one."""
    # Kept out of the repr: it carries the submission's output.
    tasks: List[List[dict]] = dataclasses.field(repr=False)

    def without_outputs(self) -> 'CompleteBody':
        """The smallest body there is: the verdicts, every output empty."""
        return CompleteBody(without_outputs(self.tasks))

    def json(self) -> dict:
        return {'tasks': self.tasks}


def complete_body(results: Results, body_limit: int) -> CompleteBody:
    """The `complete` body, at most `body_limit` bytes once encoded (outputs
    shortened, verdicts kept)."""
    tasks = [[case_object(case) for case in cases] for cases in results]
    try:
        return CompleteBody(fit_tasks(tasks, body_limit))
    except Exception:  # never a claim left held for a bug in the fitting
        log.exception('could not fit a result to REPORT_BODY_LIMIT; sending it whole')
        return CompleteBody(tasks)


def fit_tasks(tasks: List[List[dict]], body_limit: int) -> List[List[dict]]:
    """The same report with its outputs shortened, fairly across cases, until
    the JSON-encoded `complete` body is at most `body_limit` bytes (common
    proxies refuse bodies over 1 MiB; control bytes grow sixfold once
    escaped). Statuses, times, memory and exit codes are never cut: a report
    of so many cases that they alone exceed the bound goes with empty outputs.

    Every output gets the same share of what the fixed part leaves, and what
    a short output does not use goes to the longer ones."""
    sizes = [
        _encoded_len(case.get(key, '')) for cases in tasks for case in cases for key in _OUTPUTS
    ]
    budget = body_limit - _body_len(tasks) + sum(sizes)
    if sum(sizes) <= budget:
        return tasks
    cap = _fair_cap(sizes, max(0, budget))
    return [[{
        **case,
        **{
            key: _prefix_within(case[key], cap)
            for key in _OUTPUTS if key in case
        }
    } for case in cases] for cases in tasks]


def without_outputs(tasks: List[List[dict]]) -> List[List[dict]]:
    """The smallest report there is: every output empty."""
    return [[{
        **case,
        **{
            key: ''
            for key in _OUTPUTS if key in case
        }
    } for case in cases] for cases in tasks]


def _body_len(tasks) -> int:
    return len(json.dumps({'tasks': tasks}))


def _encoded_len(text: str) -> int:
    return len(json.dumps(text)) - 2  # without the quotes


def _fair_cap(sizes: List[int], budget: int) -> int:
    """The largest cap c with sum(min(size, c)) <= budget."""
    low, high = 0, max(sizes, default=0)
    while low < high:
        mid = (low + high + 1) // 2
        if sum(min(size, mid) for size in sizes) <= budget:
            low = mid
        else:
            high = mid - 1
    return low


def _prefix_within(text: str, cap: int) -> str:
    """The longest prefix of `text` whose encoded length is at most `cap`."""
    if _encoded_len(text) <= cap:
        return text
    low, high = 0, min(len(text), cap)
    while low < high:
        mid = (low + high + 1) // 2
        if _encoded_len(text[:mid]) <= cap:
            low = mid
        else:
            high = mid - 1
    return text[:low]
