import os
import re
# Looks everywhere it can for answers: files named like testdata, the marker the
# judge puts in other cases' and other jobs' files, and the answer's own text.
MARKER = ("SECRET answer " + str(1230 + 4)).encode()  # not in this file
found = []
for top in ("/", "/proc/1/root", "/proc/1/cwd"):
    for root, dirs, files in os.walk(top):
        if root.startswith(("/proc", "/sys", "/dev")) and top == "/":
            dirs[:] = []
            continue
        for name in files:
            path = os.path.join(root, name)
            if re.fullmatch(r"[0-9]{4}\.(in|out)", name):
                found.append(path)
            try:
                with open(path, "rb") as f:
                    if MARKER in f.read(1 << 20):
                        found.append(path)
            except OSError:
                pass
for guess in ("../testdata", "../../testdata", "/box/../testdata", "/data"):
    if os.path.exists(guess):
        found.append(guess)
print("LEAK " + " ".join(found) if found else "clean")
