"""The memory a compiled program claims before it runs: its writable segments.

A program whose static data (globals, `.bss`) exceeds the memory limit is
stopped by the memory cap while the kernel loads it, with a bare SIGSEGV that
looks like any crash. Reading the size from the ELF headers on the host turns
that into the MLE it is.
"""
import struct
from typing import Optional

_EHDR = struct.Struct('<16sHHIQQQIHHHHHH')
_PHDR = struct.Struct('<IIQQQQQQ')
_PT_LOAD = 1
_PF_W = 2


def writable_bytes(elf: bytes) -> Optional[int]:
    """Total size in memory of the writable loadable segments of a 64-bit
    little-endian ELF file; None when `elf` is not one."""
    if len(elf) < _EHDR.size or elf[:4] != b'\x7fELF' or elf[4] != 2 or elf[5] != 1:
        return None
    header = _EHDR.unpack_from(elf)
    phoff, phentsize, phnum = header[5], header[9], header[10]
    if phentsize < _PHDR.size or phoff + phnum * phentsize > len(elf):
        return None
    total = 0
    for i in range(phnum):
        p_type, p_flags, _, _, _, _, p_memsz, _ = _PHDR.unpack_from(elf, phoff + i * phentsize)
        if p_type == _PT_LOAD and p_flags & _PF_W:
            total += p_memsz
    return total
