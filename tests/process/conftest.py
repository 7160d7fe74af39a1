import docker
import pytest

from sandbox.docker_sandbox import ROOT_LABEL
from tests.process.runner_process import RunnerProcess
from tests.process.stub_backend import StubBackend


@pytest.fixture
def backend():
    stub = StubBackend().start()
    yield stub
    stub.stop()


@pytest.fixture
def start_runner(tmp_path):
    started = []

    def start(backend_url, **env):
        runner = RunnerProcess({
            'BACKEND_URL': backend_url,
            'RUNNER_REGISTRATION_TOKEN': 'regtok',
            'SANDBOX_TOKEN': 'sbtok',
            'DATA_DIR': str(tmp_path / 'data'),
            'LONG_POLL_SEC': '0',
            'MAX_CONTAINER_NUMBER': '2',
            **env
        })
        started.append(runner)
        return runner

    yield start
    for runner in started:
        runner.kill()
    # A runner that exited on identity loss leaves its busy sandboxes to end
    # by themselves (the next start would remove them): remove them here.
    root = (tmp_path / 'data' / 'sandbox').resolve()
    client = docker.from_env(timeout=60)
    for container in client.containers.list(all=True,
                                            ignore_removed=True,
                                            filters={'label': f'{ROOT_LABEL}={root}'}):
        container.remove(force=True)
