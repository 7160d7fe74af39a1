"""The project's own docker-compose.yml, for real: the runner image judges every
sample through it against the bundled backend on this host, then
`docker-compose stop` drains it cleanly. The compose commands run with no
token in their environment: every setting comes from the env file.

It prints what it saw (verdicts, the container's exit code, the time from the
stop to the exit): run it with `-s` to read them.
"""
import os
import pathlib
import socket
import subprocess
import time

import docker
import pytest
import requests

from localbackend.backend import LocalBackend
from localbackend.submission_files import load_submissions
from sandbox.leftovers import ROOT_LABEL

pytestmark = pytest.mark.docker

REPO = pathlib.Path(__file__).resolve().parents[2]
SAMPLES = REPO / 'localbackend' / 'samples'
PROJECT = 'ojcomposetest'
JUDGE_TIMEOUT_SEC = 300
SANDBOX_LABEL = 'oj-runner.sandbox'


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


@pytest.fixture(scope='module')
def runner_image():
    subprocess.run(['bash', str(REPO / 'scripts' / 'build-runner-image.sh')], check=True)
    return 'oj-runner:latest'


@pytest.fixture
def compose(tmp_path, runner_image):
    data_dir = tmp_path / 'data'
    data_dir.mkdir()
    metrics_port = free_port()
    # No token, no runner setting: only where the env file and the data are.
    env = {key: value for key, value in os.environ.items() if key in ('PATH', 'HOME', 'LANG')}
    env.update(OJ_ENV_FILE=str(tmp_path / 'runner.env'),
               OJ_DATA_DIR=str(data_dir),
               OJ_METRICS_PUBLISH=str(metrics_port),
               OJ_RUNNER_IMAGE=runner_image)

    def run(*args, check=True):
        return subprocess.run(
            ['docker-compose', '-p', PROJECT, '-f',
             str(REPO / 'docker-compose.yml'), *args],
            env=env,
            cwd=tmp_path,
            check=check,
            capture_output=True,
            text=True,
            timeout=900)

    run.env_file = tmp_path / 'runner.env'
    run.data_dir = data_dir
    run.metrics_port = metrics_port
    yield run
    run('down', '--timeout', '5', check=False)


def test_the_compose_service_judges_every_sample_and_drains_on_stop(compose):
    backend = LocalBackend(host='0.0.0.0', lease_ttl_sec=30)
    backend.load_problems(SAMPLES / 'problems')
    backend.start()
    engine = docker.from_env(timeout=30)
    try:
        compose.env_file.write_text(f'BACKEND_URL=http://host.docker.internal:{backend.port}\n'
                                    f'RUNNER_REGISTRATION_TOKEN={backend.registration_token}\n'
                                    f'SANDBOX_TOKEN={backend.sandbox_token}\n'
                                    'RUNNER_NAME=compose-runner\n'
                                    'MAX_CONTAINER_NUMBER=2\n'
                                    'LOG_FORMAT=json\n')
        compose('up', '-d')
        samples = load_submissions(SAMPLES / 'submissions')
        submitted = {
            backend.submit(sample.problem_id, sample.language, sample.source): sample
            for sample in samples
        }
        started = time.monotonic()
        try:
            results = backend.wait_results(submitted, JUDGE_TIMEOUT_SEC)
        except TimeoutError:
            pytest.fail('not judged in time; the runner said:\n' +
                        compose('logs', '--no-color').stdout[-4000:])
        verdicts = {
            sample.name: result.verdict
            for sample, result in zip(submitted.values(), results)
        }
        judged_sec = time.monotonic() - started
        print(f'\n{len(verdicts)} samples judged through docker-compose in {judged_sec:.1f} s:')
        for sample in samples:
            print(f'  {sample.name:<28} {verdicts[sample.name]:<4} '
                  f'(expected {sample.expected or "-"})')
        assert all(sample.expected in (None, verdicts[sample.name]) for sample in samples)

        base = f'http://127.0.0.1:{compose.metrics_port}'
        assert requests.get(f'{base}/healthz', timeout=10).status_code == 200
        assert requests.get(f'{base}/readyz', timeout=10).text == 'ok\n'
        assert 'oj_runner_jobs_claimed_total' in requests.get(f'{base}/metrics', timeout=10).text
        assert 'runner' in compose('ps').stdout

        (container_id, ) = compose('ps', '-q').stdout.split()
        stopping = time.monotonic()
        compose('stop')
        stop_sec = time.monotonic() - stopping
        state = engine.api.inspect_container(container_id)['State']
        print(f'docker-compose stop: exit code {state["ExitCode"]}, {stop_sec:.1f} s from the '
              'stop to the exit')
        logs = compose('logs', '--no-color').stdout
        assert state['ExitCode'] == 0, logs[-4000:]
        assert 'drain: done' in logs
        # This runner's sandboxes only: the engine is the host's, and other
        # runners on it (another test run) keep theirs.
        assert [
            c for c in engine.containers.list(all=True, filters={'label': SANDBOX_LABEL})
            if c.labels.get(ROOT_LABEL, '').startswith(str(compose.data_dir.resolve()))
        ] == []
        job_folders = [
            path for path in (compose.data_dir / 'submissions').rglob('*')
            if path.is_dir() and path.parent.parent == compose.data_dir / 'submissions'
        ]
        assert job_folders == [], job_folders
    finally:
        backend.stop()
        backend.join(10)
