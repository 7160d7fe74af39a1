"""The bundled AlgoJudge server's HTTP side: the runner routes under
`/api/v1`, the manager's approval route, and `/api/v1/health`.

Routing and the wire only; every rule is the store's. A JSON body holding a
null is refused (optional means absent, both ways) and counted as the
runner's violation.
"""
import email.parser
import email.policy
import http.server
import json
import logging
import re
import threading
from typing import Any, Callable, Dict, Optional, Tuple

from localbackend.algojudge.store import ApiError, Runner, Store
from localbackend.server import LISTEN_BACKLOG, connected

log = logging.getLogger('localbackend.algojudge')

PREFIX = '/api/v1'
MAX_BODY_BYTES = 300 * 1024 * 1024

_ROUTES = []


def _route(method: str, pattern: str, auth: bool = True):

    def add(handler):
        _ROUTES.append((method, re.compile(pattern + '$'), auth, handler))
        return handler

    return add


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'
    server_version = 'algojudge-local'
    sys_version = ''
    # Two writes per answer: without this each waits for a delayed ACK (40 ms).
    disable_nagle_algorithm = True
    server: 'AlgoJudgeServer'

    def do_GET(self):
        self._serve()

    def do_POST(self):
        self._serve()

    def log_message(self, format, *args):
        pass  # request lines carry no secret here, but tokens ride headers: keep quiet

    def _serve(self):
        try:
            length = int(self.headers.get('Content-Length') or 0)
        except ValueError:
            length = -1
        if not 0 <= length <= MAX_BODY_BYTES:
            self.close_connection = True
            return self._problem(ApiError(413, 'payload_too_large', 'body too large'))
        raw = self.rfile.read(length) if length else b''
        path = self.path.split('?', 1)[0]
        if not path.startswith(PREFIX):
            return self._send(404, b'', None)
        path = path[len(PREFIX):]
        store = self.server.store
        for method, pattern, auth, handler in _ROUTES:
            match = pattern.match(path)
            if method != self.command or match is None:
                continue
            try:
                runner = store.authenticate(self.headers.get('Authorization')) if auth else None
                answer = handler(self, store, runner, raw, *match.groups())
            except ApiError as exc:
                return self._problem(exc)
            if answer is _SENT:
                return None
            if answer is None:
                return self._send(204, b'', None)
            status, body = answer if isinstance(answer, tuple) else (200, answer)
            return self._send(status, json.dumps(body).encode(), 'application/json')
        self._problem(ApiError(404, 'not_found', 'no such route'))

    def json_body(self, raw: bytes) -> Dict[str, Any]:
        if not raw:
            return {}
        if not (self.headers.get('Content-Type') or '').startswith('application/json'):
            raise self.server.store._bug(415, 'unsupported_media_type', 'JSON is sent as JSON')
        try:
            body = json.loads(raw)
        except ValueError:
            raise self.server.store._bug(400, 'malformed_json', 'not JSON') from None
        if not isinstance(body, dict):
            raise self.server.store._bug(400, 'malformed_json', 'not an object')
        if _has_null(body):
            raise self.server.store._bug(400, 'malformed_json', 'a null: optional means absent')
        return body

    def _problem(self, exc: ApiError) -> None:
        body = json.dumps({
            'title': exc.code,
            'status': exc.status,
            'detail': exc.detail,
            'code': exc.code
        }).encode()
        headers = {'Retry-After': str(exc.retry_after)} if exc.retry_after else {}
        self._send(exc.status, body, 'application/problem+json', headers)

    def _send(self,
              status: int,
              body: bytes,
              content_type: Optional[str],
              headers: Optional[Dict[str, str]] = None) -> None:
        try:
            self.send_response(status)
            if content_type:
                self.send_header('Content-Type', content_type)
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.send_header('Content-Length', str(len(body)))
            self.end_headers()
            if body:
                self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            # The runner hung up (a stopping one does), as the Normal-OJ
            # backend's answers allow for (localbackend/server.py).
            self.close_connection = True


def _has_null(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, dict):
        return any(_has_null(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_null(v) for v in value)
    return False


@_route('GET', r'/health', auth=False)
def _health(handler, store: Store, runner, raw):
    body = {'status': 'ok', 'storage': 'ok'}
    if store.maintenance != 'open':
        body['maintenance'] = {'level': store.maintenance}
    return body


@_route('POST', r'/runner/register', auth=False)
def _register(handler, store, runner, raw):
    return store.register(handler.json_body(raw))


@_route('POST', r'/runner/auth/challenge', auth=False)
def _challenge(handler, store, runner, raw):
    return store.challenge(handler.json_body(raw))


@_route('POST', r'/runner/auth/token', auth=False)
def _token(handler, store, runner, raw):
    return store.token(handler.json_body(raw))


@_route('POST', r'/runner/jobs/claim')
def _claim(handler, store, runner, raw):
    # A held claim whose runner hung up hands nothing out (as a server
    # watching its request's cancellation does): the job would be lost.
    return store.claim(runner, handler.json_body(raw), handler.server.stopping,
                       lambda: not connected(handler.connection))


@_route('POST', r'/runner/jobs/leases')
def _leases(handler, store, runner, raw):
    return store.renew_all(runner, handler.json_body(raw))


@_route('POST', r'/runner/jobs/([^/]+)/lease')
def _lease(handler, store, runner, raw, job_id):
    return store.renew(runner, job_id, handler.json_body(raw))


@_route('POST', r'/runner/jobs/([^/]+)/progress')
def _progress(handler, store, runner, raw, job_id):
    store._held(runner, job_id, handler.json_body(raw).get('leaseToken'))


@_route('POST', r'/runner/jobs/([^/]+)/release')
def _release(handler, store, runner, raw, job_id):
    store.release(runner, job_id, handler.json_body(raw))


@_route('POST', r'/runner/jobs/([^/]+)/files')
def _attach(handler, store, runner, raw, job_id):
    store.attach(runner, job_id, handler.json_body(raw))


@_route('POST', r'/runner/jobs/([^/]+)/report')
def _report(handler, store, runner, raw, job_id):
    return store.report(runner, job_id, handler.json_body(raw))


@_route('POST', r'/runner/heartbeat')
def _heartbeat(handler, store, runner, raw):
    store.heartbeat(runner)


@_route('GET', r'/runner/files/([^/]+)')
def _download(handler, store: Store, runner: Runner, raw, file_id):
    f = store.download(runner, file_id)
    handler._send(200, f.data, 'application/octet-stream', {'ETag': f'"{f.sha256}"'})
    return _SENT


@_route('POST', r'/runner/files')
def _upload(handler, store, runner, raw):
    parts = _multipart(handler.headers.get('Content-Type') or '', raw)
    if 'file' not in parts:
        raise store._bug(422, 'file.required', 'no file part')
    data, name = parts['file']
    sha = parts.get('sha256', (b'', None))[0].decode('ascii', 'replace')
    return 201, store.upload(runner, data, name or 'file', sha)


@_route('POST', r'/runners/([^/]+)/approve', auth=False)
def _approve(handler, store, runner, raw, runner_id):
    if not handler.server.manager_allowed(handler.headers.get('Authorization')):
        raise ApiError(401, 'unauthenticated', 'the manager\'s token is required')
    store.approve(runner_id)


_SENT = object()  # the handler wrote its own answer


def _multipart(content_type: str, raw: bytes) -> Dict[str, Tuple[bytes, Optional[str]]]:
    message = email.parser.BytesParser(
        policy=email.policy.HTTP).parsebytes(b'Content-Type: ' + content_type.encode('latin-1') +
                                             b'\r\n\r\n' + raw)
    parts = {}
    if message.is_multipart():
        for part in message.iter_parts():
            name = part.get_param('name', header='content-disposition')
            if name:
                parts[name] = (part.get_payload(decode=True) or b'', part.get_filename())
    return parts


class AlgoJudgeServer(http.server.ThreadingHTTPServer):
    """`url` is what a runner's BACKEND_URL is (it includes /api/v1)."""
    daemon_threads = True
    request_queue_size = LISTEN_BACKLOG  # a runner's burst of connections (localbackend/server.py)

    def __init__(self,
                 store: Store,
                 host: str = '127.0.0.1',
                 port: int = 0,
                 manager_token: str = '',
                 on_request: Callable[[], None] = lambda: None):
        super().__init__((host, port), _Handler)
        self.store = store
        self.stopping = threading.Event()
        self._manager_token = manager_token
        self._thread: Optional[threading.Thread] = None

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f'http://{host}:{port}{PREFIX}'

    def manager_allowed(self, header: Optional[str]) -> bool:
        return not self._manager_token or header == f'Bearer {self._manager_token}'

    def start(self) -> None:
        self._thread = threading.Thread(target=self.serve_forever,
                                        args=(0.05, ),
                                        name='algojudge-server',
                                        daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self.stopping.set()
        self.store.poke()
        self.shutdown()
        self.server_close()
        if self._thread is not None:
            self._thread.join(10)
