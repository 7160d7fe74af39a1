"""The checker grader: the program's run judged by the problem's checker
instead of the comparison (protocol §5), in a sandbox of its own that alone
sees the answer; and what a checker's run is and what its end means, which
an interactor's shares.

A checker is run as `checker INPUT OUTPUT ANSWER` with the testlib
convention: exit 0 accepts, 1 is a wrong answer, 2 a presentation error
(reported as WA), 3 says the checker itself failed (JE). Any other end (a
signal, another status) or a checker over its own limits is JE. A Python
checker's uncaught exception ends it with status 1, as Python always
does, so it is a wrong answer: the exit status is the contract (protocol
§5), and a checker that stumbles on an output it did not expect (`int()`
of a word, an `assert`) is judging that output, which is the student's.
Its first line of output (stderr, where testlib writes, else stdout) is the
verdict's message.

A Python checker is run through a wrapper (PYTHON_CHECKER), forked from a
zygote of its own, started once for the job, as a Python submission's cases
are (python_zygote.c): a case of a problem with a Python checker costs the
checker's own work, not an interpreter's start.

A standard-io@1 checker (SIO2's convention, `CheckerConvention.SIO2`) always
exits 0 and says its verdict on stdout: `OK` or `WRONG` on the first line,
an optional comment on the second (the case's note), an optional
percentage (0 to 100) on the third, which an OK earns of the case. Any
other status, a bad first line or a bad percentage is a broken checker: JE.
"""
import dataclasses
import re
import uuid
from typing import Optional, Tuple

from sandbox.engine import Want, stager
from sandbox.faults import disk_fault
from sandbox.graders.standard import StandardGrader
from sandbox.job import CASE_FOLDER, CaseSpec, CheckerConvention, Role
from sandbox.job_state import problem_key
from sandbox.languages import Toolchain
from sandbox.protocol import Kind, RunRequest, RunResponse
from sandbox.results import CaseResult, Status
from sandbox.run_requests import CASE_DIR, ENV
from sandbox.settings import SandboxSettings
from sandbox.verdict import report_text

INPUT, OUTPUT, ANSWER = (f'{CASE_FOLDER}/input', f'{CASE_FOLDER}/output', f'{CASE_FOLDER}/answer')
# What of a checker's streams comes back (its message is the first line);
# it may write up to the program's own output limit beyond that (a checker
# that echoes the output is not over a limit of its own for it).
CHECKER_OUTPUT_BYTES = 64 * 1024
MESSAGE_CHARS = 512
# A Python checker runs through this, which puts its uncaught exception's
# name and text first in stderr, as the verdict's message, where Python
# would put "Traceback (most recent call last):" (the first line is the
# message whatever the checker wrote after it); its status stays Python's
# own, 1 (see the module's docstring), a KeyboardInterrupt's too (Python
# would end by SIGINT). The checker runs in the wrapper's own module,
# `__main__`, as `python3 main.py` runs it: the wrapper leaves no name of its
# own there but `__file__` (a checker that forgets `import sys` fails as
# ever), and takes what it needs after the checker anew (a checker may well
# name something `type` or `print`). Nothing is imported before the checker:
# runpy (with pkgutil and typing) and traceback once cost 8 ms a case, more
# than the checker's work. An interactor runs through the same, with a
# message of its own for one exception (interactive.py).
_WRAPPER_START = """import sys
sys.argv = sys.argv[1:]
__file__ = sys.argv[0]
del sys
try:
    exec(compile(open(__file__, "rb").read(), __file__, "exec"))
"""
_WRAPPER_END = """except SystemExit:
    raise
except BaseException as exc:
    import builtins, sys, traceback
    builtins.print(f"{builtins.type(exc).__name__}: {exc}", file=sys.stderr)
    traceback.print_exc()
    sys.exit(1)
"""


def python_wrapper(said: Tuple[Tuple[str, str], ...] = ()) -> str:
    """The wrapper above; `said`: (exception name, message) for exceptions
    that end the run with status 1 and that message instead of their own."""
    return _WRAPPER_START + ''.join(
        f'except {name}:\n    import builtins, sys\n'
        f'    builtins.print({message!r}, file=sys.stderr)\n    sys.exit(1)\n'
        for name, message in said) + _WRAPPER_END


PYTHON_CHECKER = python_wrapper()


@dataclasses.dataclass(frozen=True)
class CheckerLimits:
    time_ms: int
    memory_kb: int
    output_bytes: int  # per stream; beyond it the checker is over its limits
    # Wall time it may spend waiting on another run (an interactor on its
    # program, whose own wall bound this is).
    waits_ms: int = 0

    @property
    def wall_ms(self) -> int:
        return 2 * self.time_ms + 1000 + self.waits_ms


def checker_request(toolchain: Toolchain,
                    limits: CheckerLimits,
                    args: Tuple[str, ...] = (INPUT, OUTPUT, ANSWER),
                    python_wrapper: str = PYTHON_CHECKER) -> RunRequest:
    """A checker's run on one case (an interactor's too, with its own
    `args` and `python_wrapper`)."""
    argv = toolchain.run_argv
    if toolchain.artifact == '':  # Python: the checker's source is what runs
        argv = (argv[0], '-c', python_wrapper) + argv[1:]
    return RunRequest(kind=Kind.CASE,
                      argv=argv + args,
                      workdir=CASE_DIR,
                      cpu_ms=limits.time_ms,
                      wall_ms=limits.wall_ms,
                      mem_kb=limits.memory_kb,
                      data_kb=2 * limits.memory_kb + 64 * 1024,
                      stack_kb=-1,
                      fsize=limits.output_bytes + 1,
                      out_send=CHECKER_OUTPUT_BYTES,
                      err_send=CHECKER_OUTPUT_BYTES,
                      nofile=64,
                      zygote=toolchain.zygote,
                      env=ENV)


def checker_verdict(run: RunResponse,
                    limits: CheckerLimits,
                    role: str = 'checker') -> Tuple[Status, str]:
    """AC, WA or JE, and the message that says why. `role`: what the run
    was, 'checker' or 'interactor' (the same convention judges both)."""
    failed = _failed_on_its_own(run, limits, role)
    if failed is not None:
        return Status.JE, failed
    message = _first_line(run.stderr) or _first_line(run.stdout)
    if run.exit_code == 0:
        return Status.AC, message
    if run.exit_code == 1:
        return Status.WA, message
    if run.exit_code == 2:
        return Status.WA, f'presentation error: {message}' if message else 'presentation error'
    if run.exit_code == 3:
        return Status.JE, f'the {role} failed: {message}' if message else f'the {role} failed'
    return Status.JE, f'the {role} exited with {run.exit_code}'


def sio2_verdict(run: RunResponse, limits: CheckerLimits) -> Tuple[Status, str, int]:
    """AC (with the percentage it earns), WA or JE, and the comment."""
    failed = _failed_on_its_own(run, limits, 'checker')
    if failed is not None:
        return Status.JE, failed, 0
    if run.exit_code != 0:
        return Status.JE, f'the checker is broken: it exited with {run.exit_code}', 0
    lines = run.stdout.decode('utf-8', errors='replace').split('\n', 3)[:3]
    first = lines[0].strip()
    if first not in ('OK', 'WRONG'):
        return Status.JE, f'the checker is broken: its first line is {first[:40]!r}', 0
    note = lines[1].strip()[:MESSAGE_CHARS] if len(lines) > 1 else ''
    percent = 100
    if len(lines) > 2 and lines[2].strip():
        word = lines[2].strip()
        if not _PERCENT.fullmatch(word) or int(word) > 100:
            return Status.JE, f'the checker is broken: {word[:40]!r} is not a percentage', 0
        percent = int(word)
    return (Status.AC, note, percent) if first == 'OK' else (Status.WA, note, 0)


_PERCENT = re.compile(r'[0-9]{1,3}')


def _failed_on_its_own(run: RunResponse, limits: CheckerLimits, role: str) -> Optional[str]:
    """Why a checker's (or interactor's) run says nothing of the output:
    out of its limits, or killed."""
    if (run.cpu_timeout or run.wall_timeout or run.cpu_us > limits.time_ms * 1000
            or run.wall_us > limits.wall_ms * 1000):
        return f'the {role} ran out of time ({limits.time_ms} ms)'
    if run.mem_exceeded or run.maxrss_kb > limits.memory_kb or run.oom_kills:
        return f'the {role} ran out of memory ({limits.memory_kb // 1024} MiB)'
    if run.out_size > limits.output_bytes or run.err_size > limits.output_bytes:
        return f'the {role} wrote more than {limits.output_bytes} bytes'
    if run.signal:
        return f'the {role} was killed by signal {run.signal}'
    return None


def checked_result(program: CaseResult,
                   status: Status,
                   message: str,
                   report_limit: int,
                   role: str = 'checker',
                   percent: int = 100) -> CaseResult:
    """The case as the checker (or the interactor) judged it: the program's
    own measurements and outputs, its stderr after the judging program's
    message (first, so that a report shortened to fit keeps it; the two
    within the report's limit for an output), which is also the case's
    note."""
    if status is Status.JE:
        return CaseResult.judge_error(f'{role}: {message}')
    stderr = program.stderr
    if message:
        stderr = report_text(f'{role}: {message}\n{stderr}'.encode(), report_limit)
    return dataclasses.replace(program, status=status, stderr=stderr, note=message, percent=percent)


def stops_for_the_job(message: str) -> bool:
    """A checker's or interactor's failure that would come again on every
    case (out of time, memory or room, killed): the job's later cases are
    not given to it (JobState.stopped)."""
    return any(
        message.startswith(f'the {role} {what}') for role in ('checker', 'interactor')
        for what in ('ran out', 'wrote more', 'was killed'))


def _first_line(data: bytes) -> str:
    for line in data.decode('utf-8', errors='replace').splitlines():
        if line.strip():
            return line.strip()[:MESSAGE_CHARS]
    return ''


def problem_program_limits(settings: SandboxSettings, role: Role) -> CheckerLimits:
    """A checker's or interactor's own limits (settings), within what a
    sandbox holds beside its own needs."""
    room_kb = (settings.container_memory_bytes - settings.headroom_bytes) // 1024
    time_ms, memory_kb = ((settings.checker_time_ms,
                           settings.checker_memory_kb) if role is Role.CHECKER else
                          (settings.interactor_time_ms, settings.interactor_memory_kb))
    return CheckerLimits(time_ms=time_ms,
                         memory_kb=min(memory_kb, room_kb),
                         output_bytes=settings.output_limit + CHECKER_OUTPUT_BYTES)


class CheckerGrader(StandardGrader):

    def grade(self, case: CaseSpec) -> CaseResult:
        unusable = self._problem_program_unusable()
        if unusable is not None:
            return unusable
        result, run = self.program_result(case)
        if run is None or result.status not in (Status.AC, Status.WA):
            return result  # the program's own failure wins over any checker
        return self._check(case, result, run)

    def _check(self, case: CaseSpec, program: CaseResult, run: RunResponse) -> CaseResult:
        """The checker's judgement of the program's output, in a sandbox of
        its own: it reads the input, the output and the answer, which never
        enter the submission's sandbox."""
        built = self.state.problem_build
        limits = problem_program_limits(self._settings, Role.CHECKER)
        want = Want(problem_key(self.state.job.key, Role.CHECKER),
                    self._context.images[built.language.toolchain.image_kind], stager(built.folder))
        request = checker_request(built.language.toolchain, limits)
        if self.state.job.judging.checker is CheckerConvention.SIO2:
            judge = lambda checked, _: sio2_verdict(checked, limits)
        else:
            judge = lambda checked, _: checker_verdict(checked, limits) + (100, )
        output = self._context.scratch / f'output-{uuid.uuid4().hex}'
        files = {INPUT: case.input_path, OUTPUT: output, ANSWER: case.answer_path}
        try:
            output.write_bytes(run.stdout)  # bounded by the output limit
            output.chmod(0o444)
            status, message, percent = self._engine.retried(
                lambda: self._engine.run(want, request, None, judge, files), lambda exc:
                (Status.JE, f'sandbox failure: {self._context.diagnose(built.language, exc)}', 0))
        except OSError as exc:
            raise disk_fault(exc, 'the sandbox folder') or exc
        finally:
            output.unlink(missing_ok=True)
        if status is Status.JE and stops_for_the_job(message):
            # It would cost its limits again on every later case of the job.
            self.state.stop_problem_program(message)
        return checked_result(program,
                              status,
                              message,
                              self._settings.report_limit,
                              percent=percent)
