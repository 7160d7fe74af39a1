"""A claimed job, prepared on disk, as the dispatcher receives it, and the check
that `Dispatcher.handle` makes of it in full before any state changes."""
import dataclasses
import pathlib
from typing import Optional, Tuple

from sandbox.job import Judging, ProblemProgram
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
    - `job_dir/testdata/`: `TTCC.in` and `TTCC.out` for task TT, case CC;
    - `job_dir/checker/` or `job_dir/interactor/`: the problem's checker or
      interactor, when it has one (`problem_program`: `<role>.<ext>` and the files it
      includes).
    """
    job_id: str
    submission_id: str
    problem_id: int
    language: Language
    tasks: Tuple[TaskMeta, ...]
    job_dir: pathlib.Path
    problem_program: Optional[ProblemProgram] = None
    judging: Judging = Judging()

    @property
    def source_dir(self) -> pathlib.Path:
        return self.job_dir / 'src'

    def input_path(self, task: int, case: int) -> pathlib.Path:
        return self.job_dir / 'testdata' / case_file(task, case, 'in')

    def answer_path(self, task: int, case: int) -> pathlib.Path:
        return self.job_dir / 'testdata' / case_file(task, case, 'out')


def check_job(job: object) -> None:
    """Raise ValueError saying what is wrong; return None for a job the
    dispatcher can run to completion."""
    if not isinstance(job, Job):
        raise ValueError(f'expected a Job, got {type(job).__name__}')
    _check_text('job_id', job.job_id)
    _check_text('submission_id', job.submission_id)
    _check_int('problem_id', job.problem_id, minimum=0)
    if not isinstance(job.language, Language):
        raise ValueError(f'job {job.job_id!r}: language must be a Language, '
                         f'got {type(job.language).__name__}')
    if not isinstance(job.job_dir, pathlib.Path):
        raise ValueError(f'job {job.job_id!r}: job_dir must be a Path')
    if job.problem_program is not None and not isinstance(job.problem_program, ProblemProgram):
        raise ValueError(f'job {job.job_id!r}: problem_program must be None or a ProblemProgram, '
                         f'got {type(job.problem_program).__name__}')
    if not isinstance(job.judging, Judging):
        raise ValueError(f'job {job.job_id!r}: judging must be a Judging')
    if not isinstance(job.tasks, tuple):
        raise ValueError(f'job {job.job_id!r}: tasks must be a tuple')
    if not 1 <= len(job.tasks) <= MAX_TASKS:
        raise ValueError(f'job {job.job_id!r}: needs 1 to {MAX_TASKS} tasks, '
                         f'got {len(job.tasks)}')
    for index, meta in enumerate(job.tasks):
        _check_task(job.job_id, index, meta)


def _check_task(job_id: str, index: int, meta: object) -> None:
    where = f'job {job_id!r} task {index}'
    if not isinstance(meta, TaskMeta):
        raise ValueError(f'{where}: expected a TaskMeta, got {type(meta).__name__}')
    _check_int(f'{where} task_score', meta.task_score, minimum=0)
    _check_int(f'{where} memory_limit_kb', meta.memory_limit_kb, minimum=1)
    _check_int(f'{where} time_limit_ms', meta.time_limit_ms, minimum=1)
    # A task without cases could never produce a "last case", so the job
    # would never complete.
    _check_int(f'{where} case_count', meta.case_count, minimum=1, maximum=MAX_CASES_PER_TASK)


def _check_text(name: str, value: object) -> None:
    if not isinstance(value, str) or not value:
        raise ValueError(f'{name} must be a non-empty string')


def _check_int(name: str, value: object, minimum: int, maximum: Optional[int] = None) -> None:
    # bool is an int subclass; True is not a time limit.
    if type(value) is not int:
        raise ValueError(f'{name} must be an int, got {type(value).__name__}')
    if value < minimum or (maximum is not None and value > maximum):
        upper = '' if maximum is None else f' and at most {maximum}'
        raise ValueError(f'{name} must be at least {minimum}{upper}, got {value}')
