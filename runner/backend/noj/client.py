"""One typed client for every backend call (protocol §2).

Status codes map to outcomes in one table per kind of call. Report-like calls
(heartbeat, complete, abort) return an `Answer` and never raise for a status
or a network failure: their callers decide what to retry. Fetch-like calls
(register, next-job, checksum, downloads) return parsed values or raise a
`BackendError`.

No secret leaves this module: error messages name the call by method and
path (never a query string, never a presigned URL's signature), and
`requests`' own exceptions, whose messages carry full URLs, are never chained.
"""
import dataclasses
import enum
import json
import logging
import pathlib
import threading
import time
from typing import Callable, Dict, Iterable, Mapping, Optional, Sequence, Tuple

import requests

from runner.backend.http_session import (SEND_ERRORS, BackendError, DownloadError, Interrupter,
                                         TooLarge, TransportError, bounded_chunks, drain, send,
                                         transport_kind)
from runner.backend.noj.inbound import (BadClaim, Claim, Registration, RunnerIdentity, WireError,
                                        job_id_in_prefix, parse_checksum, parse_claim,
                                        parse_registration, redact_url)
from runner.backend.noj.outbound import (AbortReason, CompleteBody, abort_body, heartbeat_body,
                                         register_body)

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_SEC = 5
READ_TIMEOUT_SEC = 30
HEARTBEAT_READ_TIMEOUT_SEC = 10
# A long poll's read timeout is the asked wait plus this margin, so an
# ordinary empty answer never arrives as a failed request.
LONG_POLL_MARGIN_SEC = 10
MAX_JSON_BYTES = 1024 * 1024
# A JSON answer dripping in slower than this is abandoned.
JSON_DEADLINE_SEC = 60
_CHUNK_BYTES = 64 * 1024


class Outcome(enum.Enum):
    ACCEPTED = 'accepted'  # 2xx
    CONFLICT = 'conflict'  # 409: the job was reclaimed by someone else
    NOT_FOUND = 'not_found'  # 404: unknown job (also a retried complete that landed)
    BAD_REQUEST = 'bad_request'  # 400: the body was refused
    TOO_LARGE = 'too_large'  # 413: the body is over what the backend (or a proxy) takes
    UNAUTHORIZED = 'unauthorized'  # 401: the identity was refused
    FAILED = 'failed'  # 5xx, any other status, or no answer at all


@dataclasses.dataclass(frozen=True)
class Answer:
    outcome: Outcome
    detail: str  # for logs: 'HTTP 503', 'ConnectTimeout'
    answered: bool = True  # False: no answer came at all (FAILED)


_REPORT_OUTCOMES: Mapping[int, Outcome] = {
    400: Outcome.BAD_REQUEST,
    401: Outcome.UNAUTHORIZED,
    404: Outcome.NOT_FOUND,
    409: Outcome.CONFLICT,
    413: Outcome.TOO_LARGE,
}
_HEARTBEAT_OUTCOMES: Mapping[int, Outcome] = {401: Outcome.UNAUTHORIZED}


def _outcome(status: int, table: Mapping[int, Outcome]) -> Outcome:
    if status in table:
        return table[status]
    if 200 <= status < 300:
        return Outcome.ACCEPTED
    return Outcome.FAILED


def _json_int(text: str) -> object:
    """An integer of the body; one too long for any field (Python refuses
    over 4300 digits, which made the whole body "not JSON", its job_id
    unread) is kept as its text, which every integer field refuses."""
    return int(text) if len(text) <= 100 else text


class Unauthorized(BackendError):
    """401: the token (registration or runner) was refused."""


def _status_text(status: int) -> str:
    """A status for a log line; a redirect says what to do about it (the
    runner follows none but a GET's, protocol §2)."""
    if 300 <= status < 400:
        return f'HTTP {status}, a redirect: set BACKEND_URL to the URL the backend answers at'
    return f'HTTP {status}'


class UnexpectedStatus(BackendError):

    def __init__(self, what: str, status: int):
        super().__init__(f'{what}: unexpected {_status_text(status)}')
        self.status = status


# A problem id that need not exist: the testdata channel checks its token
# first, so a 404 for it means the token was taken.
TOKEN_PROBE_PROBLEM = 0


class TokenRefused(BackendError):
    """The testdata channel refused SANDBOX_TOKEN (401 or 403): the host's
    setting is wrong, not the job."""


class ProtocolError(BackendError):
    """A success status with a body that is not what protocol §2 says."""


class BackendClient:
    """Thread-safe: each thread gets its own HTTP session.

    `identity` is required by the runner calls (heartbeat, next-job,
    complete, abort) and sent with the testdata calls when there is one
    (which carry SANDBOX_TOKEN besides); `with_identity` returns a client
    that carries it.
    """

    def __init__(self,
                 base_url: str,
                 *,
                 sandbox_token: str = '',
                 identity: Optional[RunnerIdentity] = None,
                 clock: Callable[[], float] = time.monotonic):
        self._base_url = base_url.rstrip('/')
        self._sandbox_token = sandbox_token
        self._identity = identity
        self._clock = clock
        self._local = threading.local()
        self._interrupter = Interrupter()

    def __repr__(self) -> str:
        runner = self._identity.runner_id if self._identity else None
        return f'BackendClient({self._base_url!r}, runner_id={runner!r})'

    def interrupt(self) -> None:
        """Cut this client's requests short, now and from now on (stop)."""
        self._interrupter.interrupt()

    def hang_up(self) -> None:
        """Tell the backend this client is going, and let its requests in
        flight end as they would (a long poll's answer is still read)."""
        self._interrupter.hang_up()

    def with_identity(self, identity: RunnerIdentity) -> 'BackendClient':
        """A new client (its own connections) carrying the identity."""
        return BackendClient(self._base_url,
                             sandbox_token=self._sandbox_token,
                             identity=identity,
                             clock=self._clock)

    # -- runner identity ---------------------------------------------------

    def register(self, registration_token: str, name: str, version: str = '') -> Registration:
        what = 'POST /runners/register'
        with self._request('POST',
                           '/runners/register',
                           what,
                           auth=False,
                           json_body=register_body(registration_token, name, version)) as response:
            self._expect(response, (200, 201), what)
            return self._parse(parse_registration, self._read_json(response, what), what)

    def heartbeat(self, job_ids: Sequence[str]) -> Answer:
        path = f'/runners/{self._runner_id()}/heartbeat'
        return self._report('POST',
                            path,
                            heartbeat_body(job_ids),
                            _HEARTBEAT_OUTCOMES,
                            read_timeout=HEARTBEAT_READ_TIMEOUT_SEC)

    # -- jobs ----------------------------------------------------------------

    def next_job(self, wait_sec: float = 0) -> Optional[Claim]:
        """None when there is nothing (204). Raises `ProtocolError` for a body
        without a usable job id; a `BadClaim` carries any other defect."""
        path = f'/runners/{self._runner_id()}/next-job'
        what = f'GET {path}'
        params = {'wait': f'{wait_sec:g}'} if wait_sec > 0 else None
        read_timeout = max(READ_TIMEOUT_SEC, wait_sec + LONG_POLL_MARGIN_SEC)
        with self._request('GET', path, what, params=params, read_timeout=read_timeout) as response:
            self._expect(response, (200, 204), what)
            if response.status_code == 204:
                return None
            body, whole = self._read_capped(response, what, MAX_JSON_BYTES)
            if not whole:
                # Still a claim when its id can be read: abort it at once
                # rather than leave it to three lease expiries.
                job_id = job_id_in_prefix(body)
                if job_id is None:
                    raise DownloadError(f'{what}: over the limit of {MAX_JSON_BYTES} bytes')
                return BadClaim(job_id, f'the job payload is over the {MAX_JSON_BYTES} byte limit')
            return self._parse(parse_claim, self._decode_json(body, what), what)

    def complete(self, job_id: str, body: CompleteBody) -> Answer:
        path = f'/runners/{self._runner_id()}/jobs/{job_id}/complete'
        return self._report('PUT', path, body.json(), _REPORT_OUTCOMES)

    def abort(self, job_id: str, reason: AbortReason) -> Answer:
        path = f'/runners/{self._runner_id()}/jobs/{job_id}/abort'
        return self._report('PUT', path, abort_body(reason), _REPORT_OUTCOMES)

    # -- testdata and code -------------------------------------------------

    def testdata_checksum(self, problem_id: int) -> str:
        path = f'/problem/{int(problem_id)}/checksum'
        what = f'GET {path}'
        with self._testdata_request(path, what) as response:
            self._expect_testdata(response, what)
            return self._parse(parse_checksum, self._read_json(response, what), what)

    def sandbox_token_refusal(self) -> Optional[str]:
        """None when the testdata channel takes SANDBOX_TOKEN, else why not.
        It is asked about a problem that need not exist: the channel checks
        the token first, so a 404 means the token was taken."""
        try:
            self.testdata_checksum(TOKEN_PROBE_PROBLEM)
        except UnexpectedStatus as exc:
            return None if exc.status == 404 else str(exc)
        except BackendError as exc:
            return str(exc)
        return None

    def download_testdata(self, problem_id: int, dest: pathlib.Path, *, max_bytes: int,
                          deadline_sec: float, stop: threading.Event) -> int:
        """Writes the testdata zip to `dest`; returns its size."""
        path = f'/problem/{int(problem_id)}/testdata'
        what = f'GET {path}'
        with self._testdata_request(path, what) as response:
            self._expect_testdata(response, what)
            with open(dest, 'wb') as out:
                size = 0
                for chunk in bounded_chunks(response,
                                            what,
                                            max_bytes,
                                            deadline_sec,
                                            stop,
                                            clock=self._clock):
                    out.write(chunk)
                    size += len(chunk)
            return size

    def download_code(self, url: str, *, max_bytes: int, deadline_sec: float,
                      stop: threading.Event) -> bytes:
        """The code zip from its presigned URL (no Authorization header)."""
        what = f'GET {redact_url(url)}'
        with self._request('GET', url, what, auth=False, absolute=True) as response:
            self._expect(response, (200, ), what)
            return b''.join(
                bounded_chunks(response, what, max_bytes, deadline_sec, stop, clock=self._clock))

    # -- plumbing --------------------------------------------------------------

    def _runner_id(self) -> str:
        if self._identity is None:
            raise RuntimeError('this call needs a registered identity (use with_identity)')
        return self._identity.runner_id

    def _session(self) -> requests.Session:
        session = getattr(self._local, 'session', None)
        if session is None:
            session = self._local.session = self._interrupter.session()
        return session

    def _request(self,
                 method: str,
                 target: str,
                 what: str,
                 *,
                 auth: bool = True,
                 absolute: bool = False,
                 params: Optional[Dict[str, str]] = None,
                 json_body: Optional[object] = None,
                 read_timeout: float = READ_TIMEOUT_SEC) -> requests.Response:
        """Always streamed, so no body is read unbounded; use it in a `with`."""
        headers = {}
        if auth:
            if self._identity is None:
                raise RuntimeError('this call needs a registered identity (use with_identity)')
            headers['Authorization'] = f'Bearer {self._identity.token}'
        url = target if absolute else self._base_url + target
        try:
            return send(self._session(),
                        method,
                        url,
                        params=params,
                        json=json_body,
                        headers=headers,
                        timeout=(CONNECT_TIMEOUT_SEC, read_timeout))
        except SEND_ERRORS as exc:
            # `from None`: requests' messages carry the full URL, query included.
            raise TransportError(f'{what}: {transport_kind(exc)}') from None

    def _testdata_request(self, path: str, what: str) -> requests.Response:
        # The runner's token too, once it has one (protocol §2); `--check`
        # asks about SANDBOX_TOKEN even when the registration was refused.
        return self._request('GET',
                             path,
                             what,
                             auth=self._identity is not None,
                             params={'token': self._sandbox_token})

    def _report(self,
                method: str,
                path: str,
                body: object,
                table: Mapping[int, Outcome],
                read_timeout: float = READ_TIMEOUT_SEC) -> Answer:
        try:
            with self._request(method,
                               path,
                               f'{method} {path}',
                               json_body=body,
                               read_timeout=read_timeout) as response:
                drain(response)
                return Answer(_outcome(response.status_code, table),
                              _status_text(response.status_code))
        except TransportError as exc:
            return Answer(Outcome.FAILED, str(exc), answered=False)

    @classmethod
    def _expect_testdata(cls, response: requests.Response, what: str) -> None:
        if response.status_code in (401, 403):
            raise TokenRefused(f'{what}: HTTP {response.status_code}: the testdata channel '
                               'refused SANDBOX_TOKEN')
        cls._expect(response, (200, ), what)

    @staticmethod
    def _expect(response: requests.Response, ok: Iterable[int], what: str) -> None:
        status = response.status_code
        if status in ok:
            return
        if status == 401:
            raise Unauthorized(f'{what}: HTTP 401')
        raise UnexpectedStatus(what, status)

    def _read_json(self, response: requests.Response, what: str) -> object:
        body = b''.join(
            bounded_chunks(response,
                           what,
                           MAX_JSON_BYTES,
                           JSON_DEADLINE_SEC,
                           None,
                           clock=self._clock))
        return self._decode_json(body, what)

    def _read_capped(self, response: requests.Response, what: str,
                     max_bytes: int) -> Tuple[bytes, bool]:
        """At most `max_bytes` of the body, and whether that was all of it."""
        chunks = []
        try:
            for chunk in bounded_chunks(response,
                                        what,
                                        max_bytes,
                                        JSON_DEADLINE_SEC,
                                        None,
                                        trust_declared=False,
                                        clock=self._clock):
                chunks.append(chunk)
        except TooLarge:
            return b''.join(chunks), False
        return b''.join(chunks), True

    @staticmethod
    def _decode_json(body: bytes, what: str) -> object:
        try:
            return json.loads(body, parse_int=_json_int)
        except (ValueError, RecursionError):
            # RecursionError: a hostile body nested deeper than the parser goes.
            raise ProtocolError(f'{what}: the body is not JSON') from None

    @staticmethod
    def _parse(parse: Callable[[object], object], body: object, what: str):
        try:
            return parse(body)
        except WireError as exc:
            raise ProtocolError(f'{what}: {exc}') from None
