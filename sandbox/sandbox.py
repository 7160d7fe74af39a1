"""The sandbox layer's interface: compile a job, run one of its cases, release it."""
from typing import Optional, Protocol

from sandbox.job import CaseSpec, SandboxJob
from sandbox.languages import Language
from sandbox.results import CaseResult, CompileResult


class Sandbox(Protocol):
    """Thread-safe. Every call is bounded in time. A failure of the judge on a
    healthy host comes back as a JE result (a caller must treat any other
    exception as JE too); a fault of the host raises HostFault
    (sandbox/faults.py)."""

    def check_limits(self, memory_limit_kb: int) -> None:
        """Raise HostFault(MEMORY) when this host's sandboxes cannot give a
        case that much memory."""
        ...

    def compile(self, job: SandboxJob) -> CompileResult:
        """Build the job (and its checker or interactor) once, before its cases."""
        ...

    def run_case(self, job: SandboxJob, case: CaseSpec) -> CaseResult:
        """Judge one case; `compile(job)` must have returned an ok result first."""
        ...

    def cancel(self, job_key: str) -> None:
        """Stop judging that job generation now (the backend took it back):
        its runs in progress are killed and no more start; a call of it
        still under way raises Cancelled (sandbox/faults.py). Release it
        as ever once no call is running."""
        ...

    def release(self, job_key: str) -> None:
        """Free every sandbox and artifact of that job generation. Idempotent."""
        ...

    def self_test(self,
                  language: Language = Language.C,
                  since: Optional[float] = None) -> Optional[str]:
        """Judge a known program of `language` in a fresh sandbox: None when it
        is judged right, else what went wrong (the host's health probe).
        `since`: a failure seen then (monotonic); only a test started after
        it says anything about it."""
        ...
