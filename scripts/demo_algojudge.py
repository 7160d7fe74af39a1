"""The runner's main job on a bundled AlgoJudge server (`bash scripts/demo.sh
--protocol algojudge`).

Starts the server with the standard-io@1 sample packages, starts
`python main.py` with BACKEND_PROTOCOL=algojudge, approves the runner as an
administrator would once it has registered, queues the sample submissions,
prints each result as it lands (verdict, score, what was expected), checks
that the server saw no breach of the contract, then stops the runner with
SIGTERM and shows its drain.
"""
import pathlib
import re
import sys
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from localbackend.algojudge import samples  # noqa: E402
from localbackend.algojudge.server import AlgoJudgeServer  # noqa: E402
from localbackend.algojudge.store import Store  # noqa: E402
from scripts.demo import with_runner  # noqa: E402

TIMEOUT_SEC = 300
SHOWN = re.compile(r'registered with|waiting for an administrator|approved|running:|SIGTERM|'
                   r'drain')


def main() -> int:
    store = Store(min_lease_sec=5)
    server = AlgoJudgeServer(store)
    server.start()
    return with_runner(
        {
            'BACKEND_PROTOCOL': 'algojudge',
            'BACKEND_URL': server.url,
            'LEASE_SEC': '60',
        }, SHOWN, lambda: _judge(store), server.stop)


def _judge(store: Store) -> int:
    if not store.wait(lambda: bool(store.runners), 60):
        print('the runner never registered')
        return 1
    (runner, ) = store.runners.values()
    print(f'an administrator approves runner {runner.runner_id} '
          f'(key fingerprint {runner.fingerprint[:16]}...)')
    store.approve(runner.runner_id)
    started = time.monotonic()
    packages = {}
    jobs = {}
    for sample in samples.submissions():
        if sample.problem not in packages:
            packages[sample.problem] = samples.package(sample.problem)
        job_id = store.add_job(packages[sample.problem], sample.source, sample.file_name,
                               sample.language, sample.config)
        jobs[job_id] = sample
    print(f'queued {len(jobs)} samples; judging...\n')
    print(f'  {"":2} {"sample":<28} {"language":<10} {"verdict":<22} {"score":>11}  expected')
    shown = set()
    mismatches = 0
    while len(shown) < len(jobs):
        left = TIMEOUT_SEC - (time.monotonic() - started)
        if left <= 0 or not store.wait(lambda: _ended(store, jobs) - shown, left):
            print(f'timed out: {len(jobs) - len(shown)} job(s) not judged')
            return 1
        for job_id in sorted(_ended(store, jobs) - shown, key=list(jobs).index):
            shown.add(job_id)
            sample = jobs[job_id]
            report = _last_report(store, job_id)
            problem = samples.meets(report, sample.expect)
            mismatches += problem is not None
            if report.get('infrastructureFailure'):
                verdict, score = 'infrastructure failure', ''
            else:
                verdict, score = report['verdict'], f'{report["score"]}/{report["maxScore"]}'
            want = sample.expect.get('verdict') or 'infrastructure failure'
            print(
                f'  {"✓" if problem is None else "✗":2} {sample.name:<28} {sample.language:<10} '
                f'{verdict:<22} {score:>11}  {want}',
                flush=True)
    print(f'\n{len(jobs) - mismatches}/{len(jobs)} results as expected, in '
          f'{time.monotonic() - started:.1f} s')
    if store.violations:
        print(f'the server refused {len(store.violations)} call(s) as breaking the contract:')
        for violation in store.violations:
            print(f'  {violation}')
        return 1
    print('the server saw no call that breaks the contract')
    return 1 if mismatches else 0


def _ended(store: Store, jobs) -> set:
    """Jobs with a result, or failed for good (their infrastructure failures)."""
    return {job_id for job_id in jobs if store.jobs[job_id].state in ('done', 'failed')}


def _last_report(store: Store, job_id: str) -> dict:
    return next(body for jid, body in reversed(store.reports) if jid == job_id)


if __name__ == '__main__':
    sys.exit(main())
