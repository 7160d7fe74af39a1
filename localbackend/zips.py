"""Deterministic zip archives: the same entries always give the same bytes (and checksum)."""
import io
import zipfile
from typing import Mapping

# A fixed timestamp: a checksum must change when the content changes, and only then.
_EPOCH = (2020, 1, 1, 0, 0, 0)


def build_zip(entries: Mapping[str, bytes]) -> bytes:
    """A zip of `entries` (name → content) in sorted order.

    Names are written as given, so a hostile-payload test may ask for
    `../evil`, absolute paths or directory entries (a name ending in `/`).
    """
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, 'w', zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(entries):
            info = zipfile.ZipInfo(name, date_time=_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = (0o40755 if name.endswith('/') else 0o100644) << 16
            archive.writestr(info, entries[name])
    return buffer.getvalue()


def read_zip(data: bytes) -> dict:
    """The file entries of a zip (directories skipped); for tests and tools."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {
            info.filename: archive.read(info)
            for info in archive.infolist() if not info.is_dir()
        }
