import shutil
import subprocess

import pytest

from sandbox.static_memory import writable_bytes


@pytest.mark.parametrize(
    'data', [b'', b'not an elf', b'\x7fELF\x01\x01' + b'\0' * 60, b'\x7fELF\x02\x01' + b'\0' * 10])
def test_not_a_64_bit_elf(data):
    assert writable_bytes(data) is None


def test_truncated_program_headers_are_rejected():
    header = bytearray(b'\x7fELF\x02\x01\x01' + b'\0' * 57)
    header[32:40] = (10**6).to_bytes(8, 'little')  # e_phoff far past the end
    header[54:56] = (56).to_bytes(2, 'little')
    header[56:58] = (3).to_bytes(2, 'little')
    assert writable_bytes(bytes(header)) is None


@pytest.mark.skipif(shutil.which('gcc') is None, reason='needs a host compiler')
def test_counts_bss(tmp_path):
    src = tmp_path / 'a.c'
    src.write_text('char big[64 << 20];\nint main(void) { return big[1]; }\n')
    subprocess.run(['gcc', '-O2', '-o', str(tmp_path / 'a'), str(src)], check=True)
    size = writable_bytes((tmp_path / 'a').read_bytes())
    assert 64 << 20 <= size < (64 << 20) + (1 << 20)
