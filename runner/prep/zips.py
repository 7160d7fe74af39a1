"""Extracting the two zips a job brings: the code zip and the testdata zip.

Both are hostile input. The entry count and the size of the central
directory are read from the archive's end record and bounded before the
directory is parsed (parsing 3 million entries once took 1.5 GB); entry names
are checked before anything is written (no absolute paths, no `..`, no
backslashes, no symlinks); every file is created exclusively under a folder
we made, so nothing lands outside it; the bytes actually decompressed are
counted, so a zip bomb stops at the bound whatever sizes its headers claim.
"""
import errno
import io
import os
import pathlib
import re
import stat
import struct
import zipfile
import zlib
from typing import BinaryIO, Callable, List, Optional, Tuple, Union

from sandbox.languages import Language

MAX_ENTRIES = 10_000
# A central directory entry is 46 bytes plus its name, extra field and
# comment; 10,000 ordinary entries take well under this, and zipfile parses
# the directory by its size (at most ~90,000 empty-named entries here).
MAX_DIRECTORY_BYTES = 4 * 1024 * 1024
_END = struct.Struct('<4s4H2LH')  # end of central directory record
_END_SIGNATURE = b'PK\x05\x06'
_LOCATOR = struct.Struct('<4sLQL')  # zip64 end of central directory locator
_LOCATOR_SIGNATURE = b'PK\x06\x07'
_END64 = struct.Struct('<4sQ2H2L4Q')  # zip64 end of central directory record
_END64_SIGNATURE = b'PK\x06\x06'
_MAX_COMMENT = 0xFFFF
_CASE_FILE = re.compile(r'[0-9]{4}\.(in|out)')
_CHUNK_BYTES = 64 * 1024
# What zipfile may raise on a damaged or unsupported archive.
_ZIP_FAILURES = (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, RuntimeError,
                 EOFError, zlib.error, ValueError)


class ZipRejected(ValueError):
    """The zip cannot be used; the message says why (safe to log)."""


def extract_source(data: bytes, language: Language, source_dir: pathlib.Path,
                   max_bytes: int) -> pathlib.Path:
    """Writes the code zip's one file, `main.<ext>` for `language`, into
    `source_dir`; directory entries are ignored, names are case-sensitive."""
    what = 'code zip'
    with _open(io.BytesIO(data), what) as archive:
        files = _checked_files(archive, what)
        names = ['/'.join(parts) for _, parts in files]
        if names != [language.source_name]:
            shown = ', '.join(_show(name) for name in names[:5]) or 'nothing'
            more = ', ...' if len(names) > 5 else ''
            raise ZipRejected(f'{what}: expected exactly one file {language.source_name} '
                              f'for {language.name}, found {shown}{more}')
        dest = source_dir / language.source_name
        _copy_member(archive, files[0][0], dest, max_bytes, what)
        return dest


def extract_testdata(path: pathlib.Path, dest_dir: pathlib.Path, max_total_bytes: int) -> None:
    """Writes the testdata zip's `TTCC.in`/`TTCC.out` files and its `chaos/`
    `checker/` and `interactor/` trees into `dest_dir` (which must not exist yet); other
    files are ignored."""
    what = 'testdata zip'
    with open(path, 'rb') as raw, _open(raw, what) as archive:
        files = _checked_files(archive, what)
        dest_dir.mkdir()
        budget = max_total_bytes
        for info, parts in files:
            is_case = len(parts) == 1 and _CASE_FILE.fullmatch(parts[0])
            is_problem_files = len(parts) > 1 and parts[0] in ('chaos', 'checker', 'interactor')
            if not (is_case or is_problem_files):
                continue
            dest = dest_dir.joinpath(*parts)
            _make_parent(dest, info, what)
            budget -= _copy_member(archive, info, dest, budget, what)


def extract_package(path: pathlib.Path, dest_dir: pathlib.Path, *, name_ok: Callable[[str], bool],
                    max_entry_bytes: int, max_total_bytes: int, max_expansion: int) -> List[str]:
    """Writes every file of a problem package into `dest_dir` (which must
    not exist yet) and returns their names. Beyond the rules of every zip:
    each name must pass `name_ok`, an entry expands to at most
    `max_entry_bytes`, and all of them to at most `max_total_bytes` and
    `max_expansion` times the zip's own size."""
    what = 'package'
    budget = min(max_total_bytes, max_expansion * max(1, path.stat().st_size))
    with open(path, 'rb') as raw, _open(raw, what) as archive:
        files = _checked_files(archive, what)
        for info, parts in files:
            if not name_ok(info.filename):
                raise ZipRejected(f'{what}: the entry name {_show(info.filename)} holds a '
                                  'character other than A-Z a-z 0-9 . _ / -, or is too long')
        dest_dir.mkdir()
        names = []
        for info, parts in files:
            dest = dest_dir.joinpath(*parts)
            _make_parent(dest, info, what)
            budget -= _copy_member(archive, info, dest, min(budget, max_entry_bytes), what)
            names.append('/'.join(parts))
        return names


def _open(stream: BinaryIO, what: str) -> zipfile.ZipFile:
    try:
        entries, directory_bytes = _directory_extent(stream)
    except OSError:
        raise ZipRejected(f'{what}: not a readable zip file') from None
    if entries is None:
        raise ZipRejected(f'{what}: not a readable zip file')
    if entries > MAX_ENTRIES:
        raise ZipRejected(f'{what}: more than {MAX_ENTRIES} entries ({entries})')
    if directory_bytes > MAX_DIRECTORY_BYTES:
        raise ZipRejected(f'{what}: a central directory of {directory_bytes} bytes is over the '
                          f'limit of {MAX_DIRECTORY_BYTES}')
    try:
        stream.seek(0)
        return zipfile.ZipFile(stream)
    except _ZIP_FAILURES + (OSError, ):
        raise ZipRejected(f'{what}: not a readable zip file') from None


def _directory_extent(stream: BinaryIO) -> Tuple[Union[int, None], int]:
    """The entry count and central directory size the end record declares
    (zip64 too), read from the last 64 KiB; (None, 0) when there is none.
    zipfile itself parses the directory by its size, so both are bounded."""
    size = stream.seek(0, os.SEEK_END)
    tail_start = max(0, size - _END.size - _MAX_COMMENT)
    stream.seek(tail_start)
    tail = stream.read()
    at = tail.rfind(_END_SIGNATURE)
    if at < 0 or len(tail) - at < _END.size:
        return None, 0
    fields = _END.unpack_from(tail, at)
    entries, directory_bytes = fields[4], fields[5]
    if 0xFFFF in (fields[3], entries) or 0xFFFFFFFF in (fields[5], fields[6]):
        # Zip64: the real figures are in the zip64 end record.
        locator_at = tail_start + at - _LOCATOR.size
        if locator_at < 0:
            return None, 0
        stream.seek(locator_at)
        locator = _LOCATOR.unpack(stream.read(_LOCATOR.size))
        if locator[0] != _LOCATOR_SIGNATURE or locator[2] > size - _END64.size:
            return None, 0
        stream.seek(locator[2])
        end64 = _END64.unpack(stream.read(_END64.size))
        if end64[0] != _END64_SIGNATURE:
            return None, 0
        entries, directory_bytes = end64[7], end64[8]
    return entries, directory_bytes


def _checked_files(archive: zipfile.ZipFile,
                   what: str) -> List[Tuple[zipfile.ZipInfo, Tuple[str, ...]]]:
    """Every file entry with its path parts; the whole zip is refused when
    any entry is unsafe, even one that would have been ignored."""
    infos = archive.infolist()
    if len(infos) > MAX_ENTRIES:  # an end record that understated them
        raise ZipRejected(f'{what}: more than {MAX_ENTRIES} entries')
    files = []
    for info in infos:
        if info.is_dir() and not _parts(info.filename):
            continue  # `./`, the archive's own root
        parts = _safe_parts(info.filename, what)
        if info.is_dir():
            continue
        if stat.S_ISLNK(info.external_attr >> 16):
            raise ZipRejected(f'{what}: symbolic link {_show(info.filename)}')
        files.append((info, parts))
    return files


def _parts(name: str) -> Tuple[str, ...]:
    # `./main.py` is `main.py`, as some archivers write it.
    return tuple(part for part in name.split('/') if part not in ('', '.'))


def _safe_parts(name: str, what: str) -> Tuple[str, ...]:
    parts = _parts(name)
    unsafe = (not parts or name.startswith('/') or '\\' in name or '\x00' in name or ':' in parts[0]
              or '..' in parts)
    if unsafe:
        raise ZipRejected(f'{what}: unsafe path {_show(name)}')
    return parts


def _make_parent(dest: pathlib.Path, info: zipfile.ZipInfo, what: str) -> None:
    """The entry's folders; one that is a file already (`a`, then `a/b`), or
    a name the file system cannot hold, refuses the zip."""
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise ZipRejected(f'{what}: {_show(info.filename)} is below a file') from None
    except OSError as exc:
        rejected = _name_too_long(exc, info, what)
        if rejected is None:
            raise
        raise rejected from None


def _name_too_long(exc: OSError, info: zipfile.ZipInfo, what: str) -> Optional[ZipRejected]:
    """The zip's fault when `exc` says its entry's name is more than the
    file system holds; None for any other failure."""
    if exc.errno != errno.ENAMETOOLONG:
        return None
    return ZipRejected(f'{what}: {_show(info.filename)} has a name too long')


def _copy_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, dest: pathlib.Path,
                 max_bytes: int, what: str) -> int:
    """Copies one entry to a new file `dest`; returns the bytes written."""
    written = 0
    try:
        # 'xb': never through an existing file or symlink; a duplicate entry fails here.
        with archive.open(info) as member, open(dest, 'xb') as out:
            while chunk := member.read(_CHUNK_BYTES):
                written += len(chunk)
                if written > max_bytes:
                    raise ZipRejected(f'{what}: {_show(info.filename)} expands past the limit '
                                      f'of {max_bytes} bytes')
                out.write(chunk)
    except ZipRejected:
        raise
    except FileExistsError:
        raise ZipRejected(f'{what}: duplicate entry {_show(info.filename)}') from None
    except OSError as exc:
        rejected = _name_too_long(exc, info, what)
        if rejected is None:
            raise  # the disk's, not the zip's
        raise rejected from None
    except _ZIP_FAILURES:
        raise ZipRejected(f'{what}: {_show(info.filename)} is damaged') from None
    return written


def _show(name: Union[str, bytes]) -> str:
    """An entry name for a log line: bounded, control characters escaped."""
    text = repr(name[:60])
    return text if len(name) <= 60 else text + '...'
