"""What an AlgoJudge server sends, parsed into typed values at the boundary,
and the refusals it answers with (docs/algojudge.md §1 to §9).

Optional means absent, never null, both ways; members we do not know are
ignored (a newer server adds some). Everything here is hostile input: a
malformed body is a `WireError` naming the member, never carrying a token.
"""
import dataclasses
import enum
import re
from typing import Any, Dict, Mapping, Optional, Tuple

from runner.backend.http_session import header_number, is_header_token

# Ids are opaque, but they go into URL paths and log lines: printable ASCII
# without a slash (a GUID fits); they are quoted in paths anyway.
_ID = re.compile(r'[\x21-\x2e\x30-\x7e]{1,200}')
_SHA256 = re.compile(r'[0-9a-f]{64}')


class WireError(ValueError):
    """A body is not what the contract says; names the member."""


class State(str, enum.Enum):
    """A registration's state."""
    PENDING = 'pendingApproval'
    APPROVED = 'approved'
    REVOKED = 'revoked'


@dataclasses.dataclass(frozen=True)
class Registered:
    runner_id: str
    fingerprint: str
    state: Optional[State]  # None: a state this runner does not know (waits)


@dataclasses.dataclass(frozen=True)
class Token:
    token: str = dataclasses.field(repr=False)
    expires_at: str = ''


@dataclasses.dataclass(frozen=True)
class SourceFile:
    file_name: str
    file_id: str
    sha256: str
    size_bytes: int


@dataclasses.dataclass(frozen=True)
class Claimed:
    """A job this runner now holds. `defect` is set when the job cannot be
    judged as described (no package, no source, an unknown type...): it is
    still held, and is reported as an infrastructure failure naming it."""
    job_id: str
    lease_token: str = dataclasses.field(repr=False)
    lease_expires_at: str = ''
    submission_id: str = ''
    attempt: int = 0
    problem_type: str = ''
    package_file_id: str = ''
    package_sha256: str = ''
    source: Optional[SourceFile] = None
    language: Optional[str] = None  # props.language
    config: Optional[Mapping[str, Any]] = None
    defect: Optional[str] = None


@dataclasses.dataclass(frozen=True)
class Lease:
    job_id: str
    expires_at: str


@dataclasses.dataclass(frozen=True)
class BatchItem:
    """One job of a batch renewal or release: renewed (code None) or refused."""
    job_id: str
    code: Optional[str]


@dataclasses.dataclass(frozen=True)
class Reported:
    state: str
    duplicate: bool


@dataclasses.dataclass(frozen=True)
class Problem:
    """A refusal (`application/problem+json`): act on `code`; a bare status
    from a proxy has none."""
    status: int
    code: Optional[str]
    detail: str
    retry_after_sec: Optional[float]


# Codes meaning "this job is not mine any more" (§4): drop it silently.
NOT_MINE = frozenset({'runner.lease.stale', 'runner.lease.foreign', 'job.state', 'not_found'})
TYPE = 'standard-io@1'


def parse_registered(body: Any) -> Registered:
    obj = _object(body, 'register answer')
    state = obj.get('state')
    known = {s.value: s for s in State}
    return Registered(_id(obj, 'runnerId'), _text(obj, 'fingerprint'), known.get(state))


def parse_challenge(body: Any) -> str:
    return _text(_object(body, 'challenge answer'), 'nonce', limit=4096)


def parse_token(body: Any) -> Token:
    obj = _object(body, 'token answer')
    token = _text(obj, 'token', limit=8192)
    if not is_header_token(token):
        # Sent as `Authorization: Bearer …` on every call: a character a
        # header cannot carry would fail each of them, not this answer.
        raise WireError('token: must be printable ASCII without spaces')
    return Token(token, str(obj.get('expiresAt', ''))[:64])


def job_id_of(body: Any) -> Optional[Tuple[str, str]]:
    """The job id and lease token of a claim answer, if they can be read
    (then the claim is held, whatever else is wrong with it)."""
    if not isinstance(body, dict):
        return None
    job_id, token = body.get('jobId'), body.get('leaseToken')
    if isinstance(job_id, str) and _ID.fullmatch(job_id) and isinstance(
            token, str) and 0 < len(token) <= 8192:
        return job_id, token
    return None


def parse_claimed(body: Any) -> Claimed:
    held = job_id_of(body)
    if held is None:
        raise WireError('claim answer: no usable jobId and leaseToken')
    job_id, token = held
    base = Claimed(job_id, token, lease_expires_at=str(body.get('leaseExpiresAt', ''))[:64])
    try:
        return _claimed_details(base, body)
    except WireError as exc:
        return dataclasses.replace(base, defect=str(exc))


def _claimed_details(base: Claimed, body: Dict[str, Any]) -> Claimed:
    problem_type = _text(body, 'problemType', limit=200)
    submission_id = _id(body, 'submissionId')
    attempt = body.get('attempt', 0)
    if type(attempt) is not int:
        raise WireError('attempt: must be an integer')
    found = dataclasses.replace(base,
                                submission_id=submission_id,
                                attempt=attempt,
                                problem_type=problem_type)
    if problem_type != TYPE:
        return dataclasses.replace(found,
                                   defect=f'this runner does not judge problem type '
                                   f'{problem_type[:64]!r}')
    package_id = body.get('packageFileId')
    if package_id == '' or package_id is None:
        return dataclasses.replace(found, defect='the problem version has no package')
    package_id = _id(body, 'packageFileId')
    package_sha = _sha(body, 'packageSha256')
    props = body.get('props', {})
    if not isinstance(props, dict):
        raise WireError('props: must be an object')
    language = props.get('language')
    config = body.get('config')
    if config is not None and not isinstance(config, dict):
        raise WireError('config: must be an object')
    found = dataclasses.replace(found,
                                package_file_id=package_id,
                                package_sha256=package_sha,
                                language=language if isinstance(language, str) else None,
                                config=config)
    return dataclasses.replace(found, source=_source(body.get('files')))


def _source(files: Any) -> SourceFile:
    if not isinstance(files, list) or not files:
        raise WireError('files: the job has no source file')
    chosen = next((f for f in files if isinstance(f, dict) and f.get('name') == 'source'), files[0])
    item = _object(chosen, 'files[source]')
    # Any size is read: one over what a submission may be is its verdict
    # (PolicyViolation, standard_io/admission.py), not a defect of the job.
    size = item.get('sizeBytes')
    if type(size) is not int or not 0 <= size < 2**63:
        raise WireError('files[source] sizeBytes: must be a non-negative integer')
    return SourceFile(_text(item, 'fileName', limit=4096), _id(item, 'fileId'),
                      _sha(item, 'sha256'), size)


def parse_lease(body: Any) -> Lease:
    obj = _object(body, 'lease answer')
    return Lease(_id(obj, 'jobId'), str(obj.get('leaseExpiresAt', ''))[:64])


def parse_batch(body: Any) -> Tuple[BatchItem, ...]:
    results = _object(body, 'batch answer').get('results')
    if not isinstance(results, list):
        raise WireError('batch answer: results must be a list')
    items = []
    for item in results:
        obj = _object(item, 'batch result')
        code = obj.get('code')
        items.append(BatchItem(_id(obj, 'jobId'), code if isinstance(code, str) else None))
    return tuple(items)


def parse_uploaded(body: Any) -> str:
    return _id(_object(body, 'upload answer'), 'id')


def parse_reported(body: Any) -> Reported:
    obj = _object(body, 'report answer')
    return Reported(str(obj.get('state', ''))[:32], obj.get('duplicate') is True)


def parse_problem(status: int, body: Any, retry_after: Optional[str]) -> Problem:
    code = detail = None
    if isinstance(body, dict):
        code = body.get('code') if isinstance(body.get('code'), str) else None
        detail = body.get('detail') if isinstance(body.get('detail'), str) else None
    return Problem(status, code[:100] if code else None, (detail or '')[:300],
                   _retry_after(retry_after))


def maintenance_level(body: Any) -> str:
    """The health answer's maintenance level: 'open' when absent."""
    if not isinstance(body, dict) or not isinstance(body.get('maintenance'), dict):
        return 'open'
    level = body['maintenance'].get('level')
    return level[:32] if isinstance(level, str) else 'unknown'


def _retry_after(value: Optional[str]) -> Optional[float]:
    """Seconds only; an HTTP date (or anything else) is ignored (§1)."""
    seconds = header_number(value)
    return None if seconds is None else min(float(seconds), 3600.0)


def _object(value: Any, what: str) -> Dict[str, Any]:
    if not isinstance(value, dict):
        raise WireError(f'{what}: must be an object')
    return value


def _text(obj: Mapping[str, Any], member: str, limit: int = 1000) -> str:
    value = obj.get(member)
    if not isinstance(value, str) or not value or len(value) > limit:
        raise WireError(f'{member}: must be a non-empty string of at most {limit} characters')
    return value


def _id(obj: Mapping[str, Any], member: str) -> str:
    value = obj.get(member)
    if not isinstance(value, str) or not _ID.fullmatch(value):
        raise WireError(f'{member}: must be an id (printable, no slash, 1 to 200 characters)')
    return value


def _sha(obj: Mapping[str, Any], member: str) -> str:
    value = obj.get(member)
    if not isinstance(value, str) or not _SHA256.fullmatch(value):
        raise WireError(f'{member}: must be a lowercase hex SHA-256')
    return value
