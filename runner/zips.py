"""Extracting the two zips a job brings: the code zip and the testdata zip.

Both are hostile input. Entry names are checked before anything is written
(no absolute paths, no `..`, no backslashes, no symlinks); every file is
created exclusively under a folder we made, so nothing lands outside it; the
bytes actually decompressed are counted, so a zip bomb stops at the bound
whatever sizes its headers claim.
"""
import io
import pathlib
import re
import stat
import zipfile
import zlib
from typing import BinaryIO, List, Tuple, Union

from sandbox.languages import Language

MAX_ENTRIES = 10_000
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
        names = [info.filename for info, _ in files]
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
    tree into `dest_dir` (which must not exist yet); other files are ignored."""
    what = 'testdata zip'
    with open(path, 'rb') as raw, _open(raw, what) as archive:
        files = _checked_files(archive, what)
        dest_dir.mkdir()
        budget = max_total_bytes
        for info, parts in files:
            is_case = len(parts) == 1 and _CASE_FILE.fullmatch(parts[0])
            is_chaos = len(parts) > 1 and parts[0] == 'chaos'
            if not (is_case or is_chaos):
                continue
            dest = dest_dir.joinpath(*parts)
            dest.parent.mkdir(parents=True, exist_ok=True)
            budget -= _copy_member(archive, info, dest, budget, what)


def _open(stream: BinaryIO, what: str) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(stream)
    except _ZIP_FAILURES + (OSError, ):
        raise ZipRejected(f'{what}: not a readable zip file') from None


def _checked_files(archive: zipfile.ZipFile,
                   what: str) -> List[Tuple[zipfile.ZipInfo, Tuple[str, ...]]]:
    """Every file entry with its path parts; the whole zip is refused when
    any entry is unsafe, even one that would have been ignored."""
    infos = archive.infolist()
    if len(infos) > MAX_ENTRIES:
        raise ZipRejected(f'{what}: more than {MAX_ENTRIES} entries')
    files = []
    for info in infos:
        parts = _safe_parts(info.filename, what)
        if info.is_dir():
            continue
        if stat.S_ISLNK(info.external_attr >> 16):
            raise ZipRejected(f'{what}: symbolic link {_show(info.filename)}')
        files.append((info, parts))
    return files


def _safe_parts(name: str, what: str) -> Tuple[str, ...]:
    parts = tuple(part for part in name.split('/') if part)
    unsafe = (not parts or name.startswith('/') or '\\' in name or '\x00' in name or ':' in parts[0]
              or any(part in ('.', '..') for part in parts))
    if unsafe:
        raise ZipRejected(f'{what}: unsafe path {_show(name)}')
    return parts


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
    except _ZIP_FAILURES:
        raise ZipRejected(f'{what}: {_show(info.filename)} is damaged') from None
    return written


def _show(name: Union[str, bytes]) -> str:
    """An entry name for a log line: bounded, control characters escaped."""
    text = repr(name[:60])
    return text if len(name) <= 60 else text + '...'
