# Leaves as much behind as it can: files and nested folders until every
# writable place is out of room or inodes. The wipe after it is bounded by the
# inode caps, and the second run of this case (same sandbox) must start clean.
import os

made = 0
for place in ("/tmp", "/dev/shm", ".", "/work"):
    try:
        if os.listdir(place) and place in ("/tmp", "/dev/shm"):
            print("not clean:", place)
    except OSError:
        pass
    d = place
    try:
        for i in range(100000):
            os.mkdir(f"{d}/d{i}")
            open(f"{d}/d{i}/f", "w").close()
            made += 1
            if i % 50 == 49:
                d = f"{d}/d{i}"
    except OSError:
        pass
print("done")
