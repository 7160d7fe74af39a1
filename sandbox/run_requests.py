"""What the supervisor is asked to run: a compile and a case, with their limits
and environment (sandbox/protocol.py carries them)."""
from typing import Tuple

from sandbox.languages import Toolchain
from sandbox.protocol import UNLIMITED, Kind, RunRequest
from sandbox.settings import MiB, SandboxSettings
from sandbox.verdict import Limits

COMPILE_SECONDS = 20
COMPILE_MEMORY_KB = 1024 * 1024
MAX_ARTIFACT_BYTES = 64 * MiB
# The end of stderr, where a runtime reports that an allocation failed.
STDERR_TAIL_BYTES = 4096

ENV: Tuple[Tuple[str, str], ...] = (
    ('PATH', '/usr/local/bin:/usr/bin:/bin'),
    ('HOME', '/tmp'),
    ('LANG', 'C.UTF-8'),
    ('PYTHONDONTWRITEBYTECODE', '1'),
    # Nothing in /tmp (HOME) is ever Python's to load: each run's /tmp is
    # new and empty, and this holds even if it were not.
    ('PYTHONNOUSERSITE', '1'),
)
COMPILE_DIR = '/work/compile'
CASE_DIR = '/work/run'  # the run's init makes it (read-only for the run), for every run
# Descriptors a case may hold: each pipe's read end keeps at most 64 KiB out
# of its resident memory (its data stays readable once the write end is
# closed), so pipes hold at most 8 MiB.
CASE_DESCRIPTORS = 128
# The compiler's temporary files go beside its output, not into the small /tmp
# that cases share.
_COMPILE_ENV = ENV + (('TMPDIR', COMPILE_DIR), )


def compile_request(toolchain: Toolchain, settings: SandboxSettings,
                    flags: Tuple[str, ...] = ()) -> RunRequest:
    """`flags`: the problem type's, after the toolchain's own (none for Python)."""
    return RunRequest(kind=Kind.COMPILE,
                      argv=toolchain.compile_argv + (flags if toolchain.artifact else ()),
                      workdir=COMPILE_DIR,
                      cpu_ms=COMPILE_SECONDS * 1000,
                      wall_ms=COMPILE_SECONDS * 1000,
                      data_kb=COMPILE_MEMORY_KB,
                      stack_kb=64 * 1024,
                      fsize=MAX_ARTIFACT_BYTES,
                      out_send=settings.report_limit,
                      err_send=settings.report_limit,
                      nofile=256,
                      artifact=toolchain.artifact,
                      artifact_max=MAX_ARTIFACT_BYTES if toolchain.artifact else 0,
                      env=_COMPILE_ENV)


def case_request(toolchain: Toolchain, limits: Limits, settings: SandboxSettings) -> RunRequest:
    return RunRequest(kind=Kind.CASE,
                      argv=toolchain.run_argv,
                      workdir=CASE_DIR,
                      cpu_ms=limits.kill_ms,
                      wall_ms=limits.wall_ms,
                      mem_kb=limits.memory_kb,
                      data_kb=_memory_cap_kb(limits.memory_kb),
                      stack_kb=UNLIMITED,
                      fsize=limits.output_bytes + 1,
                      out_send=limits.output_bytes,
                      err_send=settings.report_limit,
                      tail_send=STDERR_TAIL_BYTES,
                      nofile=CASE_DESCRIPTORS,
                      zygote=toolchain.zygote,
                      env=ENV)


def _memory_cap_kb(limit_kb: int) -> int:
    """The cap on a run's writable private memory (RLIMIT_DATA), far above its
    limit: MLE is judged on the peak resident memory, which the supervisor
    watches during the run, and the container's memory cgroup bounds the host.
    The cap only turns absurd allocations into a runtime's out-of-memory error
    (MLE too). Thread stacks count against it: with an unlimited stack limit
    (deep recursion in the main thread is bounded by the memory limit alone)
    glibc gives each thread 2 MiB, so 64 threads take 128 MiB of it."""
    return 8 * limit_kb + 64 * 1024
