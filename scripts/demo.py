"""The runner's main job, end to end, on the bundled local backend.

Starts the local backend with the sample problems (C, C++, Python), submits
the sample submissions (one or more of every verdict), runs `python main.py`
against it, prints each verdict as it lands, then stops the runner with
SIGTERM and shows its drain. Run through `bash scripts/demo.sh`, which first
sets the host up (Docker engine, sandbox images).
"""
import os
import pathlib
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from typing import Callable, Dict, Pattern

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from localbackend.backend import LocalBackend  # noqa: E402
from localbackend.submission_files import load_submissions  # noqa: E402

SAMPLES = REPO / 'localbackend' / 'samples'
LANGUAGES = {0: 'C', 1: 'C++', 2: 'Python'}
TIMEOUT_SEC = 300
# The runner's log lines worth showing while it works.
SHOWN = re.compile(r'registered as|running:|SIGTERM|drain')


def main() -> int:
    backend = LocalBackend(lease_ttl_sec=30)
    backend.load_problems(SAMPLES / 'problems')
    backend.start()
    samples = load_submissions(SAMPLES / 'submissions')
    return with_runner(
        {
            'BACKEND_URL': backend.url,
            'RUNNER_REGISTRATION_TOKEN': backend.registration_token,
            'SANDBOX_TOKEN': backend.sandbox_token,
        }, SHOWN, lambda: _judge(backend, samples), backend.stop)


def with_runner(env: Dict[str, str], shown: Pattern[str], judge: Callable[[], int],
                stop_backend: Callable[[], None]) -> int:
    """`python main.py` with `env` (a data folder of its own, four
    sandboxes), its log lines matching `shown` printed, while `judge()`
    runs; then SIGTERM and its drain. The demo's exit code."""
    with tempfile.TemporaryDirectory(prefix='oj-demo-') as data_dir:
        runner = subprocess.Popen(
            [sys.executable, 'main.py'],
            cwd=REPO,
            env={
                **os.environ,
                'RUNNER_NAME': 'demo-runner',
                'DATA_DIR': data_dir,
                'MAX_CONTAINER_NUMBER': '4',
                **env,
            },
            stderr=subprocess.PIPE,
            text=True)
        threading.Thread(target=_show_runner_log, args=(runner, shown), daemon=True).start()
        try:
            code = judge()
        finally:
            print('\nstopping the runner with SIGTERM (what `docker stop` sends)...')
            runner.send_signal(signal.SIGTERM)
            exit_code = runner.wait(120)
            stop_backend()
        print(f'runner exited with code {exit_code} '
              f'({"clean drain" if exit_code == 0 else "see its log above"})')
    return code or (0 if exit_code == 0 else 1)


def _show_runner_log(runner: subprocess.Popen, shown: Pattern[str]) -> None:
    for line in runner.stderr:
        if shown.search(line):
            print(f'  [runner] {line.rstrip()}', flush=True)


def _judge(backend: LocalBackend, samples) -> int:
    started = time.monotonic()
    submitted = {}
    for sample in samples:
        sid = backend.submit(sample.problem_id, sample.language, sample.source)
        submitted[sid] = sample
    print(f'submitted {len(submitted)} samples; judging...\n')
    print(f'  {"":2} {"sample":<28} {"lang":<7} {"verdict":<8} {"expected":<9} {"score":>5} '
          f'{"max time":>9} {"max mem":>9}')
    pending, since, mismatches = set(submitted), 0, 0
    while pending:
        remaining = TIMEOUT_SEC - (time.monotonic() - started)
        try:
            event = backend.events.wait_for('complete',
                                            outcome='landed',
                                            since=since,
                                            timeout=max(0.0, remaining))
        except TimeoutError:
            print(f'timed out: {len(pending)} submission(s) not judged')
            return 1
        since = event.seq
        if event.submission_id not in pending:
            continue
        pending.discard(event.submission_id)
        sample = submitted[event.submission_id]
        result = backend.wait_result(event.submission_id, 0)
        verdict = result.verdict
        cases = [case for task in result.report.tasks for case in task]
        ok = sample.expected in (None, verdict)
        mismatches += not ok
        print(
            f'  {"✓" if ok else "✗":2} {sample.name:<28} {LANGUAGES[sample.language]:<7} '
            f'{verdict:<8} {sample.expected or "-":<9} {result.score!s:>5} '
            f'{max(c.exec_time_ms for c in cases):>6} ms {max(c.memory_kb for c in cases):>6} KB',
            flush=True)
    print(f'\n{len(submitted) - mismatches}/{len(submitted)} verdicts as expected, '
          f'in {time.monotonic() - started:.1f} s')
    return 1 if mismatches else 0


if __name__ == '__main__':
    sys.exit(main())
