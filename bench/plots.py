"""PNG figures of the benchmarks' measurements, for people (`--plots DIR`).

matplotlib is a development dependency (requirements-dev.txt); the runner
never imports it.
"""
import pathlib
from typing import Dict, List, Sequence, Tuple

import matplotlib

matplotlib.use('Agg')  # no screen
import matplotlib.pyplot as plt  # noqa: E402


def _save(figure, folder: pathlib.Path, name: str) -> pathlib.Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def latency_cdf(folder: pathlib.Path, latencies_sec: Sequence[float], title: str) -> pathlib.Path:
    """The share of submissions reported within each time since their submit."""
    ordered = sorted(latencies_sec)
    shares = [(n + 1) / len(ordered) for n in range(len(ordered))]
    figure, axes = plt.subplots(figsize=(7, 4))
    axes.step(ordered, shares, where='post')
    axes.set_xlabel('submit to report, s')
    axes.set_ylabel('share of submissions reported')
    axes.set_ylim(0, 1.02)
    axes.grid(alpha=0.3)
    axes.set_title(title)
    return _save(figure, folder, 'latency-cdf.png')


def busy_over_time(folder: pathlib.Path, samples: List[Tuple[float, float, float]], cores: int,
                   title: str) -> pathlib.Path:
    """`samples`: (seconds since the batch's start, runs holding a core,
    containers alive), as the runner's /metrics said."""
    figure, axes = plt.subplots(figsize=(7, 4))
    times = [t for t, _, _ in samples]
    axes.step(times, [busy for _, busy, _ in samples], where='post', label='runs holding a core')
    axes.step(times, [alive for _, _, alive in samples],
              where='post',
              label='sandbox containers alive',
              alpha=0.6)
    axes.axhline(cores, color='grey', linestyle='--', label=f'{cores} cores')
    axes.set_xlabel('time since the first submit, s')
    axes.set_ylabel('count')
    axes.legend(loc='upper right')
    axes.grid(alpha=0.3)
    axes.set_title(title)
    return _save(figure, folder, 'busy-sandboxes.png')


def cpu_time_spread(folder: pathlib.Path, runs_ms: Dict[str, Sequence[float]], limit_ms: float,
                    title: str) -> pathlib.Path:
    """Measured CPU times of one program, per situation, against the limit."""
    figure, axes = plt.subplots(figsize=(7, 4))
    labels = list(runs_ms)
    axes.boxplot([runs_ms[label] for label in labels], vert=False)
    axes.set_yticks(range(1, len(labels) + 1), labels)
    axes.axvline(limit_ms, color='red', linestyle='--', label=f'time limit {limit_ms:g} ms')
    axes.set_xlabel('measured CPU time, ms')
    axes.legend(loc='lower right')
    axes.grid(alpha=0.3, axis='x')
    axes.set_title(title)
    return _save(figure, folder, 'cpu-time-spread.png')
