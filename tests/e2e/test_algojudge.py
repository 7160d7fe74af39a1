"""The runner against a bundled AlgoJudge server, end to end: `python main.py`
with BACKEND_PROTOCOL=algojudge, real Docker sandboxes, the server holding
the runner to the contract (`Store.violations`).

Every wait waits for evidence (a stored report, a log line, a process exit)
with a bound that only turns a hang into a failure.
"""
import json
import signal
import threading

import pytest

from localbackend.algojudge import samples
from localbackend.algojudge.server import AlgoJudgeServer
from localbackend.algojudge.store import Store
from tests.e2e.harness import TIMEOUT
from tests.process.runner_process import RunnerProcess

pytestmark = [pytest.mark.e2e, pytest.mark.docker]

SPIN_C = b'int main(void) { volatile unsigned long i = 0; for (;;) i++; }\n'
SLOW_PACKAGE_CONFIG = {'limits': {'timeMs': 20000}}  # a spinner is not stopped for 20 s


@pytest.fixture
def server():
    store = Store(min_lease_sec=2)
    server = AlgoJudgeServer(store)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def start_runner(tmp_path, server, docker_client):
    runners = []

    def start(**env):
        runner = RunnerProcess({
            'BACKEND_PROTOCOL': 'algojudge',
            'BACKEND_URL': server.url,
            'RUNNER_NAME': f'aj-runner-{len(runners)}',
            'DATA_DIR': str(tmp_path / f'runner-{len(runners)}'),
            'MAX_CONTAINER_NUMBER': '2',
            'LEASE_SEC': '4',
            'DRAIN_TIMEOUT_SEC': '120',
            **env
        })
        runners.append(runner)
        return runner

    yield start
    for runner in runners:
        runner.kill()


def approve_when_registered(store: Store) -> str:
    assert store.wait(lambda: bool(store.runners), TIMEOUT), 'the runner never registered'
    (runner, ) = store.runners.values()
    store.approve(runner.runner_id)
    return runner.runner_id


def last_report(store: Store, job_id: str) -> dict:
    return next(body for jid, body in reversed(store.reports) if jid == job_id)


def ended(store: Store, job_id: str) -> bool:
    return store.jobs[job_id].state in ('done', 'failed')


def stop(runner: RunnerProcess) -> int:
    runner.signal(signal.SIGTERM)
    code = runner.wait(TIMEOUT * 2)
    assert code is not None, 'the runner did not exit:\n' + runner.log()
    return code


def test_every_sample_is_judged_as_its_manifest_says(server, start_runner):
    store = server.store
    runner = start_runner()
    approve_when_registered(store)
    packages = {}
    jobs = {}
    for sample in samples.submissions():
        packages.setdefault(sample.problem, samples.package(sample.problem))
        jobs[store.add_job(packages[sample.problem], sample.source, sample.file_name,
                           sample.language, sample.config)] = sample
    assert store.wait(lambda: all(ended(store, j) for j in jobs), TIMEOUT * 3), runner.log()
    wrong = {
        sample.name: samples.meets(last_report(store, job_id), sample.expect)
        for job_id, sample in jobs.items()
    }
    assert {k: v for k, v in wrong.items() if v} == {}, runner.log()
    judged = [job_id for job_id in jobs if store.jobs[job_id].state == 'done']
    for job_id in judged:
        # Upload, attach, then report: the details document came with it.
        attached = store.result(job_id)['_attachments']
        assert set(attached) == {'details', 'log'}
        details = json.loads(store.files[attached['details']].data)
        assert details['type'] == 'standard-io@1'
        assert details['score'] == store.result(job_id)['score']
    assert store.violations == [], store.violations
    assert stop(runner) == 0, runner.log()
    assert 'drain: done' in runner.log()


def test_a_job_taken_back_is_stopped_at_once_and_never_reported(server, start_runner):
    store = server.store
    runner = start_runner()
    approve_when_registered(store)
    spinner = store.add_job(samples.package('sum'), SPIN_C, 'main.c', 'c11-gcc',
                            SLOW_PACKAGE_CONFIG)
    assert runner.wait_for_line(rf'job {spinner} \(submission \S+\): judging started',
                                TIMEOUT), runner.log()
    store.cancel(spinner)  # a rejudge, or the submission withdrawn
    assert runner.wait_for_line(rf'job {spinner}: no longer this runner\'s', TIMEOUT), runner.log()
    assert runner.wait_for_line(rf'job {spinner}: cancelled; its runs are stopped',
                                TIMEOUT), runner.log()
    # The runner goes on: the next job is judged, by the sandboxes the
    # spinner held (its runs were killed, not waited out for 20 s each).
    after = store.add_job(samples.package('sum'),
                          (samples.SAMPLES /
                           'submissions/03-python-accepted/solution.py').read_bytes(), 'main.py',
                          'python3')
    assert store.wait(lambda: store.result(after) is not None, TIMEOUT), runner.log()
    assert store.result(after)['verdict'] == 'Accepted'
    assert [jid for jid, _ in store.reports if jid == spinner] == []
    assert store.violations == []
    assert stop(runner) == 0, runner.log()


def test_a_server_restart_costs_a_handshake_never_a_job(server, start_runner):
    store = server.store
    runner = start_runner()
    approve_when_registered(store)
    spinner = store.add_job(samples.package('sum'), SPIN_C, 'main.c', 'c11-gcc',
                            {'limits': {
                                'timeMs': 1500
                            }})
    assert runner.wait_for_line(rf'job {spinner} \(submission \S+\): judging started',
                                TIMEOUT), runner.log()
    store.forget_tokens()  # tokens live in the server's memory
    assert store.wait(lambda: store.result(spinner) is not None, TIMEOUT * 2), runner.log()
    assert store.result(spinner)['verdict'] == 'Time limit exceeded'
    assert store.runners[next(iter(store.runners))].registrations == 1
    assert store.violations == []
    assert stop(runner) == 0, runner.log()


def test_maintenance_is_waited_out_and_work_resumes(server, start_runner):
    store = server.store
    store.maintenance = 'closed'
    runner = start_runner()
    assert runner.wait_for_line(r'joining the server: .*server\.maintenance', TIMEOUT), runner.log()
    store.maintenance = 'open'
    approve_when_registered(store)
    job = store.add_job(samples.package('sum'),
                        (samples.SAMPLES / 'submissions/01-c-accepted/main.c').read_bytes(),
                        'main.c', 'c11-gcc')
    assert store.wait(lambda: store.result(job) is not None, TIMEOUT), runner.log()
    assert runner.proc.poll() is None  # never exited for it
    assert stop(runner) == 0, runner.log()


def test_a_revoked_runner_exits_non_zero(server, start_runner, tmp_path):
    store = server.store
    host = str(tmp_path / 'host')  # one key file: the same runner started twice
    first = start_runner(DATA_DIR=host)
    runner_id = approve_when_registered(store)
    assert first.wait_for_line(r'approved: holding a token', TIMEOUT), first.log()
    assert stop(first) == 0, first.log()
    store.revoke(runner_id)
    second = start_runner(DATA_DIR=host)
    assert second.wait(TIMEOUT * 2) == 1, second.log()
    assert 'revoked' in second.log()


def test_sigterm_releases_a_claim_still_downloading_and_exits_clean(server, start_runner):
    store = server.store
    runner = start_runner()
    approve_when_registered(store)
    store.download_gate = threading.Event()  # the package comes slowly
    job = store.add_job(samples.package('sum'),
                        (samples.SAMPLES / 'submissions/01-c-accepted/main.c').read_bytes(),
                        'main.c', 'c11-gcc')
    assert runner.wait_for_line(rf'job {job} \(submission \S+, attempt 1\): claimed', TIMEOUT)
    assert store.wait(lambda: store.gated_downloads == 1, TIMEOUT)
    assert stop(runner) == 0, runner.log()  # the download was cut, not waited for
    store.download_gate.set()
    assert store.releases == [job]
    assert [jid for jid, _ in store.reports if jid == job] == []
    assert store.jobs[job].state == 'queued' and store.jobs[job].deliveries == 0  # refunded
    assert store.violations == []
