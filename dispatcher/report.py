"""The `tasks` part of the `complete` body (protocol §4), and its size bound."""
import json
from typing import List, Sequence

from sandbox.results import CaseResult

_OUTPUTS = ('stdout', 'stderr')


def build_report(case_results: Sequence[Sequence[CaseResult]]) -> List[List[dict]]:
    """A list per task of a list per case, both in index order (never in the
    order the cases happened to finish)."""
    return [[case.to_report() for case in cases] for cases in case_results]


def fit_report(tasks: List[List[dict]], body_limit: int) -> List[List[dict]]:
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
