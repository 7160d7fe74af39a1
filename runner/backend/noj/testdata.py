"""The testdata cache: one copy per problem, kept across jobs (protocol §7).

Layout under the root, per problem:

    <problem_id>/checksum   the layout of `data/` and the backend checksum it was
                            downloaded for
    <problem_id>/data/      TTCC.in, TTCC.out, chaos/..., checker/... or interactor/...
    <problem_id>/tmp-*/     a refresh in progress

The checksum file is the cache's only validity mark: it is removed before
`data/` is touched and written (atomically) only after `data/` is complete, so
a crash at any point leaves a cache that the next preparation refreshes
rather than uses. Every read and every refresh of a problem happens under
that problem's cross-process lock, so concurrent preparations download once
and a refresh never replaces files another preparation is copying.
"""
import contextlib
import json
import logging
import os
import pathlib
import shutil
import threading
import time
import uuid
from typing import Callable, Iterator, Optional, Sequence

from dispatcher.job import TaskMeta, case_file
from runner import metrics
from runner.backend.noj.client import BackendClient
from runner.prep.locks import Locks, acquire_within
from runner.prep.zips import extract_testdata
from sandbox.job import CASE_FOLDER, ProblemProgram, Role
from sandbox.languages import BUILD_NAMES, Language

log = logging.getLogger(__name__)

LOCK_WAIT_SEC = 30
DOWNLOAD_DEADLINE_SEC = 300
MAX_ZIP_BYTES = 1024**3
MAX_EXTRACTED_BYTES = 4 * 1024**3
# chaos/, checker/ and interactor/ are copied into every job (and the checker
# or interactor built from its copy): bounded apart from the cases, which are
# only read.
MAX_PROBLEM_FILES_BYTES = 64 * 1024**2


class TestdataError(Exception):
    """The problem's testdata cannot serve this job; the message says why."""


class LockTimeout(TestdataError):
    pass


class TestdataCache:

    def __init__(self,
                 root: pathlib.Path,
                 client: BackendClient,
                 locks: Locks,
                 *,
                 lock_wait_sec: float = LOCK_WAIT_SEC,
                 clock: Callable[[], float] = time.monotonic):
        self._root = pathlib.Path(root)
        self._client = client
        self._locks = locks
        self._lock_wait_sec = lock_wait_sec
        self._clock = clock

    def install(self,
                problem_id: int,
                tasks: Sequence[TaskMeta],
                testdata_dir: pathlib.Path,
                source_dir: pathlib.Path,
                stop: threading.Event,
                program_root: Optional[pathlib.Path] = None) -> Optional[ProblemProgram]:
        """Copies the cases of `tasks` into `testdata_dir`, the `chaos/` files
        into `source_dir` and the `checker/` or `interactor/` files into a
        folder of that name below `program_root`, refreshing the cache first
        when the backend's checksum differs from the cached one. The
        problem's checker or interactor, or None without one."""
        # Asked before the download, never after: if the testdata changes in
        # between, the cache is marked older than its data and is refreshed
        # again next time, never the other way round.
        checksum = self._client.testdata_checksum(problem_id)
        problem_dir = self._root / str(int(problem_id))
        with self._held(problem_id, stop):
            if _read_mark(problem_dir) != checksum:
                metrics.TESTDATA_MISSES.inc()
                self._refresh(problem_id, problem_dir, checksum, stop)
            else:
                metrics.TESTDATA_HITS.inc()
            data = problem_dir / 'data'
            program = _problem_program(problem_id, data, program_root)
            _copy_cases(problem_id,
                        data,
                        tasks,
                        testdata_dir,
                        answers_needed=program is None or program.role is Role.CHECKER)
            _copy_chaos(problem_id, data, source_dir)
            if program is not None and program_root is not None:
                _copy_tree(problem_id, data / program.role.value, program.source_dir)
            return program

    @contextlib.contextmanager
    def _held(self, problem_id: int, stop: threading.Event) -> Iterator[None]:
        lock = self._locks.lock(problem_id)
        if not lock.acquire(0):
            log.info('testdata of problem %d is being prepared elsewhere; waiting', problem_id)
            if not acquire_within(lock,
                                  self._lock_wait_sec,
                                  stop,
                                  f'the testdata lock of problem {problem_id}',
                                  clock=self._clock):
                raise LockTimeout(f'testdata lock of problem {problem_id} not acquired within '
                                  f'{self._lock_wait_sec:g} s')
        try:
            yield
        finally:
            lock.release()

    def _refresh(self, problem_id: int, problem_dir: pathlib.Path, checksum: str,
                 stop: threading.Event) -> None:
        log.info('downloading testdata of problem %d', problem_id)
        problem_dir.mkdir(parents=True, exist_ok=True)
        # From here on, data/ is not trusted until the new mark is written.
        (problem_dir / 'checksum').unlink(missing_ok=True)
        for leftover in problem_dir.glob('tmp-*'):
            shutil.rmtree(leftover, ignore_errors=True)  # a crashed refresh's
        tmp = problem_dir / f'tmp-{uuid.uuid4().hex[:12]}'
        tmp.mkdir()
        try:
            archive = tmp / 'testdata.zip'
            size = self._client.download_testdata(problem_id,
                                                  archive,
                                                  max_bytes=MAX_ZIP_BYTES,
                                                  deadline_sec=DOWNLOAD_DEADLINE_SEC,
                                                  stop=stop)
            metrics.TESTDATA_BYTES.inc(size)
            extract_testdata(archive, tmp / 'data', MAX_EXTRACTED_BYTES)
            shutil.rmtree(problem_dir / 'data', ignore_errors=True)
            os.rename(tmp / 'data', problem_dir / 'data')
            _write_mark(problem_dir, checksum)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


# What `data/` holds, written before the checksum: a cache written by a
# runner that kept less of the zip (before checker/ and interactor/ were
# kept, they were dropped) is stale whatever its checksum, or its problems
# would be judged without them.
LAYOUT = 'layout 3: cases, chaos/, checker/, interactor/'


def _read_mark(problem_dir: pathlib.Path) -> str:
    """The checksum `data/` was downloaded for, '' when unknown or of another layout."""
    try:
        layout, _, written = (problem_dir / 'checksum').read_text(encoding='ascii').partition('\n')
        checksum = json.loads(written)
    except (FileNotFoundError, ValueError):
        return ''  # missing, or written before the checksum was kept as JSON
    return checksum if layout == LAYOUT and isinstance(checksum, str) else ''


def _write_mark(problem_dir: pathlib.Path, checksum: str) -> None:
    # As JSON (ASCII): the backend's checksum is any string, a carriage
    # return or a lone surrogate included, and must read back the same.
    tmp = problem_dir / f'checksum.{uuid.uuid4().hex[:12]}'
    with open(tmp, 'w', encoding='ascii') as out:
        out.write(f'{LAYOUT}\n{json.dumps(checksum)}')
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, problem_dir / 'checksum')


def _copy_cases(problem_id: int, data: pathlib.Path, tasks: Sequence[TaskMeta],
                testdata_dir: pathlib.Path, answers_needed: bool) -> None:
    """`answers_needed` False (an interactive problem): a case without its
    answer file gets an empty one."""
    for task_index, task in enumerate(tasks):
        for case_index in range(task.case_count):
            for suffix in ('in', 'out'):
                name = case_file(task_index, case_index, suffix)
                source = data / name
                if source.is_file():
                    _link_or_copy(source, testdata_dir / name)
                elif suffix == 'out' and not answers_needed:
                    (testdata_dir / name).write_bytes(b'')
                else:
                    raise TestdataError(f'testdata of problem {problem_id} has no {name}: '
                                        f'the payload\'s case counts do not match it')


def _problem_program(problem_id: int, data: pathlib.Path,
                     program_root: Optional[pathlib.Path]) -> Optional[ProblemProgram]:
    """`checker/` or `interactor/` (not both) holds one source,
    `<role>.c`, `<role>.cpp` or `<role>.py`, and what it includes (a problem
    setter's `testlib.h`). A layout the runner cannot build makes the
    testdata unusable: refused, saying why."""
    roles = [role for role in Role if (data / role.value).is_dir()]
    if not roles:
        return None
    where = f'testdata of problem {problem_id}'
    if len(roles) > 1:
        raise TestdataError(f'{where} has both checker/ and interactor/: a problem has one or '
                            'the other')
    role = roles[0]
    folder = data / role.value
    sources = [language for language in Language if (folder / role.source_name(language)).is_file()]
    if len(sources) != 1:
        names = ', '.join(role.source_name(language) for language in Language)
        raise TestdataError(f'{where}: {role.value}/ must hold exactly one of {names}')
    for entry in sorted(folder.iterdir()):
        if entry.name in BUILD_NAMES or entry.name == CASE_FOLDER:
            taken = ', '.join(sorted(BUILD_NAMES | {CASE_FOLDER}))
            raise TestdataError(f'{where}: {role.value}/{entry.name} has a name the runner '
                                f'gives its own files ({taken}); rename it')
    return ProblemProgram(role=role,
                          language=sources[0],
                          source_dir=(program_root or data) / role.value)


def _copy_chaos(problem_id: int, data: pathlib.Path, source_dir: pathlib.Path) -> None:
    """`chaos/` files go beside the source (headers, data files). A name the
    build uses (a source or the compiled program) makes the testdata unusable
    for every submission: refused, naming the file."""
    chaos = data / 'chaos'
    if not chaos.is_dir():
        return
    for entry in sorted(chaos.iterdir()):
        if entry.name in BUILD_NAMES:
            raise TestdataError(f'testdata of problem {problem_id}: chaos/{entry.name} has the '
                                f'name of a build file ({", ".join(sorted(BUILD_NAMES))}); '
                                'rename it')
    _copy_tree(problem_id, chaos, source_dir)


def _copy_tree(problem_id: int, source: pathlib.Path, dest_dir: pathlib.Path) -> None:
    """The files and folders below `source` (the extraction wrote no links)."""
    size = sum(path.stat().st_size for path in source.rglob('*') if path.is_file())
    if size > MAX_PROBLEM_FILES_BYTES:
        raise TestdataError(f'testdata of problem {problem_id}: {source.name}/ holds {size} '
                            f'bytes, over the {MAX_PROBLEM_FILES_BYTES} bytes a job can take')
    dest_dir.mkdir(parents=True, exist_ok=True)
    for path in sorted(source.rglob('*')):
        dest = dest_dir / path.relative_to(source)
        if path.is_dir():
            dest.mkdir(parents=True, exist_ok=True)
        else:
            dest.parent.mkdir(parents=True, exist_ok=True)
            _link_or_copy(path, dest)


def _link_or_copy(source: pathlib.Path, dest: pathlib.Path) -> None:
    """A hard link where the folders share a file system, else a copy. The
    cache's files are never changed in place (a refresh writes new ones and
    removes the old), so a job's link keeps its generation's data."""
    try:
        os.link(source, dest, follow_symlinks=False)
    except OSError:
        shutil.copyfile(source, dest, follow_symlinks=False)
