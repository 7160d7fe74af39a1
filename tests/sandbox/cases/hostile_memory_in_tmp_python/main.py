# /tmp is small (4 MiB): files there are no way round the memory limit.
with open("/tmp/keep", "wb") as f:
    for _ in range(100):
        f.write(b"x" * (1 << 20))
        f.flush()
print("kept")
