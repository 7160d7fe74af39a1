import os
n = 0
try:
    while True:
        with open(f"/tmp/fill{n}", "wb") as f:
            f.write(b"x" * (1 << 20))
        n += 1
except OSError:
    pass
print("full")
