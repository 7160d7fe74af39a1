"""What `Dispatcher.handle` accepts: checked in full before any state changes."""
import pathlib
from typing import Optional

from dispatcher.job import MAX_CASES_PER_TASK, MAX_TASKS, Job, TaskMeta
from sandbox.languages import Language


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
