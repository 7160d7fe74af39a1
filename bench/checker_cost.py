"""A case judged by a Python checker through the sandbox against the same
program and checker run directly, in one run.

    python -m bench.checker_cost [--jobs 8] [--cases 6] [--json]

Each job is a C submission (a + b) on `--cases` cases, judged by a trivial
Python checker that compares tokens, as the dispatcher judges it: compile,
the cases in turn, release, on a warm sandbox. Directly: the compiled
program, then `python3 checker.py INPUT OUTPUT ANSWER`, on each case.
Prints the median case both ways (the job's first case apart: it starts the
checker's zygote) and their ratio. Figures are printed, never asserted.
"""
import argparse
import json
import pathlib
import statistics
import subprocess
import tempfile
import time
import uuid

import docker

from bench.sandboxes import running
from bench.small_job import ENV, SOURCE, make_cases
from sandbox.job import ProblemProgram, Role, SandboxJob
from sandbox.languages import Language
from sandbox.results import Status
from sandbox.settings import SandboxSettings

CHECKER = '''import sys
got = open(sys.argv[2]).read().split()
want = open(sys.argv[3]).read().split()
sys.exit(0 if got == want else 1)
'''


def in_sandbox(sandbox, folder: pathlib.Path, cases) -> list:
    """Each case's seconds, for one job."""
    (folder / 'src').mkdir(parents=True)
    (folder / 'src' / 'main.c').write_text(SOURCE.replace('JOB', uuid.uuid4().hex))
    (folder / 'checker').mkdir()
    (folder / 'checker' / 'checker.py').write_text(CHECKER)
    job = SandboxJob(key=f'checked-{uuid.uuid4()}',
                     language=Language.C,
                     source_dir=folder / 'src',
                     problem_program=ProblemProgram(Role.CHECKER, Language.PYTHON,
                                                    folder / 'checker'))
    try:
        assert sandbox.compile(job).ok
        seconds = []
        for case in cases:
            start = time.perf_counter()
            result = sandbox.run_case(job, case)
            seconds.append(time.perf_counter() - start)
            assert result.status is Status.AC, result
        return seconds
    finally:
        sandbox.release(job.key)


def directly(folder: pathlib.Path, cases) -> list:
    folder.mkdir(parents=True)
    (folder / 'main.c').write_text(SOURCE.replace('JOB', uuid.uuid4().hex))
    (folder / 'checker.py').write_text(CHECKER)
    toolchain = Language.C.toolchain
    subprocess.run(toolchain.compile_argv, cwd=folder, env=ENV, check=True, capture_output=True)
    seconds = []
    for case in cases:
        start = time.perf_counter()
        with open(case.input_path, 'rb') as stdin:
            run = subprocess.run(toolchain.run_argv,
                                 cwd=folder,
                                 env=ENV,
                                 stdin=stdin,
                                 capture_output=True)
        (folder / 'output').write_bytes(run.stdout)
        checked = subprocess.run(
            ['python3', 'checker.py',
             str(case.input_path), 'output',
             str(case.answer_path)],
            cwd=folder,
            env=ENV)
        seconds.append(time.perf_counter() - start)
        assert checked.returncode == 0
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--jobs', type=int, default=8)
    parser.add_argument('--cases', type=int, default=6)
    parser.add_argument('--json', action='store_true', help='print the figures as one JSON object')
    args = parser.parse_args()
    client = docker.from_env(timeout=60)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        cases = make_cases(tmp / 'cases', args.cases)
        ours, direct = [], []
        with running(SandboxSettings(root=tmp / 'root', max_containers=4), client) as sandbox:
            in_sandbox(sandbox, tmp / 'warm-up', cases)  # containers to reuse from now on
            # In turn, so that both see the same moments of the machine.
            for n in range(args.jobs):
                ours.append(in_sandbox(sandbox, tmp / f'ours-{n}', cases))
                direct.append(directly(tmp / f'direct-{n}', cases))
    first = statistics.median(job[0] for job in ours)
    later = statistics.median(seconds for job in ours for seconds in job[1:])
    plain = statistics.median(seconds for job in direct for seconds in job)
    figures = {
        'jobs': args.jobs,
        'cases_per_job': args.cases,
        'case_ms': {
            'sandbox_first': first * 1000,
            'sandbox_later': later * 1000,
            'direct': plain * 1000
        },
        'ratio_later': later / plain,
    }
    if args.json:
        print(json.dumps(figures, indent=1))
        return
    print(f'{args.jobs} C jobs of {args.cases} cases, each judged by a Python checker, median:')
    print(f'  a case in the sandbox  {later * 1000:8.2f} ms ({first * 1000:.2f} ms for a job\'s '
          'first, which starts the checker\'s zygote)')
    print(f'  the same directly      {plain * 1000:8.2f} ms (the program, then python3 checker.py)')
    print(f'  ratio                  {later / plain:8.2f} x')


if __name__ == '__main__':
    main()
