"""The languages a submission may be written in, and how each is built and run."""
import dataclasses
import enum
import re
from typing import Optional, Pattern, Tuple


class Language(enum.IntEnum):
    """Wire values of the job payload's `language` field (protocol §3)."""
    C = 0
    CPP = 1
    PYTHON = 2

    @property
    def source_name(self) -> str:
        return TOOLCHAINS[self].source_name

    @property
    def toolchain(self) -> 'Toolchain':
        return TOOLCHAINS[self]


@dataclasses.dataclass(frozen=True)
class Toolchain:
    source_name: str
    image_kind: str  # 'cpp' or 'python': which sandbox image runs it
    compile_argv: Tuple[str, ...]
    run_argv: Tuple[str, ...]
    # The compile step's product, kept for the runs ('' when runs use the source).
    artifact: str
    # The last line of stderr when the runtime died of a failed allocation.
    out_of_memory_line: Optional[Pattern[bytes]]
    # The last line of stderr when the runtime died of the other end of a
    # pipe going away: writing to a closed pipe (C and C++ programs die of
    # SIGPIPE instead) or reading past its end (they see an end of file).
    pipe_closed_line: Optional[Pattern[bytes]] = None
    # Its runs may be forked from an interpreter started once per job
    # (RunRequest.zygote): Python's.
    zygote: bool = False


# Python has nothing to compile, but a syntax error must still be CE: the
# compile step byte-compiles the source without writing anything.
_PY_CHECK = "import sys; compile(open('main.py', 'rb').read(), 'main.py', 'exec')"

TOOLCHAINS = {
    Language.C:
    Toolchain(source_name='main.c',
              image_kind='cpp',
              compile_argv=('gcc', '-std=c11', '-O2', '-pipe', '-o', 'main', 'main.c', '-lm'),
              run_argv=('./main', ),
              artifact='main',
              out_of_memory_line=None),
    Language.CPP:
    Toolchain(source_name='main.cpp',
              image_kind='cpp',
              compile_argv=('g++', '-std=c++17', '-O2', '-pipe', '-o', 'main', 'main.cpp'),
              run_argv=('./main', ),
              artifact='main',
              out_of_memory_line=re.compile(rb'what\(\): +std::bad_alloc$')),
    Language.PYTHON:
    Toolchain(source_name='main.py',
              image_kind='python',
              compile_argv=('python3', '-c', _PY_CHECK),
              run_argv=('python3', 'main.py'),
              artifact='',
              out_of_memory_line=re.compile(rb'MemoryError(:|$)'),
              pipe_closed_line=re.compile(rb'(BrokenPipeError|EOFError)(:|$)'),
              zygote=True),
}

# The names a build uses beside the source: a problem's `chaos/` files must
# not take them (a chaos file `main` was once copied onto the compiled
# program of every C and C++ submission).
BUILD_NAMES = frozenset(name for toolchain in TOOLCHAINS.values()
                        for name in (toolchain.source_name, toolchain.artifact) if name)
