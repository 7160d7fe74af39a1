"""The HTTP server: routing, injected faults, and nothing else.

Runner calls are handled by `runner_api`, admin calls by `admin_api`; both
see parsed `wire.Request` values. Request lines are logged without their
query strings, because the testdata channel carries SANDBOX_TOKEN and code
URLs carry a signature there.
"""
import functools
import http.server
import logging
import re
import select
import socket
import threading
import urllib.parse
from typing import List, Optional, Set

from localbackend import wire
from localbackend.admin_api import AdminApi
from localbackend.faults import Applied, FaultPlan
from localbackend.runner_api import RunnerApi
from localbackend.store import Store
from localbackend.wire import Request, Response

log = logging.getLogger('localbackend.server')

MAX_BODY_BYTES = 64 * 1024 * 1024
_HOST_HEADER = re.compile(r'^[A-Za-z0-9.\-]+(:[0-9]{1,5})?$|^\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?$')


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'
    server_version = 'localbackend'
    sys_version = ''
    # Headers and body go out as two writes: with Nagle's algorithm the body
    # waits for the client's delayed ACK of the headers (40 ms on Linux), which
    # every answer to a held long poll paid.
    disable_nagle_algorithm = True
    server: '_HttpServer'

    def do_GET(self):
        self._serve()

    def do_POST(self):
        self._serve()

    def do_PUT(self):
        self._serve()

    def do_DELETE(self):
        self._serve()

    def log_message(self, format, *args):
        # The default logs the raw request line, query string (secrets) included.
        pass

    def _serve(self):
        backend = self.server.backend
        split = urllib.parse.urlsplit(self.path)
        path = split.path
        try:
            length = int(self.headers.get('Content-Length') or 0)
        except ValueError:
            length = -1
        if length < 0 or length > MAX_BODY_BYTES:
            self.close_connection = True
            self._send(Response.error(413 if length > 0 else 400, 'bad or oversized body'), path)
            return
        body = self.rfile.read(length) if length else b''
        segments = tuple(urllib.parse.unquote(s) for s in path.strip('/').split('/'))
        route, params, path_known = wire.find(backend.routes, self.command, segments)
        if route is None:
            self._send(Response.error(405 if path_known else 404, 'no such call'), path)
            return
        request = Request(
            method=self.command,
            path=path,
            segments=segments,
            query={
                k: v[0]
                for k, v in urllib.parse.parse_qs(split.query, keep_blank_values=True).items()
            },
            headers={
                k.lower(): v
                for k, v in self.headers.items()
            },
            body=body,
            base_url=backend.base_url(self.headers.get('Host')),
            caller_present=functools.partial(connected, self.connection),
        )
        applied = backend.faults.take(route.endpoint) if route.endpoint else Applied()
        if applied:
            backend.store.events.append('fault',
                                        data={
                                            'endpoint': route.endpoint,
                                            'faults': tuple(applied.names())
                                        })
        if applied.latency and backend.stopping.wait(applied.latency.seconds):
            return self._drop(path)
        if applied.drop and not applied.drop.after:
            return self._drop(path)
        if applied.burst:
            self._send(Response.error(applied.burst.status, 'injected fault'), path)
            return
        try:
            response = route.handler(request, params)
        except Exception:
            log.exception('%s %s failed', self.command, path)
            response = Response.error(500, 'internal error')
        if applied.drop and applied.drop.after:
            return self._drop(path)
        self._send(response, path, applied)

    def _drop(self, path: str) -> None:
        log.debug('%s %s -> dropped', self.command, path)
        self.close_connection = True

    def _send(self, response: Response, path: str, applied: Applied = Applied()) -> None:
        log.debug('%s %s -> %d', self.command, path, response.status)
        try:
            self.send_response(response.status)
            if response.status != 204:
                self.send_header('Content-Type', response.content_type or 'application/json')
                self.send_header('Content-Length', str(len(response.body)))
            if self.close_connection:
                self.send_header('Connection', 'close')
            self.end_headers()
            if response.status == 204:
                return
            if applied.drip is None:
                self.wfile.write(response.body)
                return
            self.wfile.flush()
            step = applied.drip.chunk_size
            for start in range(0, len(response.body), step):
                if start and self.server.backend.stopping.wait(applied.drip.interval):
                    self.close_connection = True
                    return
                self.wfile.write(response.body[start:start + step])
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True


def connected(sock: socket.socket) -> bool:
    """False once the client has closed its side or reset the connection.

    Called while a request is being answered, when the client has nothing more
    to send: anything readable then is the end of the stream."""
    try:
        poller = select.poll()  # select() fails on descriptors above 1023
        poller.register(sock, select.POLLIN)
        if not poller.poll(0):
            return True
        return sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) != b''
    except BlockingIOError:
        return True
    except (OSError, ValueError):
        return False


# Connections the kernel completes before the accept loop takes them. A
# runner opens many at once when a batch comes (one for each of its threads
# that call the backend, about two per job it may hold): over the backlog
# (5 in socketserver) an attempt is dropped and the runner's kernel sends it
# again only a second later. A claim so came 0.85 s late, and its batch's
# wall grew by as much (3 batches in about 60 with 12 places).
LISTEN_BACKLOG = 128


class _HttpServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = LISTEN_BACKLOG
    backend: 'BackendServer'

    def __init__(self, address, backend: 'BackendServer'):
        self.backend = backend
        self._open: Set[socket.socket] = set()
        self._open_lock = threading.Lock()
        super().__init__(address, _Handler)

    def process_request(self, request, client_address):
        with self._open_lock:
            self._open.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request):
        with self._open_lock:
            self._open.discard(request)
        super().shutdown_request(request)

    def close_open_connections(self) -> None:
        """Idle keep-alive connections would otherwise hold handler threads after stop."""
        with self._open_lock:
            sockets = list(self._open)
        for sock in sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def handle_error(self, request, client_address):
        log.debug('connection from %s ended with an error', client_address[0], exc_info=True)


class BackendServer:
    """Serves a `Store` over HTTP on a thread of its own: `start()`, `stop()`, `join(timeout)`."""

    def __init__(self,
                 store: Store,
                 faults: FaultPlan,
                 *,
                 host: str = '127.0.0.1',
                 port: int = 0,
                 public_url: Optional[str] = None,
                 admin_token: Optional[str] = None):
        self.store = store
        self.faults = faults
        self.stopping = threading.Event()
        self.routes: List[wire.Route] = (RunnerApi(store).routes() +
                                         AdminApi(store, faults, admin_token).routes())
        self._public_url = public_url.rstrip('/') if public_url else None
        self._http = _HttpServer((host, port), self)
        # A short poll interval only bounds how long stop() waits for the accept loop.
        self._thread = threading.Thread(target=self._http.serve_forever,
                                        args=(0.05, ),
                                        name='localbackend-http',
                                        daemon=True)

    @property
    def address(self) -> tuple:
        return self._http.server_address[:2]

    @property
    def port(self) -> int:
        return self._http.server_address[1]

    @property
    def url(self) -> str:
        host, port = self.address
        if ':' in host:
            host = f'[{host}]'
        return f'http://{host}:{port}'

    def base_url(self, host_header: Optional[str]) -> str:
        """Where the caller reached us, so a code URL works from inside a container too."""
        if self._public_url:
            return self._public_url
        if host_header and _HOST_HEADER.match(host_header):
            return f'http://{host_header}'
        return self.url

    def start(self) -> None:
        self._thread.start()
        log.info('serving on %s', self.url)

    def stop(self) -> None:
        self.stopping.set()
        self.store.close()
        if self._thread.is_alive():
            self._http.shutdown()
        self._http.close_open_connections()
        self._http.server_close()

    def join(self, timeout: Optional[float] = None) -> None:
        self._thread.join(timeout)

    def __repr__(self) -> str:
        return f'BackendServer(url={self.url!r})'
