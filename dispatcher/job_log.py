"""Log lines about a job carry its job id and submission id.

Whoever works on a job (the poller preparing it, a dispatcher worker judging
it, the sender reporting it) does so inside `about_job(...)`; every record
logged meanwhile, by any module, gets `job_id` and `submission_id` fields,
which the log formats print.
"""
import contextlib
import contextvars
import logging
from typing import Iterator, Optional, Tuple

_current: 'contextvars.ContextVar[Optional[Tuple[str, str]]]' = contextvars.ContextVar('job',
                                                                                       default=None)


@contextlib.contextmanager
def about_job(job_id: str, submission_id: Optional[str]) -> Iterator[None]:
    token = _current.set((job_id, submission_id or '-'))
    try:
        yield
    finally:
        _current.reset(token)


def current_submission_id() -> str:
    ids = _current.get()
    return ids[1] if ids is not None and ids[1] != '-' else ''


class JobFields(logging.Filter):
    """Adds the current job's ids to each record (a handler filter)."""

    def filter(self, record: logging.LogRecord) -> bool:
        ids = _current.get()
        if ids is not None and not hasattr(record, 'job_id'):
            record.job_id, record.submission_id = ids
        return True
