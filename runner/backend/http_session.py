"""HTTP sessions whose requests another thread can cut short.

A long poll or a slow download holds a socket read for up to its read
timeout, and `requests` has no way to cancel it. When the runner stops, a
slow-drip download must not hold its claim, and a backend must learn at once
that a long poll's caller is going. `Interrupter` keeps the connections its
sessions open; `interrupt()` shuts their sockets down, which wakes any
blocked read; `hang_up()` shuts only their sending side and lets a long
poll's answer (a job the backend leased it meanwhile) be read. Either way
no new request is sent, and every later connection is shut at birth.

Also what every protocol's client shares: the transport's errors, named
without a URL (a query string may carry a credential), bodies read in
bounded chunks, and the environment's proxy settings read once per host.
"""
import os
import re
import socket
import ssl
import threading
import time
import urllib.parse
import weakref
from typing import Callable, Dict, Optional, Tuple

import requests
import requests.adapters
import urllib3.connection
import urllib3.connectionpool
import urllib3.exceptions

_CHUNK_BYTES = 64 * 1024


class Interrupted(Exception):
    """Stop was requested while waiting for a lock or a download."""


class BackendError(Exception):
    """A backend call failed; the message is safe to log."""


class TransportError(BackendError):
    """No answer: connection refused, timeout, broken transfer."""


class DownloadError(BackendError):
    """A download went over its size or time bound."""


class TooLarge(DownloadError):
    """A body went over its size bound."""


class Interrupter:

    def __init__(self):
        self._lock = threading.Lock()
        self._sockets: 'weakref.WeakSet' = weakref.WeakSet()
        self._interrupted = False

    def session(self) -> requests.Session:
        session = _Session()
        adapter = _Adapter(self)
        session.mount('http://', adapter)
        session.mount('https://', adapter)
        return session

    def interrupt(self) -> None:
        """Wakes every read blocked on these sessions' sockets, from now on
        and, after ARRIVING_GRACE_SEC, now. The peer is told at once (each
        socket's sending side is shut): a backend holding a long poll then
        hands it no job. The grace is for one it handed out just before:
        cut, that answer would be lost and its job would wait for its lease
        to expire, spending an attempt; read, it goes back at once (abort,
        drain). A reader of a long body checks the stop between its reads."""
        with self._lock:
            self._interrupted = True
            sockets = list(self._sockets)
        for sock in sockets:
            _shut(sock, socket.SHUT_WR)
        # One timer for them all: starting a thread waits for it to run.
        timer = threading.Timer(ARRIVING_GRACE_SEC, _shut_all, [sockets])
        timer.daemon = True
        timer.start()

    def hang_up(self) -> None:
        """Tells the peer at once, as `interrupt` does (each socket's sending
        side is shut), but leaves every read to end as it would: for a long
        poll that a backend may answer with a job at any time until its wait
        is over. A backend that sees the hang-up ends it early; one that does
        not answers within the wait, and a job it leased meanwhile is read
        and handed back at once (abort, drain), never left to lease expiry.
        New requests are refused."""
        with self._lock:
            self._interrupted = True
            sockets = list(self._sockets)
        for sock in sockets:
            _shut(sock, socket.SHUT_WR)

    @property
    def stopped(self) -> bool:
        """Interrupted or hung up: no new request is sent."""
        with self._lock:
            return self._interrupted

    def _connected(self, sock: socket.socket) -> None:
        # The socket, not its connection: an answer sent with
        # `Connection: close` takes the socket along (the connection's is
        # None then), and urllib3 reconnects a closed connection object
        # with a new one.
        with self._lock:
            self._sockets.add(sock)
            interrupted = self._interrupted
        if interrupted:
            _shut(sock)


class _Session(requests.Session):
    """requests' Session, but the environment's proxies (HTTP_PROXY,
    HTTPS_PROXY, NO_PROXY) are read once per host, and its CA bundle
    (REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE) once, instead of at every call:
    with `trust_env` requests scans the environment and looks for
    ~/.netrc (a password-file lookup when HOME is unset) on each request,
    which in a profile under an exam's load was about a tenth of the
    runner's Python time. ~/.netrc is never read: the runner's calls carry
    their own credentials, and a file on the host must not add any to the
    code download."""

    def __init__(self):
        super().__init__()
        self.trust_env = False
        self._ca_bundle = os.environ.get('REQUESTS_CA_BUNDLE') or os.environ.get('CURL_CA_BUNDLE')
        self._proxies_by_origin: Dict[Tuple[str, str], Dict[str, str]] = {}

    def prepare_request(self, request: requests.Request) -> requests.PreparedRequest:
        """requests' own, without merging what the runner never sets on a
        session (params, auth, hooks) and without copying its cookie jar:
        requests merges each through typing.Protocol isinstance checks that
        Python 3.11 makes slow, about a fifth of a call's CPU in a profile.
        The session's headers and cookies apply as ever; anything else set
        takes requests' own way."""
        if self.params or self.auth or any(self.hooks.values()) or request.cookies or request.auth:
            return super().prepare_request(request)
        headers = requests.structures.CaseInsensitiveDict(self.headers)
        for key, value in (request.headers or {}).items():
            if value is None:
                headers.pop(key, None)
            else:
                headers[key] = value
        prepared = requests.PreparedRequest()
        prepared.prepare(
            method=request.method.upper(),
            url=request.url,
            files=request.files,
            data=request.data,
            json=request.json,
            headers=headers,
            # No query as '': requests encodes even an empty mapping
            # through two Protocol isinstance checks.
            params=request.params or '',
            cookies=self.cookies,
            hooks=request.hooks)
        return prepared

    def merge_environment_settings(self, url, proxies, stream, verify, cert):
        """requests' merge (the call's settings over the session's, a proxy
        set to None dropped), over the environment's proxies and CA bundle,
        without the Protocol isinstance checks requests' makes of each
        mapping."""
        if verify is True or verify is None:
            verify = self._ca_bundle or verify
        merged = {**self.proxies, **self._environ_proxies(url), **(proxies or {})}
        return {
            'proxies': {
                scheme: proxy
                for scheme, proxy in merged.items() if proxy is not None
            },
            'stream': self.stream if stream is None else stream,
            'verify': self.verify if verify is None else verify,
            'cert': self.cert if cert is None else cert,
        }

    def rebuild_proxies(self, prepared_request, proxies):
        # A redirect's target gets the environment's proxy for its own host:
        # without `trust_env` requests would only carry over the first
        # URL's (none when that host is in NO_PROXY, as a backend may be,
        # while the store it redirects a download to is not).
        proxies = dict(proxies or {})
        scheme = urllib.parse.urlsplit(prepared_request.url).scheme
        found = self._environ_proxies(prepared_request.url)
        proxy = found.get(scheme, found.get('all'))
        if proxy:
            proxies.setdefault(scheme, proxy)
        return super().rebuild_proxies(prepared_request, proxies)

    def _environ_proxies(self, url: str) -> Dict[str, str]:
        origin = tuple(urllib.parse.urlsplit(url)[:2])
        found = self._proxies_by_origin.get(origin)
        if found is None:
            found = self._proxies_by_origin[origin] = requests.utils.get_environ_proxies(url)
        return found


# A report's answer is a few bytes that come with its headers: one slower or
# larger than this is not waited for (its connection is closed instead).
DRAIN_BYTES = 64 * 1024
DRAIN_SEC = 2.0


def drain(response: requests.Response) -> None:
    """Reads what is left of a small answer nobody needs, so that its
    connection goes back to the pool: one closed with unread bytes cannot be
    used again, and a new connection for every report costs both sides a
    handshake (and the backend a thread, often).

    Only an answer without a body, or with a declared length within
    DRAIN_BYTES and no transfer coding, is read, raw (nothing decodes it):
    each read is then one socket read, given what is left of DRAIN_SEC as
    its timeout, so the whole drain is bounded. A chunked body's size lines
    and trailers, or a decoder's inner loop, would read on past any per-read
    timeout. Anything else, and an answer that fails or runs over, is left
    to be closed with its connection."""
    raw = response.raw
    sock = getattr(getattr(raw, 'connection', None), 'sock', None)
    if sock is None:
        return  # already back in the pool (nothing was left), or closed
    status = response.status_code
    declared = header_number(response.headers.get('Content-Length'))
    bodiless = status < 200 or status in (204, 304)
    if not bodiless and ('Transfer-Encoding' in response.headers or declared is None
                         or declared > DRAIN_BYTES):
        return
    deadline = time.monotonic() + DRAIN_SEC
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            # The pool sets the next request's timeout before it is sent.
            sock.settimeout(left)
            if not raw.read1(_CHUNK_BYTES, decode_content=False):
                return
    except (requests.RequestException, urllib3.exceptions.HTTPError, OSError):
        pass


# How long after a stop an answer on its way is still read: a backend that
# handed out a job as the stop came answers within it.
ARRIVING_GRACE_SEC = 0.5


def _shut(sock, how: int = socket.SHUT_RDWR) -> None:
    """Wakes every read blocked on `sock` (SHUT_RDWR). socket.socket's own
    shutdown: an SSL socket's would also drop its TLS state under a reader
    that is between its checks of it (a ValueError instead of an OSError)."""
    sock = _plain(sock)
    if sock is None:
        return
    try:
        socket.socket.shutdown(sock, how)
    except OSError:
        pass  # already closed


def _shut_all(sockets) -> None:
    for sock in sockets:
        _shut(sock)


def _plain(sock) -> Optional[socket.socket]:
    """The socket.socket below `sock`: TLS through an https proxy is
    urllib3's SSLTransport over the tunnel's socket."""
    for _ in range(3):
        if sock is None or isinstance(sock, socket.socket):
            break
        sock = getattr(sock, 'socket', None)
    return sock if isinstance(sock, socket.socket) else None


def _answered_on(sock, response):
    """`response`, knowing the socket it came on: a deadline must shut that
    socket, and not its connection, which may carry another call by then
    (or none, when the answer took the socket along)."""
    response.answered_on = sock
    return response


class _Adapter(requests.adapters.HTTPAdapter):

    def __init__(self, interrupter: Interrupter):
        self._interrupter = interrupter
        super().__init__()

    def send(self, request, *args, **kwargs):
        # Nothing new goes out once stopped: a request written to a pooled
        # socket already hung up would fail unseen and wait for an answer
        # to a request never sent.
        if self._interrupter.stopped:
            raise requests.exceptions.ConnectionError('the client was stopped')
        return super().send(request, *args, **kwargs)

    def init_poolmanager(self, *args, **kwargs):
        super().init_poolmanager(*args, **kwargs)
        interrupter = self._interrupter

        class Connection(urllib3.connection.HTTPConnection):

            def connect(self):
                super().connect()
                interrupter._connected(self.sock)

            def getresponse(self):
                return _answered_on(self.sock, super().getresponse())

        class SecureConnection(urllib3.connection.HTTPSConnection):

            def connect(self):
                super().connect()
                interrupter._connected(self.sock)

            def getresponse(self):
                return _answered_on(self.sock, super().getresponse())

        class Pool(urllib3.connectionpool.HTTPConnectionPool):
            ConnectionCls = Connection

        class SecurePool(urllib3.connectionpool.HTTPSConnectionPool):
            ConnectionCls = SecureConnection

        self._pool_classes = {'http': Pool, 'https': SecurePool}
        self.poolmanager.pool_classes_by_scheme = self._pool_classes

    def proxy_manager_for(self, proxy, **proxy_kwargs):
        # Through an HTTP(S) proxy too (requests keeps a manager per proxy):
        # a stop and a download's deadline must reach those sockets as well.
        # A SOCKS proxy's manager has connection classes of its own.
        manager = super().proxy_manager_for(proxy, **proxy_kwargs)
        if not proxy.lower().startswith('socks'):
            manager.pool_classes_by_scheme = self._pool_classes
        return manager


def header_number(value: Optional[str]) -> Optional[int]:
    """A header's count (Content-Length, Retry-After's seconds): ASCII
    digits alone, as HTTP writes them, else None. `str.isdigit` alone also
    takes '²', which `int` refuses: a header is the peer's to write."""
    text = (value or '').strip()
    if not (0 < len(text) <= 18 and text.isascii() and text.isdigit()):
        return None
    return int(text)


def bounded_chunks(response: requests.Response,
                   what: str,
                   max_bytes: int,
                   deadline_sec: float,
                   stop: Optional[threading.Event],
                   trust_declared: bool = True,
                   clock: Callable[[], float] = time.monotonic):
    """The body in chunks, bounded in size, total time and by stop; the
    chunks before the bound are yielded. A declared length over the bound
    is refused at once, unless `trust_declared` is off (the first part of
    the body is wanted anyway).

    The read timeout bounds each socket read, not the transfer: a
    slow-drip answer needs the deadline too."""
    declared = header_number(response.headers.get('Content-Length'))
    if trust_declared and declared is not None and declared > max_bytes:
        raise TooLarge(f'{what}: {declared} bytes is over the limit of {max_bytes}')
    deadline = clock() + deadline_sec
    expired = threading.Event()
    timer = _deadline_timer(response, deadline_sec, expired)
    size = 0
    try:
        while True:
            # read1: whatever one socket read brings (at most a chunk), so
            # a body dripping a byte at a time still comes back here to
            # meet its deadline. A stop also interrupts the socket.
            chunk = response.raw.read1(_CHUNK_BYTES, decode_content=True)
            if stop is not None and stop.is_set():
                raise Interrupted(f'{what}: stopped')
            if expired.is_set():
                # Its socket was shut: what came may be cut short.
                raise DownloadError(f'{what}: took longer than {deadline_sec:g} s')
            if not chunk:
                return
            if size + len(chunk) > max_bytes:
                yield chunk[:max_bytes - size]
                raise TooLarge(f'{what}: over the limit of {max_bytes} bytes')
            size += len(chunk)
            if clock() > deadline:
                raise DownloadError(f'{what}: took longer than {deadline_sec:g} s')
            yield chunk
    except (requests.RequestException, urllib3.exceptions.HTTPError, OSError) as exc:
        if stop is not None and stop.is_set():
            raise Interrupted(f'{what}: stopped') from None
        if expired.is_set():
            raise DownloadError(f'{what}: took longer than {deadline_sec:g} s') from None
        raise TransportError(f'{what}: {transport_kind(exc)}') from None
    finally:
        if timer is not None:
            timer.cancel()


class _Deadline:
    """Shuts the socket a body comes on at its deadline, and sets `expired`
    first, unless cancelled: once `cancel()` has returned it never shuts
    (the socket may carry another call's answer by then)."""

    def __init__(self, sock: socket.socket, deadline_sec: float, expired: threading.Event):
        self._sock = sock
        self._expired = expired
        self._lock = threading.Lock()
        self._done = False
        self._timer = threading.Timer(deadline_sec, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def cancel(self) -> None:
        with self._lock:
            self._done = True
        self._timer.cancel()

    def _expire(self) -> None:
        with self._lock:
            if self._done:
                return
            self._expired.set()
            _shut(self._sock)


def _deadline_timer(response: requests.Response, deadline_sec: float,
                    expired: threading.Event) -> Optional[_Deadline]:
    """For a chunked or encoded body, a timer that shuts its socket at the
    deadline (and sets `expired`): one read of such a body reads on (a
    chunk's size line and trailers, a decoder's input) past any per-read
    timeout and past the deadline's check between reads, so a body dripped
    inside one read would hold its claim for ever. A plain body's read is
    one socket read, bounded by the read timeout; it needs no timer."""
    headers = response.headers
    if 'Transfer-Encoding' not in headers and headers.get('Content-Encoding',
                                                          'identity').lower() == 'identity':
        return None
    if getattr(response.raw, 'connection', None) is None:
        return None  # already back in the pool: nothing is left to read
    sock = getattr(response.raw, 'answered_on', None)
    return None if sock is None else _Deadline(sock, deadline_sec, expired)


# What a request can raise besides requests' own failures: a header value
# that cannot be encoded (UnicodeEncodeError), a redirect's Location that
# cannot be parsed (urllib3's LocationParseError). Either is a call that
# failed, never a reason for a thread to end.
SEND_ERRORS = (requests.RequestException, ValueError, urllib3.exceptions.HTTPError)

# A token the runner sends as `Authorization: Bearer …`: printable ASCII,
# no space (RFC 6750's characters fit), or every call that carries it fails.
_HEADER_TOKEN = re.compile(r'[\x21-\x7e]{1,8192}')


def is_header_token(value: object) -> bool:
    return isinstance(value, str) and _HEADER_TOKEN.fullmatch(value) is not None


def send(session: requests.Session, method: str, url: str, **kwargs) -> requests.Response:
    """`session.request`, streamed, following redirects for a GET alone:
    requests resends a POST or PUT answered 301 to 303 as a GET or without
    its body, and what the redirect's target answers would pass for the
    call's own answer (a result lost, yet taken as accepted). Raises
    SEND_ERRORS."""
    return session.request(method, url, allow_redirects=method == 'GET', stream=True, **kwargs)


def transport_kind(exc: BaseException) -> str:
    """What kind of transport failure `exc` is, for a log line an operator
    can act on (never the URL: it may carry a query string)."""
    seen = []
    cause: Optional[BaseException] = exc
    while cause is not None and len(seen) < 10:
        seen.append(cause)
        cause = cause.__cause__ or cause.__context__ or next(
            (arg for arg in getattr(cause, 'args', ()) if isinstance(arg, BaseException)), None)
    names = [type(e).__name__ for e in seen]
    text = ' '.join(str(e) for e in seen[1:]).lower()
    if any(isinstance(e, (requests.exceptions.SSLError, ssl.SSLError)) for e in seen):
        kind = 'TLS failure'
    elif any(isinstance(e, socket.gaierror) for e in seen) or 'name or service not known' in text \
            or 'name resolution' in text or 'nodename nor servname' in text:
        kind = 'name resolution failed'
    elif any(isinstance(e, ConnectionRefusedError) for e in seen) or 'refused' in text:
        kind = 'connection refused'
    elif any(isinstance(e, (requests.exceptions.Timeout, socket.timeout)) for e in seen):
        kind = 'timed out'
    elif any(isinstance(e, ConnectionResetError) for e in seen) or 'reset' in text:
        kind = 'connection reset'
    elif isinstance(exc, ValueError):  # urllib3's LocationParseError is one too
        kind = 'the request could not be made'
    else:
        kind = 'connection failed'
    return f'{kind} ({names[0]})'
