"""Logging setup: readable text by default, one JSON object per line for log
shippers (`LOG_FORMAT=json`).

Log lines about a job carry its job id and submission id. Whoever works on a
job (the poller preparing it, a dispatcher worker judging it, the sender
reporting it) does so inside `about_job(...)`; every record logged meanwhile,
by any module, gets `job_id` and `submission_id` fields, which the formats
print.
"""
import contextlib
import contextvars
import datetime
import logging
import re
import sys
from typing import Iterator, Optional, Tuple

from pythonjsonlogger import json as jsonlogger

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


_TEXT = '%(asctime)s %(levelname)-7s %(name)s: %(message)s'

# A URL's query string, or a bare path's (a library's request line: "GET
# /problem/1/testdata?token=..."): where the code URL's signature and the
# testdata token travel.
_QUERY = re.compile(r'((?:\b[a-z][a-z0-9+.-]*://|(?<![^\s\'"(=])/)[^\s?#\'"]*)\?[^\s\'"]*',
                    re.IGNORECASE)


class RedactQueries(logging.Filter):
    """Last line of defence: no URL query string reaches a log line, whoever
    logged it (a library's warning names the URL it failed on)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        redacted = _QUERY.sub(r'\1?<redacted>', message)
        if redacted != message:
            record.msg, record.args = redacted, None
        return True


class TextFormatter(logging.Formatter):

    def __init__(self):
        super().__init__(_TEXT)

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        if hasattr(record, 'job_id'):
            line += f' [job={record.job_id} submission={record.submission_id}]'
        return line


class JsonFormatter(jsonlogger.JsonFormatter):
    """One JSON object per line: `time` (RFC 3339, UTC, milliseconds), `level`,
    `logger`, `message`, every extra field of the record (the job's ids
    among them), the runner's id once registered, and `exception`."""

    def __init__(self):
        super().__init__('{asctime}{levelname}{name}{message}',
                         style='{',
                         rename_fields={
                             'asctime': 'time',
                             'levelname': 'level',
                             'name': 'logger',
                             'exc_info': 'exception'
                         },
                         json_ensure_ascii=False)

    def formatTime(self, record: logging.LogRecord, datefmt: Optional[str] = None) -> str:
        when = datetime.datetime.fromtimestamp(record.created, tz=datetime.timezone.utc)
        return when.strftime('%Y-%m-%dT%H:%M:%S.') + f'{when.microsecond // 1000:03d}Z'


_runner_id: Optional[str] = None


def set_runner_id(runner_id: Optional[str]) -> None:
    """Every line from now on carries the id the backend gave this runner."""
    global _runner_id
    _runner_id = runner_id


class RunnerFields(logging.Filter):
    """Adds the runner's id to each record once it is known (a handler filter)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if _runner_id is not None and not hasattr(record, 'runner_id'):
            record.runner_id = _runner_id
        return True


def configure_logging(level: str, fmt: str, stream=None) -> None:
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == 'json' else TextFormatter())
    handler.addFilter(JobFields())
    handler.addFilter(RunnerFields())
    handler.addFilter(RedactQueries())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # Library debug logs would print request URLs, whose query strings carry
    # secrets (the code URL's signature, the testdata token).
    for noisy in ('urllib3', 'docker', 'requests'):
        logging.getLogger(noisy).setLevel(max(logging.INFO, logging.getLevelName(level)))
    # urllib3 names the full URL even in some warnings (a malformed header).
    logging.getLogger('urllib3').setLevel(logging.ERROR)
