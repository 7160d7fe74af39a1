"""Output comparison under hostile outputs, against the one-pass regular
expression it replaced, in the same run.

    python -m bench.comparison [--workers 8] [--mib 32]

For each hostile output (32 MiB by default, against a short or a long
expected answer) it prints the time of one comparison both ways. Then it
starts `--workers` threads that compare hostile outputs without pause and a
ticker thread that wants to run every 50 ms, as the heartbeat does, and
prints the ticker's largest delay both ways. Figures are printed, never
asserted.
"""
import argparse
import re
import threading
import time

from sandbox.compare import outputs_match

_OLD_TRAILING = re.compile(rb'(?<![ \t\r\v\f])[ \t\r\v\f]+$', re.MULTILINE)
TICK_SEC = 0.05


def old_outputs_match(actual: bytes, expected: bytes) -> bool:
    """The comparison as it was: one substitution pass over each output."""

    def normalised(data):
        return _OLD_TRAILING.sub(b'', data).rstrip(b'\n')

    return actual == expected or normalised(actual) == normalised(expected)


def hostile_outputs(mib: int):
    size = mib << 20
    many_lines = b''.join(b'%d\n' % n for n in range(200000))
    return {
        'blank lines vs "42"': (b' \n' * (size // 2), b'42\n'),
        '"42" then blank lines': (b'42\n' + b' \n' * (size // 2), b'42\n'),
        'one long blank line': (b'42' + b' ' * size + b'\n', b'42\n'),
        'trailing space on 200k lines': (many_lines.replace(b'\n', b' \n'), many_lines),
    }


def _timed(compare, actual, expected):
    start = time.perf_counter()
    compare(actual, expected)
    return time.perf_counter() - start


def largest_tick_delay(compare, pairs, workers: int, seconds: float) -> float:
    stop = threading.Event()
    delays = []

    def ticker():
        due = time.monotonic() + TICK_SEC
        while not stop.is_set():
            stop.wait(max(0.0, due - time.monotonic()))
            delays.append(time.monotonic() - due)
            due += TICK_SEC

    def worker():
        while not stop.is_set():
            for actual, expected in pairs:
                compare(actual, expected)

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(workers)]
    tick = threading.Thread(target=ticker, daemon=True)
    tick.start()
    for thread in threads:
        thread.start()
    time.sleep(seconds)
    stop.set()
    for thread in threads + [tick]:
        thread.join()
    return max(delays)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--workers', type=int, default=8)
    parser.add_argument('--mib', type=int, default=32)
    parser.add_argument('--seconds', type=float, default=10)
    args = parser.parse_args()
    pairs = hostile_outputs(args.mib)
    print(f'one comparison, {args.mib} MiB hostile outputs:')
    for name, (actual, expected) in pairs.items():
        old = _timed(old_outputs_match, actual, expected)
        new = _timed(outputs_match, actual, expected)
        print(f'  {name:32} before {old * 1000:9.1f} ms   now {new * 1000:8.1f} ms   '
              f'ratio {old / max(new, 1e-6):8.1f} x')
    for label, compare in (('before', old_outputs_match), ('now', outputs_match)):
        delay = largest_tick_delay(compare, list(pairs.values()), args.workers, args.seconds)
        print(f'largest delay of a 50 ms ticker while {args.workers} workers compare, {label}: '
              f'{delay * 1000:.0f} ms')


if __name__ == '__main__':
    main()
