"""A scriptable backend for tests that run `main.py` as a real process.

Each route is a function of the request returning (status, body); every call
is recorded, and tests wait on the record (evidence), never on time.
"""
import http.server
import io
import json
import re
import threading
import zipfile
from typing import Callable, Dict, List, Optional, Tuple

from localbackend.server import LISTEN_BACKLOG

Reply = Tuple[int, bytes]
Handler = Callable[['Call'], Reply]

SOURCE_OK = b'#include <stdio.h>\nint main(void) { puts("3"); return 0; }\n'


class Call:

    def __init__(self, method: str, path: str, body: bytes):
        self.method, self.path, self.body = method, path, body

    def json(self):
        return json.loads(self.body or b'null')

    def __repr__(self):
        return f'{self.method} {self.path}'


def reply(status: int, obj=None) -> Reply:
    return status, (b'' if obj is None else json.dumps(obj).encode())


def zip_of(files: Dict[str, bytes]) -> bytes:
    data = io.BytesIO()
    with zipfile.ZipFile(data, 'w') as z:
        for name, content in files.items():
            z.writestr(name, content)
    return data.getvalue()


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = LISTEN_BACKLOG  # a runner's burst of connections (localbackend/server.py)


class StubBackend:

    def __init__(self):
        self.calls: List[Call] = []
        self._cond = threading.Condition()
        self._routes: List[Tuple[str, re.Pattern, Handler]] = []
        outer = self

        class RequestHandler(http.server.BaseHTTPRequestHandler):
            # As every backend should (protocol §2): no answer waits for a
            # delayed ACK.
            disable_nagle_algorithm = True

            def _serve(self):
                length = int(self.headers.get('Content-Length') or 0)
                call = Call(self.command, self.path, self.rfile.read(length))
                with outer._cond:
                    outer.calls.append(call)
                    outer._cond.notify_all()
                status, body = outer._dispatch(call)
                try:
                    self.send_response(status)
                    self.send_header('Content-Length', str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except ConnectionError:
                    pass  # the runner hung up (a stopping runner does): no one to answer

            do_GET = do_POST = do_PUT = _serve

            def log_message(self, *args):
                pass

        self._server = _Server(('127.0.0.1', 0), RequestHandler)
        self.url = f'http://127.0.0.1:{self._server.server_address[1]}'

    def route(self, method: str, pattern: str, handler: Handler) -> None:
        """Later routes win over earlier ones."""
        self._routes.insert(0, (method, re.compile(pattern), handler))

    def _dispatch(self, call: Call) -> Reply:
        for method, pattern, handler in self._routes:
            if method == call.method and pattern.search(call.path):
                return handler(call)
        return reply(404)

    def wait_for(self, predicate: Callable[[List[Call]], bool], timeout: float = 60) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: predicate(self.calls), timeout)

    def matching(self, method: str, pattern: str) -> List[Call]:
        with self._cond:
            return [c for c in self.calls if c.method == method and re.search(pattern, c.path)]

    def start(self):
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self):
        self._server.shutdown()
        self._server.server_close()

    # A backend that behaves, for the routes a test does not script.

    def serve_defaults(self, heartbeat_sec=15, poll_sec=0.2):
        """Register, heartbeat, hand out the jobs of `add_job` once each,
        accept reports, serve code and testdata for problem 1 (one task, one
        case, answer 3). Routes added after this win over these."""
        self._pending = []
        lock = threading.Lock()

        def next_job(call):
            with lock:
                return reply(200, self._pending.pop(0)) if self._pending else reply(204)

        self.route(
            'POST', r'^/runners/register$', lambda c: reply(
                201, {
                    'runner_id': 'rn_stub',
                    'token': 'rk_stub',
                    'config': {
                        'heartbeat_interval_sec': heartbeat_sec,
                        'poll_interval_sec': poll_sec,
                        'max_concurrent_jobs': 2
                    }
                }))
        self.route('POST', r'/heartbeat$', lambda c: reply(204))
        self.route('GET', r'/next-job', next_job)
        self.route('PUT', r'/complete$', lambda c: reply(204))
        self.route('PUT', r'/abort$', lambda c: reply(202))
        self.route('GET', r'^/problem/1/checksum', lambda c: reply(200, {'data': 'v1'}))
        self.route('GET', r'^/problem/1/testdata', lambda c:
                   (200, zip_of({
                       '0000.in': b'1 2\n',
                       '0000.out': b'3\n'
                   })))
        self.route('GET', r'^/code/', lambda c: (200, zip_of({'main.c': SOURCE_OK})))

    def add_job(self, job_id='jb_1', time_limit_ms=1000, source: Optional[bytes] = None) -> None:
        if source is not None:
            self.route('GET', f'^/code/{job_id}', lambda c: (200, zip_of({'main.c': source})))
        self._pending.append({
            'job_id':
            job_id,
            'submission_id':
            f'sub_{job_id}',
            'problem_id':
            '1',
            'language':
            0,
            'code_url':
            f'{self.url}/code/{job_id}?sig=secret',
            'checker':
            'diff',
            'tasks': [{
                'taskScore': 100,
                'memoryLimit': 65536,
                'timeLimit': time_limit_ms,
                'caseCount': 1
            }]
        })
