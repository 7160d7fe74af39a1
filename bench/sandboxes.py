"""A real sandbox for a benchmark: started, and stopped with nothing left
behind, whatever the benchmark does meanwhile."""
import contextlib
from typing import Iterator

import docker

from sandbox.docker_sandbox import DockerSandbox
from sandbox.settings import SandboxSettings


@contextlib.contextmanager
def running(settings: SandboxSettings, client: docker.DockerClient) -> Iterator[DockerSandbox]:
    sandbox = DockerSandbox(settings, client=client)
    sandbox.start()
    try:
        yield sandbox
    finally:
        sandbox.stop()
        sandbox.join(60)
        sandbox.remove_leftovers()
