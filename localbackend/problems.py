"""Problems: tasks with limits, and the testdata zip the sandbox channel serves.

A problem folder holds `problem.json`, `testdata/TTCC.in|.out` (task TT, case
CC, two digits each from 00) and optionally `chaos/` (files placed beside the
source before compiling), and `checker/` (the problem's checker: one
`checker.c`, `checker.cpp` or `checker.py`, and what it includes) or
`interactor/` (an interactive problem's interactor, named alike; its cases
may leave out their `.out`).
`problem.json`:

    {"id": 1, "name": "a+b",
     "tasks": [{"taskScore": 40, "memoryLimit": 65536, "timeLimit": 1000, "caseCount": 2}, …]}
"""
import dataclasses
import functools
import hashlib
import json
import pathlib
import types
from typing import List, Mapping, Optional, Sequence, Tuple, Union

from localbackend import zips

Content = Union[str, bytes]


class ProblemError(ValueError):
    """A problem definition that cannot be served."""


@dataclasses.dataclass(frozen=True)
class TaskSpec:
    task_score: int
    memory_limit_kb: int
    time_limit_ms: int
    case_count: int

    def to_wire(self) -> dict:
        return {
            'taskScore': self.task_score,
            'memoryLimit': self.memory_limit_kb,
            'timeLimit': self.time_limit_ms,
            'caseCount': self.case_count,
        }


def case_name(task: int, case: int, suffix: str) -> str:
    return f'{task:02d}{case:02d}.{suffix}'


@dataclasses.dataclass(frozen=True, eq=False)
class Problem:
    """`files` are the testdata zip's entries: `TTCC.in`, `TTCC.out` (which an
    interactive problem may leave out), `chaos/…`, and `checker/…` or
    `interactor/…`."""
    problem_id: int
    name: str
    tasks: Tuple[TaskSpec, ...]
    files: Mapping[str, bytes] = dataclasses.field(repr=False)

    def __post_init__(self):
        frozen = types.MappingProxyType({name: _bytes(data) for name, data in self.files.items()})
        object.__setattr__(self, 'files', frozen)
        object.__setattr__(self, 'tasks', tuple(self.tasks))

    @classmethod
    def from_cases(cls,
                   problem_id: int,
                   tasks: Sequence[Sequence[Tuple[Content, Content]]],
                   *,
                   name: str = '',
                   time_limit_ms: int = 1000,
                   memory_limit_kb: int = 65536,
                   chaos: Optional[Mapping[str, Content]] = None,
                   checker: Optional[Mapping[str, Content]] = None,
                   interactor: Optional[Mapping[str, Content]] = None) -> 'Problem':
        """A problem from (input, output) pairs per task; scores split evenly to sum to 100."""
        count = len(tasks)
        scores = [100 // count] * count if count else []
        if scores:
            scores[-1] += 100 - sum(scores)
        specs = []
        files = {}
        for t, cases in enumerate(tasks):
            specs.append(TaskSpec(scores[t], memory_limit_kb, time_limit_ms, len(cases)))
            for c, (given, expected) in enumerate(cases):
                files[case_name(t, c, 'in')] = _bytes(given)
                files[case_name(t, c, 'out')] = _bytes(expected)
        for chaos_name, data in (chaos or {}).items():
            files[f'chaos/{chaos_name}'] = _bytes(data)
        for folder, judge in (('checker', checker), ('interactor', interactor)):
            for judge_name, data in (judge or {}).items():
                files[f'{folder}/{judge_name}'] = _bytes(data)
        return cls(problem_id, name or f'problem {problem_id}', tuple(specs), files)

    @functools.cached_property
    def testdata_zip(self) -> bytes:
        return zips.build_zip(self.files)

    @functools.cached_property
    def checksum(self) -> str:
        return hashlib.sha256(self.testdata_zip).hexdigest()

    def with_files(self, changes: Mapping[str, Optional[Content]]) -> 'Problem':
        """A copy with testdata entries replaced, added, or removed (value None).

        Not validated: a test may break a problem on purpose (a missing case).
        """
        files = dict(self.files)
        for name, data in changes.items():
            if data is None:
                files.pop(name, None)
            else:
                files[name] = _bytes(data)
        return dataclasses.replace(self, files=files)

    def issues(self) -> List[str]:
        """What makes this problem unservable; empty when it is fine."""
        found = []
        if isinstance(self.problem_id, bool) or not isinstance(self.problem_id, int) \
                or self.problem_id < 0:
            found.append('id must be a non-negative integer')
        if not self.tasks:
            found.append('a problem needs at least one task')
        if len(self.tasks) > 100:
            found.append('at most 100 tasks (two-digit names)')
        if self.tasks and sum(t.task_score for t in self.tasks) != 100:
            found.append('task scores must sum to 100')
        for t, task in enumerate(self.tasks):
            if not 1 <= task.case_count <= 100:
                found.append(f'task {t}: caseCount must be 1..100')
            if task.time_limit_ms <= 0 or task.memory_limit_kb <= 0 or task.task_score < 0:
                found.append(f'task {t}: limits must be positive and the score non-negative')
            for c in range(max(0, min(task.case_count, 100))):
                for suffix in ('in', 'out') if not self.interactive else ('in', ):
                    if case_name(t, c, suffix) not in self.files:
                        found.append(f'missing testdata {case_name(t, c, suffix)}')
        if self.interactive and any(name.startswith('checker/') for name in self.files):
            found.append('a problem has a checker/ or an interactor/, not both')
        return found

    @property
    def interactive(self) -> bool:
        return any(name.startswith('interactor/') for name in self.files)

    def validate(self) -> 'Problem':
        found = self.issues()
        if found:
            raise ProblemError(f'problem {self.problem_id!r}: ' + '; '.join(found))
        return self


def _bytes(data: Content) -> bytes:
    return data.encode('utf-8') if isinstance(data, str) else bytes(data)


def _int_field(task: dict, key: str, where: str) -> int:
    value = task.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ProblemError(f'{where}: {key} must be an integer')
    return value


def parse_problem_json(document: object, where: str) -> Tuple[int, str, Tuple[TaskSpec, ...]]:
    if not isinstance(document, dict):
        raise ProblemError(f'{where}: must be a JSON object')
    problem_id = document.get('id')
    if isinstance(problem_id, bool) or not isinstance(problem_id, int):
        raise ProblemError(f'{where}: id must be an integer')
    name = document.get('name', f'problem {problem_id}')
    if not isinstance(name, str):
        raise ProblemError(f'{where}: name must be a string')
    tasks = document.get('tasks')
    if not isinstance(tasks, list) or not all(isinstance(t, dict) for t in tasks):
        raise ProblemError(f'{where}: tasks must be a list of objects')
    specs = tuple(
        TaskSpec(
            _int_field(task, 'taskScore', f'{where} task {t}'),
            _int_field(task, 'memoryLimit', f'{where} task {t}'),
            _int_field(task, 'timeLimit', f'{where} task {t}'),
            _int_field(task, 'caseCount', f'{where} task {t}'),
        ) for t, task in enumerate(tasks))
    return problem_id, name, specs


def _read_tree(folder: pathlib.Path, prefix: str) -> dict:
    files = {}
    for path in sorted(folder.rglob('*')):
        if path.is_symlink():
            raise ProblemError(f'{path}: symlinks are not allowed in a problem folder')
        if path.is_file():
            files[prefix + path.relative_to(folder).as_posix()] = path.read_bytes()
    return files


def load_problem(folder: Union[str, pathlib.Path]) -> Problem:
    folder = pathlib.Path(folder)
    spec_path = folder / 'problem.json'
    try:
        document = json.loads(spec_path.read_text(encoding='utf-8'))
    except (OSError, ValueError) as error:
        raise ProblemError(f'{spec_path}: {error}') from None
    problem_id, name, tasks = parse_problem_json(document, str(spec_path))
    testdata = folder / 'testdata'
    if not testdata.is_dir():
        raise ProblemError(f'{testdata}: missing')
    files = _read_tree(testdata, '')
    for extra in ('chaos', 'checker', 'interactor'):
        if (folder / extra).is_dir():
            files.update(_read_tree(folder / extra, f'{extra}/'))
    return Problem(problem_id, name, tasks, files).validate()


def load_problems(root: Union[str, pathlib.Path]) -> List[Problem]:
    """Every problem folder (one holding `problem.json`) directly under `root`, by name."""
    root = pathlib.Path(root)
    if not root.is_dir():
        raise ProblemError(f'{root}: not a folder')
    problems = [
        load_problem(child) for child in sorted(root.iterdir())
        if (child / 'problem.json').is_file()
    ]
    seen = set()
    for problem in problems:
        if problem.problem_id in seen:
            raise ProblemError(f'{root}: problem id {problem.problem_id} defined twice')
        seen.add(problem.problem_id)
    return problems
