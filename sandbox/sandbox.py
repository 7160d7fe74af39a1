"""The sandbox layer's interface: compile a job, run one of its cases, release it."""
from sandbox.job import CaseSpec, SandboxJob
from sandbox.results import CaseResult, CompileResult


class Sandbox:
    """Thread-safe. Every call is bounded in time; failures of the judge itself
    come back as JE results, but a caller must still treat an exception as JE."""

    def compile(self, job: SandboxJob) -> CompileResult:
        raise NotImplementedError

    def run_case(self, job: SandboxJob, case: CaseSpec) -> CaseResult:
        """Judge one case; `compile(job)` must have returned an ok result first."""
        raise NotImplementedError

    def release(self, job_key: str) -> None:
        """Free every sandbox and artifact of that job generation. Idempotent."""
        raise NotImplementedError
