"""HTTP sessions whose requests another thread can cut short.

A long poll or a slow download holds a socket read for up to its read
timeout, and `requests` has no way to cancel it. When the runner stops, the
poller must let go at once: a long poll left open after the process is gone
may still hand out a job nobody will report (an attempt spent at lease
expiry), and a slow-drip download would hold its claim. `Interrupter` keeps
the connections its sessions open; `interrupt()` shuts their sockets down,
which wakes any blocked read, and every later connection is shut at birth.
"""
import socket
import threading
import weakref

import requests
import requests.adapters
import urllib3.connection
import urllib3.connectionpool


class Interrupted(Exception):
    """Stop was requested while waiting for a lock or a download."""


class Interrupter:

    def __init__(self):
        self._lock = threading.Lock()
        self._connections: 'weakref.WeakSet' = weakref.WeakSet()
        self._interrupted = False

    def session(self) -> requests.Session:
        session = requests.Session()
        adapter = _Adapter(self)
        session.mount('http://', adapter)
        session.mount('https://', adapter)
        return session

    def interrupt(self) -> None:
        with self._lock:
            self._interrupted = True
            connections = list(self._connections)
        for connection in connections:
            _shut(connection)

    def _connected(self, connection) -> None:
        with self._lock:
            self._connections.add(connection)
            interrupted = self._interrupted
        if interrupted:
            _shut(connection)


def _shut(connection) -> None:
    sock = getattr(connection, 'sock', None)
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass  # already closed


class _Adapter(requests.adapters.HTTPAdapter):

    def __init__(self, interrupter: Interrupter):
        self._interrupter = interrupter
        super().__init__()

    def init_poolmanager(self, *args, **kwargs):
        super().init_poolmanager(*args, **kwargs)
        interrupter = self._interrupter

        class Connection(urllib3.connection.HTTPConnection):

            def connect(self):
                super().connect()
                interrupter._connected(self)

        class SecureConnection(urllib3.connection.HTTPSConnection):

            def connect(self):
                super().connect()
                interrupter._connected(self)

        class Pool(urllib3.connectionpool.HTTPConnectionPool):
            ConnectionCls = Connection

        class SecurePool(urllib3.connectionpool.HTTPSConnectionPool):
            ConnectionCls = SecureConnection

        self.poolmanager.pool_classes_by_scheme = {'http': Pool, 'https': SecurePool}
