"""An AlgoJudge job made ready to judge (docs/algojudge.md §6, §10): its
package fetched once per checksum and kept, its configuration merged, the
submission admitted or refused, and its folder laid out as the dispatcher
takes every job: `src/main.<ext>`, `testdata/TTCC.in|out` (a group is a
task, its tests the cases, in judging order) and the checker's folder.

What cannot be judged here raises NotJudgeable (an infrastructure failure,
never a score); a submission refused before its build (PolicyViolation, a
wrong extension) comes back as a `Prepared` with its refusal and no job.
"""
import contextlib
import dataclasses
import hashlib
import json
import logging
import math
import os
import pathlib
import re
import shutil
import threading
import uuid
from typing import Iterator, Optional, Tuple

from dispatcher.job import MAX_CASES_PER_TASK, MAX_TASKS, Job, TaskMeta, case_file
from runner.backend.algojudge.client import AlgoJudgeClient, DigestMismatch
from runner.backend.algojudge.wire import Claimed
from runner.backend.http_session import TooLarge
from runner.prep.job_folders import JobFolders
from runner.prep.locks import Locks, acquire_within
from runner.prep.zips import ZipRejected, extract_package
from sandbox.job import CheckerConvention, Comparison, Judging, ProblemProgram, Role
from standard_io import config as standard_config
from standard_io import package
from standard_io.admission import MAX_SOURCE_BYTES, Refusal, admit
from standard_io.config import Config
from standard_io.errors import NotJudgeable
from standard_io.languages import Toolchain, toolchain

log = logging.getLogger(__name__)

MAX_PACKAGE_BYTES = 512 * 1024 * 1024
DOWNLOAD_DEADLINE_SEC = 600
LOCK_WAIT_SEC = 900
_NAMES_FILE = 'names.json'  # written last: a package folder without it is not trusted
_FOLDER_ID = re.compile(r'[A-Za-z0-9_-]{1,64}')
_SHA256 = re.compile(r'[0-9a-f]{64}')
# Kept unpacked, the most recently used: at most this many, in this many bytes.
MAX_PACKAGES = 64
MAX_CACHE_BYTES = 4 * 1024**3
_BYTES_FILE = 'bytes'  # what its files hold, written before the names


@dataclasses.dataclass(frozen=True)
class Prepared:
    config: Config
    tests: Tuple[package.Test, ...]
    toolchain: Optional[Toolchain]
    job: Optional[Job]  # None: refused before a build
    refusal: Optional[Refusal] = None


class PackageCache:
    """Packages by checksum, below `root`: each fetched once, whatever the
    jobs and runners preparing it at once (a lock per checksum)."""

    def __init__(self, root: pathlib.Path, client: AlgoJudgeClient, locks: Locks):
        self._root = pathlib.Path(root)
        self._client = client
        self._locks = locks

    @contextlib.contextmanager
    def using(self, file_id: str, sha256: str,
              stop: threading.Event) -> Iterator[Tuple[pathlib.Path, Tuple[str, ...]]]:
        """The package's folder and its file names, for the block: its lock
        is held meanwhile, so no eviction removes what the block reads (a
        job's folder keeps links to the files it took)."""
        folder = self._root / sha256
        with self._held(sha256, stop):
            names = _read_names(folder)
            if names is None:
                names = self._fetch(file_id, sha256, folder, stop)
            else:
                os.utime(folder / _NAMES_FILE)  # used now: the last to be evicted
            yield folder / 'files', names

    def _fetch(self, file_id: str, sha256: str, folder: pathlib.Path,
               stop: threading.Event) -> Tuple[str, ...]:
        log.info('downloading package %s', sha256[:12])
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        archive = folder / f'package-{uuid.uuid4().hex[:8]}.zip'
        try:
            self._client.download(file_id,
                                  sha256,
                                  archive,
                                  max_bytes=MAX_PACKAGE_BYTES,
                                  deadline_sec=DOWNLOAD_DEADLINE_SEC,
                                  stop=stop)
            names = extract_package(archive,
                                    folder / 'files',
                                    name_ok=package.entry_name_ok,
                                    max_entry_bytes=package.MAX_ENTRY_BYTES,
                                    max_total_bytes=package.MAX_TOTAL_BYTES,
                                    max_expansion=package.MAX_EXPANSION)
        except DigestMismatch:
            shutil.rmtree(folder, ignore_errors=True)
            raise NotJudgeable('the package does not match its SHA-256') from None
        except TooLarge:
            shutil.rmtree(folder, ignore_errors=True)
            raise NotJudgeable(f'the package is over {MAX_PACKAGE_BYTES} bytes') from None
        except ZipRejected as exc:
            shutil.rmtree(folder, ignore_errors=True)
            raise NotJudgeable(str(exc)) from None
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        finally:
            archive.unlink(missing_ok=True)
        (folder / _BYTES_FILE).write_text(str(_files_bytes(folder / 'files')))
        (folder / _NAMES_FILE).write_text(json.dumps(sorted(names)))
        self._evict(keep=folder)
        return tuple(sorted(names))

    def _evict(self, keep: pathlib.Path) -> None:
        """Beyond MAX_PACKAGES or MAX_CACHE_BYTES, the least recently used
        go, each under its own lock: one a preparation is using (holding its
        lock) stays, and goes at a later eviction."""
        kept = sorted((p for p in self._root.iterdir() if p.is_dir() and p != keep),
                      key=lambda p: _last_used(p),
                      reverse=True)
        count, held_bytes = 1, _recorded_bytes(keep)
        for old in kept:
            size = _recorded_bytes(old)
            fits = count < MAX_PACKAGES and held_bytes + size <= MAX_CACHE_BYTES
            if fits or not self._remove(old):  # one in use stays, and counts
                count, held_bytes = count + 1, held_bytes + size

    def _remove(self, old: pathlib.Path) -> bool:
        """`old` removed under its lock; False when its lock is not free (in use)."""
        lock = self._locks.lock(old.name) if _SHA256.fullmatch(old.name) else None
        if lock is None or not lock.acquire(0):
            return False
        try:
            # Its names first: a removal cut short leaves a folder that is
            # fetched again, never one that lacks some of its files.
            (old / _NAMES_FILE).unlink(missing_ok=True)
            shutil.rmtree(old, ignore_errors=True)
        finally:
            lock.release()
        return True

    @contextlib.contextmanager
    def _held(self, sha256: str, stop: threading.Event) -> Iterator[None]:
        lock = self._locks.lock(sha256)
        if not acquire_within(lock, LOCK_WAIT_SEC, stop, 'a package\'s lock'):
            raise NotJudgeable(f'package {sha256[:12]}: its lock was not free within '
                               f'{LOCK_WAIT_SEC} s')
        try:
            yield
        finally:
            lock.release()


class Preparer:

    def __init__(self, client: AlgoJudgeClient, packages: PackageCache, folders: JobFolders):
        self._client = client
        self._packages = packages
        self._folders = folders

    def prepare(self, claimed: Claimed, stop: threading.Event) -> Prepared:
        if claimed.defect is not None:
            raise NotJudgeable(claimed.defect)
        # The package is read within `using` (its lock held, so not evicted
        # meanwhile), the source downloaded after: a slow download holds up
        # no other preparation of the package.
        with self._packages.using(claimed.package_file_id, claimed.package_sha256,
                                  stop) as (files, names):
            try:
                config_yml = (files / package.CONFIG_NAME).read_bytes()
            except FileNotFoundError:
                raise NotJudgeable(f'package: no {package.CONFIG_NAME}') from None
            config = standard_config.load(config_yml, claimed.config)
            if config.interactor is not None:
                raise NotJudgeable(
                    'interactive standard-io@1 problems are not judged by this runner')
            tests = package.judging_order(names, config)
            source = claimed.source
            admitted = admit(config, claimed.language, source.file_name, source.size_bytes)
            if isinstance(admitted, Refusal):
                return Prepared(config, tests, admitted.toolchain, None, admitted)
            job_dir = self._folders.create(_folder_id(claimed.job_id))
            try:
                job = self._lay_out(claimed, config, tests, admitted, files, names, job_dir)
            except BaseException:
                self._folders.remove(job_dir)
                raise
        try:
            self._download_source(claimed, admitted, job_dir, stop)
        except BaseException:
            self._folders.remove(job_dir)
            raise
        return Prepared(config, tests, admitted, job)

    def _download_source(self, claimed: Claimed, chosen: Toolchain, job_dir: pathlib.Path,
                         stop: threading.Event) -> None:
        src = job_dir / 'src'
        src.mkdir()
        main = src / chosen.language.source_name
        try:
            size = self._client.download(claimed.source.file_id,
                                         claimed.source.sha256,
                                         main,
                                         max_bytes=MAX_SOURCE_BYTES,
                                         deadline_sec=DOWNLOAD_DEADLINE_SEC,
                                         stop=stop)
        except DigestMismatch:
            raise NotJudgeable('the source file does not match its SHA-256') from None
        except TooLarge:
            raise NotJudgeable('the source file is larger than the job says') from None
        if size != claimed.source.size_bytes:
            raise NotJudgeable('the source file is not the size the job says')

    def _lay_out(self, claimed: Claimed, config: Config, tests: Tuple[package.Test,
                                                                      ...], chosen: Toolchain,
                 files: pathlib.Path, names: Tuple[str, ...], job_dir: pathlib.Path) -> Job:
        """The job's testdata and checker, from the package's files."""
        if len(config.groups) > MAX_TASKS:
            raise NotJudgeable(f'config: more than {MAX_TASKS} groups')
        testdata = job_dir / 'testdata'
        testdata.mkdir()
        tasks = []
        for index, group in enumerate(config.groups):
            mine = [t for t in tests if t.group == group.group]
            if len(mine) > MAX_CASES_PER_TASK:
                raise NotJudgeable(f'group {group.group}: more than {MAX_CASES_PER_TASK} tests')
            for case, test in enumerate(mine):
                _link(files / test.input_name, testdata / case_file(index, case, 'in'))
                answer = testdata / case_file(index, case, 'out')
                if test.answer_name is None:
                    answer.write_bytes(b'')  # a checker judges without one
                else:
                    _link(files / test.answer_name, answer)
            limits = config.test_limits(chosen, group)
            tasks.append(
                TaskMeta(task_score=group.points,
                         memory_limit_kb=math.ceil(limits.memory_bytes / 1024),
                         time_limit_ms=limits.time_ms,
                         case_count=len(mine)))
        checker = None
        if config.checker is not None:
            checker = _checker(config, files, names, job_dir)
        return Job(job_id=claimed.job_id,
                   submission_id=claimed.submission_id,
                   problem_id=0,
                   language=chosen.language,
                   tasks=tuple(tasks),
                   job_dir=job_dir,
                   problem_program=checker,
                   judging=Judging(Comparison.TOKENS, CheckerConvention.SIO2, chosen.compile_flags))


def _checker(config: Config, files: pathlib.Path, names: Tuple[str, ...],
             job_dir: pathlib.Path) -> ProblemProgram:
    """The checker's folder of the package, its source renamed as the
    sandbox builds a checker (`checker.<ext>`)."""
    ref = config.checker
    source = package.program_source(names, 'checker', ref.source)
    built_with = toolchain(ref.language)
    if not built_with.fits(source):
        raise NotJudgeable(f'the checker {source!r} is not a {built_with.family} source')
    folder = job_dir / 'checker'
    shutil.copytree(files / 'checker', folder, symlinks=True)
    wanted = folder / Role.CHECKER.source_name(built_with.language)
    given = job_dir / source
    if given != wanted:
        if wanted.exists():
            raise NotJudgeable(f'package: {wanted.name} beside the checker source {source!r}')
        given.rename(wanted)
    return ProblemProgram(Role.CHECKER, built_with.language, folder, built_with.compile_flags)


def _link(source: pathlib.Path, dest: pathlib.Path) -> None:
    try:
        os.link(source, dest)
    except OSError:
        shutil.copyfile(source, dest)


def _files_bytes(files: pathlib.Path) -> int:
    return sum(path.stat().st_size for path in files.rglob('*') if path.is_file())


def _recorded_bytes(folder: pathlib.Path) -> int:
    """What a kept package holds: as recorded, else (kept before sizes were
    recorded, or half made) what its files hold now."""
    try:
        return int((folder / _BYTES_FILE).read_text())
    except (OSError, ValueError):
        try:
            return _files_bytes(folder / 'files')
        except OSError:
            return 0  # being removed


def _last_used(folder: pathlib.Path) -> float:
    try:
        return (folder / _NAMES_FILE).stat().st_mtime
    except OSError:
        return 0.0  # half made, or being removed


def _read_names(folder: pathlib.Path) -> Optional[Tuple[str, ...]]:
    try:
        return tuple(json.loads((folder / _NAMES_FILE).read_text()))
    except (OSError, ValueError):
        return None


def _folder_id(job_id: str) -> str:
    """A job folder's name: the id itself when it is plain, else a digest of it."""
    if _FOLDER_ID.fullmatch(job_id):
        return job_id
    return hashlib.sha256(job_id.encode()).hexdigest()[:32]
