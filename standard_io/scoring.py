"""A `standard-io@1` submission's score, verdict and `details` document
(docs/algojudge.md §10.7 and §10.9).

A test's share is its group's points over the group's tests; a passed test
earns its share times its percentage, and only when every test of its
group passed (else the whole group earns 0). The verdict is the word of the
first failing test in judging order, examples included, so a failing
example keeps its score and still says `Wrong answer`.
"""
import dataclasses
import enum
import math
from typing import Any, Dict, Optional, Sequence, Tuple

from standard_io.config import TYPE, Config, Limits
from standard_io.package import Test

MAX_LOG_CHARS = 64 * 1024


class Verdict(str, enum.Enum):
    ACCEPTED = 'Accepted'
    PARTIAL = 'Partial'
    WRONG_ANSWER = 'Wrong answer'
    TIME_LIMIT = 'Time limit exceeded'
    MEMORY_LIMIT = 'Memory limit exceeded'
    OUTPUT_LIMIT = 'Output limit exceeded'
    RUNTIME_ERROR = 'Runtime error'
    COMPILATION_ERROR = 'Compilation error'
    POLICY_VIOLATION = 'PolicyViolation'


class Reason(str, enum.Enum):
    """Why a test failed, as `details` names it."""
    WRONG_ANSWER = 'wrongAnswer'
    TIME_LIMIT = 'timeLimit'
    MEMORY_LIMIT = 'memoryLimit'
    OUTPUT_LIMIT = 'outputLimit'
    RUNTIME_ERROR = 'runtimeError'
    POLICY_VIOLATION = 'policyViolation'
    COMPILATION_ERROR = 'compilationError'


_VERDICT_OF = {
    Reason.WRONG_ANSWER: Verdict.WRONG_ANSWER,
    Reason.TIME_LIMIT: Verdict.TIME_LIMIT,
    Reason.MEMORY_LIMIT: Verdict.MEMORY_LIMIT,
    Reason.OUTPUT_LIMIT: Verdict.OUTPUT_LIMIT,
    Reason.RUNTIME_ERROR: Verdict.RUNTIME_ERROR,
    Reason.POLICY_VIOLATION: Verdict.POLICY_VIOLATION,
    Reason.COMPILATION_ERROR: Verdict.COMPILATION_ERROR,
}


@dataclasses.dataclass(frozen=True)
class TestOutcome:
    """How one test went. `reason` None: passed, earning `percent` of its share."""
    __test__ = False  # not a pytest class
    test: Test
    reason: Optional[Reason]
    percent: int
    cpu_us: int
    memory_bytes: Optional[int]  # None: not measured
    note: str

    @staticmethod
    def refused(test: Test, reason: Reason) -> 'TestOutcome':
        """A test never run: the build failed or the submission was refused."""
        return TestOutcome(test, reason, 0, 0, None, '')


@dataclasses.dataclass(frozen=True)
class GroupResult:
    group: int
    points: float  # earned
    max_points: int
    ok: bool


@dataclasses.dataclass(frozen=True)
class TestResult:
    __test__ = False  # not a pytest class
    outcome: TestOutcome
    score: float
    max_score: float


@dataclasses.dataclass(frozen=True)
class Result:
    score: float
    max_score: int
    verdict: Verdict
    groups: Tuple[GroupResult, ...]
    tests: Tuple[TestResult, ...]


def score(config: Config, outcomes: Sequence[TestOutcome]) -> Result:
    """`outcomes`: one per test, in judging order."""
    groups = []
    tests = []
    for group in config.groups:
        mine = [o for o in outcomes if o.test.group == group.group]
        share = group.points / len(mine)
        ok = all(o.reason is None for o in mine)
        earned = sum(o.percent for o in mine) / 100 * share if ok else 0.0
        groups.append(GroupResult(group.group, _round(earned), group.points, ok))
        for o in mine:
            tests.append(
                TestResult(o, _round(share * o.percent / 100 if ok else 0.0), _round(share)))
    total = _round(sum(g.points for g in groups))
    max_score = sum(g.points for g in config.groups)
    failed = next((o for o in outcomes if o.reason is not None), None)
    if failed is not None:
        verdict = _VERDICT_OF[failed.reason]
    else:
        verdict = Verdict.ACCEPTED if total == max_score else Verdict.PARTIAL
    return Result(total, max_score, verdict, tuple(groups), tuple(tests))


def details(result: Result, limits: Limits, compile_log: str) -> Dict[str, Any]:
    """The `details` attachment. `limits`: the global ones with the
    language's override (a group's own are not shown). A policy violation
    is refused before the build, so only the compilation shows it."""
    compilation = {
        Verdict.COMPILATION_ERROR: 'ERROR',
        Verdict.POLICY_VIOLATION: 'WARNING'
    }.get(result.verdict, 'OK')
    return {
        'type':
        TYPE,
        'limits': {
            'timeMs': limits.time_ms,
            'memoryBytes': limits.memory_bytes
        },
        'score':
        _number(result.score),
        'maxScore':
        result.max_score,
        'compilation': {
            'status': compilation,
            'log': compile_log[-MAX_LOG_CHARS:]
        },
        'groups': [{
            'group': g.group,
            'points': _number(g.points),
            'maxPoints': g.max_points,
            'status': 'OK' if g.ok else 'ERROR'
        } for g in result.groups],
        'tests': [_test(t) for t in result.tests],
    }


def _test(result: TestResult) -> Dict[str, Any]:
    o = result.outcome
    if o.reason is not None:
        status = 'ERROR'
    else:
        status = 'OK' if o.percent == 100 else 'WARNING'
    item = {
        'no': o.test.no,
        'group': o.test.group,
        'status': status,
        'timeMs': math.ceil(o.cpu_us / 1000),
    }
    if o.memory_bytes is not None:
        item['memoryBytes'] = o.memory_bytes
    item.update(score=_number(result.score), maxScore=_number(result.max_score), note=o.note)
    if o.reason is not None:
        item['reason'] = o.reason.value
    return item


def _round(value: float) -> float:
    return round(value + 0.0, 2)


def _number(value: float) -> Any:
    """A score as JSON shows it best: 40, not 40.0."""
    return int(value) if float(value).is_integer() else value
