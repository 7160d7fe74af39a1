# A lock on a file of the image: the image's copy in memory is shared by
# every container, so jobs judged at the same time would see each other's
# locks (a channel between them). flock is refused, as record locks are.
import errno
import fcntl

with open("/usr/lib/python3.11/os.py", "rb") as image_file:
    try:
        fcntl.flock(image_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        print("locked")
    except OSError as exc:
        print("refused" if exc.errno == errno.ENOLCK else f"error {exc.errno}")
