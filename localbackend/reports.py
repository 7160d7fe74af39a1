"""The `complete` body (protocol §4), parsed into typed results or refused.

Parsing is split from the shape check on purpose: the body's own form is known
at the wire, but whether it has the job's tasks × cases is only known once the
job is found, and a complete answers 401, 404 and 409 before it answers 400.
"""
import dataclasses
from typing import Optional, Sequence, Tuple

from localbackend import auth

STATUSES = ('CE', 'TLE', 'MLE', 'OLE', 'RE', 'WA', 'AC', 'JE')
_INT_FIELDS = (('exitCode', 'exit_code', False), ('execTime', 'exec_time_ms', True),
               ('memoryUsage', 'memory_kb', True))


class ReportError(ValueError):
    """A complete body the backend refuses (answered 400)."""


@dataclasses.dataclass(frozen=True)
class CaseReport:
    status: str
    exit_code: int = 0
    exec_time_ms: int = 0
    memory_kb: int = 0
    stdout: str = dataclasses.field(default='', repr=False)
    stderr: str = dataclasses.field(default='', repr=False)

    @classmethod
    def judge_error(cls, message: str) -> 'CaseReport':
        return cls(status='JE', stderr=message)

    def to_wire(self) -> dict:
        return {
            'status': self.status,
            'exitCode': self.exit_code,
            'execTime': self.exec_time_ms,
            'memoryUsage': self.memory_kb,
            'stdout': self.stdout,
            'stderr': self.stderr,
        }


@dataclasses.dataclass(frozen=True)
class Report:
    tasks: Tuple[Tuple[CaseReport, ...], ...]

    @property
    def shape(self) -> Tuple[int, ...]:
        return tuple(len(cases) for cases in self.tasks)

    @property
    def statuses(self) -> Tuple[str, ...]:
        return tuple(case.status for cases in self.tasks for case in cases)

    def to_wire(self) -> dict:
        return {'tasks': [[case.to_wire() for case in cases] for cases in self.tasks]}


def _case(value: object, where: str) -> CaseReport:
    if not isinstance(value, dict):
        raise ReportError(f'{where} must be an object')
    status = value.get('status')
    if not isinstance(status, str) or status not in STATUSES:
        raise ReportError(f'{where}.status must be one of {", ".join(STATUSES)}')
    numbers = {}
    for key, attribute, non_negative in _INT_FIELDS:
        number = value.get(key)
        if type(number) is not int:
            raise ReportError(f'{where}.{key} must be an integer')
        if non_negative and number < 0:
            raise ReportError(f'{where}.{key} must not be negative')
        numbers[attribute] = number
    texts = {}
    for key in ('stdout', 'stderr'):
        text = value.get(key)
        if not isinstance(text, str):
            raise ReportError(f'{where}.{key} must be a string')
        if auth.utf8(text) is None:
            raise ReportError(f'{where}.{key} is not valid Unicode (lone surrogate)')
        texts[key] = text
    return CaseReport(status=status, **numbers, **texts)


def parse_report(body: object) -> Report:
    """The report in a decoded JSON body; raises ReportError saying what is wrong."""
    if not isinstance(body, dict):
        raise ReportError('body must be a JSON object')
    tasks = body.get('tasks')
    if not isinstance(tasks, list):
        raise ReportError('tasks must be a list (one list of cases per task)')
    parsed = []
    for t, cases in enumerate(tasks):
        if not isinstance(cases, list):
            raise ReportError(f'tasks[{t}] must be a list of cases')
        parsed.append(tuple(_case(case, f'tasks[{t}][{c}]') for c, case in enumerate(cases)))
    return Report(tuple(parsed))


def shape_error(report: Report, case_counts: Optional[Sequence[int]]) -> Optional[str]:
    """Why `report` does not fit a job with `case_counts` cases per task, or None."""
    if case_counts is None:
        return 'the job payload has no usable tasks, so no report can match it'
    if len(report.tasks) != len(case_counts):
        return f'expected {len(case_counts)} tasks, got {len(report.tasks)}'
    for t, (cases, expected) in enumerate(zip(report.tasks, case_counts)):
        if len(cases) != expected:
            return f'task {t}: expected {expected} cases, got {len(cases)}'
    return None
