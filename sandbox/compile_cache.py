"""The host's compile cache: a compile's outcome, keyed by everything that
determines it, so a rejudge of an unchanged submission skips its compile.

The key covers the language, the whole compile request (command, limits,
environment, how much of the output is kept), the toolchain image's id and
every file of the build folder (the source and the problem's `chaos/` files),
by name and content. An entry holds the result (AC, or a CE the compiler
itself reported) and the compiled program, with its SHA-256.

Only the host writes entries, from what the supervisor sent back, never from a
folder a submission could write; an entry whose program does not match its
recorded hash is dropped on read. Entries are written under a temporary name
and renamed into place, so concurrent jobs (and runners sharing a DATA_DIR)
see whole entries or none. The cache is bounded on disk: past `max_bytes`,
the least recently used entries go. The disk use is counted once, then kept
as a running total of what this process adds; it is counted again when the
total passes the bound, or after `RECOUNT_SEC` (other runners may share the
folder), so a put costs no scan of thousands of entries.
"""
import dataclasses
import hashlib
import json
import logging
import os
import pathlib
import shutil
import threading
import time
import uuid
from typing import Callable, Optional

from sandbox.results import Status

log = logging.getLogger(__name__)

# Changes when the entry format or what the key covers changes.
FORMAT = 1
_RESULT = 'result.json'
STALE_TEMPORARY_SEC = 3600
RECOUNT_SEC = 600
_PROGRAM = 'program'


@dataclasses.dataclass(frozen=True)
class Entry:
    status: Status  # AC or CE
    message: str
    # Read once and checked against its hash: what is used is what was checked,
    # whatever happens to the entry afterwards (an eviction, another runner).
    program: Optional[bytes]  # None for a language without a compiled program
    static_bytes: int


def cache_key(language: str, request: str, image_id: str, build_dir: pathlib.Path) -> str:
    """`request`: the compile request, written out whole (its repr)."""
    digest = hashlib.sha256()
    for part in (f'format={FORMAT}', f'language={language}', f'image={image_id}',
                 f'request={request}'):
        digest.update(part.encode() + b'\n')
    for path in sorted(p for p in build_dir.rglob('*') if p.is_file()):
        name = path.relative_to(build_dir).as_posix()
        digest.update(b'file=' + name.encode('utf-8', 'surrogateescape') + b'\0' +
                      _file_sha256(path).encode() + b'\n')
    return digest.hexdigest()


def _file_sha256(path: pathlib.Path) -> str:
    digest = hashlib.sha256()
    with open(path, 'rb') as stream:
        for chunk in iter(lambda: stream.read(1 << 20), b''):
            digest.update(chunk)
    return digest.hexdigest()


class CompileCache:

    def __init__(self,
                 root: pathlib.Path,
                 max_bytes: int,
                 clock: Callable[[], float] = time.monotonic):
        self._root = root
        self._max_bytes = max_bytes
        self._clock = clock
        self._lock = threading.Lock()  # one eviction at a time in this process
        self._total: Optional[int] = None  # disk use as last counted, plus puts since
        self._counted_at = 0.0
        self.counts = 0  # how often the whole cache was counted (for tests)

    def get(self, key: str) -> Optional[Entry]:
        folder = self._root / key
        try:
            document = json.loads((folder / _RESULT).read_text())
            status = Status(document['status'])
            if status not in (Status.AC, Status.CE):
                raise ValueError('not a cacheable status')
            program = None
            if document['program_sha256'] is not None:
                program = (folder / _PROGRAM).read_bytes()
                if hashlib.sha256(program).hexdigest() != document['program_sha256']:
                    raise ValueError('the program does not match its hash')
            entry = Entry(status, str(document['message']), program, int(document['static_bytes']))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning('compile cache: dropping entry %s (%s)', key[:16], exc)
            shutil.rmtree(folder, ignore_errors=True)
            return None
        try:
            os.utime(folder)  # recently used
        except OSError:
            pass
        return entry

    def put(self, key: str, status: Status, message: str, program: Optional[bytes],
            static_bytes: int) -> None:
        """Best effort: a cache that cannot be written only costs compiles."""
        assert status in (Status.AC, Status.CE)
        temporary = self._root / f'.tmp-{uuid.uuid4().hex}'
        try:
            temporary.mkdir(parents=True)
            if program is not None:
                (temporary / _PROGRAM).write_bytes(program)
            (temporary / _RESULT).write_text(
                json.dumps({
                    'status':
                    status.value,
                    'message':
                    message,
                    'program_sha256':
                    None if program is None else hashlib.sha256(program).hexdigest(),
                    'static_bytes':
                    static_bytes,
                }))
            added = _size(temporary)
            try:
                temporary.rename(self._root / key)
            except OSError:
                added = 0  # another job put the same entry first
        except OSError as exc:
            log.warning('compile cache: cannot write an entry (%s)', exc.strerror)
            return
        finally:
            shutil.rmtree(temporary, ignore_errors=True)
        self._evict(added)

    def _evict(self, added: int) -> None:
        with self._lock:
            if (self._total is not None and self._total + added <= self._max_bytes
                    and self._clock() - self._counted_at < RECOUNT_SEC):
                self._total += added
                return
            self.counts += 1
            self._counted_at = self._clock()
            try:
                folders = list(self._root.iterdir())
                now = time.time()
                for folder in folders:
                    # A put a crash cut short.
                    if (folder.name.startswith('.tmp-')
                            and now - folder.stat().st_mtime > STALE_TEMPORARY_SEC):
                        shutil.rmtree(folder, ignore_errors=True)
                entries = [(folder.stat().st_mtime, folder, _size(folder)) for folder in folders
                           if not folder.name.startswith('.')]
            except OSError:
                self._total = None
                return
            total = sum(size for _, _, size in entries)
            for _, folder, size in sorted(entries, key=lambda e: e[0]):
                if total <= self._max_bytes:
                    break
                shutil.rmtree(folder, ignore_errors=True)
                total -= size
            self._total = total


def _size(folder: pathlib.Path) -> int:
    """What the entry takes on disk (blocks, not bytes: a small entry is a block)."""
    return folder.stat().st_blocks * 512 + sum(p.stat().st_blocks * 512
                                               for p in folder.iterdir() if p.is_file())
