"""Folders the sandbox lets go of, removed off the paths runs wait on.

A run can make the removal of its job's folder slow: every name it looks up
there and does not find leaves an entry in the kernel's directory cache under
that folder, and removing the folder frees them one by one (seconds, for a
case that spends its time on lookups). Some removals come where a run waits:
a reset for a run that takes over another job's idle container, or a fresh
run's new job folder (both holding a core), and a container's destruction
(the pool's keeper, an acquire that makes room). Those folders are renamed
into this folder at once (a rename, whatever the folder holds) and removed
by a thread of its own. A container put back after its job still removes
its job's folder at its reset, on no run's path: what that frees is charged
to the container, and the next job in it must not pay for reclaiming it.

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

    def __init__(self, folder: pathlib.Path, max_pending: int):
        """`max_pending`: folders thrown and not removed yet past which a
        throw removes at once (memory: what a folder's removal frees is
        held until then)."""
        self.folder = folder
        self._max_pending = max_pending
        self._cond = threading.Condition()
        self._thrown: List[pathlib.Path] = []  # renamed here, not removed yet
        self._stopping = False
        self._thread = threading.Thread(target=self._remove_thrown,
                                        name='sandbox-trash',
                                        daemon=True)

    def throw(self, path: pathlib.Path) -> None:
        """`path` (a folder) is gone from its place when this returns; its
        removal comes later. It is removed now where it cannot be renamed
        here: the trash not started, its folder gone (the runner's folder
        removed at exit), or `max_pending` folders waiting. Whatever is
        thrown once the remover has ended stays here, and goes with the
        runner's folder (Leftovers.remove_own, or the next start's removal
        of a dead runner's)."""
        with self._cond:
            full = len(self._thrown) >= self._max_pending
        if full or not self._set_aside(path):
            shutil.rmtree(path, ignore_errors=True)

    def _set_aside(self, path: pathlib.Path) -> bool:
        # Into a folder of its own: removing a folder locks the folder it is
        # in for as long as that takes, and a rename into that folder (the
        # next throw) would wait for it.
        aside = self.folder / uuid.uuid4().hex
        try:
            aside.mkdir(mode=0o700)
            os.rename(path, aside / path.name)
        except OSError as exc:
            if not isinstance(exc, FileNotFoundError):  # no trash, or no folder: no news
                log.warning('could not set %s aside for removal (%s): removed now', path.name,
                            type(exc).__name__)
            shutil.rmtree(aside, ignore_errors=True)
            return False
        with self._cond:
            self._thrown.append(aside)
            self._cond.notify()
        return True

    def start(self) -> None:
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
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
