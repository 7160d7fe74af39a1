"""What the sandbox layer needs to know about a job and about one of its cases."""
import dataclasses
import pathlib
from typing import Optional

from sandbox.languages import Language


def checker_source_name(language: Language) -> str:
    """`checker.c`, `checker.cpp` or `checker.py`: a checker's source file."""
    return 'checker' + pathlib.PurePath(language.toolchain.source_name).suffix


@dataclasses.dataclass(frozen=True)
class Checker:
    """A problem's checker: `source_dir` holds its `checker.<ext>` and the
    files it includes (the problem's, never a submission's). It judges each
    case's output instead of the built-in comparison (protocol §5)."""
    language: Language
    source_dir: pathlib.Path


@dataclasses.dataclass(frozen=True)
class SandboxJob:
    """One claim generation of a job, as the sandbox sees it.

    `key` is unique per claim generation: sandboxes and compiled artifacts are
    keyed by it, so two generations of one job never share a sandbox.
    `source_dir` holds `main.<ext>` and the problem's `chaos/` files, nothing else
    (never the answers).
    """
    key: str
    language: Language
    source_dir: pathlib.Path
    checker: Optional[Checker] = None


@dataclasses.dataclass(frozen=True)
class CaseSpec:
    input_path: pathlib.Path
    answer_path: pathlib.Path
    time_limit_ms: int
    memory_limit_kb: int
