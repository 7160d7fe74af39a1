"""What the backend sends, parsed into typed values at the boundary (protocol §2, §3).

Everything here is hostile input: a malformed body becomes a `WireError`
whose message names the offending field and never carries a secret (the
code URL's signature, the runner token).
"""
import dataclasses
import logging
import re
import urllib.parse
from typing import Any, Mapping, Optional, Tuple, Union

from dispatcher.job import MAX_CASES_PER_TASK, MAX_TASKS, TaskMeta
from runner.backend.http_session import is_header_token
from sandbox.languages import Language

# Job and runner ids end up in URL paths and folder names: only these
# characters are usable, anything else could traverse either.
_ID = re.compile(r'[A-Za-z0-9_-]{1,128}')
_DECIMAL = re.compile(r'[0-9]{1,128}')

# Only a bound on the number: a limit this host cannot give is not a bad
# payload but a job for another runner (the poller's memory check hands it
# back as drain).
MAX_MEMORY_LIMIT_KB = 2**50
MAX_TIME_LIMIT_MS = 10 * 60 * 1000


class WireError(ValueError):
    """A body from the backend is not what protocol §2 or §3 says; names the field."""


log = logging.getLogger(__name__)

# Bounds on what a backend may configure: beyond them a wait overflows the
# platform's timeout or the runner would hold absurdly many claims.
MAX_CONFIG_SECONDS = 3600
# A lease lasts 30 s from the claim or the last heartbeat (protocol §6): a
# beat at most every half lease keeps it with one to spare, whatever the
# backend asks. And no cadence is so short that a loop spins on it.
LEASE_SEC = 30
MAX_HEARTBEAT_SEC = LEASE_SEC / 2
MIN_INTERVAL_SEC = 0.1
MAX_PROBLEM_ID = 10**18 - 1
MAX_CONCURRENT_JOBS = 1000


@dataclasses.dataclass(frozen=True)
class RunnerConfig:
    heartbeat_interval_sec: float = 15
    poll_interval_sec: float = 3
    max_concurrent_jobs: int = 8


@dataclasses.dataclass(frozen=True)
class RunnerIdentity:
    runner_id: str
    token: str = dataclasses.field(repr=False)


@dataclasses.dataclass(frozen=True)
class Registration:
    identity: RunnerIdentity
    config: RunnerConfig


@dataclasses.dataclass(frozen=True)
class JobPayload:
    """A claimed job as the backend described it; nothing is on disk yet."""
    job_id: str
    submission_id: str
    problem_id: int
    language: Language
    tasks: Tuple[TaskMeta, ...]
    # The presigned URL's query string is a credential: never in a repr.
    code_url: str = dataclasses.field(repr=False)


@dataclasses.dataclass(frozen=True)
class BadClaim:
    """A claim whose job id is usable but whose payload cannot be judged.

    It is still a claim: it must be tracked and aborted (`prep_failed`)."""
    job_id: str
    problem: str


Claim = Union[JobPayload, BadClaim]


def parse_registration(body: Any) -> Registration:
    obj = _object(body, 'register body')
    config = obj.get('config', {})
    if config is None:
        config = {}
    config = _object(config, 'config')
    defaults = RunnerConfig()
    return Registration(
        identity=RunnerIdentity(runner_id=_id(obj, 'runner_id'), token=_token(obj, 'token')),
        config=RunnerConfig(
            heartbeat_interval_sec=_within(
                _optional_seconds(config, 'heartbeat_interval_sec',
                                  defaults.heartbeat_interval_sec), 'heartbeat_interval_sec',
                MAX_HEARTBEAT_SEC),
            poll_interval_sec=_within(
                _optional_seconds(config, 'poll_interval_sec', defaults.poll_interval_sec),
                'poll_interval_sec', MAX_CONFIG_SECONDS),
            max_concurrent_jobs=_optional_positive_int(config, 'max_concurrent_jobs',
                                                       defaults.max_concurrent_jobs),
        ),
    )


def parse_claim(body: Any) -> Claim:
    """A `next-job` 200 body. Raises `WireError` only when there is no usable
    `job_id` (such a claim cannot be aborted and is left to lease expiry)."""
    obj = _object(body, 'next-job body')
    job_id = _id(obj, 'job_id')
    try:
        return _parse_job(obj, job_id)
    except WireError as exc:
        return BadClaim(job_id=job_id, problem=str(exc))


_JOB_ID_FIELD = re.compile(rb'"job_id"\s*:\s*"([A-Za-z0-9_-]{1,128})"')


def job_id_in_prefix(body: bytes) -> Optional[str]:
    """The job id of a body too big to parse, when its first part shows one."""
    found = _JOB_ID_FIELD.search(body)
    return found.group(1).decode('ascii') if found else None


def parse_checksum(body: Any) -> str:
    obj = _object(body, 'checksum body')
    value = obj.get('data')
    if not isinstance(value, str) or not value or len(value) > 256:
        raise WireError('data: expected a non-empty string of at most 256 characters')
    return value


def _parse_job(obj: Mapping[str, Any], job_id: str) -> JobPayload:
    return JobPayload(
        job_id=job_id,
        submission_id=_submission_id(obj),
        problem_id=_problem_id(obj),
        language=_language(obj),
        tasks=_tasks(obj),
        code_url=_code_url(obj),
    )


def _object(value: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise WireError(f'{what}: expected a JSON object, got {_kind(value)}')
    return value


def _kind(value: Any) -> str:
    if value is None:
        return 'null'
    return {
        bool: 'a boolean',
        int: 'an integer',
        float: 'a number',
        str: 'a string',
        list: 'a list',
        dict: 'an object'
    }.get(type(value),
          type(value).__name__)


def _id(obj: Mapping[str, Any], field: str) -> str:
    value = obj.get(field)
    if not isinstance(value, str):
        raise WireError(f'{field}: expected a string, got {_kind(value)}')
    if not _ID.fullmatch(value):
        raise WireError(f'{field}: expected 1-128 characters of [A-Za-z0-9_-]')
    return value


def _token(obj: Mapping[str, Any], field: str) -> str:
    value = obj.get(field)
    if not isinstance(value, str) or not value:
        raise WireError(f'{field}: expected a non-empty string, got {_kind(value)}')
    if not is_header_token(value):
        # Sent as `Authorization: Bearer …` on every later call, which would
        # each fail: refused here, so registration is tried again.
        raise WireError(f'{field}: expected printable ASCII without spaces')
    return value


def _submission_id(obj: Mapping[str, Any]) -> str:
    value = obj.get('submission_id')
    if not isinstance(value, str):
        raise WireError(f'submission_id: expected a string, got {_kind(value)}')
    if not value or len(value) > 128 or not value.isprintable():
        raise WireError('submission_id: expected 1-128 printable characters')
    return value


def _problem_id(obj: Mapping[str, Any]) -> int:
    value = obj.get('problem_id')
    if isinstance(value, int) and not isinstance(value, bool):
        if not 0 <= value <= MAX_PROBLEM_ID:  # as a string's 18 digits: it names files
            raise WireError(f'problem_id: expected an integer from 0 to {MAX_PROBLEM_ID}')
        return value
    if isinstance(value, str):
        if not _DECIMAL.fullmatch(value) or int(value) > MAX_PROBLEM_ID:
            raise WireError(
                f'problem_id: expected decimal digits of a number up to {MAX_PROBLEM_ID}')
        return int(value)
    raise WireError(f'problem_id: expected an integer or a string of digits, got {_kind(value)}')


def _language(obj: Mapping[str, Any]) -> Language:
    value = obj.get('language')
    if not isinstance(value, int) or isinstance(value, bool):
        raise WireError(f'language: expected an integer, got {_kind(value)}')
    try:
        return Language(value)
    except ValueError:
        raise WireError(f'language: unknown language {value}') from None


def _code_url(obj: Mapping[str, Any]) -> str:
    value = obj.get('code_url')
    if not isinstance(value, str):
        raise WireError(f'code_url: expected a string, got {_kind(value)}')
    try:
        parts = urllib.parse.urlsplit(value)
    except ValueError:
        raise WireError('code_url: not a URL') from None
    if parts.scheme not in ('http', 'https') or not parts.hostname:
        raise WireError('code_url: expected an http(s) URL with a host')
    return value


def _tasks(obj: Mapping[str, Any]) -> Tuple[TaskMeta, ...]:
    value = obj.get('tasks')
    if not isinstance(value, list):
        raise WireError(f'tasks: expected a list, got {_kind(value)}')
    if not 1 <= len(value) <= MAX_TASKS:
        raise WireError(f'tasks: expected 1-{MAX_TASKS} tasks, got {len(value)}')
    return tuple(_task(item, f'tasks[{index}]') for index, item in enumerate(value))


def _task(value: Any, where: str) -> TaskMeta:
    obj = _object(value, where)
    return TaskMeta(
        task_score=_bounded_int(obj, 'taskScore', where, 0, 100),
        memory_limit_kb=_bounded_int(obj, 'memoryLimit', where, 1, MAX_MEMORY_LIMIT_KB),
        time_limit_ms=_bounded_int(obj, 'timeLimit', where, 1, MAX_TIME_LIMIT_MS),
        case_count=_bounded_int(obj, 'caseCount', where, 1, MAX_CASES_PER_TASK),
    )


def _bounded_int(obj: Mapping[str, Any], field: str, where: str, low: int, high: int) -> int:
    value = obj.get(field)
    if not isinstance(value, int) or isinstance(value, bool):
        raise WireError(f'{where}.{field}: expected an integer, got {_kind(value)}')
    if not low <= value <= high:
        raise WireError(f'{where}.{field}: expected {low}..{high}, got {value}')
    return value


def _optional_seconds(obj: Mapping[str, Any], field: str, default: float) -> float:
    value = obj.get(field)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise WireError(f'config.{field}: expected a number, got {_kind(value)}')
    if not 0 < value <= MAX_CONFIG_SECONDS:
        raise WireError(f'config.{field}: expected a positive number of seconds up to '
                        f'{MAX_CONFIG_SECONDS}, got {value}')
    return value


def _within(value: float, field: str, most: float) -> float:
    """`value` moved into [MIN_INTERVAL_SEC, `most`], with a warning when moved."""
    kept = min(max(value, MIN_INTERVAL_SEC), most)
    if kept != value:
        log.warning('config.%s: %g s is taken as %g s', field, value, kept)
    return kept


def _optional_positive_int(obj: Mapping[str, Any], field: str, default: int) -> int:
    value = obj.get(field)
    if value is None:
        return default
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # 8.0: how some JSON writers put a whole number
    if isinstance(value, bool) or not isinstance(value, int):
        raise WireError(f'config.{field}: expected an integer, got {_kind(value)}')
    if not 0 < value <= MAX_CONCURRENT_JOBS:
        raise WireError(f'config.{field}: expected a positive integer up to '
                        f'{MAX_CONCURRENT_JOBS}, got {value}')
    return value


def redact_url(url: Optional[str]) -> str:
    """The URL without credentials, query string or fragment: safe to log."""
    if not url:
        return '<none>'
    try:
        parts = urllib.parse.urlsplit(url)
        host = parts.hostname or ''
        port = f':{parts.port}' if parts.port else ''
    except ValueError:
        return '<unparsable URL>'
    return f'{parts.scheme}://{host}{port}{parts.path}'
