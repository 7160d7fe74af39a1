"""From a run's measurements to its verdict (protocol §5).

When several verdicts apply, the first of JE, TLE, MLE, OLE, RE wins, then WA
or AC by comparison. JE is decided by the caller (the run did not happen).
"""
import codecs
import dataclasses
import math
from typing import Optional, Pattern, Tuple

from sandbox.compare import compare_tokens, outputs_match
from sandbox.job import Comparison
from sandbox.languages import Toolchain
from sandbox.protocol import RunResponse
from sandbox.results import CaseResult, Status


@dataclasses.dataclass(frozen=True)
class Limits:
    time_ms: int
    memory_kb: int
    output_bytes: int
    # A run is stopped at this multiple of its time limit, not at the limit:
    # one that ends between the two is TLE, but may be run again (noise only
    # ever adds time), and the lower time counts.
    tle_margin: float = 1.0
    # Wall time that is not the program's to spend, at most: an interactive
    # program's bound grows by what its interactor thinks (in CPU time),
    # which it waits out, up to this.
    extra_wall_ms: int = 0

    @property
    def own_wall_ms(self) -> int:
        # Catches sleepers, whose CPU time stays low.
        return 3 * self.time_ms + 1000

    @property
    def wall_ms(self) -> int:
        return self.own_wall_ms + self.extra_wall_ms

    @property
    def kill_ms(self) -> int:
        """The CPU time at which the supervisor stops a run."""
        return max(self.time_ms, math.ceil(self.time_ms * self.tle_margin))


def worth_another_run(run: RunResponse, limits: Limits) -> bool:
    """A TLE on CPU time within the margin: the run ended (or was stopped for
    memory or output) before the kill, so its time may be the neighbours'."""
    cpu_ms = run.cpu_us / 1000
    return (limits.time_ms < cpu_ms <= limits.kill_ms and not run.cpu_timeout
            and not run.wall_timeout)


def exit_code_of(run: RunResponse) -> int:
    return -run.signal if run.signal else run.exit_code


def status_of(run: RunResponse,
              limits: Limits,
              toolchain: Toolchain,
              expected: bytes,
              comparison: Comparison = Comparison.LINES) -> Tuple[Status, str]:
    """The verdict, and the comparison's note on a wrong answer ('' by lines)."""
    cpu_ms = run.cpu_us / 1000
    # Measured facts only: a SIGXCPU or SIGXFSZ the program raised itself
    # chooses nothing (the real ones come after the time or output is over).
    if (run.cpu_timeout or run.wall_timeout or cpu_ms > limits.time_ms
            or run.wall_us / 1000 > limits.wall_ms):
        return Status.TLE, ''
    failed = run.signal != 0 or run.exit_code != 0
    if (run.mem_exceeded or run.maxrss_kb > limits.memory_kb or run.oom_kills > 0
            or (failed and _died_of_failed_allocation(run, toolchain))):
        return Status.MLE, ''
    if run.out_size > limits.output_bytes or run.err_size > limits.output_bytes:
        return Status.OLE, ''
    if failed:
        return Status.RE, ''
    if comparison is Comparison.TOKENS:
        equal, note = compare_tokens(run.stdout, expected)
        return (Status.AC, '') if equal else (Status.WA, note)
    return (Status.AC if outputs_match(run.stdout, expected) else Status.WA), ''


def _died_of_failed_allocation(run: RunResponse, toolchain: Toolchain) -> bool:
    """The runtime's own last words: an uncaught MemoryError or bad_alloc
    (the memory cap refused an allocation). Only the last line counts, so a
    message that merely mentions it does not."""
    return last_words_match(run, toolchain.out_of_memory_line)


def last_words_match(run: RunResponse, line: Optional[Pattern[bytes]]) -> bool:
    """Whether the last line of the run's stderr is `line` (a runtime's own
    report of how it died); a message that merely mentions it elsewhere
    does not count. False when there is no pattern."""
    lines = run.stderr_tail.rstrip().splitlines()
    return line is not None and bool(lines) and line.match(lines[-1].strip()) is not None


def report_text(data: bytes, limit: int) -> str:
    """Output as reported: invalid UTF-8 replaced, at most `limit` bytes once
    encoded, cut between characters. The sandbox sends at most `limit` bytes
    of an output, so a character cut at that end is the cut's, not the
    program's: it is left out, never reported as an invalid byte. A
    replacement character takes three bytes where the invalid byte took one,
    so the text is cut again once encoded."""
    decoder = codecs.getincrementaldecoder('utf-8')(errors='replace')
    text = decoder.decode(data[:limit], final=len(data) < limit)
    encoded = text.encode('utf-8')
    if len(encoded) > limit:
        text = encoded[:limit].decode('utf-8', errors='ignore')
    return text


def case_result(run: RunResponse,
                limits: Limits,
                toolchain: Toolchain,
                expected: bytes,
                report_limit: int,
                comparison: Comparison = Comparison.LINES) -> CaseResult:
    status, note = status_of(run, limits, toolchain, expected, comparison)
    exec_time_ms = round(run.cpu_us / 1000)
    if status is Status.TLE:
        # Above the limit, always: a TLE never reads as a time within it.
        exec_time_ms = max(math.ceil(run.cpu_us / 1000), limits.time_ms + 1)
    return CaseResult(status=status,
                      exit_code=exit_code_of(run),
                      exec_time_ms=exec_time_ms,
                      memory_kb=run.maxrss_kb,
                      stdout=report_text(run.stdout, report_limit),
                      stderr=report_text(run.stderr, report_limit),
                      note=note,
                      cpu_us=run.cpu_us)
