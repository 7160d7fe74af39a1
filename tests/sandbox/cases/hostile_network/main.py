import socket
results = []
try:
    socket.create_connection(("1.1.1.1", 80), timeout=2)
    results.append("tcp connected")
except OSError:
    results.append("tcp blocked")
try:
    socket.gethostbyname("example.com")
    results.append("dns resolved")
except OSError:
    results.append("dns blocked")
try:
    socket.create_connection(("127.0.0.1", 2375), timeout=2)
    results.append("local connected")
except OSError:
    results.append("local blocked")
print("\n".join(results))
