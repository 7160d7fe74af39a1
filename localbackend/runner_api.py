"""The API the runner calls (protocol §2): wire parsing in, store outcomes out as statuses."""
import json
import math
from typing import Dict, List, Optional

from localbackend import wire
from localbackend.reports import ReportError, parse_report
from localbackend.store import AbortReason, Answer, Outcome, Store
from localbackend.wire import Request, Response

STATUS = {
    Outcome.UNAUTHORIZED: 401,
    Outcome.FORBIDDEN: 403,
    Outcome.NOT_FOUND: 404,
    Outcome.CONFLICT: 409,
    Outcome.REJECTED: 400,
}
_ABORT_REASONS = {reason.value: reason for reason in AbortReason}


def clamp_wait(raw: Optional[str], ceiling: float = 60.0) -> float:
    """The long-poll wait asked by `?wait=N`, clamped to [0, ceiling]; garbage means 0."""
    try:
        value = float(raw) if raw is not None else 0.0
    except ValueError:
        return 0.0
    if math.isnan(value):
        return 0.0
    return max(0.0, min(value, ceiling))


def _failure(answer: Answer) -> Response:
    return Response.error(STATUS[answer.outcome], answer.error or answer.outcome.value)


def parse_heartbeat(body: object) -> Optional[List[str]]:
    if not isinstance(body, dict):
        return None
    ids = body.get('active_job_ids')
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        return None
    return ids


def parse_abort_reason(body: object) -> Optional[AbortReason]:
    reason = body.get('reason') if isinstance(body, dict) else None
    return _ABORT_REASONS.get(reason) if isinstance(reason, str) else None


def parse_complete(body: object):
    if body is wire.NOT_JSON:
        return ReportError('body is not JSON')
    try:
        return parse_report(body)
    except ReportError as error:
        return error


class RunnerApi:

    def __init__(self, store: Store):
        self._store = store

    def routes(self) -> List[wire.Route]:
        return [
            wire.route('POST', '/runners/register', self.register, 'register'),
            wire.route('POST', '/runners/{rn}/heartbeat', self.heartbeat, 'heartbeat'),
            wire.route('GET', '/runners/{rn}/next-job', self.next_job, 'next-job'),
            wire.route('PUT', '/runners/{rn}/jobs/{jb}/complete', self.complete, 'complete'),
            wire.route('PUT', '/runners/{rn}/jobs/{jb}/abort', self.abort, 'abort'),
            wire.route('GET', '/problem/{pid}/checksum', self.checksum, 'checksum'),
            wire.route('GET', '/problem/{pid}/testdata', self.testdata, 'testdata'),
            wire.route('GET', '/code/{jb}', self.code, 'code'),
        ]

    def register(self, request: Request, params: Dict[str, str]) -> Response:
        body = request.json()
        # The secret is in the body: anything but an object carries none (401, fail closed).
        document = body if isinstance(body, dict) else {}
        answer = self._store.register(document.get('registration_token'), document.get('name'))
        if answer.outcome is not Outcome.OK:
            return _failure(answer)
        registration = answer.value
        return Response.json(
            201, {
                'runner_id': registration.runner_id,
                'token': registration.token,
                'config': dict(registration.config),
            })

    def heartbeat(self, request: Request, params: Dict[str, str]) -> Response:
        answer = self._store.heartbeat(params['rn'], request.bearer_token,
                                       parse_heartbeat(request.json()))
        return Response.empty(204) if answer.outcome is Outcome.OK else _failure(answer)

    def next_job(self, request: Request, params: Dict[str, str]) -> Response:
        wait = clamp_wait(request.query.get('wait'), self._store.settings.long_poll_max_sec)
        answer = self._store.claim(params['rn'],
                                   request.bearer_token,
                                   wait,
                                   caller_present=request.caller_present)
        if answer.outcome is Outcome.NO_JOB:
            return Response.empty(204)
        if answer.outcome is not Outcome.OK:
            return _failure(answer)
        served = answer.value
        if isinstance(served.payload, bytes):
            return Response(200, served.payload)
        payload = served.payload
        if served.code_path is not None:
            payload = dict(payload, code_url=request.base_url + served.code_path)
        return Response(200, json.dumps(payload).encode('utf-8'))

    def complete(self, request: Request, params: Dict[str, str]) -> Response:
        answer = self._store.complete(params['rn'], request.bearer_token, params['jb'],
                                      parse_complete(request.json()))
        if answer.outcome in (Outcome.LANDED, Outcome.STALE_DROPPED):
            return Response.empty(204)
        return _failure(answer)

    def abort(self, request: Request, params: Dict[str, str]) -> Response:
        answer = self._store.abort(params['rn'], request.bearer_token, params['jb'],
                                   parse_abort_reason(request.json()))
        if answer.outcome in (Outcome.REQUEUED, Outcome.CONVERGED, Outcome.DROPPED):
            return Response.json(202, {'status': answer.outcome.value})
        return _failure(answer)

    def checksum(self, request: Request, params: Dict[str, str]) -> Response:
        answer = self._store.checksum(params['pid'], request.query.get('token'))
        if answer.outcome is not Outcome.OK:
            return _failure(answer)
        return Response.json(200, {'data': answer.value})

    def testdata(self, request: Request, params: Dict[str, str]) -> Response:
        answer = self._store.testdata(params['pid'], request.query.get('token'))
        if answer.outcome is not Outcome.OK:
            return _failure(answer)
        return Response(200, answer.value, 'application/zip')

    def code(self, request: Request, params: Dict[str, str]) -> Response:
        answer = self._store.code(params['jb'], request.query.get('sig'))
        if answer.outcome is not Outcome.OK:
            return _failure(answer)
        return Response(200, answer.value, 'application/zip')
