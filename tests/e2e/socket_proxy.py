"""A unix socket in front of the Docker engine's, which a test can cut and restore.

While cut, every open connection is shut and every new one is closed at
once: to the runner the engine is unreachable. Sandboxes already running are
not touched (the supervisor talks to the runner over a socket of its own).
"""
import pathlib
import socket
import threading
from typing import List

ENGINE_SOCKET = '/var/run/docker.sock'


class SocketProxy:

    def __init__(self, path: pathlib.Path, target: str = ENGINE_SOCKET):
        self.path = path
        self.url = f'unix://{path}'
        self._target = target
        self._lock = threading.Lock()
        self._cut = False
        self._open: List[socket.socket] = []
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(str(path))
        self._listener.listen(64)
        self._closed = False
        threading.Thread(target=self._accept, name='socket-proxy', daemon=True).start()

    def cut(self) -> None:
        with self._lock:
            self._cut = True
            doomed, self._open = self._open, []
        for sock in doomed:
            _shut(sock)

    def restore(self) -> None:
        with self._lock:
            self._cut = False

    def close(self) -> None:
        self._closed = True
        self.cut()
        _shut(self._listener)
        self._listener.close()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                cut = self._cut
            if cut:
                client.close()
                continue
            try:
                engine = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                engine.connect(self._target)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._open += [client, engine]
            for a, b in ((client, engine), (engine, client)):
                threading.Thread(target=_pump, args=(a, b), daemon=True).start()


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            sink.sendall(data)
    except OSError:
        pass
    finally:
        _shut(sink)


def _shut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
