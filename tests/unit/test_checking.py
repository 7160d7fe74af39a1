"""What a checker's end means (testlib's exit codes), and how its message
joins the case."""
import dataclasses

import pytest

from sandbox.checking import (CHECKER_OUTPUT_BYTES, CheckerLimits, checked_result, checker_verdict)
from sandbox.protocol import RunResponse
from sandbox.results import CaseResult, Status

LIMITS = CheckerLimits(time_ms=1000, memory_kb=65536)
ENDED = RunResponse(exit_code=0,
                    signal=0,
                    wall_timeout=False,
                    cpu_timeout=False,
                    mem_exceeded=False,
                    cpu_us=1000,
                    wall_us=2000,
                    maxrss_kb=1024,
                    oom_kills=0,
                    out_size=0,
                    err_size=0,
                    stdout=b'',
                    stderr=b'',
                    stderr_tail=b'',
                    artifact_status='none',
                    artifact=None,
                    dirty=False,
                    wipe_us=0,
                    landlock_abi=7)


@pytest.mark.parametrize('change, status, message', [
    ({}, Status.AC, ''),
    ({
        'stderr': b'\n  ok 3 numbers  \nmore'
    }, Status.AC, 'ok 3 numbers'),
    ({
        'exit_code': 1,
        'stdout': b'expected 3'
    }, Status.WA, 'expected 3'),
    ({
        'exit_code': 2,
        'stderr': b'no number'
    }, Status.WA, 'presentation error: no number'),
    ({
        'exit_code': 3,
        'stderr': b'bad answer file'
    }, Status.JE, 'the checker failed: bad answer file'),
    ({
        'exit_code': 7
    }, Status.JE, 'the checker exited with 7'),
    ({
        'signal': 11
    }, Status.JE, 'the checker was killed by signal 11'),
    ({
        'cpu_timeout': True
    }, Status.JE, 'the checker ran out of time (1000 ms)'),
    ({
        'cpu_us': 1_000_001
    }, Status.JE, 'the checker ran out of time (1000 ms)'),
    ({
        'wall_timeout': True
    }, Status.JE, 'the checker ran out of time (1000 ms)'),
    ({
        'mem_exceeded': True
    }, Status.JE, 'the checker ran out of memory (64 MiB)'),
    ({
        'oom_kills': 1
    }, Status.JE, 'the checker ran out of memory (64 MiB)'),
    ({
        'err_size': CHECKER_OUTPUT_BYTES + 1,
        'exit_code': 0
    }, Status.JE, f'the checker wrote more than {CHECKER_OUTPUT_BYTES} bytes'),
])
def test_a_checkers_end_is_a_verdict_and_a_message(change, status, message):
    assert checker_verdict(dataclasses.replace(ENDED, **change), LIMITS) == (status, message)


def test_a_checker_that_ran_over_its_limits_never_accepts():
    """Whatever exit code a checker cut short reports, it is the judge's failure."""
    for over in ({'cpu_timeout': True}, {'mem_exceeded': True}, {'out_size': 10**9}):
        assert checker_verdict(dataclasses.replace(ENDED, **over), LIMITS)[0] is Status.JE


def test_the_checkers_message_ends_the_programs_stderr():
    program = CaseResult(status=Status.WA, exec_time_ms=5, memory_kb=100, stderr='debug line')
    judged = checked_result(program, Status.AC, '3 + 4 = 7')
    assert judged == dataclasses.replace(program,
                                         status=Status.AC,
                                         stderr='debug line\nchecker: 3 + 4 = 7')
    assert checked_result(program, Status.WA, '').stderr == 'debug line'


def test_a_checker_failure_is_a_judge_error_naming_it():
    program = CaseResult(status=Status.AC, stdout='42')
    assert checked_result(
        program, Status.JE,
        'the checker exited with 7') == CaseResult.judge_error('checker: the checker exited with 7')
