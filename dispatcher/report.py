"""The `tasks` part of the `complete` body (SPEC §2)."""
from typing import List, Sequence

from sandbox.results import CaseResult


def build_report(case_results: Sequence[Sequence[CaseResult]]) -> List[List[dict]]:
    """A list per task of a list per case, both in index order (never in the
    order the cases happened to finish)."""
    return [[case.to_report() for case in cases] for cases in case_results]
