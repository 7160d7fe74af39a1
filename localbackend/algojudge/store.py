"""The bundled AlgoJudge server's state: runners and their keys, tokens and
nonces, jobs and their leases, files, attachments and results, all in
memory, behind one lock (docs/algojudge.md is the contract it follows).

Every rule a runner can be caught breaking is checked here and refused with
the contract's code: a null anywhere, a stale or foreign lease token, an
attachment after the report, a report without a verdict, `extra` over
2 kB. `violations` lists what was refused as the runner's bug, so a test
can assert there was none.
"""
import base64
import dataclasses
import datetime
import hashlib
import json
import secrets
import threading
import time
import uuid
from typing import Any, Callable, Dict, List, Optional, Tuple

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

NONCE_SEC = 120
TOKEN_SEC = 12 * 3600
DEFAULT_LEASE_SEC = 600
MAX_WAIT_SEC = 300
MAX_DELIVERIES = 5
REFUNDS = 3
EXTRA_BYTES = 2048
PROPS_BYTES = 256 * 1024


class ApiError(Exception):
    """A refusal: status, code, and what the problem document says."""

    def __init__(self, status: int, code: str, detail: str = '', retry_after: int = 0):
        super().__init__(f'{status} {code}: {detail}')
        self.status, self.code, self.detail, self.retry_after = status, code, detail, retry_after


@dataclasses.dataclass
class Runner:
    runner_id: str
    public_key: str
    fingerprint: str
    name: str
    state: str = 'pendingApproval'
    registrations: int = 0


@dataclasses.dataclass
class Job:
    job_id: str
    submission_id: str
    package_file_id: str
    package_sha256: str
    source_file_id: str
    file_name: str
    language: Optional[str]
    config: Optional[Dict[str, Any]]
    problem_type: str = 'standard-io@1'
    state: str = 'queued'  # queued, running, done, failed, cancelled
    attempt: int = 0
    deliveries: int = 0
    refunds: int = 0
    runner_id: Optional[str] = None
    lease_token: Optional[str] = None
    lease_expires: float = 0.0
    attachments: Dict[str, str] = dataclasses.field(default_factory=dict)
    failures: List[str] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class File:
    file_id: str
    data: bytes
    sha256: str
    name: str
    owner: Optional[str]  # the runner that uploaded it; None: the server's own


def instant(epoch: float) -> str:
    """ISO 8601 UTC with 7 fraction digits, as the server writes them."""
    moment = datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc)
    return moment.strftime('%Y-%m-%dT%H:%M:%S.') + f'{moment.microsecond:06d}0Z'


class Store:

    def __init__(self,
                 *,
                 auto_approve: bool = False,
                 min_lease_sec: float = 60,
                 clock: Callable[[], float] = time.time):
        self._lock = threading.Condition()
        self._clock = clock
        self.auto_approve = auto_approve
        self.min_lease_sec = min_lease_sec
        self.maintenance = 'open'
        self.runners: Dict[str, Runner] = {}
        self._by_fingerprint: Dict[str, str] = {}
        self._nonces: Dict[str, Tuple[str, float]] = {}
        self._tokens: Dict[str, Tuple[str, float]] = {}
        self.jobs: Dict[str, Job] = {}
        self._queue: List[str] = []
        self.files: Dict[str, File] = {}
        self.results: Dict[str, Dict[str, Any]] = {}
        self.reports: List[Tuple[str, Dict[str, Any]]] = []  # every report received, in order
        self.releases: List[str] = []
        self.violations: List[str] = []
        self.heartbeats = 0
        self.held_claims = 0  # claims waiting for work now
        # Set to an Event: downloads wait for it (a slow store), at most a minute.
        self.download_gate: Optional[threading.Event] = None
        self.gated_downloads = 0

    # -- the manager's side (tests, the demo) ----------------------------

    def add_file(self, data: bytes, name: str = 'file') -> File:
        with self._lock:
            f = File(str(uuid.uuid4()), data, hashlib.sha256(data).hexdigest(), name, None)
            self.files[f.file_id] = f
            return f

    def add_job(self,
                package: Optional[bytes],
                source: bytes,
                file_name: str,
                language: Optional[str],
                config: Optional[Dict[str, Any]] = None,
                problem_type: str = 'standard-io@1') -> str:
        pkg = self.add_file(package, 'package.zip') if package is not None else None
        src = self.add_file(source, file_name)
        with self._lock:
            job = Job(str(uuid.uuid4()), str(uuid.uuid4()), pkg.file_id if pkg else '',
                      pkg.sha256 if pkg else '', src.file_id, file_name, language, config,
                      problem_type)
            self.jobs[job.job_id] = job
            self._queue.append(job.job_id)
            self._lock.notify_all()
            return job.job_id

    def approve(self, runner_id: str) -> None:
        with self._lock:
            self._runner(runner_id).state = 'approved'
            self._lock.notify_all()

    def revoke(self, runner_id: str) -> None:
        with self._lock:
            self._runner(runner_id).state = 'revoked'

    def forget_tokens(self) -> None:
        """What a server restart does: tokens live in its memory."""
        with self._lock:
            self._tokens.clear()
            self._nonces.clear()

    def cancel(self, job_id: str) -> None:
        with self._lock:
            job = self.jobs[job_id]
            job.state = 'cancelled'
            if job_id in self._queue:
                self._queue.remove(job_id)

    def wait(self, predicate: Callable[[], bool], timeout: float) -> bool:
        with self._lock:
            return self._lock.wait_for(predicate, timeout)

    def poke(self) -> None:
        with self._lock:
            self._lock.notify_all()

    def result(self, job_id: str) -> Optional[Dict[str, Any]]:
        with self._lock:
            return self.results.get(job_id)

    # -- identity ------------------------------------------------------------

    def register(self, body: Dict[str, Any]) -> Dict[str, Any]:
        self._gate(register=True)
        raw = self._public_key(body.get('publicKey'))
        fingerprint = hashlib.sha256(raw).hexdigest()
        for member in ('name', 'problemTypes'):
            if member not in body:
                raise self._bug(422, 'validation', f'{member} is required')
        with self._lock:
            known = self._by_fingerprint.get(fingerprint)
            if known is not None:
                runner = self.runners[known]
                if runner.state == 'revoked':
                    raise ApiError(409, 'runner.revoked', 'this runner was revoked')
                nonce, signature = body.get('nonce'), body.get('signature')
                if not isinstance(nonce, str) or not isinstance(signature, str):
                    raise ApiError(403, 'runner.signature', 'a known key registers signed')
                self._spend_nonce(fingerprint, nonce, signature, raw)
            else:
                runner = Runner(str(uuid.uuid4()), body['publicKey'], fingerprint,
                                str(body['name']))
                if self.auto_approve:
                    runner.state = 'approved'
                self.runners[runner.runner_id] = runner
                self._by_fingerprint[fingerprint] = runner.runner_id
            runner.name = str(body['name'])
            runner.registrations += 1
            self._lock.notify_all()
            return {'runnerId': runner.runner_id, 'fingerprint': fingerprint, 'state': runner.state}

    def challenge(self, body: Dict[str, Any]) -> Dict[str, Any]:
        self._gate()
        with self._lock:
            fingerprint = body.get('fingerprint')
            if fingerprint not in self._by_fingerprint:
                raise ApiError(404, 'not_found', 'unknown key')
            nonce = secrets.token_urlsafe(24)
            self._nonces[nonce] = (fingerprint, self._clock() + NONCE_SEC)
            return {'nonce': nonce, 'expiresAt': instant(self._clock() + NONCE_SEC)}

    def token(self, body: Dict[str, Any]) -> Dict[str, Any]:
        self._gate()
        with self._lock:
            fingerprint = body.get('fingerprint')
            runner_id = self._by_fingerprint.get(fingerprint)
            if runner_id is None:
                raise ApiError(404, 'not_found', 'unknown key')
            runner = self.runners[runner_id]
            raw = base64.b64decode(runner.public_key)
            self._spend_nonce(fingerprint, body.get('nonce'), body.get('signature'), raw)
            if runner.state != 'approved':
                raise ApiError(403, 'runner.notApproved', 'not approved')
            token = secrets.token_urlsafe(32)
            self._tokens[token] = (runner_id, self._clock() + TOKEN_SEC)
            return {'token': token, 'expiresAt': instant(self._clock() + TOKEN_SEC)}

    def authenticate(self, header: Optional[str]) -> Runner:
        """The runner a Bearer call comes from (approval checked on every call)."""
        if not header or not header.startswith('Bearer '):
            raise ApiError(401, 'unauthenticated', 'no token')
        with self._lock:
            held = self._tokens.get(header[len('Bearer '):])
            if held is None or held[1] < self._clock():
                raise ApiError(401, 'unauthenticated', 'unknown or expired token')
            runner = self.runners[held[0]]
            if runner.state != 'approved':
                raise ApiError(403, 'runner.notApproved', 'not approved')
            return runner

    def _spend_nonce(self, fingerprint: str, nonce: Any, signature: Any, raw: bytes) -> None:
        held = self._nonces.pop(nonce, None) if isinstance(nonce, str) else None
        if held is None:
            raise ApiError(403, 'runner.nonce.unknown', 'unknown or spent nonce')
        if held[0] != fingerprint:
            raise ApiError(403, 'runner.nonce.mismatch', 'another key\'s nonce')
        if held[1] < self._clock():
            raise ApiError(403, 'runner.nonce.expired', 'expired nonce')
        try:
            Ed25519PublicKey.from_public_bytes(raw).verify(base64.b64decode(signature),
                                                           nonce.encode('utf-8'))
        except (InvalidSignature, ValueError, TypeError):
            raise ApiError(403, 'runner.signature', 'bad signature') from None

    def _public_key(self, value: Any) -> bytes:
        try:
            raw = base64.b64decode(value, validate=True) if isinstance(value, str) else None
        except ValueError:
            raw = None
        if raw is None:
            raise self._bug(422, 'runner.key.malformed', 'not base64')
        if len(raw) != 32:
            raise self._bug(422, 'runner.key.length', 'an Ed25519 key is 32 bytes')
        return raw

    # -- jobs ------------------------------------------------------------------

    def claim(self,
              runner: Runner,
              body: Dict[str, Any],
              stopping: threading.Event,
              gone: Callable[[], bool] = lambda: False) -> Optional[Dict[str, Any]]:
        """`gone()`: the runner hung up; nothing is handed out then."""
        self._gate()
        wait = min(_int(body.get('waitSeconds', 0)), MAX_WAIT_SEC)
        lease = self._lease_sec(body.get('leaseSeconds'))
        deadline = self._clock() + wait * (1 - secrets.randbelow(1000) / 16000)
        with self._lock:
            while True:
                if self.maintenance != 'open' or stopping.is_set() or gone():
                    return None
                self._expire_leases()
                if self._queue:
                    job = self.jobs[self._queue.pop(0)]
                    return self._hand_out(job, runner, lease)
                left = deadline - self._clock()
                if left <= 0:
                    return None
                self.held_claims += 1
                self._lock.notify_all()
                try:
                    self._lock.wait(min(left, 0.5))
                finally:
                    self.held_claims -= 1

    def _hand_out(self, job: Job, runner: Runner, lease: float) -> Dict[str, Any]:
        job.state, job.runner_id = 'running', runner.runner_id
        job.deliveries += 1
        job.attempt += 1
        job.lease_token = secrets.token_urlsafe(24)
        job.lease_expires = self._clock() + lease
        job.attachments = {}
        src = self.files[job.source_file_id]
        answer = {
            'jobId':
            job.job_id,
            'submissionId':
            job.submission_id,
            'attempt':
            job.attempt,
            'leaseToken':
            job.lease_token,
            'leaseExpiresAt':
            instant(job.lease_expires),
            'problemType':
            job.problem_type,
            'problemVersionId':
            'pv-1',
            'packageFileId':
            job.package_file_id,
            'packageSha256':
            job.package_sha256,
            'files': [{
                'name': 'source',
                'fileName': job.file_name,
                'fileId': src.file_id,
                'sha256': src.sha256,
                'sizeBytes': len(src.data)
            }],
        }
        if job.language is not None:
            answer['props'] = {'type': job.problem_type, 'language': job.language}
        if job.config is not None:
            answer['config'] = job.config
        return answer

    def renew(self, runner: Runner, job_id: str, body: Dict[str, Any]) -> Dict[str, Any]:
        self._gate()
        with self._lock:
            job = self._held(runner, job_id, body.get('leaseToken'))
            lease = self._lease_sec(body.get('leaseSeconds'))
            job.lease_expires = max(job.lease_expires, self._clock() + lease)
            return {
                'jobId': job_id,
                'leaseToken': job.lease_token,
                'leaseExpiresAt': instant(job.lease_expires)
            }

    def renew_all(self, runner: Runner, body: Dict[str, Any]) -> Dict[str, Any]:
        results = []
        for item in body.get('jobs') or []:
            try:
                results.append(
                    self.renew(
                        runner, item.get('jobId'), {
                            'leaseToken': item.get('leaseToken'),
                            **({
                                'leaseSeconds': body['leaseSeconds']
                            } if 'leaseSeconds' in body else {})
                        }))
                del results[-1]['leaseToken']
            except ApiError as exc:
                results.append({'jobId': item.get('jobId'), 'code': exc.code})
        return {'results': results}

    def release(self, runner: Runner, job_id: str, body: Dict[str, Any]) -> None:
        self._gate()
        with self._lock:
            job = self._held(runner, job_id, body.get('leaseToken'))
            self.releases.append(job_id)
            if job.refunds < REFUNDS:
                job.refunds += 1
                job.deliveries -= 1
            self._requeue(job)

    def attach(self, runner: Runner, job_id: str, body: Dict[str, Any]) -> None:
        self._gate()
        with self._lock:
            job = self._held(runner, job_id, body.get('leaseToken'))
            f = self.files.get(body.get('fileId'))
            if f is None or f.owner != runner.runner_id:
                raise self._bug(422, 'file.missing', 'not a file this runner uploaded')
            name = body.get('name')
            if name not in ('log', 'details'):
                raise self._bug(422, 'file.name', 'runners attach log and details only')
            if name in job.attachments:
                raise ApiError(409, 'attempt.file.duplicate', 'already attached')
            job.attachments[name] = f.file_id

    def report(self, runner: Runner, job_id: str, body: Dict[str, Any]) -> Dict[str, Any]:
        self._gate()
        with self._lock:
            job = self.jobs.get(job_id)
            if job is None:
                raise ApiError(404, 'not_found', 'no such job')
            token = body.get('leaseToken')
            if not isinstance(token, str) or not token:
                raise self._bug(422, 'runner.lease.malformed', 'no lease token')
            done = self.results.get(job_id)
            if done is not None and done['_runner'] == runner.runner_id and done['_token'] == token:
                self.reports.append((job_id, body))
                return {'resultId': done['_id'], 'state': job.state, 'duplicate': True}
            job = self._held(runner, job_id, token)
            self._check_report(body)
            self.reports.append((job_id, body))
            if body['infrastructureFailure']:
                job.failures.append(body['failureReason'])
                if job.deliveries >= MAX_DELIVERIES:
                    job.state = 'failed'
                    job.runner_id = job.lease_token = None
                    self._lock.notify_all()
                    return {'state': 'failed', 'duplicate': False}
                self._requeue(job)
                return {'state': 'queued', 'duplicate': False}
            job.state = 'done'
            job.lease_token = None
            result_id = str(uuid.uuid4())
            self.results[job_id] = dict(body,
                                        _id=result_id,
                                        _runner=runner.runner_id,
                                        _token=token,
                                        _attachments=dict(job.attachments))
            self._lock.notify_all()
            return {'resultId': result_id, 'state': 'completed', 'duplicate': False}

    def heartbeat(self, runner: Runner) -> None:
        self._gate()
        with self._lock:
            self.heartbeats += 1

    # -- files -------------------------------------------------------------------

    def download(self, runner: Runner, file_id: str) -> File:
        self._gate()
        gate = self.download_gate
        if gate is not None:
            self.gated_downloads += 1
            gate.wait(60)
        with self._lock:
            f = self.files.get(file_id)
            if f is None:
                raise ApiError(404, 'not_found', 'no such file')
            self._expire_leases()
            for job in self.jobs.values():
                if job.runner_id == runner.runner_id and job.state == 'running' and (file_id in (
                        job.package_file_id, job.source_file_id)):
                    return f
            raise ApiError(404, 'not_found', 'no such file')

    def upload(self, runner: Runner, data: bytes, name: str,
               sha256: Optional[str]) -> Dict[str, Any]:
        self._gate()
        if sha256 != hashlib.sha256(data).hexdigest():
            raise self._bug(422, 'checksum_mismatch', 'sha256 does not match the bytes')
        with self._lock:
            f = File(str(uuid.uuid4()), data, sha256, name, runner.runner_id)
            self.files[f.file_id] = f
            return {
                'id': f.file_id,
                'name': name,
                'mimeType': 'application/octet-stream',
                'sizeBytes': len(data),
                'sha256': sha256,
                'createdAt': instant(self._clock())
            }

    # -- rules ---------------------------------------------------------------

    def _gate(self, register: bool = False) -> None:
        """Maintenance (§8): `closed` refuses all but health; `draining`
        refuses registration (claims answer 204 on their own)."""
        if self.maintenance == 'closed' or (register and self.maintenance != 'open'):
            raise ApiError(503, 'server.maintenance', 'maintenance', retry_after=1)

    def _held(self, runner: Runner, job_id: Any, token: Any) -> Job:
        job = self.jobs.get(job_id)
        if job is None:
            raise ApiError(404, 'not_found', 'no such job')
        self._expire_leases()
        if job.state == 'cancelled':
            raise ApiError(409, 'job.state', 'cancelled')
        if job.lease_token is None or token != job.lease_token:
            raise ApiError(403, 'runner.lease.stale', 'lease reclaimed')
        if job.runner_id != runner.runner_id:
            raise ApiError(403, 'runner.lease.foreign', 'another runner holds it')
        return job

    def _check_report(self, body: Dict[str, Any]) -> None:
        if not isinstance(body.get('infrastructureFailure'), bool):
            raise self._bug(422, 'validation', 'infrastructureFailure is required')
        if body['infrastructureFailure']:
            if not isinstance(body.get('failureReason'), str) or not body['failureReason']:
                raise self._bug(422, 'validation', 'an infrastructure failure names its reason')
            if any(k in body for k in ('score', 'maxScore', 'verdict')):
                raise self._bug(422, 'validation', 'an infrastructure failure has no score')
        else:
            verdict = body.get('verdict')
            if not isinstance(verdict, str) or not verdict:
                raise self._bug(422, 'result.verdict.missing', 'no verdict')
            if len(verdict) > 64:
                raise self._bug(422, 'result.verdict.tooLong', 'over 64 characters')
        for member, limit in (('extra', EXTRA_BYTES), ('props', PROPS_BYTES)):
            if member in body:
                value = body[member]
                if not isinstance(value, dict) or not value:
                    raise self._bug(422, 'opaque.notAnObject', f'{member} must be an object')
                if len(json.dumps(value)) > limit:
                    raise self._bug(422, 'opaque.tooLarge', f'{member} is over {limit} bytes')

    def _lease_sec(self, value: Any) -> float:
        asked = DEFAULT_LEASE_SEC if value is None else _int(value)
        return float(min(max(asked, self.min_lease_sec), 3600))

    def _expire_leases(self) -> None:
        now = self._clock()
        for job in self.jobs.values():
            if job.state == 'running' and job.lease_expires < now:
                self._requeue(job)

    def _requeue(self, job: Job) -> None:
        job.state, job.runner_id, job.lease_token = 'queued', None, None
        if job.job_id not in self._queue:
            self._queue.insert(0, job.job_id)
        self._lock.notify_all()

    def _runner(self, runner_id: str) -> Runner:
        if runner_id not in self.runners:
            raise ApiError(404, 'not_found', 'no such runner')
        return self.runners[runner_id]

    def _bug(self, status: int, code: str, detail: str) -> ApiError:
        """A refusal that means the runner broke the contract."""
        self.violations.append(f'{code}: {detail}')
        return ApiError(status, code, detail)


def _int(value: Any) -> int:
    if type(value) is not int:
        raise ApiError(400, 'malformed_json', 'an integer was expected')
    return value
