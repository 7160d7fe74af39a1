"""A far backend against a near one, on the exam's-end batch.

    python -m bench.far_backend [--pairs 8] [--latency 20] [--submissions 100] [--places N]
                                [--json]

Runs `bench.throughput --mode tiny` in pairs: a near run (the bundled
backend answering at once), then a far one (every backend call waiting
`--latency` ms first), each on a runner of its own. The runs of a pair are
back to back, because the host drifts between pairs more than within one.
Prints each pair's walls, its ratio and the near run's efficiency, then the
medians. `--places N`: the backend lets the runner hold N jobs at once in
both runs (8 by default, as the protocol's); a job holds its place for
three round trips besides its judging, so a far backend's wall is set by
its places.
"""
import argparse
import json
import statistics
import subprocess
import sys
from typing import Dict, List

from localbackend.settings import DEFAULT_RUNNER_CONFIG


def one_run(submissions: int, latency_ms: float, places: int) -> Dict[str, float]:
    """One batch's figures (bench.throughput's JSON)."""
    done = subprocess.run([
        sys.executable, '-m', 'bench.throughput', '--mode', 'tiny', '--submissions',
        str(submissions), '--claim-samples', '0', '--backend-latency',
        str(latency_ms), '--places',
        str(places), '--json'
    ],
                          check=True,
                          stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL,
                          text=True)
    batch = json.loads(done.stdout)['batch']
    return {
        'wall_sec': batch['wall_sec'],
        'efficiency': batch['efficiency'],
        'containers_created': sum(batch['containers_created'].values()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--pairs', type=int, default=8)
    parser.add_argument('--latency', type=float, default=20, metavar='MS')
    parser.add_argument('--submissions', type=int, default=100)
    parser.add_argument('--places',
                        type=int,
                        default=DEFAULT_RUNNER_CONFIG['max_concurrent_jobs'],
                        metavar='N')
    parser.add_argument('--json', action='store_true', help='print the figures as one JSON object')
    args = parser.parse_args()
    pairs: List[Dict[str, Dict[str, float]]] = []
    for index in range(args.pairs):
        near = one_run(args.submissions, 0, args.places)
        far = one_run(args.submissions, args.latency, args.places)
        pairs.append({'near': near, 'far': far})
        if not args.json:
            print(f'pair {index + 1}: near {near["wall_sec"]:.3f} s '
                  f'({100 * near["efficiency"]:.1f} % of the cores), far {far["wall_sec"]:.3f} s, '
                  f'{far["wall_sec"] / near["wall_sec"]:.2f}x')
    ratios = [pair['far']['wall_sec'] / pair['near']['wall_sec'] for pair in pairs]
    efficiencies = [pair['near']['efficiency'] for pair in pairs]
    if args.json:
        print(
            json.dumps(
                {
                    'latency_ms': args.latency,
                    'places': args.places,
                    'pairs': pairs,
                    'ratio_median': statistics.median(ratios),
                    'near_efficiency_median': statistics.median(efficiencies),
                },
                indent=1))
        return
    print(f'a backend {args.latency:g} ms away: {min(ratios):.2f} to {max(ratios):.2f}x the wall '
          f'of a near one, {statistics.median(ratios):.2f} at the median; the near runs at '
          f'{100 * statistics.median(efficiencies):.1f} % of the cores at the median')


if __name__ == '__main__':
    main()
