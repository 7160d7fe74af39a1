"""The interactive grader: the program and the problem's interactor run at
once, each in a sandbox of its own, joined by two pipes (protocol §5).

The interactor is run as `interactor INPUT OUTPUT ANSWER` (testlib's
convention: it reads the case's input and answer as files and may write
OUTPUT, which is discarded), with the program's stdout as its stdin and its
stdout as the program's stdin; its exit code decides, as a checker's does.
When several things went wrong, the first of these wins:

1. The interactor's own failure (a crash, exit 3 or another code, its own
   limits): JE. The judge failed, whatever the program did afterwards; a
   program reading the end of a crashed interactor's output may well fail.
2. The program's own failure: TLE, MLE, OLE, RE in the usual order. A program
   that died of the interactor's end (SIGPIPE writing to a pipe it had
   closed, or Python's BrokenPipeError, or an EOFError reading past the end
   of what it said) did not fail on its own: the interactor had ended the
   conversation, and its verdict stands.
3. The interactor's verdict: AC, or WA (a wrong answer, a presentation
   error, or a program that ended the conversation early: the interactor
   read an end of file). What the interactor writes to a program that has
   gone is dropped, never failed (the supervisor's relay), so its decision
   does not depend on how the two ended in time.
"""
import contextlib
import dataclasses
import os
import pathlib
import shutil
import signal
import uuid
from typing import Dict, Iterator, Tuple

from sandbox.container import BOX, FIFO_FOLDER
from sandbox.engine import Want, stager
from sandbox.graders.base import Grader
from sandbox.graders.checker import (ANSWER, INPUT, CheckerLimits, checked_result, checker_request,
                                     checker_verdict, problem_program_limits, python_wrapper,
                                     stops_for_the_job)
from sandbox.job import CaseSpec, Role
from sandbox.job_state import problem_key
from sandbox.languages import Toolchain
from sandbox.protocol import RunRequest, RunResponse
from sandbox.results import CaseResult, Status
from sandbox.run_requests import case_request
from sandbox.verdict import Limits, case_result, last_words_match

ROLE = 'interactor'
# The FIFOs of a case, by their names in each box's FIFO folder: both
# supervisors open TO_PROGRAM first; CLOCK carries the interactor's CPU time
# to the program's supervisor, which adds it to the program's wall bound.
TO_PROGRAM, FROM_PROGRAM, CLOCK = 'to-program', 'from-program', 'clock'
FIFOS = (TO_PROGRAM, FROM_PROGRAM, CLOCK)
# testlib's interactors write a file for a later checker; none reads it.
INTERACTOR_OUTPUT = '/dev/null'
STOPPED_TALKING = 'the program stopped reading or ended the conversation early'
# A Python interactor's uncaught exception ends it with Python's status 1, a
# wrong answer, as a checker's does (checker.py says why); its name and text
# come first in stderr, as the verdict's message. An end of file on its
# stdin is the program's doing (it ended early), and says so. (Its writes
# never fail: the supervisor's relay drops them once the program has gone.)
PYTHON_INTERACTOR = python_wrapper((('EOFError', STOPPED_TALKING), ))


def fifo_paths(folder: str) -> Tuple[str, str, str]:
    """TO_PROGRAM, FROM_PROGRAM and CLOCK below `folder`, as a run sees them."""
    return f'{folder}/{TO_PROGRAM}', f'{folder}/{FROM_PROGRAM}', f'{folder}/{CLOCK}'


def interactive_limits(limits: Limits, interactor: CheckerLimits) -> Tuple[Limits, CheckerLimits]:
    """The program's limits and the interactor's for one conversation. The
    program's wall bound is its own (3T + 1 s) and grows by the
    interactor's thinking, which it waits out, up to the interactor's time
    limit: a silent program costs its own bound, never the interactor's on
    top. The interactor's outlasts the program's longest, so that an
    interactor waiting on a program that sleeps never runs out before it
    (then the program, killed at its bound, was the one that stalled). A
    conversation is stopped at the limit: no TLE rerun."""
    program = dataclasses.replace(limits, tle_margin=1.0, extra_wall_ms=interactor.time_ms)
    return program, dataclasses.replace(interactor, waits_ms=program.wall_ms)


def program_request(request: RunRequest, limits: Limits, fifo_folder: str) -> RunRequest:
    """The program's case request, reading TO_PROGRAM and writing FROM_PROGRAM
    through a relay that stops it past its output limit (OLE): what a
    program makes its interactor read is bounded as a checker's input is,
    and is a stream (never the program's packets one by one). Its wall bound
    is its own, plus what CLOCK says the interactor thought. Exec'd, as
    every run with FIFOs is (never from the Python zygote)."""
    to_program, from_program, clock = fifo_paths(fifo_folder)
    return dataclasses.replace(request,
                               zygote=False,
                               wall_ms=limits.own_wall_ms,
                               wall_credit_ms=limits.extra_wall_ms,
                               clock_in=clock,
                               fifo_in=to_program,
                               fifo_out=from_program,
                               fifo_out_max=limits.output_bytes)


def interactor_request(toolchain: Toolchain, limits: CheckerLimits, fifo_folder: str) -> RunRequest:
    to_program, from_program, clock = fifo_paths(fifo_folder)
    request = checker_request(toolchain,
                              limits,
                              args=(INPUT, INTERACTOR_OUTPUT, ANSWER),
                              python_wrapper=PYTHON_INTERACTOR)
    # Its writes to a program that has gone are dropped, never failed: what
    # it decides (its exit code) stands, whatever the scheduling. Exec'd, as
    # every run with FIFOs is.
    return dataclasses.replace(request,
                               zygote=False,
                               clock_out=clock,
                               fifo_in=from_program,
                               fifo_out=to_program,
                               fifo_out_first=True,
                               fifo_out_drop=True)


def interactor_verdict(run: RunResponse, limits: CheckerLimits) -> Tuple[Status, str]:
    """AC, WA or JE, and why: a checker's mapping, but an interactor killed
    by SIGPIPE was writing to a program that had stopped reading."""
    status, message = checker_verdict(run, limits, ROLE)
    if status is Status.JE and run.signal == signal.SIGPIPE and message.startswith(
            f'the {ROLE} was killed'):
        return Status.WA, STOPPED_TALKING
    return status, message


def interaction_result(program: RunResponse, limits: Limits, toolchain: Toolchain,
                       judged: Tuple[Status, str], report_limit: int) -> CaseResult:
    """The case's result from the program's run and the interactor's
    verdict (`interactor_verdict`), in the order the module says."""
    status, message = judged
    if status is Status.JE:
        return CaseResult.judge_error(f'{ROLE}: {message}')
    if _died_of_a_closed_pipe(program, toolchain):
        # Judged as if it had ended well: its limits still count.
        program = dataclasses.replace(program, exit_code=0, signal=0)
    result = case_result(program, limits, toolchain, b'', report_limit)
    if result.status is not Status.AC:
        return result
    return checked_result(result, status, message, report_limit, ROLE)


def _died_of_a_closed_pipe(run: RunResponse, toolchain: Toolchain) -> bool:
    if run.signal == signal.SIGPIPE:
        return True
    return not run.signal and run.exit_code != 0 and last_words_match(run,
                                                                      toolchain.pipe_closed_line)


class InteractiveGrader(Grader):

    def grade(self, case: CaseSpec) -> CaseResult:
        decided = self._problem_program_unusable() or self._without_a_run(case)
        if decided is not None:
            return decided
        if self._settings.max_containers < 2:
            return CaseResult.judge_error('an interactive case needs two sandboxes at once '
                                          '(MAX_CONTAINER_NUMBER is 1)')
        toolchain = self.state.build.language.toolchain
        interactor = self.state.problem_build
        limits, interactor_limits = interactive_limits(
            Limits(time_ms=case.time_limit_ms,
                   memory_kb=case.memory_limit_kb,
                   output_bytes=self._settings.output_limit),
            problem_program_limits(self._settings, Role.INTERACTOR))
        fifo_folder = f'{BOX}/{FIFO_FOLDER}'
        requests = (program_request(case_request(toolchain, limits, self._settings), limits,
                                    fifo_folder),
                    interactor_request(interactor.language.toolchain, interactor_limits,
                                       fifo_folder))
        wants = (self._program_want(),
                 Want(problem_key(self.state.job.key, Role.INTERACTOR),
                      self._context.images[interactor.language.toolchain.image_kind],
                      stager(interactor.folder)))
        files = (None, {INPUT: case.input_path, ANSWER: case.answer_path})

        def conversation() -> CaseResult:
            with self._fifos() as fifos:
                program, interactor_run = self._engine.pair(wants, requests, files, fifos)
            status, message = interactor_verdict(interactor_run, interactor_limits)
            if status is Status.JE and stops_for_the_job(message):
                # It would cost its limits again on every later case of the job.
                self.state.stop_problem_program(message)
            return interaction_result(program, limits, toolchain, (status, message),
                                      self._settings.report_limit)

        return self._engine.retried(conversation, self._failed)

    @contextlib.contextmanager
    def _fifos(self) -> Iterator[Dict[str, pathlib.Path]]:
        """The case's FIFOs, made by the host in a folder of their own (the
        supervisors link them into both boxes), removed after the case."""
        folder = self._context.scratch / f'fifos-{uuid.uuid4().hex}'
        try:
            folder.mkdir()
            fifos = {name: folder / name for name in FIFOS}
            for path in fifos.values():
                os.mkfifo(path)
                os.chmod(path, 0o666)  # the supervisors' uid opens them
            yield fifos
        finally:
            shutil.rmtree(folder, ignore_errors=True)
