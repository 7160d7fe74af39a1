"""The sandbox layer's interface: compile a job, run one of its cases, release it."""
import enum
import errno
from typing import Optional

from sandbox.job import CaseSpec, SandboxJob
from sandbox.results import CaseResult, CompileResult


class FaultKind(str, enum.Enum):
    ENGINE = 'engine'  # the container engine unreachable or failing, sandboxes not starting
    IMAGE = 'image'  # a sandbox image missing
    DISK = 'disk'  # DATA_DIR or its disk unwritable or full
    TOKEN = 'token'  # the testdata channel refusing SANDBOX_TOKEN
    MEMORY = 'memory'  # a memoryLimit the host's sandboxes cannot give


class HostFault(Exception):
    """The host cannot judge now: a fault of the judge host, never of the
    submission nor of the job. Whatever it touched goes back to the queue
    without a verdict and without spending an attempt, and the runner waits
    for the host to be healthy again.

    `cause` is one line that names the component or the setting; it carries
    no secret."""

    def __init__(self, kind: FaultKind, cause: str):
        super().__init__(cause)
        self.kind = kind
        self.cause = cause


# What an operation on the host's own folders fails with when the disk or
# DATA_DIR is at fault (full, read-only, not ours, failing), not the job.
_DISK_ERRNOS = frozenset(
    {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.EIO})


def disk_fault(exc: OSError, where: str) -> Optional[HostFault]:
    """The HostFault an OSError on the host's own folders means, if any."""
    if exc.errno not in _DISK_ERRNOS:
        return None
    path = f' {exc.filename}' if exc.filename else ''
    return HostFault(FaultKind.DISK, f'{where}{path}: {exc.strerror} (DATA_DIR)')


class Sandbox:
    """Thread-safe. Every call is bounded in time. A failure of the judge on a
    healthy host comes back as a JE result (a caller must treat any other
    exception as JE too); a fault of the host raises HostFault."""

    def check_limits(self, memory_limit_kb: int) -> None:
        """Raise HostFault(MEMORY) when this host's sandboxes cannot give a
        case that much memory."""

    def compile(self, job: SandboxJob) -> CompileResult:
        raise NotImplementedError

    def run_case(self, job: SandboxJob, case: CaseSpec) -> CaseResult:
        """Judge one case; `compile(job)` must have returned an ok result first."""
        raise NotImplementedError

    def release(self, job_key: str) -> None:
        """Free every sandbox and artifact of that job generation. Idempotent."""
        raise NotImplementedError

    def self_test(self) -> Optional[str]:
        """Judge a known program in a fresh sandbox: None when it is judged
        right, else what went wrong (the host's health probe)."""
        return None
