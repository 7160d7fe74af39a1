"""What the sandbox layer needs to know about a job and about one of its cases."""
import dataclasses
import pathlib

from sandbox.languages import Language


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


@dataclasses.dataclass(frozen=True)
class CaseSpec:
    input_path: pathlib.Path
    answer_path: pathlib.Path
    time_limit_ms: int
    memory_limit_kb: int
