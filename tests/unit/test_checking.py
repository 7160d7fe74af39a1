"""What a checker's end means (testlib's exit codes), and how its message
joins the case."""
import dataclasses

import pytest

from sandbox.graders.checker import (sio2_verdict, CHECKER_OUTPUT_BYTES, CheckerLimits,
                                     checked_result, checker_verdict)
from sandbox.results import CaseResult, Status
from tests.unit.fakes import ended_run

LIMITS = CheckerLimits(time_ms=1000, memory_kb=65536, output_bytes=1 << 20)
REPORT_LIMIT = 8192
ENDED = ended_run(stdout=b'', out_size=0)


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
        'stderr': b'echo of the output'
    }, Status.AC, 'echo of the output'),
    ({
        'err_size': (1 << 20) + 1
    }, Status.JE, f'the checker wrote more than {1 << 20} bytes'),
])
def test_a_checkers_end_is_a_verdict_and_a_message(change, status, message):
    assert checker_verdict(dataclasses.replace(ENDED, **change), LIMITS) == (status, message)


def test_a_checker_that_ran_over_its_limits_never_accepts():
    """Whatever exit code a checker cut short reports, it is the judge's failure."""
    for over in ({'cpu_timeout': True}, {'mem_exceeded': True}, {'out_size': 10**9}):
        assert checker_verdict(dataclasses.replace(ENDED, **over), LIMITS)[0] is Status.JE


def test_the_checkers_message_comes_before_the_programs_stderr():
    program = CaseResult(status=Status.WA, exec_time_ms=5, memory_kb=100, stderr='debug line')
    judged = checked_result(program, Status.AC, '3 + 4 = 7', REPORT_LIMIT)
    assert judged == dataclasses.replace(program,
                                         status=Status.AC,
                                         stderr='checker: 3 + 4 = 7\ndebug line',
                                         note='3 + 4 = 7')
    assert checked_result(program, Status.WA, '', REPORT_LIMIT).stderr == 'debug line'


def test_the_checkers_message_and_the_programs_stderr_stay_within_the_report_limit():
    program = CaseResult(status=Status.WA, stderr='é' * 10)  # 20 bytes, at the limit
    judged = checked_result(program, Status.WA, 'wrong', 20)
    assert judged.stderr == 'checker: wrong\néé'  # 19 bytes: a third é would make 21


def test_a_checker_failure_is_a_judge_error_naming_it():
    program = CaseResult(status=Status.AC, stdout='42')
    assert checked_result(
        program, Status.JE, 'the checker exited with 7',
        REPORT_LIMIT) == CaseResult.judge_error('checker: the checker exited with 7')


def test_a_python_checker_runs_through_the_wrapper_that_names_its_exception():
    from sandbox.graders.checker import PYTHON_CHECKER, checker_request
    from sandbox.languages import Language
    request = checker_request(Language.PYTHON.toolchain, LIMITS)
    assert request.argv[:3] == ('python3', '-c', PYTHON_CHECKER)
    assert request.argv[3:] == ('main.py', 'case/input', 'case/output', 'case/answer')
    assert request.zygote  # forked from the checker's zygote: the argv is every case's
    compiled = checker_request(Language.C.toolchain, LIMITS)
    assert compiled.argv == ('./main', 'case/input', 'case/output', 'case/answer')
    assert not compiled.zygote


@pytest.mark.parametrize(
    'body, code, first_line',
    [
        ('import sys\nprint("ok", file=sys.stderr)\n', 0, 'ok'),
        ('int("x")\n', 1, "ValueError: invalid literal for int() with base 10: 'x'"),
        # The first line of the exception's text, never a later one.
        ('raise AssertionError("wrong\\nexpected: 42")\n', 1, 'AssertionError: wrong'),
        # What the checker wrote first stays first.
        ('import sys\nprint("4 != 5", file=sys.stderr)\nraise ValueError("x")\n', 1, '4 != 5'),
        ('raise KeyboardInterrupt\n', 1, 'KeyboardInterrupt: '),
        ('import sys\nsys.exit("no")\n', 1, 'no'),
        # Its own names: the wrapper's after the checker are its own.
        ('import sys\ntype = print = None\nsys = 0\nint("x")\n', 1,
         "ValueError: invalid literal for int() with base 10: 'x'"),
        # A checker that forgets `import sys` fails as under python3.
        ('from sys import argv\nsys.exit(0)\n', 1, "NameError: name 'sys' is not defined"),
        ('import sys\nsys.exit(3)\n', 3, ''),
        # It runs as `python3 main.py` runs it: as __main__, that module.
        ('import __main__, sys\nX = 1\nassert __name__ == "__main__" and __main__.X == 1\n'
         'assert sys.argv[0] == __file__ == "main.py"\nprint(len(sys.argv), file=sys.stderr)\n', 0,
         '4'),
    ])
def test_a_python_checker_ends_through_its_wrapper(tmp_path, body, code, first_line):
    import subprocess
    import sys
    from sandbox.graders.checker import PYTHON_CHECKER
    (tmp_path / 'main.py').write_text(body)
    done = subprocess.run([sys.executable, '-c', PYTHON_CHECKER, 'main.py', 'in', 'out', 'ans'],
                          cwd=tmp_path,
                          capture_output=True,
                          timeout=60)
    assert done.returncode == code, done.stderr
    assert (done.stderr.decode().splitlines() or [''])[0] == first_line


def test_only_failures_that_would_come_again_stop_the_checker():
    from sandbox.graders.checker import stops_for_the_job
    for reason in ('the checker ran out of time (1000 ms)', 'the checker was killed by signal 11',
                   'the checker wrote more than 5 bytes', 'the checker ran out of memory (1 MiB)'):
        assert stops_for_the_job(reason)
    assert not stops_for_the_job('the checker failed: bad answer file')  # one case's


def test_a_checker_out_of_its_limits_is_not_run_again_for_the_jobs_later_cases(tmp_path):
    from sandbox.graders.checker import CheckerGrader
    from sandbox.job import CaseSpec, Role
    from tests.unit.fakes import ScriptedEngine, grader_of

    def answer(want, request):
        # The program ends well; its checker runs out of time.
        return ENDED if want.job_key == 'j' else dataclasses.replace(ENDED, cpu_timeout=True)

    (tmp_path / 'in').write_bytes(b'1 2\n')
    (tmp_path / 'out').write_bytes(b'3\n')
    case = CaseSpec(tmp_path / 'in', tmp_path / 'out', 1000, 65536)
    engine = ScriptedEngine(answer)
    grader = grader_of(CheckerGrader, engine, tmp_path, problem_program=Role.CHECKER)
    first, second = grader.grade(case), grader.grade(case)
    assert [key for key, _ in engine.asked] == ['j', 'j/checker']
    assert first.status is second.status is Status.JE
    assert 'not run again' in second.stderr
    # A new generation (compiled again) would run it again.
    grader_of(CheckerGrader, engine, tmp_path, problem_program=Role.CHECKER).grade(case)
    assert [key for key, _ in engine.asked] == ['j', 'j/checker', 'j', 'j/checker']


@pytest.mark.parametrize('stdout, verdict', [
    (b'OK\n', (Status.AC, '', 100)),
    (b'OK', (Status.AC, '', 100)),
    (b'OK\nclose enough\n40\n', (Status.AC, 'close enough', 40)),
    (b'OK\r\nfine\r\n', (Status.AC, 'fine', 100)),
    (b'WRONG\nline 3 is off\n80', (Status.WA, 'line 3 is off', 0)),
])
def test_an_sio2_checker_says_ok_or_wrong_a_comment_and_a_percentage(stdout, verdict):
    assert sio2_verdict(dataclasses.replace(ENDED, stdout=stdout, exit_code=0), LIMITS) == verdict


@pytest.mark.parametrize('change', [
    {
        'exit_code': 1,
        'stdout': b'OK\n'
    },
    {
        'stdout': b''
    },
    {
        'stdout': b'ok\n'
    },
    {
        'stdout': b'ACCEPTED\n'
    },
    {
        'stdout': b'OK\n\n101\n'
    },
    {
        'stdout': b'OK\n\n-1\n'
    },
    {
        'stdout': b'OK\n\n50%\n'
    },
    {
        'signal': 9,
        'stdout': b'OK\n'
    },
    {
        'cpu_timeout': True,
        'stdout': b'OK\n'
    },
])
def test_a_broken_sio2_checker_is_a_judge_error(change):
    run = dataclasses.replace(ENDED, **dict({'exit_code': 0}, **change))
    status, message, percent = sio2_verdict(run, LIMITS)
    assert (status, percent) == (Status.JE, 0)
    assert 'checker' in message
