"""Session-wide fixtures: the Docker engine for the tests that need it, and
no sandbox container (nor image copy) outliving the test session.

A runner process that exits on purpose mid-work (identity loss, a kill) may
leave a container the engine was still creating when it died; the runner's
next start would remove it, but tests must leave nothing behind.
"""
import docker
import pytest

from sandbox.container import LABEL
from sandbox.docker_sandbox import ROOT_LABEL, SandboxSettings
from sandbox.image_copy import KEEPER_LABEL


@pytest.fixture(scope='session')
def docker_client():
    """Fails (never skips) when the engine or the images are missing: CI must
    have them (scripts/setup.sh installs and starts both)."""
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


@pytest.fixture(scope='session', autouse=True)
def no_sandbox_outlives_the_session(tmp_path_factory):
    base = str(tmp_path_factory.getbasetemp().resolve())
    yield
    try:
        client = docker.from_env(timeout=60)
        client.ping()
    except Exception:
        return  # no engine: no container either
    for kind in (LABEL, KEEPER_LABEL):
        for container in client.containers.list(all=True,
                                                ignore_removed=True,
                                                filters={'label': kind}):
            if container.labels.get(ROOT_LABEL, '').startswith(base):
                container.remove(force=True)
    for volume in client.volumes.list(filters={'label': KEEPER_LABEL}):
        if (volume.attrs.get('Labels') or {}).get(ROOT_LABEL, '').startswith(base):
            volume.remove(force=True)
