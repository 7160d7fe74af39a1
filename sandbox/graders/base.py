"""What every grader has: the services it runs on, its job's state, and the
cases decided before any run."""
import dataclasses
import pathlib
import signal
import time
from typing import Callable, Dict, Optional

from sandbox.building import Diagnose
from sandbox.engine import RunEngine, Want
from sandbox.job_state import JobState
from sandbox.results import CaseResult, Status
from sandbox.settings import SandboxSettings


@dataclasses.dataclass(frozen=True)
class Context:
    """What graders run on: the engine, the settings, a host folder for what
    a case passes between its runs (a checker's copy of the output, an
    interactive case's FIFOs), which only the host writes, and what a run
    that failed twice means (`diagnose`)."""
    engine: RunEngine
    settings: SandboxSettings
    scratch: pathlib.Path
    diagnose: Diagnose
    pause: Callable[[float], None] = time.sleep  # a wait the judging wants (a TLE's rerun)

    @property
    def images(self) -> Dict[str, str]:
        return self.settings.images


class Grader:
    """Judges the cases of one job (its state: `JobState`). One instance per
    job generation, made when it compiled, dropped when it is released."""

    def __init__(self, context: Context, state: JobState):
        self._context = context
        self._settings = context.settings
        self._engine = context.engine
        self.state = state

    def grade(self, case) -> CaseResult:
        raise NotImplementedError

    def _program_want(self) -> Want:
        return self.state.build.want(self.state.job.key, self._context.images)

    def _failed(self, exc: Exception) -> CaseResult:
        """A run of the program that failed twice: the host's fault
        (raised), else JE."""
        return CaseResult.judge_error(
            f'sandbox failure: {self._context.diagnose(self.state.build.language, exc)}')

    def _without_a_run(self, case) -> Optional[CaseResult]:
        """A case decided before any run: JE for a job that was not compiled,
        MLE for a program whose static data alone exceeds the limit."""
        build = self.state.build
        toolchain = build.language.toolchain
        if not (build.folder / (toolchain.artifact or toolchain.source_name)).is_file():
            return CaseResult.judge_error('the job was not compiled')
        if build.static_bytes > case.memory_limit_kb * 1024:
            return CaseResult(status=Status.MLE,
                              exit_code=-signal.SIGSEGV,
                              memory_kb=build.static_bytes // 1024,
                              stderr='the program\'s static data exceeds the memory limit')
        return None

    def _problem_program_unusable(self) -> Optional[CaseResult]:
        """JE when the problem's checker or interactor did not build, or ran
        out of its limits on an earlier case of the job (it would again),
        else None."""
        role = self.state.job.problem_program.role.value
        built = self.state.problem_build
        if built is None or not built.ok:
            # The compiler's words quote the problem's source: they go to
            # the log, not into the student's report.
            return CaseResult.judge_error(f'the problem\'s {role} could not be built '
                                          '(the runner\'s log says why)')
        if self.state.stopped is not None:
            return CaseResult.judge_error(
                f'{role}: {self.state.stopped} (on an earlier case; not run again)')
        return None
