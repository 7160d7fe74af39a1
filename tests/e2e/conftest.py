import docker
import pytest

from sandbox.docker_sandbox import SandboxSettings
from tests.e2e.harness import E2E


@pytest.fixture(scope='session')
def docker_client():
    try:
        client = docker.from_env(timeout=30)
        client.ping()
    except Exception as exc:  # any failure here means the host is not set up
        pytest.fail(f'Docker engine unavailable ({exc}); run scripts/setup.sh')
    for image in (SandboxSettings.cpp_image, SandboxSettings.python_image):
        try:
            client.images.get(image)
        except docker.errors.ImageNotFound:
            pytest.fail(f'sandbox image {image} missing; run sandbox/images/build-offline.sh')
    return client


@pytest.fixture
def e2e(tmp_path, docker_client):
    harness = E2E(tmp_path, docker_client)
    yield harness
    harness.close()
