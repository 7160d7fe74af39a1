"""An interactive case's verdict: who wins when the program and the interactor
both ended badly, and what a Python interactor's last words mean."""
import dataclasses
import os
import signal
import subprocess
import sys

import pytest

from sandbox.graders.checker import CheckerLimits
from sandbox.graders.interactive import (PYTHON_INTERACTOR, STOPPED_TALKING, interaction_result,
                                         interactive_limits, interactor_request, interactor_verdict,
                                         program_request)
from sandbox.languages import Language
from sandbox.results import Status
from sandbox.verdict import Limits
from tests.unit.fakes import CASE_REQUEST, ended_run

JUDGE = CheckerLimits(time_ms=1000, memory_kb=65536, output_bytes=1 << 20)
LIMITS = Limits(time_ms=1000, memory_kb=65536, output_bytes=1 << 20)
PROGRAM = ended_run(stdout=b'', out_size=0)
INTERACTOR = ended_run(stdout=b'', out_size=0)
C = Language.C.toolchain
PYTHON = Language.PYTHON.toolchain


def result(program=PROGRAM, interactor=INTERACTOR, toolchain=C):
    return interaction_result(program, LIMITS, toolchain, interactor_verdict(interactor, JUDGE),
                              8192)


@pytest.mark.parametrize('change, status', [
    ({}, Status.AC),
    ({
        'exit_code': 1
    }, Status.WA),
    ({
        'exit_code': 2
    }, Status.WA),
    ({
        'signal': signal.SIGPIPE
    }, Status.WA),
    ({
        'exit_code': 3
    }, Status.JE),
    ({
        'signal': signal.SIGSEGV
    }, Status.JE),
    ({
        'wall_timeout': True
    }, Status.JE),
    ({
        'signal': signal.SIGPIPE,
        'wall_timeout': True
    }, Status.JE),
])
def test_the_interactors_end_decides_a_program_that_ended_well(change, status):
    assert result(interactor=dataclasses.replace(INTERACTOR, **change)).status is status


def test_an_interactor_killed_by_sigpipe_was_talking_to_a_program_that_stopped_reading():
    killed = dataclasses.replace(INTERACTOR, signal=signal.SIGPIPE)
    assert interactor_verdict(killed, JUDGE) == (Status.WA, STOPPED_TALKING)


@pytest.mark.parametrize('program', [
    dataclasses.replace(PROGRAM, signal=signal.SIGSEGV),
    dataclasses.replace(PROGRAM, exit_code=1),
    dataclasses.replace(PROGRAM, cpu_timeout=True),
    dataclasses.replace(PROGRAM, mem_exceeded=True),
])
def test_the_interactors_own_failure_is_je_whatever_the_program_did(program):
    """A program reading the end of a crashed interactor may well fail after it."""
    crashed = dataclasses.replace(INTERACTOR, signal=signal.SIGSEGV)
    judged = result(program=program, interactor=crashed)
    assert judged.status is Status.JE and judged.stderr.startswith('interactor: ')


@pytest.mark.parametrize('program, status', [
    (dataclasses.replace(PROGRAM, cpu_timeout=True), Status.TLE),
    (dataclasses.replace(PROGRAM, wall_timeout=True), Status.TLE),
    (dataclasses.replace(PROGRAM, mem_exceeded=True), Status.MLE),
    (dataclasses.replace(PROGRAM, signal=signal.SIGABRT), Status.RE),
    (dataclasses.replace(PROGRAM, exit_code=1), Status.RE),
    (dataclasses.replace(PROGRAM, err_size=(1 << 20) + 1), Status.OLE),
])
@pytest.mark.parametrize('interactor_exit', [0, 1])
def test_the_programs_own_failure_wins_over_the_interactors_verdict(program, status,
                                                                    interactor_exit):
    said = dataclasses.replace(INTERACTOR, exit_code=interactor_exit)
    assert result(program=program, interactor=said).status is status


def test_a_program_dead_of_a_closed_pipe_gets_the_interactors_verdict():
    for said, status in ((0, Status.AC), (1, Status.WA)):
        interactor = dataclasses.replace(INTERACTOR, exit_code=said)
        piped = dataclasses.replace(PROGRAM, signal=signal.SIGPIPE)
        assert result(program=piped, interactor=interactor).status is status
        python = dataclasses.replace(PROGRAM,
                                     exit_code=1,
                                     stderr_tail=b'Traceback ...\nBrokenPipeError: [Errno 32] '
                                     b'Broken pipe\n')
        assert result(program=python, interactor=interactor, toolchain=PYTHON).status is status
        past_the_end = dataclasses.replace(python,
                                           stderr_tail=b'EOFError: EOF when reading a line\n')
        assert result(program=past_the_end, interactor=interactor,
                      toolchain=PYTHON).status is status


def test_a_closed_pipe_does_not_excuse_the_programs_limits():
    piped = dataclasses.replace(PROGRAM, signal=signal.SIGPIPE, cpu_us=1_500_000)
    assert result(program=piped).status is Status.TLE


def test_a_python_program_that_only_says_broken_pipe_earlier_still_failed():
    said = dataclasses.replace(PROGRAM,
                               exit_code=1,
                               stderr_tail=b'BrokenPipeError: maybe\nValueError: mine\n')
    assert result(program=said, toolchain=PYTHON).status is Status.RE


def test_the_interactors_message_starts_the_cases_stderr():
    said = dataclasses.replace(INTERACTOR, exit_code=1, stderr=b'not found in 25 guesses\n')
    judged = result(program=dataclasses.replace(PROGRAM, stderr=b'debug'), interactor=said)
    assert judged.status is Status.WA
    assert judged.stderr == 'interactor: not found in 25 guesses\ndebug'


def test_both_sides_open_the_pipe_towards_the_program_first():
    program = program_request(CASE_REQUEST, LIMITS, '/box/fifo')
    interactor = interactor_request(PYTHON, JUDGE, '/box/fifo')
    assert (program.fifo_in, program.fifo_out) == ('/box/fifo/to-program', '/box/fifo/from-program')
    assert (interactor.fifo_in, interactor.fifo_out) == (program.fifo_out, program.fifo_in)
    # The program opens its stdin first, the interactor its stdout: the same FIFO.
    assert not program.fifo_out_first and interactor.fifo_out_first
    # The program's writes are counted; the interactor's to a gone program dropped.
    assert (program.fifo_out_max, interactor.fifo_out_max) == (1 << 20, 0)
    assert interactor.fifo_out_drop and not program.fifo_out_drop
    assert interactor.argv[:4] == ('python3', '-c', PYTHON_INTERACTOR, 'main.py')
    assert interactor.argv[-3:] == ('case/input', '/dev/null', 'case/answer')
    assert not interactor.zygote  # exec'd, as every run with FIFOs is


def test_the_programs_wall_bound_is_its_own_plus_what_the_interactor_thinks():
    program_limits, interactor_limits = interactive_limits(LIMITS, JUDGE)
    program = program_request(CASE_REQUEST, program_limits, '/box/fifo')
    interactor = interactor_request(PYTHON, interactor_limits, '/box/fifo')
    # A silent pair costs the program's own bound (3 T + 1 s); the
    # interactor's CPU time, told through the clock, adds up to its limit.
    assert program.wall_ms == 3 * LIMITS.time_ms + 1000
    assert program.wall_credit_ms == JUDGE.time_ms
    assert program.clock_in == interactor.clock_out == '/box/fifo/clock'
    assert not program.clock_out and not interactor.clock_in and not interactor.wall_credit_ms
    # The interactor outlasts the program's longest bound.
    assert interactor.wall_ms > program.wall_ms + program.wall_credit_ms


def _python_interactor(tmp_path, body: str, program_input: bytes = b''):
    """An interactor's source run here through its wrapper, as in a
    sandbox, on pipes (buffered as there): its status, and its verdict and
    message."""
    (tmp_path / 'main.py').write_text(body)
    env = {k: v for k, v in os.environ.items() if k != 'PYTHONUNBUFFERED'}
    process = subprocess.Popen([sys.executable, '-c', PYTHON_INTERACTOR, 'main.py'],
                               cwd=tmp_path,
                               env=env,
                               stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    _, err = process.communicate(program_input, timeout=60)
    err = err or b''
    run = ended_run(exit_code=process.returncode,
                    stderr=err,
                    stderr_tail=err[-4096:],
                    err_size=len(err),
                    stdout=b'',
                    out_size=0)
    return process.returncode, interactor_verdict(run, JUDGE)


@pytest.mark.parametrize(
    'body, code, verdict',
    [
        ('import sys\nprint("?", flush=True)\nsys.exit(0)\n', 0, (Status.AC, '')),
        # Python's own status, a wrong answer; the exception named as the message.
        ('print("?", flush=True)\nint("x")\n', 1,
         (Status.WA, "ValueError: invalid literal for int() with base 10: 'x'")),
        ('def ask():\n    raise KeyError("k")\ntry:\n    ask()\nexcept KeyError:\n'
         '    raise RuntimeError("then this")\n', 1, (Status.WA, 'RuntimeError: then this')),
        ('input()\n', 1, (Status.WA, STOPPED_TALKING)),  # the program ended without a word
        ('class Gone(EOFError):\n    pass\nraise Gone("left")\n', 1, (Status.WA, STOPPED_TALKING)),
        # The first line of the exception's text, never a later one.
        ('raise AssertionError("wrong\\nexpected: 42")\n', 1, (Status.WA, 'AssertionError: wrong')),
        ('raise KeyboardInterrupt\n', 1, (Status.WA, 'KeyboardInterrupt:')),
        # A flushing print of its own: the wrapper's words still go to stderr.
        ('import sys\ndef print(*a, **k):\n    sys.stdout.write(" ".join(map(str, a)) + "\\n")\n'
         '    sys.stdout.flush()\ninput()\n', 1, (Status.WA, STOPPED_TALKING)),
        ('type = None\nint("x")\n', 1,
         (Status.WA, "ValueError: invalid literal for int() with base 10: 'x'")),
        ('import sys\nsys.exit(1)\n', 1, (Status.WA, '')),
        ('import sys\nsys.exit("no: 7 is not it")\n', 1, (Status.WA, 'no: 7 is not it')),
        ('import sys\nsys.exit(2)\n', 2, (Status.WA, 'presentation error')),
    ])
def test_a_python_interactors_end(tmp_path, body, code, verdict):
    returncode, judged = _python_interactor(tmp_path, body)
    assert (returncode, judged) == (code, verdict)
