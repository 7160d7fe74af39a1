"""Per-case cost of the sandbox, measured against baselines in the same run.

    python -m bench.sandbox_overhead [--cases 50] [--cpu-runs 20] [--leftover-rounds 3]

1. Judges one job of N hello-world C cases through the sandbox, runs the same
   program N times directly on the host, and N times in a plain new container
   per case (same image and limits). Prints the median per-case overhead of
   each over the direct run, and their ratio.
2. Judges a ~500 ms CPU-bound program repeatedly and prints the spread of its
   measured CPU time (coefficient of variation).
3. Judges a program that makes a million system calls, and runs it directly:
   the ratio of their CPU times is what the sandbox's seccomp filter and
   Landlock cost a call.
4. Judges a case after a case that left as much behind as it could (files and
   folders in every writable place): the second case's wall time against a
   case after a clean one, and the leftover case's own wall time over its CPU
   time (its run, its kill and the end of its mounts).

Figures are ratios and spreads measured in one run on one machine: they are
printed, never asserted.
"""
import argparse
import os
import pathlib
import statistics
import subprocess
import tempfile
import time
import uuid

import docker

from bench.sandboxes import running
from sandbox.docker_sandbox import SandboxSettings
from sandbox.job import CaseSpec, SandboxJob
from sandbox.languages import Language

HELLO = b'#include <stdio.h>\nint main(void) { puts("hello"); return 0; }\n'
SYSCALLS = (b'#include <stdio.h>\n#include <unistd.h>\n'
            b'int main(void) {\n'
            b'    long s = 0;\n'
            b'    for (int i = 0; i < 1000000; i++) s += getppid();\n'
            b'    printf("%ld\\n", s > 0 ? 1L : 0L);\n'
            b'    return 0;\n'
            b'}\n')
LEFTOVERS = b'''#include <stdio.h>
#include <sys/stat.h>
/* With 'f' on stdin: a chain of folders as deep as it goes, then folders
 * beside it, in every writable place, until each is out of room or inodes. */
int main(void) {
    const char *places[] = {"/tmp", "/dev/shm", ".", "/work"};
    char path[4096];
    for (int p = 0; getchar() == 'f' && p < 4; p++, ungetc('f', stdin)) {
        int n = snprintf(path, sizeof path, "%s", places[p]);
        while (n < 4000 && (n += snprintf(path + n, sizeof path - n, "/d"), mkdir(path, 0700) == 0))
            ;
        for (int i = 0; snprintf(path, sizeof path, "%s/s%d", places[p], i), mkdir(path, 0700) == 0; i++)
            ;
    }
    puts("hello");
    return 0;
}
'''

SPIN = (b'#include <stdio.h>\n'
        b'int main(void) {\n'
        b'    volatile unsigned long x = 0;\n'
        b'    for (unsigned long i = 0; i < %d; i++) x += i;\n'
        b'    printf("%%lu\\n", x);\n'
        b'    return 0;\n'
        b'}\n')


def _median_ms(samples):
    return statistics.median(samples) * 1000


def _time_calls(fn, n):
    samples = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return samples


def _job(root: pathlib.Path, source: bytes):
    src = root / 'src'
    src.mkdir(parents=True)
    (src / 'main.c').write_bytes(source)
    (root / '0000.in').write_bytes(b'')
    (root / '0000.out').write_bytes(b'hello\n')
    return SandboxJob(key=f'bench-{uuid.uuid4()}', language=Language.C, source_dir=src)


def container_per_case(client, image: str, binary_dir: pathlib.Path):
    """The plain way: a new container for the run, then removed."""
    container = client.containers.create(image,
                                         command=['/job/main'],
                                         user='61000:61000',
                                         network_disabled=True,
                                         read_only=True,
                                         cap_drop=['ALL'],
                                         security_opt=['no-new-privileges'],
                                         mem_limit=1536 * 1024 * 1024,
                                         pids_limit=64,
                                         nano_cpus=10**9,
                                         tmpfs={'/tmp': 'size=64m'},
                                         volumes={str(binary_dir): {
                                                      'bind': '/job',
                                                      'mode': 'ro'
                                                  }})
    try:
        container.start()
        container.wait(timeout=30)
        container.logs(stdout=True, stderr=True)
    finally:
        container.remove(force=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--cases', type=int, default=50)
    parser.add_argument('--cpu-runs', type=int, default=20)
    parser.add_argument('--leftover-rounds', type=int, default=3)
    parser.add_argument('--spin',
                        type=int,
                        default=2_000_000_000,
                        help='loop count of the ~500 ms program')
    args = parser.parse_args()

    client = docker.from_env(timeout=60)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        settings = SandboxSettings(root=tmp / 'root', max_containers=2)
        with running(settings, client) as sandbox:
            hello = _job(tmp / 'hello', HELLO)
            assert sandbox.compile(hello).ok
            case = CaseSpec(tmp / 'hello' / '0000.in', tmp / 'hello' / '0000.out', 1000, 65536)
            sandbox.run_case(hello, case)  # the job's sandbox is warm from now on
            ours = _time_calls(lambda: _checked(sandbox.run_case(hello, case)), args.cases)

            host_bin = tmp / 'host' / 'main'
            host_bin.parent.mkdir()
            subprocess.run(
                ['gcc', '-O2', '-o',
                 str(host_bin), str(hello.source_dir / 'main.c')], check=True)
            direct = _time_calls(
                lambda: subprocess.run(
                    [str(host_bin)], stdin=subprocess.DEVNULL, capture_output=True, check=True),
                args.cases)

            plain = _time_calls(
                lambda: container_per_case(client, settings.cpp_image, host_bin.parent), args.cases)
            sandbox.release(hello.key)

            calls = _job(tmp / 'calls', SYSCALLS)
            assert sandbox.compile(calls).ok
            calls_case = CaseSpec(tmp / 'calls' / '0000.in', tmp / 'calls' / '0000.out', 10000,
                                  65536)
            calls_ms = statistics.median(
                sandbox.run_case(calls, calls_case).exec_time_ms for _ in range(5))
            sandbox.release(calls.key)
            calls_bin = tmp / 'host' / 'calls'
            subprocess.run(['gcc', '-O2', '-o',
                            str(calls_bin),
                            str(calls.source_dir / 'main.c')],
                           check=True)
            calls_direct_ms = statistics.median(_cpu_ms_of(calls_bin) for _ in range(5))

            after_clean, after_leftovers, leftover_extra = _leftover_cost(
                sandbox, tmp, args.leftover_rounds)

            spin = _job(tmp / 'spin', SPIN % args.spin)
            assert sandbox.compile(spin).ok
            spin_case = CaseSpec(tmp / 'spin' / '0000.in', tmp / 'spin' / '0000.out', 5000, 65536)
            cpu_ms = [sandbox.run_case(spin, spin_case).exec_time_ms for _ in range(args.cpu_runs)]
            sandbox.release(spin.key)

    ours_over = _median_ms(ours) - _median_ms(direct)
    plain_over = _median_ms(plain) - _median_ms(direct)
    print(f'{args.cases} hello-world cases, median wall time per case:')
    print(f'  direct on the host          {_median_ms(direct):8.2f} ms')
    print(f'  our sandbox                 {_median_ms(ours):8.2f} ms')
    print(f'  new container per case      {_median_ms(plain):8.2f} ms')
    print('median per-case overhead over direct:')
    print(f'  our sandbox                 {ours_over:8.2f} ms')
    print(f'  new container per case      {plain_over:8.2f} ms')
    print(f'  ratio (baseline / ours)     {plain_over / max(ours_over, 1e-3):8.1f} x')
    mean = statistics.mean(cpu_ms)
    cv = statistics.stdev(cpu_ms) / mean * 100
    print(f'a million system calls: {calls_ms:.0f} ms of CPU in the sandbox, '
          f'{calls_direct_ms:.0f} ms directly (ratio {calls_ms / max(calls_direct_ms, 1e-3):.2f})')
    print(f'a hello case after a clean case: {after_clean:.2f} ms; after a case that left all '
          f'it could behind: {after_leftovers:.2f} ms (ratio '
          f'{after_leftovers / max(after_clean, 1e-3):.2f})')
    print(f'that leftover case itself: {leftover_extra:.2f} ms of wall time over its CPU time '
          '(run, kill, the end of its mounts)')
    print(f'CPU-bound program, {args.cpu_runs} runs: mean {mean:.1f} ms, '
          f'min {min(cpu_ms)} ms, max {max(cpu_ms)} ms, stdev {statistics.stdev(cpu_ms):.2f} ms, '
          f'coefficient of variation {cv:.2f} %')


def _cpu_ms_of(binary: pathlib.Path) -> float:
    """CPU time of one direct run, as the sandbox measures it (user + system)."""
    before = os.times()
    subprocess.run([str(binary)], stdin=subprocess.DEVNULL, capture_output=True, check=True)
    after = os.times()
    return ((after.children_user - before.children_user) +
            (after.children_system - before.children_system)) * 1000


def _leftover_cost(sandbox, tmp: pathlib.Path, rounds: int):
    """Medians: a plain case after a plain case, a plain case after a case
    that filled every writable place with folders (one job, one sandbox), and
    the filling case's own wall time over its CPU time."""
    job = _job(tmp / 'leftovers', LEFTOVERS)
    assert sandbox.compile(job).ok
    fill = tmp / 'leftovers' / 'fill.in'
    fill.write_bytes(b'f')
    filling = CaseSpec(fill, tmp / 'leftovers' / '0000.out', 5000, 65536)
    plain = CaseSpec(tmp / 'leftovers' / '0000.in', tmp / 'leftovers' / '0000.out', 1000, 65536)
    clean, dirty, extra = [], [], []
    try:
        for _ in range(rounds):
            start = time.perf_counter()
            # Whatever its verdict (it may run out of time filling a folder).
            filled = sandbox.run_case(job, filling)
            extra.append((time.perf_counter() - start) * 1000 - filled.exec_time_ms)
            dirty += _time_calls(lambda: _checked(sandbox.run_case(job, plain)), 1)
            clean += _time_calls(lambda: _checked(sandbox.run_case(job, plain)), 1)
    finally:
        sandbox.release(job.key)
    return _median_ms(clean), _median_ms(dirty), statistics.median(extra)


def _checked(result):
    assert result.status.value == 'AC', result
    return result


if __name__ == '__main__':
    main()
