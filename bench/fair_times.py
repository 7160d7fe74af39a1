"""False TLEs on a loaded host, with and without the rerun margin, in one run.

    python -m bench.fair_times [--runs 40] [--limit-ms 300] [--fraction 0.8]
                               [--json] [--plots DIR]

A C program whose CPU time is about `--fraction` (80 %) of its limit (calibrated first, on
the idle host) is judged `--runs` times while every core also runs a busy
loop (the neighbours of an exam-end batch), once with runs stopped at the
limit (`tle_margin` 1.0: how it was) and once with the margin (1.5: a TLE
within it is run again and the lower time counts). Prints the false-TLE rate
of each and the spread of the measured times (`--plots`: cpu-time-spread.png).
Figures are printed, never asserted.
"""
import argparse
import json
import multiprocessing
import os
import pathlib
import statistics
import tempfile
import uuid

import docker

from bench.sandboxes import running
from sandbox.job import CaseSpec, SandboxJob
from sandbox.languages import Language
from sandbox.results import Status
from sandbox.settings import SandboxSettings

SPIN = ('#include <stdio.h>\nint main(void){long n;if(scanf("%ld",&n)!=1)return 1;'
        'volatile unsigned long x=0;for(long i=0;i<n;i++)x+=i*i;puts("ok");return 0;}\n')


def busy() -> None:
    while True:
        pass


def judge_many(client, root: pathlib.Path, folder: pathlib.Path, margin: float, loops: int,
               limit_ms: int, runs: int):
    job = SandboxJob(key=uuid.uuid4().hex, language=Language.C, source_dir=folder / 'src')
    (folder / 'in').write_text(f'{loops}\n')
    case = CaseSpec(folder / 'in', folder / 'out', limit_ms, 65536)
    settings = SandboxSettings(root=root, max_containers=2, tle_margin=margin)
    with running(settings, client) as sandbox:
        try:
            assert sandbox.compile(job).ok
            return [sandbox.run_case(job, case) for _ in range(runs)]
        finally:
            sandbox.release(job.key)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--runs', type=int, default=40)
    parser.add_argument('--limit-ms', type=int, default=300)
    parser.add_argument('--fraction', type=float, default=0.8)
    parser.add_argument('--json', action='store_true', help='print the figures as one JSON object')
    parser.add_argument('--plots', type=pathlib.Path, help='write PNG figures into this folder')
    args = parser.parse_args()
    client = docker.from_env(timeout=60)
    with tempfile.TemporaryDirectory() as tmp:
        folder = pathlib.Path(tmp) / 'job'
        (folder / 'src').mkdir(parents=True)
        (folder / 'src' / 'main.c').write_text(SPIN)
        (folder / 'out').write_text('ok\n')
        # Calibrate on the idle host: loops for that fraction of the limit.
        probe = judge_many(client, pathlib.Path(tmp) / 'probe', folder, 1.5, 10**8, 60_000, 3)
        per_loop_ms = statistics.median(r.exec_time_ms for r in probe) / 10**8
        loops = int(args.fraction * args.limit_ms / per_loop_ms)
        neighbours = [
            multiprocessing.Process(target=busy, daemon=True) for _ in range(os.cpu_count() or 1)
        ]
        for n in neighbours:
            n.start()
        try:
            results = {
                margin:
                judge_many(client,
                           pathlib.Path(tmp) / f'm{margin}', folder, margin, loops, args.limit_ms,
                           args.runs)
                for margin in (1.0, 1.5)
            }
        finally:
            for n in neighbours:
                n.terminate()
    figures = {
        'limit_ms': args.limit_ms,
        'fraction': args.fraction,
        'idle_ms': [r.exec_time_ms for r in probe],
        'margins': {
            str(margin): {
                'runs': len(judged),
                'false_tle': sum(r.status is Status.TLE for r in judged),
                'cpu_ms': [r.exec_time_ms for r in judged],
            }
            for margin, judged in results.items()
        },
    }
    if args.plots:
        from bench import plots
        plots.cpu_time_spread(args.plots, {
            f'margin {m}': f['cpu_ms']
            for m, f in figures['margins'].items()
        }, args.limit_ms, f'one program at {args.fraction:.0%} of its limit, every core busy')
    if args.json:
        print(json.dumps(figures, indent=1))
        return
    print(f'a program at ~{args.fraction:.0%} of a {args.limit_ms} ms limit, {args.runs} runs '
          'each, every core also busy:')
    for margin, judged in results.items():
        times = [r.exec_time_ms for r in judged if r.status is Status.AC]
        tle = sum(r.status is Status.TLE for r in judged)
        spread = (f'AC times median {statistics.median(times)} ms, '
                  f'cv {statistics.pstdev(times) / statistics.mean(times):.0%}' if times else '')
        print(
            f'  margin {margin}: {tle}/{len(judged)} false TLE ({tle / len(judged):.0%}); {spread}')


if __name__ == '__main__':
    main()
