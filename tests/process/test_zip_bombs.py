"""A testdata zip of three million directory entries is refused in bounded memory.

Parsing such a central directory whole once drove the runner to 1.5 GB before
the entry limit was checked; the limit is now read from the end record first.
The archive is opened in a child process whose peak memory is measured.
"""
import struct
import subprocess
import sys

ENTRIES = 3_000_000
LIMIT_BYTES = 200 * 1024 * 1024

# The child's own peak (VmHWM): ru_maxrss would carry the parent's across exec.
OPEN_IT = '''
import pathlib, re, sys
from runner.prep.zips import ZipRejected, extract_testdata
try:
    extract_testdata(pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), 1 << 30)
    print("accepted")
except ZipRejected as exc:
    print("refused:", exc)
status = open("/proc/self/status").read()
print(int(re.search(r"VmHWM:\\s+(\\d+) kB", status).group(1)) * 1024)
'''


def _entry_bomb(path):
    """Local headers are not needed to parse a directory: only the central
    directory (ENTRIES folder entries) and the zip64 end records."""
    name = b'd/'
    entry = struct.pack('<4s6H3L5H2L', b'PK\x01\x02', 20, 20, 0, 0, 0, 0, 0, 0, 0, len(name), 0, 0,
                        0, 0, 0x10, 0) + name
    size = len(entry) * ENTRIES
    end64 = struct.pack('<4sQ2H2L4Q', b'PK\x06\x06', 44, 45, 45, 0, 0, ENTRIES, ENTRIES, size, 0)
    locator = struct.pack('<4sLQL', b'PK\x06\x07', 0, size, 1)
    end = struct.pack('<4s4H2LH', b'PK\x05\x06', 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    with open(path, 'wb') as out:
        out.write(entry * ENTRIES)
        out.write(end64 + locator + end)
    return size


def test_three_million_entries_are_refused_in_bounded_memory(tmp_path):
    bomb = tmp_path / 'testdata.zip'
    size = _entry_bomb(bomb)
    assert size > 100 * 1024 * 1024
    done = subprocess.run(
        [sys.executable, '-c', OPEN_IT,
         str(bomb), str(tmp_path / 'data')],
        capture_output=True,
        text=True,
        timeout=120,
        check=True)
    verdict, peak = done.stdout.splitlines()
    assert verdict.startswith('refused: testdata zip: more than 10000 entries'), verdict
    assert int(peak) < LIMIT_BYTES, f'peak memory {int(peak) >> 20} MiB'
    print(f'entry bomb of {size >> 20} MiB refused with a peak of {int(peak) >> 20} MiB')
