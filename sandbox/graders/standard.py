"""The standard grader: the program's run on the case's input, its output
compared with the answer (sandbox/compare.py), and a TLE near the limit run
once more (noise on a shared machine only ever adds time)."""
import dataclasses
import logging
import os
from typing import List, Optional, Tuple

from sandbox.faults import HostFault, disk_fault
from sandbox.graders.base import Grader
from sandbox.job import CaseSpec
from sandbox.protocol import RunRequest, RunResponse
from sandbox.results import CaseResult, Status
from sandbox.run_requests import case_request
from sandbox.verdict import Limits, case_result, worth_another_run

log = logging.getLogger(__name__)


class StandardGrader(Grader):

    def grade(self, case: CaseSpec) -> CaseResult:
        return self.program_result(case)[0]

    def program_result(self, case: CaseSpec) -> Tuple[CaseResult, Optional[RunResponse]]:
        """The case judged on the program's run alone, and that run (None
        when there was none)."""
        decided = self._without_a_run(case)
        if decided is not None:
            return decided, None
        try:
            expected = _whole_file(case.answer_path)
        except OSError as exc:
            fault = disk_fault(exc, 'the job folder')
            if fault is not None:
                raise fault from None
            return CaseResult.judge_error(f'cannot read the expected output: {exc.strerror}'), None
        toolchain = self.state.build.language.toolchain
        limits = Limits(time_ms=case.time_limit_ms,
                        memory_kb=case.memory_limit_kb,
                        output_bytes=self._settings.output_limit,
                        tle_margin=self._settings.tle_margin)
        request = case_request(toolchain, limits, self._settings)
        runs: List[RunResponse] = []

        def judged(run: RunResponse, _) -> CaseResult:
            runs.append(run)
            return case_result(run, limits, toolchain, expected, self._settings.report_limit,
                               self.state.job.judging.comparison)

        def once(request: RunRequest = request, alone: bool = False) -> CaseResult:
            return self._engine.run(self._program_want(),
                                    request,
                                    case.input_path,
                                    judged,
                                    alone=alone)

        first = self._engine.retried(once, self._failed)
        if not runs or not worth_another_run(runs[-1], limits) or not self.state.take_rerun():
            return first, runs[-1] if runs else None
        # Once more, and the lower time counts: a loaded host only ever adds.
        # The rerun starts from fresh state (a run init of its own,
        # supervisor.c): nothing the first run left reaches it. It runs
        # alone on the host: no neighbour slows it, and no run still under
        # way (another case of the same program) can pass it the answer.
        log.info('TLE within %.1fx the limit (%d ms of %d ms): running the case once more',
                 limits.tle_margin, runs[-1].cpu_us // 1000, limits.time_ms)
        fresh = dataclasses.replace(request, fresh=True)
        # It starts the wall bound after the first run started, whenever that
        # one ended: a first run that chose the moment of its end (it may
        # sleep up to the bound) told its rerun the answer by it, read off
        # the clock (AC at 1 ms for 1.2 times the limit).
        self._context.pause(max(0.0, limits.wall_ms / 1000 - runs[-1].wall_us / 1_000_000))
        try:
            again = self._engine.retried(lambda: once(fresh, alone=True), self._failed)
        except HostFault:
            return first, runs[0]  # the first run was judged; the host's fault comes again
        if len(runs) < 2 or again.status is Status.JE:
            return first, runs[0]
        before, after = runs[-2], runs[-1]
        if (after.stdout, after.exit_code, after.signal) != (before.stdout, before.exit_code,
                                                             before.signal):
            # Not the same run slower or faster: a program that behaves
            # differently when run again does not get to choose between them.
            return first, before
        return (first, before) if before.cpu_us <= after.cpu_us else (again, after)


def _whole_file(path) -> bytes:
    """A file's bytes in four system calls (open, stat, one read, close),
    where `read_bytes` makes nine: each lets go of the GIL, and at every
    case of an exam's load that is a switch between the runner's threads."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        size = os.fstat(fd).st_size
        data = os.read(fd, size + 1)  # all of it, and no more than was there
        if len(data) == size:
            return data
        # A read cut short (over 2 GiB, some file systems) or a file that
        # grew meanwhile: read on to its end.
        parts = [data]
        while parts[-1]:
            parts.append(os.read(fd, 1 << 20))
        return b''.join(parts)
    finally:
        os.close(fd)
