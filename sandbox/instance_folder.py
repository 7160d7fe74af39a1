"""A folder of this process's own below a root that several runners may share.

The folder is alive while its process holds a lock on it (an flock on the
folder itself: deleting files in it changes nothing, and the lock goes with
the process, however it ends). A starting runner removes the folders of dead
processes, never a live one's. Where locks do not work (some network
filesystems) nothing is ever taken for dead.
"""
import fcntl
import logging
import os
import pathlib
import shutil
import uuid
from typing import List, Optional

log = logging.getLogger(__name__)


class InstanceFolder:

    def __init__(self, root: pathlib.Path, name: Optional[str] = None):
        self.root = pathlib.Path(root).absolute()
        self.path = self.root / (name or uuid.uuid4().hex[:12])
        self._fd: Optional[int] = None
        self.locks_work = False

    def claim(self) -> None:
        """Make the folder and take its lock. It is made under a hidden name
        and renamed once locked, so another process scanning the root never
        takes a folder being born for a dead one."""
        self.root.mkdir(parents=True, exist_ok=True)
        birth = self.root / f'.new-{self.path.name}'
        birth.mkdir()
        self._fd = os.open(birth, os.O_RDONLY | os.O_DIRECTORY)
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            # A second open of the folder must see the lock; where flock is
            # not enforced it would not.
            self.locks_work = held(birth)
        except OSError:
            self.locks_work = False
        os.rename(birth, self.path)

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def remove_dead_siblings(self) -> List[pathlib.Path]:
        """Remove the folders of processes gone without cleaning up; returns them."""
        if not self.locks_work:
            return []
        dead = [
            folder for folder in self.root.iterdir()
            if folder != self.path and not folder.name.startswith('.') and not held(folder)
        ]
        for folder in dead:
            shutil.rmtree(folder, ignore_errors=True)
        return dead


def held(folder: pathlib.Path) -> bool:
    """Whether a live process holds the lock of this instance folder. When it
    cannot be told (an odd filesystem), the answer is yes: never take a live
    runner's folder for a dead one."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except FileNotFoundError:
        return False
    except OSError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False  # nobody holds it (released with the descriptor)
    except OSError:
        return True  # BlockingIOError: held; anything else: cannot tell
    finally:
        os.close(fd)
