"""Job folders: one per claim generation, removed or backed up when reported.

A re-claim of the same job_id gets a folder of its own: an older
generation's sandbox may still be using its files, so a newer claim never
deletes or overwrites them.
"""
import logging
import pathlib
import shutil
import uuid

log = logging.getLogger(__name__)


class JobFolders:

    def __init__(self, submission_dir: pathlib.Path, backup_dir: pathlib.Path):
        self._submission_dir = pathlib.Path(submission_dir).absolute()
        self._backup_dir = pathlib.Path(backup_dir).absolute()

    def create(self, job_id: str) -> pathlib.Path:
        """A new, empty folder for one claim generation of `job_id`
        (a wire-validated id: no separators, no dots)."""
        self._submission_dir.mkdir(parents=True, exist_ok=True)
        job_dir = self._submission_dir / f'{job_id}.{uuid.uuid4().hex[:12]}'
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
        if job_dir.parent != self._submission_dir or job_dir.name in ('', '.', '..'):
            raise ValueError(f'{job_dir} is not a job folder of {self._submission_dir}')
        return job_dir


def _ignore_missing(function, path, exc_info) -> None:
    if not isinstance(exc_info[1], FileNotFoundError):
        raise exc_info[1]
