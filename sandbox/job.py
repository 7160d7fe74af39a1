"""What the sandbox layer needs to know about a job and about one of its cases."""
import dataclasses
import enum
import pathlib
from typing import Optional, Tuple

from sandbox.languages import Language


class Role(str, enum.Enum):
    """What a problem's own program does (protocol §5). A checker judges each
    case's output after the run; an interactor talks with the program during
    the run and judges the conversation. The value is its folder in the
    testdata zip and the stem of its source's name."""
    CHECKER = 'checker'
    INTERACTOR = 'interactor'

    def source_name(self, language: Language) -> str:
        """e.g. `checker.cpp` or `interactor.py`."""
        return self.value + pathlib.PurePath(language.toolchain.source_name).suffix


# Below a checker's or interactor's working folder; the host puts the case's
# files there for each run (never into the submission's sandbox, which never
# sees the answer). A problem's own files may not take the name.
CASE_FOLDER = 'case'


@dataclasses.dataclass(frozen=True)
class ProblemProgram:
    """A problem's checker or interactor: `source_dir` holds its
    `<role>.<ext>` and the files it includes (the problem's, never a
    submission's)."""
    role: Role
    language: Language
    source_dir: pathlib.Path
    compile_flags: Tuple[str, ...] = ()  # after the toolchain's own, as Judging's


class Comparison(str, enum.Enum):
    """How an output is held against the answer without a checker."""
    LINES = 'lines'  # Normal-OJ (protocol §5): line by line, trailing blanks aside
    TOKENS = 'tokens'  # standard-io@1: the whitespace-separated tokens


class CheckerConvention(str, enum.Enum):
    """What a checker's end means."""
    TESTLIB = 'testlib'  # Normal-OJ (protocol §5): the exit code
    SIO2 = 'sio2'  # standard-io@1: OK or WRONG, a comment, a percentage; exit 0


@dataclasses.dataclass(frozen=True)
class Judging:
    """What a problem type makes of a job beyond its language and cases.
    `compile_flags` follow the toolchain's own (gcc takes the last -std)."""
    comparison: Comparison = Comparison.LINES
    checker: CheckerConvention = CheckerConvention.TESTLIB
    compile_flags: Tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class SandboxJob:
    """One claim generation of a job, as the sandbox sees it.

    `key` is unique per claim generation: sandboxes and compiled artifacts are
    keyed by it, so two generations of one job never share a sandbox.
    `source_dir` holds `main.<ext>` and the problem's `chaos/` files, nothing else
    (never the answers). `problem_program`: the problem's checker or
    interactor, which then judges the cases instead of the built-in
    comparison.
    """
    key: str
    language: Language
    source_dir: pathlib.Path
    problem_program: Optional[ProblemProgram] = None
    judging: Judging = Judging()


@dataclasses.dataclass(frozen=True)
class CaseSpec:
    input_path: pathlib.Path
    answer_path: pathlib.Path
    time_limit_ms: int
    memory_limit_kb: int
