"""Job folders: one per claim generation, removed or backed up when reported.

A re-claim of the same job_id gets a folder of its own: an older
generation's sandbox may still be using its files, so a newer claim never
deletes or overwrites them.

They live in a folder of this runner's own below SUBMISSION_DIR (several
runners may share a DATA_DIR), alive while the runner holds its lock: a
runner killed in the middle leaves its job folders, and the next start on the
same DATA_DIR removes them, never a live runner's.
"""
import logging
import pathlib
import shutil
import uuid
from typing import Optional

from sandbox.instance_folder import InstanceFolder

log = logging.getLogger(__name__)


class JobFolders:

    def __init__(self,
                 submission_dir: pathlib.Path,
                 backup_dir: pathlib.Path,
                 instance: Optional[str] = None):
        self._instance = InstanceFolder(submission_dir, instance)
        self._root = self._instance.path
        self._backup_dir = pathlib.Path(backup_dir).absolute()

    def start(self) -> None:
        """Take this runner's folder, and remove those of runners gone
        without cleaning up (a kill, a drain cut short)."""
        self._instance.claim()
        for dead in self._instance.remove_dead_siblings():
            log.info('removed the job folders a runner left when it ended: %s', dead)

    def close(self) -> None:
        """At exit: what is left is removed with the folder (a clean drain
        left nothing; anything else returns to the queue at lease expiry)."""
        shutil.rmtree(self._root, ignore_errors=True)
        self._instance.release()

    @property
    def root(self) -> pathlib.Path:
        """This runner's own folder, where its job folders are made."""
        return self._root

    def create(self, job_id: str) -> pathlib.Path:
        """A new, empty folder for one claim generation of `job_id`
        (a wire-validated id: no separators, no dots)."""
        self._root.mkdir(parents=True, exist_ok=True)
        job_dir = self._root / f'{job_id}.{uuid.uuid4().hex[:12]}'
        job_dir.mkdir()
        return job_dir

    def remove(self, job_dir: pathlib.Path) -> None:
        job_dir = self._own(job_dir)
        shutil.rmtree(job_dir, ignore_errors=False, onerror=_ignore_missing)

    def back_up(self, job_dir: pathlib.Path) -> pathlib.Path:
        """Moves the folder aside as evidence (a refused report, a report
        that could not be delivered); returns where it went."""
        job_dir = self._own(job_dir)
        self._backup_dir.mkdir(parents=True, exist_ok=True)
        dest = self._backup_dir / job_dir.name
        if dest.exists():
            dest = self._backup_dir / f'{job_dir.name}.{uuid.uuid4().hex[:6]}'
        shutil.move(str(job_dir), str(dest))
        log.info('kept %s in %s', job_dir.name, dest)
        return dest

    def _own(self, job_dir: pathlib.Path) -> pathlib.Path:
        # Finalizing deletes trees: only ever one of our own job folders.
        job_dir = pathlib.Path(job_dir).absolute()
        if job_dir.parent != self._root or job_dir.name in ('', '.', '..'):
            raise ValueError(f'{job_dir} is not a job folder of {self._root}')
        return job_dir


def _ignore_missing(function, path, exc_info) -> None:
    if not isinstance(exc_info[1], FileNotFoundError):
        raise exc_info[1]
