"""What the compile cache and the precompiled <bits/stdc++.h> save, in one run.

    python -m bench.compile_reuse [--submissions 100] [--cases 5] [--json]

1. A rejudge storm: N distinct submissions (C, C++ and Python in turn; each a
   build of its own), judged once (compile and `--cases` cases each), then
   judged again as new jobs with the same builds, as a testdata fix rejudges
   them. As a runner judges: MAX_CONTAINER_NUMBER's default of sandbox
   calls at once (8 workers), one run per core. Prints both walls and their
   ratio.
2. A C++ job that starts with `#include <bits/stdc++.h>` (compile and
   `--cases` cases), end to end, with the compile cache off so the compiler
   runs: the precompiled header is what it costs.

Figures are printed, never asserted.
"""
import argparse
import concurrent.futures
import json
import pathlib
import statistics
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

SOURCES = {
    Language.C: '#include <stdio.h>\nint main(void){long long a,b;scanf("%lld %lld",&a,&b);'
    'printf("%lld\\n",a+b);return 0;}\n',
    Language.CPP: '#include <iostream>\nint main(){long long a,b;std::cin>>a>>b;'
    'std::cout<<a+b<<"\\n";}\n',
    Language.PYTHON: 'a, b = map(int, input().split())\nprint(a + b)\n',
}
BITS = ('#include <bits/stdc++.h>\nusing namespace std;\nint main(){long long a,b;cin>>a>>b;'
        'vector<long long> v{a,b};cout<<accumulate(v.begin(),v.end(),0LL)<<"\\n";}\n')


def lay_out(folder: pathlib.Path, language: Language, source: str, cases: int):
    src = folder / 'src'
    src.mkdir(parents=True)
    (src / language.source_name).write_text(source)
    specs = []
    for n in range(cases):
        (folder / f'{n}.in').write_text(f'{n} 40\n')
        (folder / f'{n}.out').write_text(f'{n + 40}\n')
        specs.append(CaseSpec(folder / f'{n}.in', folder / f'{n}.out', 2000, 262144))
    return src, specs


def judge(sandbox: DockerSandbox, language: Language, src: pathlib.Path, specs) -> float:
    job = SandboxJob(key=uuid.uuid4().hex, language=language, source_dir=src)
    started = time.monotonic()
    try:
        assert sandbox.compile(job).ok
        for spec in specs:
            assert sandbox.run_case(job, spec).status is Status.AC
    finally:
        sandbox.release(job.key)
    return time.monotonic() - started


def storm(sandbox: DockerSandbox, builds, workers: int) -> float:
    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        list(pool.map(lambda b: judge(sandbox, *b), builds))
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--submissions', type=int, default=100)
    parser.add_argument('--cases', type=int, default=5)
    parser.add_argument('--json', action='store_true', help='print the figures as one JSON object')
    args = parser.parse_args()
    workers = SandboxSettings.max_containers  # the dispatcher's workers, by default
    client = docker.from_env(timeout=60)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        with running(SandboxSettings(root=tmp / 'root', max_containers=workers), client) as sandbox:
            languages = list(SOURCES)
            builds = []
            for n in range(args.submissions):
                language = languages[n % len(languages)]
                comment = '#' if language is Language.PYTHON else '//'
                src, specs = lay_out(tmp / f's{n}', language,
                                     SOURCES[language] + f'{comment} submission {n}\n', args.cases)
                builds.append((language, src, specs))
            first = storm(sandbox, builds, workers)
            again = storm(sandbox, builds, workers)

        uncached = SandboxSettings(root=tmp / 'nocache',
                                   max_containers=workers,
                                   compile_cache_bytes=0)
        with running(uncached, client) as sandbox:
            walls = []
            for n in range(5):
                src, specs = lay_out(tmp / f'bits{n}', Language.CPP, BITS, args.cases)
                walls.append(judge(sandbox, Language.CPP, src, specs))
    if args.json:
        print(
            json.dumps(
                {
                    'submissions': args.submissions,
                    'cases': args.cases,
                    'workers': workers,
                    'storm_first_sec': first,
                    'storm_again_sec': again,
                    'storm_ratio': first / again,
                    'bits_job_sec': walls,
                },
                indent=1))
        return
    print(f'rejudge storm: {args.submissions} submissions x (compile + {args.cases} cases), '
          f'{workers} workers')
    print(f'  first judging:          {first:6.1f} s')
    print(f'  rejudge, same builds:   {again:6.1f} s   ({first / again:.1f}x faster)')
    print(f'<bits/stdc++.h> job (compile + {args.cases} cases, cache off): median '
          f'{statistics.median(walls):.2f} s of 5 ({min(walls):.2f}-{max(walls):.2f})')


if __name__ == '__main__':
    main()
