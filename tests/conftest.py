"""Session-wide: no sandbox container outlives the test session.

A runner process that exits on purpose mid-work (identity loss, a kill) may
leave a container the engine was still creating when it died; the runner's
next start would remove it, but tests must leave nothing behind.
"""
import pytest

from sandbox.container import LABEL
from sandbox.docker_sandbox import ROOT_LABEL


@pytest.fixture(scope='session', autouse=True)
def no_sandbox_outlives_the_session(tmp_path_factory):
    base = str(tmp_path_factory.getbasetemp().resolve())
    yield
    try:
        import docker
        client = docker.from_env(timeout=60)
        client.ping()
    except Exception:
        return  # no engine: no container either
    for container in client.containers.list(all=True, ignore_removed=True, filters={'label':
                                                                                    LABEL}):
        if container.labels.get(ROOT_LABEL, '').startswith(base):
            container.remove(force=True)
