"""What a class resubmitting one compile bomb costs, in one run.

    python -m bench.compile_bound [--jobs 4] [--json]

A C++ source whose compile uses up its 20 s of CPU (constant evaluation the
compiler does not give up on), compiled for one job alone, then for `--jobs`
jobs at once, each a copy of a new such source, as a runner's workers would
ask it. The first job's compile gives its CE to those that waited for it:
the batch should take about one compile's wall, not `--jobs` / cores of them.
Prints both walls and their ratio; figures are printed, never asserted.
About a minute.
"""
import argparse
import concurrent.futures
import json
import pathlib
import tempfile
import time
import uuid

import docker

from bench.sandboxes import running
from sandbox.docker_sandbox import DockerSandbox
from sandbox.job import SandboxJob
from sandbox.languages import Language
from sandbox.results import Status
from sandbox.settings import SandboxSettings

# Each evaluation stays within the compiler's own limits (it would give up
# with a CE of its own after about 7 s); six of them outlast the bound.
SPINS = ''.join(f'constexpr long spin{k}() {{ long s = 0; for (long i = 0; i < 200000; ++i) '
                f'for (long j = 0; j < 200000; ++j) s += i ^ (j + {k}); return s; }}\n'
                f'static_assert(spin{k}() != 0, "spun");\n' for k in range(6))


def bomb() -> str:
    """A new bomb: not a build any compile has made before."""
    return SPINS + f'int main() {{}}\n// {uuid.uuid4()}\n'


def compile_at_once(sandbox: DockerSandbox, folder: pathlib.Path, source: str, jobs: int) -> float:
    """The wall of `jobs` jobs of `source` compiled at once; each is a CE."""
    keys = []
    for n in range(jobs):
        src = folder / f'job{n}'
        src.mkdir(parents=True)
        (src / Language.CPP.source_name).write_text(source)
        keys.append(SandboxJob(key=uuid.uuid4().hex, language=Language.CPP, source_dir=src))
    started = time.monotonic()
    try:
        with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
            results = list(pool.map(sandbox.compile, keys))
    finally:
        for job in keys:
            sandbox.release(job.key)
    wall = time.monotonic() - started
    assert all(result.status is Status.CE for result in results), results
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--jobs', type=int, default=4)
    parser.add_argument('--json', action='store_true', help='print the figures as one JSON object')
    args = parser.parse_args()
    client = docker.from_env(timeout=60)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        with running(SandboxSettings(root=tmp / 'root'), client) as sandbox:
            alone = compile_at_once(sandbox, tmp / 'alone', bomb(), 1)
            together = compile_at_once(sandbox, tmp / 'together', bomb(), args.jobs)
    if args.json:
        print(
            json.dumps(
                {
                    'jobs': args.jobs,
                    'alone_sec': alone,
                    'together_sec': together,
                    'ratio': together / alone
                },
                indent=1))
        return
    print('a compile that uses up its 20 s (a CE):')
    print(f'  one job alone:           {alone:6.1f} s')
    print(f'  {args.jobs} jobs of one source:   {together:6.1f} s   ({together / alone:.2f}x)')


if __name__ == '__main__':
    main()
