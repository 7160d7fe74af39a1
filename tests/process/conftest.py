import pytest

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
