"""A whole small C job through the sandbox against the same work done directly,
in one run.

    python -m bench.small_job [--jobs 30] [--cases 5] [--json]

Each job is a build of its own (the compile cache serves none of them): the
sandbox compiles it, judges `--cases` cases and releases it, as the
dispatcher does, one job after another on a warm sandbox (its containers
started, as on a runner that has judged before). Directly: the toolchain's
own compile command and the program run on each case's input, in a folder
of the job's own. Prints the median job both ways, their ratio, and the
median per-case cost both ways. Figures are printed, never asserted.
"""
import argparse
import json
import pathlib
import shutil
import statistics
import subprocess
import tempfile
import time
import uuid

import docker

from bench.sandboxes import running
from sandbox.docker_sandbox import DockerSandbox
from sandbox.job import CaseSpec, SandboxJob
from sandbox.languages import Language
from sandbox.results import Status
from sandbox.settings import SandboxSettings

# The PATH the sandbox gives its runs: the same programs, directly.
ENV = {'PATH': '/usr/local/bin:/usr/bin:/bin', 'LANG': 'C.UTF-8'}
SOURCE = ('#include <stdio.h>\nint main(void){long long a,b;if(scanf("%lld %lld",&a,&b)!=2)'
          'return 1;printf("%lld\\n",a+b);return 0;}\n/* job JOB */\n')


def make_cases(folder: pathlib.Path, count: int):
    folder.mkdir(parents=True)
    cases = []
    for n in range(count):
        (folder / f'{n}.in').write_text(f'{n} {n * 7}\n')
        (folder / f'{n}.out').write_text(f'{n * 8}\n')
        cases.append(CaseSpec(folder / f'{n}.in', folder / f'{n}.out', 1000, 65536))
    return cases


def in_sandbox(sandbox: DockerSandbox, folder: pathlib.Path, cases) -> tuple:
    """(whole job, seconds per case), one fresh build."""
    src = folder / 'src'
    src.mkdir(parents=True)
    (src / 'main.c').write_text(SOURCE.replace("JOB", uuid.uuid4().hex))
    job = SandboxJob(key=f'small-{uuid.uuid4()}', language=Language.C, source_dir=src)
    start = time.perf_counter()
    assert sandbox.compile(job).ok
    case_start = time.perf_counter()
    for case in cases:
        result = sandbox.run_case(job, case)
        assert result.status is Status.AC, result
    case_end = time.perf_counter()
    sandbox.release(job.key)
    return time.perf_counter() - start, (case_end - case_start) / len(cases)


def directly(folder: pathlib.Path, cases) -> tuple:
    toolchain = Language.C.toolchain
    folder.mkdir(parents=True)
    start = time.perf_counter()
    (folder / 'main.c').write_text(SOURCE.replace("JOB", uuid.uuid4().hex))
    subprocess.run(toolchain.compile_argv, cwd=folder, env=ENV, check=True, capture_output=True)
    case_start = time.perf_counter()
    for case in cases:
        with open(case.input_path, 'rb') as stdin:
            run = subprocess.run(toolchain.run_argv,
                                 cwd=folder,
                                 env=ENV,
                                 stdin=stdin,
                                 capture_output=True)
        assert run.stdout == case.answer_path.read_bytes()
    case_end = time.perf_counter()
    shutil.rmtree(folder)
    return time.perf_counter() - start, (case_end - case_start) / len(cases)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--jobs', type=int, default=30)
    parser.add_argument('--cases', type=int, default=5)
    parser.add_argument('--json', action='store_true', help='print the figures as one JSON object')
    args = parser.parse_args()
    client = docker.from_env(timeout=60)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        cases = make_cases(tmp / 'cases', args.cases)
        ours, direct = [], []
        with running(SandboxSettings(root=tmp / 'root', max_containers=2), client) as sandbox:
            in_sandbox(sandbox, tmp / 'warm-up', cases)  # a container to reuse from now on
            # In turn, so that both see the same moments of the machine.
            for n in range(args.jobs):
                ours.append(in_sandbox(sandbox, tmp / f'ours-{n}', cases))
                direct.append(directly(tmp / f'direct-{n}', cases))
    job_ours = statistics.median(t for t, _ in ours)
    job_direct = statistics.median(t for t, _ in direct)
    case_ours = statistics.median(c for _, c in ours)
    case_direct = statistics.median(c for _, c in direct)
    figures = {
        'jobs': args.jobs,
        'cases_per_job': args.cases,
        'job_ms': {
            'sandbox': job_ours * 1000,
            'direct': job_direct * 1000
        },
        'job_ratio': job_ours / job_direct,
        'case_ms': {
            'sandbox': case_ours * 1000,
            'direct': case_direct * 1000
        },
        'case_overhead_ms': (case_ours - case_direct) * 1000,
    }
    if args.json:
        print(json.dumps(figures, indent=1))
        return
    print(f'{args.jobs} small C jobs (compile + {args.cases} cases + release), each a build '
          'of its own, median:')
    print(f'  a job in the sandbox   {job_ours * 1000:8.1f} ms')
    print(f'  the same directly      {job_direct * 1000:8.1f} ms')
    print(f'  ratio                  {job_ours / job_direct:8.2f} x')
    print(f'  a case in the sandbox  {case_ours * 1000:8.2f} ms, directly {case_direct * 1000:.2f} '
          f'ms: {(case_ours - case_direct) * 1000:.2f} ms over')


if __name__ == '__main__':
    main()
