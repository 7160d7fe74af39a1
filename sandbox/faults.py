"""The host's faults: why the host cannot judge now, which is never a
verdict (protocol §6). A leaf: every layer raises or reads these."""
import enum
import errno
from typing import Optional


class FaultKind(str, enum.Enum):
    ENGINE = 'engine'  # the container engine unreachable or failing, sandboxes not starting
    IMAGE = 'image'  # a sandbox image missing
    DISK = 'disk'  # DATA_DIR or its disk unwritable or full
    TOKEN = 'token'  # the testdata channel refusing SANDBOX_TOKEN
    MEMORY = 'memory'  # a memoryLimit the host's sandboxes cannot give


class Cancelled(Exception):
    """The job was cancelled while this run was due or in progress (the
    backend took it back): nobody's failure, and nothing of it is reported."""


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
