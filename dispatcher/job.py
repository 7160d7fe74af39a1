"""A claimed job, prepared on disk and validated, as the dispatcher receives it."""
import dataclasses
import pathlib
from typing import Tuple

from sandbox.languages import Language

# Testdata files are named TTCC.in and TTCC.out (protocol §3): two digits each,
# so indexes stop at 99.
MAX_TASKS = 100
MAX_CASES_PER_TASK = 100


def case_file(task: int, case: int, suffix: str) -> str:
    """The testdata file name of task `task`, case `case`: 'in' or 'out'."""
    return f'{task:02d}{case:02d}.{suffix}'


@dataclasses.dataclass(frozen=True)
class TaskMeta:
    task_score: int
    memory_limit_kb: int
    time_limit_ms: int
    case_count: int


@dataclasses.dataclass(frozen=True)
class Job:
    """A prepared job. `job_dir` is this claim generation's own folder:

    - `job_dir/src/`: `main.<ext>` and the problem's `chaos/` files;
    - `job_dir/testdata/`: `TTCC.in` and `TTCC.out` for task TT, case CC.
    """
    job_id: str
    submission_id: str
    problem_id: int
    language: Language
    tasks: Tuple[TaskMeta, ...]
    job_dir: pathlib.Path

    @property
    def source_dir(self) -> pathlib.Path:
        return self.job_dir / 'src'

    def input_path(self, task: int, case: int) -> pathlib.Path:
        return self.job_dir / 'testdata' / case_file(task, case, 'in')

    def answer_path(self, task: int, case: int) -> pathlib.Path:
        return self.job_dir / 'testdata' / case_file(task, case, 'out')
