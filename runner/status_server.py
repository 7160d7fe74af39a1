"""The runner's HTTP status port (METRICS_PORT): /metrics, /healthz, /readyz.

- `/healthz`: the process works: its threads run, and once registered, the
  backend accepted a heartbeat within a few intervals. A supervisor restarts
  a runner that fails it (a runner whose heartbeats go unaccepted has lost
  its leases anyway).
- `/readyz`: the runner takes work now: registered, the host can judge, not
  draining. A load balancer or an operator's dashboard reads it; failing it
  restarts nothing.

Each answers 200 `ok`, or 503 with the reason; every other path is 404.
"""
import http.server
import threading
from typing import Callable, Optional, Tuple

import prometheus_client
from prometheus_client import exposition

from runner.threads import join_all

# (ok, reason): the reason is shown to whoever asks; it must carry no secret.
Probe = Callable[[], Tuple[bool, str]]


class StatusServer:

    def __init__(self,
                 port: int,
                 registry: prometheus_client.CollectorRegistry,
                 alive: Probe,
                 ready: Probe,
                 addr: str = '0.0.0.0'):
        routes = {'/metrics': None, '/healthz': alive, '/readyz': ready}

        class Handler(http.server.BaseHTTPRequestHandler):

            def do_GET(self):
                path = self.path.split('?', 1)[0]
                if path not in routes:
                    self._answer(404, b'not found\n', 'text/plain; charset=utf-8')
                elif path == '/metrics':
                    self._answer(200, exposition.generate_latest(registry),
                                 exposition.CONTENT_TYPE_LATEST)
                else:
                    ok, reason = _asked(routes[path])
                    self._answer(200 if ok else 503, (reason + '\n').encode(),
                                 'text/plain; charset=utf-8')

            def _answer(self, status: int, body: bytes, content_type: str) -> None:
                self.send_response(status)
                self.send_header('Content-Type', content_type)
                self.send_header('Content-Length', str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args) -> None:
                pass  # probes every few seconds would drown the runner's own lines

        self._server = http.server.ThreadingHTTPServer((addr, port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        name='status-server',
                                        daemon=True)

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        if self._thread.ident is not None:
            self._server.shutdown()
        self._server.server_close()

    def join(self, timeout: Optional[float] = None) -> bool:
        return join_all([self._thread], timeout)


def _asked(probe: Probe) -> Tuple[bool, str]:
    try:
        return probe()
    except Exception as exc:  # a probe's bug is an unhealthy answer, not a dead port
        return False, f'the probe failed ({type(exc).__name__})'
