"""The admin API: problems, submissions, results, raw job injection, faults, events.

For demos, tests in other processes and the CLI. When the server has an admin
token, every call needs `Authorization: Bearer <admin token>`. Binary content
(sources, testdata, zips) travels as base64.

| call | body | answer |
|---|---|---|
| `GET /admin/problems` | | `[{"id", "name", "tasks", "checksum"}]` |
| `POST /admin/problems` | `{"problem": <problem.json>, "files": {name: b64}}` | `201` |
| `POST /admin/problems/{pid}/testdata` | `{"files": {name: b64 or null}}` | `{"checksum"}` |
| `POST /admin/submissions` | `{"problem_id", "language", "source" or "source_b64"}` | `201 {"submission_id", "job_id"}` |
| `GET /admin/submissions` | | `[submission]` |
| `GET /admin/submissions/{sid}?wait=N` | | submission, after waiting up to N s for its result |
| `POST /admin/submissions/{sid}/rejudge` | | `201 {"job_id"}` |
| `POST /admin/jobs` | `{"payload": any JSON}` or `{"payload_text": str}`, optional `"code_zip_b64"` or `"code_entries": {name: b64}` | `201 {"job_id"}` |
| `GET /admin/events?since=N&kind=K` | | `[event]` |
| `GET`, `POST`, `DELETE /admin/faults` | `{"fault": "burst"/"latency"/"drop"/"drip", "endpoint", "count", …}` | rules |
| `GET /admin/runners`, `POST /admin/runners/{rn}/revoke` | | |
| `POST /admin/sweep` | | reclaim expired leases now |
"""
import base64
import binascii
import dataclasses
from typing import Dict, List, Optional

from localbackend import auth, wire, zips
from localbackend.faults import FaultPlan, fault_from_wire
from localbackend.problems import Problem, ProblemError, parse_problem_json
from localbackend.results import submission_document
from localbackend.store import Store
from localbackend.wire import Request, Response

MAX_RESULT_WAIT_SEC = 600.0


class BadRequest(ValueError):
    pass


def _object(request: Request) -> dict:
    body = request.json()
    if not isinstance(body, dict):
        raise BadRequest('body must be a JSON object')
    return body


def _b64(value: object, what: str) -> bytes:
    if not isinstance(value, str):
        raise BadRequest(f'{what} must be base64 text')
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise BadRequest(f'{what} is not valid base64') from None


def _files(value: object, allow_none: bool = False) -> Dict[str, Optional[bytes]]:
    if not isinstance(value, dict):
        raise BadRequest('files must be an object of name → base64')
    return {
        name: None if data is None and allow_none else _b64(data, f'files[{name!r}]')
        for name, data in value.items()
    }


def problem_document(problem: Problem) -> dict:
    return {
        'id': problem.problem_id,
        'name': problem.name,
        'tasks': [task.to_wire() for task in problem.tasks],
        'checksum': problem.checksum,
    }


class AdminApi:

    def __init__(self, store: Store, faults: FaultPlan, admin_token: Optional[str] = None):
        self._store = store
        self._faults = faults
        self._admin_token = admin_token

    def __repr__(self) -> str:
        return f'AdminApi(protected={self._admin_token is not None})'

    def routes(self) -> List[wire.Route]:
        table = [
            ('GET', '/admin/problems', self.list_problems),
            ('POST', '/admin/problems', self.add_problem),
            ('POST', '/admin/problems/{pid}/testdata', self.set_testdata),
            ('GET', '/admin/submissions', self.list_submissions),
            ('POST', '/admin/submissions', self.submit),
            ('GET', '/admin/submissions/{sid}', self.get_submission),
            ('POST', '/admin/submissions/{sid}/rejudge', self.rejudge),
            ('POST', '/admin/jobs', self.inject_job),
            ('GET', '/admin/events', self.list_events),
            ('GET', '/admin/faults', self.list_faults),
            ('POST', '/admin/faults', self.add_fault),
            ('DELETE', '/admin/faults', self.clear_faults),
            ('GET', '/admin/runners', self.list_runners),
            ('POST', '/admin/runners/{rn}/revoke', self.revoke),
            ('POST', '/admin/sweep', self.sweep),
        ]
        return [wire.route(method, path, self._guarded(handler)) for method, path, handler in table]

    def _guarded(self, handler):

        def guarded(request: Request, params: Dict[str, str]) -> Response:
            if self._admin_token is not None and not auth.matches_secret(
                    self._admin_token, request.bearer_token):
                return Response.error(401, 'admin token required')
            try:
                return handler(request, params)
            except (BadRequest, ProblemError, ValueError) as error:
                return Response.error(400, str(error))
            except KeyError as error:
                return Response.error(404, str(error.args[0]) if error.args else 'not found')

        return guarded

    def list_problems(self, request: Request, params: Dict[str, str]) -> Response:
        return Response.json(200, [problem_document(p) for p in self._store.problems()])

    def add_problem(self, request: Request, params: Dict[str, str]) -> Response:
        body = _object(request)
        problem_id, name, tasks = parse_problem_json(body.get('problem'), 'problem')
        problem = Problem(problem_id, name, tasks, _files(body.get('files', {})))
        self._store.add_problem(problem)
        return Response.json(201, problem_document(problem))

    def set_testdata(self, request: Request, params: Dict[str, str]) -> Response:
        pid = params['pid']
        if not (pid.isascii() and pid.isdigit()):
            raise KeyError(f'unknown problem {pid!r}')
        changes = _files(_object(request).get('files'), allow_none=True)
        return Response.json(200, {'checksum': self._store.set_testdata(int(pid), changes)})

    def list_submissions(self, request: Request, params: Dict[str, str]) -> Response:
        return Response.json(200, [submission_document(v) for v in self._store.submissions()])

    def submit(self, request: Request, params: Dict[str, str]) -> Response:
        body = _object(request)
        problem_id = body.get('problem_id')
        if isinstance(problem_id, bool) or not isinstance(problem_id, int):
            raise BadRequest('problem_id must be an integer')
        language = body.get('language')
        if not isinstance(language, (int, str)):
            raise BadRequest('language must be 0/1/2 or c/cpp/python')
        if 'source_b64' in body:
            source = _b64(body['source_b64'], 'source_b64')
        elif isinstance(body.get('source'), str) and auth.utf8(body['source']) is not None:
            source = body['source']
        else:
            raise BadRequest('give source (text) or source_b64')
        submission_id = self._store.submit(problem_id, language, source)
        view = self._store.submission(submission_id)
        return Response.json(201, {'submission_id': submission_id, 'job_id': view.current_job_id})

    def get_submission(self, request: Request, params: Dict[str, str]) -> Response:
        sid = params['sid']
        view = self._store.submission(sid)
        wait = _float(request.query.get('wait'), 0.0)
        if wait > 0 and not view.done:
            try:
                self._store.wait_result(sid, min(wait, MAX_RESULT_WAIT_SEC))
            except TimeoutError:
                pass
            view = self._store.submission(sid)
        return Response.json(200, submission_document(view))

    def rejudge(self, request: Request, params: Dict[str, str]) -> Response:
        return Response.json(201, {'job_id': self._store.rejudge(params['sid'])})

    def inject_job(self, request: Request, params: Dict[str, str]) -> Response:
        body = _object(request)
        if 'payload_text' in body:
            if not isinstance(body['payload_text'], str):
                raise BadRequest('payload_text must be a string')
            payload = body['payload_text'].encode('utf-8', 'surrogatepass')
        elif 'payload' in body:
            payload = body['payload']
        else:
            raise BadRequest('give payload (any JSON) or payload_text (served verbatim)')
        code_zip = None
        if 'code_zip_b64' in body:
            code_zip = _b64(body['code_zip_b64'], 'code_zip_b64')
        elif 'code_entries' in body:
            code_zip = zips.build_zip(_files(body['code_entries']))
        return Response.json(201, {'job_id': self._store.inject_job(payload, code_zip=code_zip)})

    def list_events(self, request: Request, params: Dict[str, str]) -> Response:
        since = int(_float(request.query.get('since'), 0))
        kind = request.query.get('kind') or None
        events = self._store.events.list(kind, since=max(0, since))
        return Response.json(200, [e.to_wire() for e in events])

    def list_faults(self, request: Request, params: Dict[str, str]) -> Response:
        return Response.json(200, [rule.to_wire() for rule in self._faults.rules()])

    def add_fault(self, request: Request, params: Dict[str, str]) -> Response:
        endpoint, fault, count = fault_from_wire(_object(request))
        return Response.json(201, self._faults.add(endpoint, fault, count).to_wire())

    def clear_faults(self, request: Request, params: Dict[str, str]) -> Response:
        self._faults.clear(request.query.get('endpoint') or None)
        return Response.empty(204)

    def list_runners(self, request: Request, params: Dict[str, str]) -> Response:
        return Response.json(200, [dataclasses.asdict(r) for r in self._store.runners()])

    def revoke(self, request: Request, params: Dict[str, str]) -> Response:
        self._store.revoke(params['rn'])
        return Response.empty(204)

    def sweep(self, request: Request, params: Dict[str, str]) -> Response:
        self._store.sweep()
        return Response.empty(204)


def _float(raw: Optional[str], default: float) -> float:
    try:
        value = float(raw) if raw is not None else default
    except ValueError:
        raise BadRequest(f'not a number: {raw!r}') from None
    if value != value or value in (float('inf'), float('-inf')):
        raise BadRequest(f'not a finite number: {raw!r}')
    return value
