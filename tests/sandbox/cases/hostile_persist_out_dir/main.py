# Prints "fresh" unless an earlier case left a mark in a place that is not wiped.
import os
places = ["/out/mark", "/work/mark", "/tmp/mark", "/dev/mqueue/mark", "/dev/shm/mark", "mark"]
print("persisted" if any(os.path.exists(p) for p in places) else "fresh")
for p in places:
    try:
        open(p, "w").write("x")
    except OSError:
        pass
