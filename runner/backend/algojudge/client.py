"""One typed call per AlgoJudge runner endpoint (docs/algojudge.md §2 to §8).

A call returns a parsed value or raises: `Unreachable` (no answer) or
`Refused` (a status, with the problem document's `code` to act on). A 401
on a Bearer call is handled here, once per call: the token is forgotten,
the handshake made again, the call repeated; lease tokens are the callers'
and survive it. No token and no signature leaves this module: not in a
message, a repr or a log line.
"""
import datetime
import email.utils
import hashlib
import json
import logging
import pathlib
import threading
import time
import urllib.parse
from typing import Any, Callable, Dict, Iterable, MutableMapping, Optional, Sequence, Tuple

import requests

from runner.backend.algojudge import wire
from runner.backend.algojudge.identity import RunnerKey
from runner.backend.http_session import (SEND_ERRORS, BackendError, Interrupter, TransportError,
                                         bounded_chunks, send, transport_kind)

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_SEC = 5
READ_TIMEOUT_SEC = 30
# A claim's read timeout is the wait it asks for plus this (§3: the answer
# comes at or before the wait).
CLAIM_MARGIN_SEC = 15
MAX_JSON_BYTES = 1024 * 1024
JSON_DEADLINE_SEC = 60
PRODUCT = 'oj-runner'

# Our own code for a handshake the server cannot make: it does not know the
# key (its database was reset); registering again is the way back.
UNKNOWN_KEY = 'runner.key.unknown'


class Unreachable(TransportError):
    """No answer: the network, a timeout, a broken transfer."""


class Refused(BackendError):
    """A status other than the call's success; `problem.code` says what it means."""

    def __init__(self, what: str, problem: wire.Problem):
        code = f' {problem.code}' if problem.code else ''
        super().__init__(f'{what}: HTTP {problem.status}{code}')
        self.problem = problem

    @property
    def code(self) -> Optional[str]:
        return self.problem.code

    @property
    def transient(self) -> bool:
        """Wait and try again (§1): 429, any 5xx, maintenance, a bare 404
        (a proxy's, with no problem document: not the server's word), and a
        redirect (a proxy's too; only a GET follows one, `send`)."""
        return (self.problem.status == 429 or self.problem.status >= 500
                or 300 <= self.problem.status < 400 or self.code == 'server.maintenance'
                or self.bare_404)

    @property
    def standing(self) -> bool:
        """About this runner, not the call (a token refused twice, a
        handshake that failed, approval withdrawn, the key forgotten): the
        call is tried again once the runner has joined again."""
        code = self.code or ''
        return (code in ('unauthenticated', 'runner.notApproved', 'runner.signature', UNKNOWN_KEY)
                or code.startswith('runner.nonce.') or self.problem.status == 401)

    @property
    def bare_404(self) -> bool:
        return self.problem.status == 404 and self.code is None

    @property
    def not_mine(self) -> bool:
        """A held job's refusal meaning it is not this runner's any more (§4):
        only ever the server's own code, never a bare status."""
        return self.code in wire.NOT_MINE


class BadAnswer(BackendError):
    """A success status with a body that is not what the contract says."""


class DigestMismatch(BackendError):
    """A downloaded file is not the one its checksum names (discarded)."""


class AlgoJudgeClient:
    """Thread-safe: each thread gets its own HTTP session; the token is shared."""

    def __init__(self,
                 base_url: str,
                 key: RunnerKey,
                 *,
                 clock: Callable[[], float] = time.monotonic):
        self._base_url = base_url.rstrip('/')
        self._key = key
        self._clock = clock
        self._local = threading.local()
        self._interrupter = Interrupter()
        self._token_lock = threading.Lock()
        self._token: Optional[str] = None

    def __repr__(self) -> str:
        return f'AlgoJudgeClient({self._base_url!r}, {self._key!r})'

    @property
    def fingerprint(self) -> str:
        return self._key.fingerprint

    def sibling(self) -> 'AlgoJudgeClient':
        """A client with connections of its own (a stop cuts them alone),
        sharing nothing but the key; it makes its own token when it needs one."""
        return AlgoJudgeClient(self._base_url, self._key, clock=self._clock)

    def interrupt(self) -> None:
        """Cut this client's requests short, now and from now on (stop)."""
        self._interrupter.interrupt()

    # -- identity (anonymous) ---------------------------------------------

    def health_level(self) -> str:
        """The maintenance level: 'open', 'draining', 'closed' or another word."""
        body = self._call('GET', '/health', anonymous=True, ok=(200, ))
        return wire.maintenance_level(body)

    def register(self, name: str, version: str, machine: Dict[str, Any]) -> wire.Registered:
        """Every start registers again (§2); a known key signs a fresh nonce."""
        nonce = self._challenge()
        body = {
            'name': name,
            'product': PRODUCT,
            'version': version,
            'publicKey': self._key.public_key,
            'problemTypes': [wire.TYPE],
            'machine': machine,
        }
        if nonce is not None:
            body.update(nonce=nonce, signature=self._key.sign(nonce))
        answer = self._parse(wire.parse_registered,
                             self._call('POST', '/runner/register', body, anonymous=True),
                             'POST /runner/register')
        if answer.fingerprint != self._key.fingerprint:
            raise BadAnswer('POST /runner/register: the server names another fingerprint '
                            'for this key (re-encoded on its way?)')
        return answer

    def handshake(self) -> None:
        """A new token (§2): a fresh nonce, signed. Refused 403
        `runner.notApproved` while the runner waits for approval."""
        nonce = self._challenge()
        if nonce is None:
            raise Refused('POST /runner/auth/challenge',
                          wire.Problem(404, UNKNOWN_KEY, 'the server does not know this key', None))
        body = {
            'fingerprint': self._key.fingerprint,
            'nonce': nonce,
            'signature': self._key.sign(nonce)
        }
        token = self._parse(wire.parse_token,
                            self._call('POST', '/runner/auth/token', body, anonymous=True),
                            'POST /runner/auth/token')
        with self._token_lock:
            self._token = token.token

    def _challenge(self) -> Optional[str]:
        try:
            body = self._call('POST',
                              '/runner/auth/challenge', {'fingerprint': self._key.fingerprint},
                              anonymous=True)
        except Refused as exc:
            if exc.problem.status == 404 and not exc.bare_404:
                return None  # the server's own word: a key it does not know yet
            raise
        return self._parse(wire.parse_challenge, body, 'POST /runner/auth/challenge')

    # -- jobs ---------------------------------------------------------------

    def claim(self, lease_sec: int,
              wait_sec: int) -> Tuple[Optional[wire.Claimed], Optional[float]]:
        """A job (None: nothing for this runner now, 204) and the lease the
        server granted in seconds, read off its own clock (the answer's
        `leaseExpiresAt` minus its `Date`), None when it cannot be read."""
        body = {'leaseSeconds': lease_sec}
        if wait_sec > 0:
            body['waitSeconds'] = wait_sec
        # Header names are case-insensitive: some servers write `date`.
        holder: MutableMapping[str, str] = requests.structures.CaseInsensitiveDict()
        answer = self._call('POST',
                            '/runner/jobs/claim',
                            body,
                            ok=(200, 204),
                            read_timeout=max(READ_TIMEOUT_SEC, wait_sec + CLAIM_MARGIN_SEC),
                            headers_out=holder)
        if answer is None:
            return None, None
        held = wire.job_id_of(answer)
        if held is None:
            raise BadAnswer('POST /runner/jobs/claim: a job without a usable jobId and leaseToken')
        claimed = wire.parse_claimed(answer)
        return claimed, _granted_sec(claimed.lease_expires_at, holder.get('Date'))

    def renew(self, job_id: str, lease_token: str, lease_sec: int) -> wire.Lease:
        return self._parse(
            wire.parse_lease,
            self._call('POST', f'/runner/jobs/{_quoted(job_id)}/lease', {
                'leaseToken': lease_token,
                'leaseSeconds': lease_sec
            }), 'POST /runner/jobs/{id}/lease')

    def renew_all(self, jobs: Sequence[Tuple[str, str]],
                  lease_sec: int) -> Tuple[wire.BatchItem, ...]:
        """Every held job's lease in one call; Refused 404 (no code) from an
        older server without the batch route."""
        body = {
            'leaseSeconds': lease_sec,
            'jobs': [{
                'jobId': job_id,
                'leaseToken': token
            } for job_id, token in jobs]
        }
        return self._parse(wire.parse_batch, self._call('POST', '/runner/jobs/leases', body),
                           'POST /runner/jobs/leases')

    def release(self, job_id: str, lease_token: str) -> None:
        """The job goes back to the queue (§5); a stale lease is already back."""
        try:
            self._call('POST',
                       f'/runner/jobs/{_quoted(job_id)}/release', {'leaseToken': lease_token},
                       ok=(200, 204))
        except Refused as exc:
            if exc.code != 'runner.lease.stale':
                raise

    def report(self, job_id: str, body: Dict[str, Any]) -> wire.Reported:
        return self._parse(wire.parse_reported,
                           self._call('POST', f'/runner/jobs/{_quoted(job_id)}/report', body),
                           'POST /runner/jobs/{id}/report')

    def heartbeat(self) -> None:
        self._call('POST', '/runner/heartbeat', None, ok=(200, 204))

    # -- files ---------------------------------------------------------------

    def download(self, file_id: str, sha256: str, dest: pathlib.Path, *, max_bytes: int,
                 deadline_sec: float, stop: Optional[threading.Event]) -> int:
        """The file into `dest`, hashed while it streams; DigestMismatch (and
        `dest` removed) when it is not the file `sha256` names."""
        what = 'GET /runner/files/{id}'
        digest = hashlib.sha256()
        size = 0
        with self._authorized(lambda headers: self._send(
                'GET', f'/runner/files/{_quoted(file_id)}', what, headers=headers)) as response:
            self._expect(response, (200, ), what)
            try:
                with open(dest, 'wb') as out:
                    for chunk in bounded_chunks(response,
                                                what,
                                                max_bytes,
                                                deadline_sec,
                                                stop,
                                                clock=self._clock):
                        digest.update(chunk)
                        out.write(chunk)
                        size += len(chunk)
                if digest.hexdigest() != sha256:
                    raise DigestMismatch(f'{what}: the bytes do not match their SHA-256')
            except BaseException:
                dest.unlink(missing_ok=True)
                raise
        return size

    def upload(self, name: str, content_type: str, data: bytes) -> str:
        """A file this runner attaches later; its id."""
        what = 'POST /runner/files'
        files = {
            'file': (name, data, content_type),
            'sha256': (None, hashlib.sha256(data).hexdigest())
        }
        with self._authorized(lambda headers: self._send(
                'POST', '/runner/files', what, headers=headers, files=files)) as response:
            self._expect(response, (200, 201), what)
            return self._parse(wire.parse_uploaded, self._read_json(response, what), what)

    def attach(self, job_id: str, lease_token: str, file_id: str, name: str) -> None:
        """`name`: `log` or `details` (§6). Already attached is success."""
        try:
            self._call('POST',
                       f'/runner/jobs/{_quoted(job_id)}/files', {
                           'leaseToken': lease_token,
                           'fileId': file_id,
                           'name': name
                       },
                       ok=(200, 204))
        except Refused as exc:
            if exc.code != 'attempt.file.duplicate':
                raise

    # -- plumbing --------------------------------------------------------------

    def _call(self,
              method: str,
              path: str,
              body: Optional[Dict[str, Any]] = None,
              *,
              anonymous: bool = False,
              ok: Iterable[int] = (200, ),
              read_timeout: float = READ_TIMEOUT_SEC,
              headers_out: Optional[MutableMapping[str, str]] = None) -> Any:
        """The answer's JSON (None for an answer without a body)."""
        what = f'{method} {path}'

        def send(headers):
            return self._send(method,
                              path,
                              what,
                              headers=headers,
                              json_body=body,
                              read_timeout=read_timeout)

        opened = (self._send(
            method, path, what, headers={}, json_body=body, read_timeout=read_timeout)
                  if anonymous else self._authorized(send))
        with opened as response:
            self._expect(response, ok, what)
            if headers_out is not None:
                headers_out.update(response.headers)
            if response.status_code == 204:
                return None
            return self._read_json(response, what)

    def _authorized(self, send: Callable[[Dict[str, str]], requests.Response]) -> requests.Response:
        """`send` with the Bearer token; on a 401, one new handshake and one
        more try (the server forgets tokens when it restarts)."""
        token = self._current_token()
        response = send({'Authorization': f'Bearer {token}'})
        if response.status_code != 401:
            return response
        response.close()
        with self._token_lock:
            if self._token == token:
                self._token = None
        token = self._current_token()
        return send({'Authorization': f'Bearer {token}'})

    def _current_token(self) -> str:
        with self._token_lock:
            token = self._token
        if token is None:
            self.handshake()
            with self._token_lock:
                token = self._token
        return token or ''

    def _session(self) -> requests.Session:
        session = getattr(self._local, 'session', None)
        if session is None:
            session = self._local.session = self._interrupter.session()
        return session

    def _send(self,
              method: str,
              path: str,
              what: str,
              *,
              headers: Dict[str, str],
              json_body: Optional[Dict[str, Any]] = None,
              files: Optional[Dict[str, Any]] = None,
              read_timeout: float = READ_TIMEOUT_SEC) -> requests.Response:
        """Always streamed, so no body is read unbounded; use it in a `with`."""
        try:
            return send(self._session(),
                        method,
                        self._base_url + path,
                        json=json_body,
                        files=files,
                        headers=headers,
                        timeout=(CONNECT_TIMEOUT_SEC, read_timeout))
        except SEND_ERRORS as exc:
            raise Unreachable(f'{what}: {transport_kind(exc)}') from None

    def _expect(self, response: requests.Response, ok: Iterable[int], what: str) -> None:
        if response.status_code in ok:
            return
        try:
            body = self._read_json(response, what)
        except BackendError:
            body = None  # a bare status, from a proxy maybe
        raise Refused(
            what, wire.parse_problem(response.status_code, body,
                                     response.headers.get('Retry-After')))

    def _read_json(self, response: requests.Response, what: str) -> Any:
        try:
            body = b''.join(
                bounded_chunks(response,
                               what,
                               MAX_JSON_BYTES,
                               JSON_DEADLINE_SEC,
                               None,
                               clock=self._clock))
        except TransportError as exc:
            raise Unreachable(str(exc)) from None
        try:
            return json.loads(body) if body else None
        except (ValueError, RecursionError):
            raise BadAnswer(f'{what}: the body is not JSON') from None

    @staticmethod
    def _parse(parse: Callable[[Any], Any], body: Any, what: str) -> Any:
        try:
            return parse(body)
        except wire.WireError as exc:
            raise BadAnswer(f'{what}: {exc}') from None


def _quoted(job_id: str) -> str:
    return urllib.parse.quote(job_id, safe='')


def _granted_sec(expires_at: str, date: Optional[str]) -> Optional[float]:
    """Both instants are the server's: their difference is free of skew."""
    if not expires_at or not date:
        return None
    try:
        expires = datetime.datetime.fromisoformat(expires_at)
        now = email.utils.parsedate_to_datetime(date)
    except (ValueError, TypeError, OverflowError):  # a year past 9999 overflows
        return None
    if expires.tzinfo is None or now.tzinfo is None:
        return None
    return (expires - now).total_seconds()
