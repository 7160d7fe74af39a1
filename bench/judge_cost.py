"""What a checker and an interactor cost a case, against the built-in
comparison, in one run.

    python -m bench.judge_cost [--cases 40] [--json]

One C job of `--cases` cases (a + b) is judged five ways on warm sandboxes:
with the built-in comparison; with a C checker and with a Python checker
(both accept when the output is the answer); interactively, with a C
interactor and with a Python interactor (each writes the case's input to the
program, reads its reply and accepts the answer). Prints the median wall time
of a case each way and the ratio to the plain one. Figures are printed, never
asserted.
"""
import argparse
import json
import pathlib
import statistics
import tempfile
import time
import uuid

import docker

from bench.sandboxes import running
from sandbox.docker_sandbox import DockerSandbox
from sandbox.job import CaseSpec, ProblemProgram, Role, SandboxJob
from sandbox.languages import Language
from sandbox.results import Status
from sandbox.settings import SandboxSettings

PROGRAM = ('#include <stdio.h>\nint main(void){long long a,b;if(scanf("%lld %lld",&a,&b)!=2)'
           'return 1;printf("%lld\\n",a+b);return 0;}\n')
CHECKERS = {
    Language.C:
    ('checker.c', '#include <stdio.h>\nint main(int c, char **v) {\n'
     '    long long got, want;\n    FILE *o = fopen(v[2], "r"), *a = fopen(v[3], "r");\n'
     '    if (!o || !a || fscanf(a, "%lld", &want) != 1) return 3;\n'
     '    if (fscanf(o, "%lld", &got) != 1) return 2;\n'
     '    return got == want ? 0 : 1;\n}\n'),
    Language.PYTHON: ('checker.py', 'import sys\n'
                      'got = open(sys.argv[2]).read().split()\n'
                      'want = open(sys.argv[3]).read().split()\n'
                      'sys.exit(0 if got == want else 1)\n'),
}
INTERACTORS = {
    Language.C:
    ('interactor.c', '#include <stdio.h>\nint main(int c, char **v) {\n'
     '    long long a, b, got, want;\n    FILE *i = fopen(v[1], "r"), *w = fopen(v[3], "r");\n'
     '    if (!i || !w || fscanf(i, "%lld %lld", &a, &b) != 2 || fscanf(w, "%lld", &want) != 1)\n'
     '        return 3;\n'
     '    printf("%lld %lld\\n", a, b);\n    fflush(stdout);\n'
     '    if (scanf("%lld", &got) != 1) return 2;\n'
     '    return got == want ? 0 : 1;\n}\n'),
    Language.PYTHON: ('interactor.py', 'import sys\n'
                      'print(open(sys.argv[1]).read().strip(), flush=True)\n'
                      'want = open(sys.argv[3]).read().split()\n'
                      'sys.exit(0 if input().split() == want else 1)\n'),
}


def judge(sandbox: DockerSandbox, folder: pathlib.Path, cases, problem_program=None) -> list:
    src = folder / 'src'
    src.mkdir(parents=True)
    (src / 'main.c').write_text(PROGRAM)
    job = SandboxJob(key=uuid.uuid4().hex,
                     language=Language.C,
                     source_dir=src,
                     problem_program=problem_program)
    try:
        assert sandbox.compile(job).ok
        sandbox.run_case(job, cases[0])  # its sandboxes are warm from now on
        walls = []
        for case in cases:
            started = time.perf_counter()
            result = sandbox.run_case(job, case)
            walls.append(time.perf_counter() - started)
            assert result.status is Status.AC, result
        return walls
    finally:
        sandbox.release(job.key)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--cases', type=int, default=40)
    parser.add_argument('--json', action='store_true', help='print the figures as one JSON object')
    args = parser.parse_args()
    client = docker.from_env(timeout=60)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        data = tmp / 'data'
        data.mkdir()
        cases = []
        for n in range(args.cases):
            (data / f'{n}.in').write_text(f'{n} {n}\n')
            (data / f'{n}.out').write_text(f'{2 * n}\n')
            cases.append(CaseSpec(data / f'{n}.in', data / f'{n}.out', 1000, 65536))
        with running(SandboxSettings(root=tmp / 'root', max_containers=4), client) as sandbox:
            walls = {'plain': judge(sandbox, tmp / 'plain', cases)}
            for role, programs in ((Role.CHECKER, CHECKERS), (Role.INTERACTOR, INTERACTORS)):
                for language, (name, source) in programs.items():
                    way = f'{language.name} {role.value}'
                    folder = tmp / way.replace(' ', '-')
                    folder.mkdir()
                    (folder / name).write_text(source)
                    walls[way] = judge(sandbox, tmp / f'job-{way.replace(" ", "-")}', cases,
                                       ProblemProgram(role, language, folder))
    medians = {way: statistics.median(w) * 1000 for way, w in walls.items()}
    if args.json:
        print(json.dumps({'cases': args.cases, 'case_ms': medians}, indent=1))
        return
    print(f'{args.cases} cases of a C program, median wall time per case:')
    for way, ms in medians.items():
        print(f'  {way:<18} {ms:7.2f} ms   ({ms / medians["plain"]:.1f}x the plain case)')


if __name__ == '__main__':
    main()
