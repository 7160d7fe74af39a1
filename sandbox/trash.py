"""Folders the sandbox lets go of, removed off the paths runs wait on.

A run can make the removal of its job's folder slow: every name it looks up
there and does not find leaves an entry in the kernel's directory cache under
that folder, and removing the folder frees them one by one (seconds, for a
case that spends its time on lookups). That removal came at a container's
reset, which a run may wait for holding a core (taking over another job's
idle container), and at its destruction, which a run or the pool's keeper
waits for. So those folders are renamed into this folder at once (the same
file system: a rename, whatever the folder holds) and removed by a thread of
its own.

That thread keeps the runner's priority. At a lower one, the kernel would
keep it off the cores while the runs use them, and while it held the
interpreter's lock (shutil.rmtree's walk is Python) no thread of the runner
could go on: a claim, a report, a run's answer would all wait for it.
"""
import logging
import os
import pathlib
import shutil
import threading
import uuid
from typing import List, Optional

log = logging.getLogger(__name__)


class Trash:

    def __init__(self, folder: pathlib.Path):
        self.folder = folder
        self._cond = threading.Condition()
        self._thrown: List[pathlib.Path] = []  # renamed here, not removed yet
        self._stopping = False
        self._thread = threading.Thread(target=self._remove_thrown,
                                        name='sandbox-trash',
                                        daemon=True)

    def throw(self, path: pathlib.Path) -> None:
        """`path` (a folder) is gone from its place when this returns; its
        removal comes later. Where it cannot be renamed here, it is removed
        now. Whatever is thrown once the remover has ended stays here, and
        goes with the runner's folder (Leftovers.remove_own, or the next
        start's removal of a dead runner's)."""
        # Into a folder of its own: removing a folder locks the folder it is
        # in for as long as that takes, and a rename into that folder (the
        # next throw) would wait for it.
        aside = self.folder / uuid.uuid4().hex
        try:
            aside.mkdir(mode=0o700, parents=True)
            os.rename(path, aside / path.name)
        except OSError as exc:
            if not isinstance(exc, FileNotFoundError):  # (a folder already gone is no news)
                log.warning('could not set %s aside for removal (%s): removed now', path.name,
                            type(exc).__name__)
            shutil.rmtree(path, ignore_errors=True)
            shutil.rmtree(aside, ignore_errors=True)
            return
        with self._cond:
            self._thrown.append(aside)
            self._cond.notify()

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """The remover removes what was thrown until now, then ends."""
        with self._cond:
            self._stopping = True
            self._cond.notify()

    def join(self, timeout: Optional[float] = None) -> bool:
        """True when the remover has ended (or never started)."""
        if self._thread.ident is not None:
            self._thread.join(timeout)
        return not self._thread.is_alive()

    def _remove_thrown(self) -> None:
        while True:
            with self._cond:
                while not self._thrown and not self._stopping:
                    self._cond.wait()
                if not self._thrown:
                    return
                folder = self._thrown[0]
            shutil.rmtree(folder, ignore_errors=True)
            with self._cond:
                self._thrown.remove(folder)
