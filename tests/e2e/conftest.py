import pytest

from tests.e2e.harness import E2E


@pytest.fixture
def e2e(tmp_path, docker_client):
    harness = E2E(tmp_path, docker_client)
    yield harness
    harness.close()
