"""Throughput and latency of one runner process against the local backend.

    python -m bench.throughput [--submissions 120] [--claim-samples 10] [--json]
                               [--plots DIR] [--mode distinct|tiny]
                               [--backend-latency MS] [--places N]

1. Starts a `LocalBackend` (its default runner config: heartbeat 15 s, poll
   interval 3 s, 8 jobs at once, or `--places`) and one `python main.py`
   with long-poll on (LONG_POLL_SEC=25), judging in real Docker sandboxes,
   warmed with a job of each language and then bursts of twice its
   capacity (its sandboxes started, as many as a busy runner keeps; in the
   tiny mode over its problems too, so that their testdata is cached, as at
   an exam's end), from sources the batch does not use (its builds are not
   in the compile cache).
2. Claim latency with long-poll: on an idle runner, the time from a submit to
   its claim, as the backend's event log records both.
3. A batch: N submissions at once, mixed C, C++ and Python, six cases each,
   each a build of its own (no two are the same source, as in an exam: the
   compile cache serves none of them); with `--mode tiny`, quick jobs of 2 to
   5 cases each from few distinct sources (six: a right and a wrong one of
   each language, as a class's late resubmissions of the same few programs),
   so that the compile cache serves all but the first of each, and the floor
   compiles each distinct build once. Prints submissions per minute (first
   submit to last report) and the median and p95 time from submit to report;
   `--plots` draws their CDF (latency-cdf.png) and the runner's busy
   sandboxes over the batch, read from its /metrics (busy-sandboxes.png,
   sampled only then: the sampling costs the runner CPU). Then the floor:
   the same submissions compiled and run directly on the host, as many at
   a time as it has cores, in CPU seconds and wall seconds (the median of
   three runs). The efficiency is that floor over the batch's wall
   times the cores (the share of the cores that went to the submissions and
   their compilers). The sandboxes do less than the floor in two places:
   a C++ source that starts with <iostream> or <bits/stdc++.h> compiles
   from the image's precompiled header, and a job's Python cases are
   forked from one interpreter (the Python zygote), where the floor starts
   python3 for each case; so the distinct mode reads over 100 %. Also the CPU the machinery took meanwhile: the runner
   process, the backend (this process) and the container engine's daemons,
   in all and per job; the host's busy time, and what of it is left for the
   sandboxes; and the sandbox containers the runner made during the batch,
   by cause. With
   `--backend-latency MS` every call to the backend waits MS first (a
   backend that far away). A job holds its place for the three round trips
   the protocol fixes (its claim, its downloads, its report) besides its
   judging: with a far backend the places, not the cores, set the wall,
   and `--places N` (the backend's `max_concurrent_jobs`) shows what more
   of them give.
4. Stops that runner (SIGTERM), starts another with long-poll off
   (LONG_POLL_SEC=0) and measures the claim latency again.

Submits on an idle runner come at a random moment within one poll interval
after the evidence of idleness (the waiting long poll, or the empty claim):
a runner that polls claims them somewhere within its interval, and that is
what is sampled. Figures are printed, never asserted.
"""
import argparse
import concurrent.futures
import json
import os
import pathlib
import random
import resource
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from typing import Dict, List, Optional, Sequence, Tuple

import requests

from localbackend import LocalBackend, Problem
from localbackend.settings import DEFAULT_RUNNER_CONFIG
from sandbox.languages import Language
from tests.process.runner_process import RunnerProcess

LANGUAGES = {'c': Language.C, 'cpp': Language.CPP, 'python': Language.PYTHON}

PROBLEM_ID = 1
FLOOR_RUNS = 3
WAIT_SEC = 600

SOURCES = {
    'c': (b'#include <stdio.h>\n'
          b'int main(void) {\n'
          b'    long long a, b;\n'
          b'    if (scanf("%lld %lld", &a, &b) != 2) return 1;\n'
          b'    printf("%lld\\n", a + b);\n'
          b'    return 0;\n'
          b'}\n'),
    'cpp': (b'#include <iostream>\n'
            b'int main() {\n'
            b'    long long a, b;\n'
            b'    std::cin >> a >> b;\n'
            b'    std::cout << a + b << "\\n";\n'
            b'}\n'),
    'python':
    b'a, b = map(int, input().split())\nprint(a + b)\n',
}
# One submission in five of each language is wrong, as in a real batch.
WRONG = {
    'c': SOURCES['c'].replace(b'a + b', b'a - b'),
    'cpp': SOURCES['cpp'].replace(b'a + b', b'a - b'),
    'python': SOURCES['python'].replace(b'a + b', b'a - b'),
}
# What the runner judges before the batch (its warm-up, the claim-latency
# samples): builds of their own, so that the batch finds none of its builds
# in the compile cache and compiles each once, as its floor does.
WARM_UP = {
    language: source + (b'# ' if language == 'python' else b'// ') + b'warm-up\n'
    for language, source in SOURCES.items()
}

# The warm-up's bursts of twice the capacity, at most (start_warm_runner).
WARM_UP_BURSTS = 5
# The tiny mode's problems: 2 to 5 cases each, in one task.
TINY_PROBLEMS = {PROBLEM_ID + cases - 1: cases for cases in (2, 3, 4, 5)}


def tasks(per_task=(3, 3), seed=7) -> List[List[Tuple[str, str]]]:
    rng = random.Random(seed)
    made = []
    for count in per_task:
        cases = []
        for _ in range(count):
            a, b = rng.randint(-10**12, 10**12), rng.randint(-10**12, 10**12)
            cases.append((f'{a} {b}\n', f'{a + b}\n'))
        made.append(cases)
    return made


def problem() -> Problem:
    return Problem.from_cases(PROBLEM_ID, tasks(), name='A + B')


def tiny_problems() -> List[Problem]:
    return [
        Problem.from_cases(pid, tasks((cases, ), seed=pid), name=f'A + B, {cases} cases')
        for pid, cases in TINY_PROBLEMS.items()
    ]


def problem_tasks(problem_id: int) -> List[List[Tuple[str, str]]]:
    if problem_id == PROBLEM_ID:
        return tasks()
    return tasks((TINY_PROBLEMS[problem_id], ), seed=problem_id)


# A submission of the batch: (problem, language, source).
Submission = Tuple[int, str, bytes]


def submissions(count: int, mode: str = 'distinct') -> List[Submission]:
    """The batch: C, C++ and Python in turn, one in five of each wrong. In
    the distinct mode each a source of its own, on the six-case problem; in
    the tiny mode the six sources again and again, on problems of 2 to 5
    cases in turn."""
    languages = list(SOURCES)
    made = []
    for index in range(count):
        language = languages[index % 3]
        source = WRONG[language] if index % 15 >= 12 else SOURCES[language]
        if mode == 'tiny':
            made.append((PROBLEM_ID + (index // 3) % 4 + 1, language, source))
            continue
        comment = b'# ' if language == 'python' else b'// '
        made.append((PROBLEM_ID, language, source + comment + b'submission %d\n' % index))
    return made


def floor_cpu_sec(batch: List[Submission], workers: int = 1) -> Tuple[float, float]:
    """CPU seconds and wall seconds of compiling and running the batch
    directly on the host (the toolchains' own commands), `workers` at a
    time: each distinct build compiled once, as the compile cache allows,
    then each submission's cases run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        # The programs the sandbox runs (its PATH): a version manager's shim
        # first on this PATH would add its own start-up to every run.
        env = {'PATH': '/usr/local/bin:/usr/bin:/bin', 'HOME': tmp, 'LANG': 'C.UTF-8'}
        builds = list(dict.fromkeys((language, source) for _, language, source in batch))
        built = {build: pathlib.Path(tmp) / str(index) for index, build in enumerate(builds)}

        def compile_one(build: Tuple[str, bytes]) -> None:
            language, source = build
            toolchain = LANGUAGES[language].toolchain
            built[build].mkdir()
            (built[build] / toolchain.source_name).write_bytes(source)
            subprocess.run(toolchain.compile_argv,
                           cwd=built[build],
                           env=env,
                           check=True,
                           capture_output=True)

        def run_one(submission: Submission) -> None:
            problem_id, language, source = submission
            for cases in problem_tasks(problem_id):
                for case_input, _ in cases:
                    subprocess.run(LANGUAGES[language].toolchain.run_argv,
                                   cwd=built[(language, source)],
                                   env=env,
                                   input=case_input.encode(),
                                   capture_output=True)

        with concurrent.futures.ThreadPoolExecutor(workers) as pool:
            list(pool.map(compile_one, builds))
            list(pool.map(run_one, batch))
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime), wall


class MetricsSampler:
    """Reads the runner's busy sandboxes and containers from its /metrics
    every `period` seconds (a sampling rate, not a synchronisation)."""

    def __init__(self, port: int, period: float = 0.1):
        self._url = f'http://127.0.0.1:{port}/metrics'
        self._period = period
        self._stop = threading.Event()
        self.samples: List[Tuple[float, float, float]] = []
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)

    def _run(self) -> None:
        while not self._stop.wait(self._period):
            try:
                text = requests.get(self._url, timeout=2).text
            except requests.RequestException:
                continue
            values = {}
            for line in text.splitlines():
                name, _, value = line.partition(' ')
                if name in ('oj_runner_sandboxes_busy', 'oj_runner_sandbox_containers'):
                    values[name] = float(value)
            if len(values) == 2:
                self.samples.append((time.monotonic(), values['oj_runner_sandboxes_busy'],
                                     values['oj_runner_sandbox_containers']))


def cpu_seconds_by_part(runner_pid: int) -> Dict[str, object]:
    """CPU seconds used so far by the runner process, this process (the
    backend), the container engine's daemons (dockerd, containerd and the
    shims that hold the sandboxes, by process: a shim that ends takes its
    count with it) and the whole host."""
    tick = os.sysconf('SC_CLK_TCK')

    def used(pid: int, children: bool = False) -> float:
        try:
            fields = pathlib.Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()
        except OSError:
            return 0.0
        # utime, stime, and with `children` the reaped children's cutime
        # and cstime (the engine's short-lived runc and its hooks).
        return sum(int(f) for f in fields[11:15 if children else 13]) / tick

    engine = {}
    for entry in pathlib.Path('/proc').iterdir():
        if not entry.name.isdigit():
            continue
        try:
            name = (entry / 'comm').read_text().strip()
        except OSError:
            continue
        if name in ('dockerd', 'containerd') or name.startswith('containerd-shim'):
            engine[int(entry.name)] = used(int(entry.name), children=True)
    return {
        'runner': used(runner_pid),
        'backend': used(os.getpid()),
        'engine': engine,
        'host': host_busy_sec()
    }


def cpu_used(before: Dict[str, object], after: Dict[str, object]) -> Dict[str, float]:
    """CPU seconds by part between two readings of `cpu_seconds_by_part`;
    the engine's processes that ended meanwhile are left out."""
    used = {
        part: after[part] - before[part]  # type: ignore[operator]
        for part in after if part != 'engine'
    }
    engine_before: Dict[int, float] = before['engine']  # type: ignore[assignment]
    used['engine'] = sum(sec - engine_before.get(pid, 0.0)
                         for pid, sec in after['engine'].items())  # type: ignore[union-attr]
    return used


def host_busy_sec() -> float:
    """CPU seconds the whole host has spent busy (not idle, not waiting
    for I/O) since boot, over all its cores."""
    fields = [int(f) for f in pathlib.Path('/proc/stat').read_text().split('\n', 1)[0].split()[1:]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields[:8]
    return (user + nice + system + irq + softirq + steal) / os.sysconf('SC_CLK_TCK')


def free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def start_warm_runner(
    backend: LocalBackend,
    data_dir: str,
    long_poll_sec: int,
    env: Dict[str, str],
    capacity: int,
    extra_problems: Sequence[Problem] = ()) -> Tuple[RunnerProcess, str]:
    """A runner that has judged one job of each language, then bursts of
    twice its capacity at once until one makes no container, over the
    bench's problem and `extra_problems` in turn (the testdata of each
    cached, as many sandboxes started as a busy runner keeps: an exam's
    last batch finds them, its problems judged all through the exam), and
    its runner id."""
    backend.add_problem(problem())
    for extra in extra_problems:
        backend.add_problem(extra)
    problem_ids = [PROBLEM_ID] + [extra.problem_id for extra in extra_problems]
    name = f'bench-long-poll-{long_poll_sec}'
    runner = RunnerProcess({
        'BACKEND_URL': backend.url,
        'RUNNER_REGISTRATION_TOKEN': backend.registration_token,
        'SANDBOX_TOKEN': backend.sandbox_token,
        'RUNNER_NAME': name,
        'DATA_DIR': data_dir,
        'LONG_POLL_SEC': str(long_poll_sec),
        **env
    })
    try:
        rid = backend.events.wait_for('register',
                                      timeout=WAIT_SEC,
                                      outcome='ok',
                                      where=lambda e: e.data.get('name') == name).runner_id
        backend.wait_results(
            [backend.submit(PROBLEM_ID, language, WARM_UP[language]) for language in WARM_UP],
            WAIT_SEC)
        languages = list(SOURCES)
        # Bursts until one makes no container: the pool as large as this load
        # keeps it. One burst left 4 to 7 containers, and the batch made the
        # rest (0.1 s of its wall).
        metrics_port = int(env['METRICS_PORT'])
        for _ in range(WARM_UP_BURSTS):
            made = sum(containers_created(metrics_port).values())
            backend.wait_results([
                backend.submit(problem_ids[index % len(problem_ids)], languages[index % 3],
                               WARM_UP[languages[index % 3]]) for index in range(2 * capacity)
            ], WAIT_SEC)
            if sum(containers_created(metrics_port).values()) == made:
                break
    except Exception:
        runner.kill()
        raise RuntimeError('the runner did not judge its warm-up jobs:\n' + runner.log())
    return runner, rid


def stop_runner(runner: RunnerProcess) -> None:
    runner.signal(signal.SIGTERM)
    if runner.wait(WAIT_SEC) is None:
        runner.kill()


def landed_at(backend: LocalBackend, sid: str) -> float:
    return backend.events.wait_for('complete',
                                   timeout=WAIT_SEC,
                                   outcome='landed',
                                   submission_id=sid).at


def submitted_at(backend: LocalBackend, sid: str) -> float:
    return backend.events.wait_for('submit', timeout=0, submission_id=sid).at


def claim_latencies(backend: LocalBackend, rid: str, long_poll: bool, samples: int,
                    poll_interval_sec: float,
                    rng: random.Random) -> Tuple[List[float], List[float]]:
    """For `samples` submissions, each on an idle runner: the time from the
    submit to its claim, and to the runner's first request with the payload in
    hand (the download of its code)."""
    latencies, fetches = [], []
    languages = list(SOURCES)
    for index in range(samples):
        # Idle (the last result has landed): a poll after its last claim is
        # being held (long-poll), or one after the landing came back empty.
        if long_poll:
            last_claim = backend.events.list('claim', runner_id=rid, outcome='ok')[-1]
            backend.events.wait_for('long_poll',
                                    timeout=WAIT_SEC,
                                    since=last_claim.seq,
                                    runner_id=rid)
        else:
            backend.events.wait_for('claim',
                                    timeout=WAIT_SEC,
                                    since=backend.events.last_seq,
                                    runner_id=rid,
                                    outcome='no_job')
        # The arrival moment being sampled, not a synchronisation.
        time.sleep(rng.uniform(0, poll_interval_sec))
        sid = backend.submit(PROBLEM_ID, languages[index % 3], WARM_UP[languages[index % 3]])
        claim = backend.events.wait_for('claim', timeout=WAIT_SEC, outcome='ok', submission_id=sid)
        code = backend.events.wait_for('code', timeout=WAIT_SEC, job_id=claim.job_id)
        latencies.append(claim.at - submitted_at(backend, sid))
        fetches.append(code.at - submitted_at(backend, sid))
        backend.wait_result(sid, WAIT_SEC)
    return latencies, fetches


def containers_created(port: int) -> Dict[str, float]:
    """The runner's sandbox containers made so far, by cause (its /metrics)."""
    made = {}
    text = requests.get(f'http://127.0.0.1:{port}/metrics', timeout=10).text
    for line in text.splitlines():
        if line.startswith('oj_runner_sandbox_containers_created_total{'):
            labels, _, value = line.partition('} ')
            made[labels.split('cause="')[1].rstrip('"')] = float(value)
    return made


def batch(backend: LocalBackend, count: int, figures: dict, quiet: bool,
          sampler: Optional[MetricsSampler], runner_pid: int, metrics_port: int, mode: str) -> None:
    jobs = submissions(count, mode)
    if sampler is not None:
        sampler.start()
    cpu_before = cpu_seconds_by_part(runner_pid)
    made_before = containers_created(metrics_port)
    sids = [backend.submit(pid, language, source) for pid, language, source in jobs]
    try:
        results = backend.wait_results(sids, WAIT_SEC)
    finally:
        if sampler is not None:
            sampler.stop()
    # Before the floor runs: they would count as the host's.
    cpu_after = cpu_seconds_by_part(runner_pid)
    first = min(submitted_at(backend, sid) for sid in sids)
    last = max(landed_at(backend, sid) for sid in sids)
    turnaround = [landed_at(backend, sid) - submitted_at(backend, sid) for sid in sids]
    verdicts: Dict[str, int] = {}
    for result in results:
        verdicts[result.verdict] = verdicts.get(result.verdict, 0) + 1
    cases = sum(len(r.statuses) for r in results)
    wall = last - first
    made = {
        cause: made_after - made_before.get(cause, 0)
        for cause, made_after in containers_created(metrics_port).items()
    }
    # The floor's own CPU time moves with the machine's neighbours as much
    # as the batch's: the median of three. As many at a time as the batch
    # runs them, which also gives the wall a direct run needs.
    cores = os.cpu_count() or 1
    floors = [floor_cpu_sec(jobs, cores) for _ in range(FLOOR_RUNS)]
    floor = statistics.median(cpu for cpu, _ in floors)
    direct_wall = statistics.median(direct for _, direct in floors)
    figures['batch'] = {
        'mode': mode,
        'distinct_builds': len({(language, source)
                                for _, language, source in jobs}),
        'containers_created': made,
        'submissions': count,
        'cases': cases,
        'verdicts': verdicts,
        'wall_sec': wall,
        'submissions_per_min': count / wall * 60,
        'latency_median_sec': statistics.median(turnaround),
        'latency_p95_sec': p95(turnaround),
        'latency_max_sec': max(turnaround),
        'latencies_sec': sorted(turnaround),
        'floor_cpu_sec': floor,
        'floor_runs_cpu_sec': [cpu for cpu, _ in floors],
        'direct_wall_sec': direct_wall,
        'cores': cores,
        'efficiency': floor / (wall * cores),
    }
    used = cpu_used(cpu_before, cpu_after)
    host = figures['batch']['host_busy_cpu_sec'] = used.pop('host')
    machinery = figures['batch']['machinery_cpu_sec'] = used
    # What is left of the host's busy time: the submissions and compilers in
    # their sandboxes, the sandboxes' supervisors, and the kernel's share.
    sandboxes = figures['batch']['sandboxes_cpu_sec'] = host - sum(machinery.values())
    if sampler is not None:
        figures['batch']['busy_samples'] = [(t - first, busy, alive)
                                            for t, busy, alive in sampler.samples]
    if quiet:
        return
    builds = figures['batch']['distinct_builds']
    print(f'batch ({mode}): {count} submissions (C, C++, Python in turn, {builds} distinct '
          f'builds), {cases} cases; verdicts: ' + ', '.join(f'{v} {n}'
                                                            for v, n in sorted(verdicts.items())))
    print(f'  throughput        {count / wall * 60:8.1f} submissions/min '
          f'({wall:.1f} s from the first submit to the last report)')
    print(f'  submit to report  median {statistics.median(turnaround):6.2f} s   '
          f'p95 {p95(turnaround):6.2f} s   max {max(turnaround):6.2f} s')
    print(f'  floor             {floor:8.1f} CPU s compiling and running them directly, '
          f'{cores} at a time ({direct_wall:.1f} s of wall); '
          f'efficiency {floor / (wall * cores):.0%} (floor / wall / {cores} cores)')
    print('  the machinery     ' + ', '.join(f'{part} {sec:.1f} CPU s'
                                             for part, sec in machinery.items()) +
          f' (of {wall * cores:.1f} core-seconds); per job ' +
          ', '.join(f'{part} {sec / count * 1000:.0f} ms' for part, sec in machinery.items()))
    print(f'  the host          busy {host:.1f} CPU s of {wall * cores:.1f} core-seconds; of it '
          f'the sandboxes (programs, compilers, supervisors) {sandboxes:.1f} CPU s, '
          f'{sandboxes / floor:.2f}x the floor')
    print(f'  containers made   {sum(made.values()):.0f} (' +
          ', '.join(f'{cause} {n:.0f}' for cause, n in made.items() if n) + ')')


def p95(values: List[float]) -> float:
    if len(values) < 2:
        return values[0]
    return statistics.quantiles(values, n=20, method='inclusive')[-1]


def describe(label: str, latencies: List[float]) -> None:
    print(f'  {label:<48} median {statistics.median(latencies) * 1000:8.1f} ms   '
          f'p95 {p95(latencies) * 1000:8.1f} ms   max {max(latencies) * 1000:8.1f} ms')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--submissions', type=int, default=120)
    parser.add_argument('--claim-samples', type=int, default=10, help='0 measures the batch alone')
    parser.add_argument('--max-containers', type=int, default=None)
    parser.add_argument('--mode',
                        choices=('distinct', 'tiny'),
                        default='distinct',
                        help='every submission a build of its own, or quick jobs of few builds')
    parser.add_argument('--backend-latency',
                        type=float,
                        default=0,
                        metavar='MS',
                        help='every backend call waits this long first (from the batch on)')
    parser.add_argument('--places',
                        type=int,
                        default=DEFAULT_RUNNER_CONFIG['max_concurrent_jobs'],
                        metavar='N',
                        help='the jobs the backend lets the runner hold at once (its '
                        'max_concurrent_jobs)')
    parser.add_argument('--json', action='store_true', help='print the figures as one JSON object')
    parser.add_argument('--plots', type=pathlib.Path, help='write PNG figures into this folder')
    args = parser.parse_args()
    figures: dict = {'cpus': os.cpu_count()}
    metrics_port = free_port()
    env = {'METRICS_PORT': str(metrics_port)}
    if args.max_containers is not None:
        env['MAX_CONTAINER_NUMBER'] = str(args.max_containers)
    rng = random.Random(1)
    runner_config = {**DEFAULT_RUNNER_CONFIG, 'max_concurrent_jobs': args.places}

    with tempfile.TemporaryDirectory() as tmp:
        # One backend per runner, so that each phase starts from an empty
        # queue and an event log of its own.
        with LocalBackend(runner_config=runner_config) as backend:
            config = backend.settings.runner_config
            poll_interval = float(config['poll_interval_sec'])
            capacity = int(config['max_concurrent_jobs'])  # the jobs it holds at once
            print(
                f'host: {os.cpu_count()} CPUs; backend config: {dict(config)}; '
                f'MAX_CONTAINER_NUMBER={env.get("MAX_CONTAINER_NUMBER", "8 (default)")}',
                file=sys.stderr if args.json else sys.stdout)
            runner, rid = start_warm_runner(backend, os.path.join(tmp, 'long-poll'), 25, env,
                                            capacity,
                                            tiny_problems() if args.mode == 'tiny' else ())
            try:
                with_long_poll = claim_latencies(backend, rid, True, args.claim_samples,
                                                 poll_interval, rng)
                if args.backend_latency:
                    backend.faults.latency('*', args.backend_latency / 1000, count=None)
                figures['backend_latency_ms'] = args.backend_latency
                # The sampler reads /metrics ten times a second: the runner's CPU
                # for it would count against the batch, so only for the plots.
                sampler = MetricsSampler(metrics_port) if args.plots else None
                batch(backend, args.submissions, figures, args.json, sampler, runner.proc.pid,
                      metrics_port, args.mode)
            finally:
                stop_runner(runner)

        without_long_poll: Tuple[List[float], List[float]] = ([], [])
        if args.claim_samples:
            with LocalBackend(runner_config=runner_config) as backend:
                runner, rid = start_warm_runner(backend, os.path.join(tmp, 'polling'), 0, env,
                                                capacity)
                try:
                    without_long_poll = claim_latencies(backend, rid, False, args.claim_samples,
                                                        poll_interval, rng)
                finally:
                    stop_runner(runner)

        figures['claim_latency_sec'] = {
            'long_poll': with_long_poll[0],
            'polling': without_long_poll[0],
        }
        if args.plots:
            from bench import plots
            done = figures['batch']
            title = f'{done["submissions"]} submissions, {done["cores"]} cores'
            plots.latency_cdf(args.plots, done['latencies_sec'], title)
            plots.busy_over_time(args.plots, done.get('busy_samples', []), done['cores'], title)
        if args.json:
            print(json.dumps(figures, indent=1))
            return
        if not args.claim_samples:
            return
        print(f'claim latency on an idle runner ({args.claim_samples} submissions each):')
        describe('long-poll (LONG_POLL_SEC=25), submit to claim', with_long_poll[0])
        describe('  submit to the runner fetching the code', with_long_poll[1])
        describe(f'polling (LONG_POLL_SEC=0, {poll_interval:g} s), submit to claim',
                 without_long_poll[0])
        describe('  submit to the runner fetching the code', without_long_poll[1])


if __name__ == '__main__':
    main()
