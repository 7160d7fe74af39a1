# The same from Python: socket buffers as memory outside the resident set.
import socket

pairs = [socket.socketpair() for _ in range(40)]
kept = 0
for a, b in pairs:
    a.setblocking(False)
    try:
        while True:
            kept += a.send(b"x" * 65536)
    except BlockingIOError:
        pass
print(kept >> 20)
