"""The end-to-end harness: a real `LocalBackend` over HTTP, real `python main.py`
processes against it, real Docker sandboxes.

Every wait here waits for evidence (a backend event, a runner log line, a
process exit) with a generous bound that only turns a hang into a failure.
"""
import json
import pathlib
import signal
from typing import Dict, List, Optional

import docker
import docker.errors

from localbackend import LocalBackend
from sandbox.container import LABEL
from sandbox.docker_sandbox import INSTANCE_LABEL
from tests.process.runner_process import REPO, RunnerProcess

SAMPLES = REPO / 'localbackend' / 'samples'
SOURCE_NAMES = {'c': 'main.c', 'cpp': 'main.cpp', 'python': 'main.py'}
# Bounds on waits for evidence; reaching one is a failure, never a step of a test.
TIMEOUT = 60

# Fast enough that a short lease (a few seconds) stays renewed and that an
# idle runner claims new work within a second.
FAST_CONFIG = {'heartbeat_interval_sec': 0.5, 'poll_interval_sec': 0.5, 'max_concurrent_jobs': 4}


def sample_source(name: str) -> bytes:
    """The source of a sample submission of localbackend/samples."""
    folder = SAMPLES / 'submissions' / name
    manifest = json.loads((folder / 'manifest.json').read_text())
    return (folder / manifest.get('source', SOURCE_NAMES[manifest['language']])).read_bytes()


class Runner(RunnerProcess):
    """A `main.py` process and the folder it judges in."""

    def __init__(self, env: Dict[str, str]):
        super().__init__(env)
        self.name = env['RUNNER_NAME']
        self.data_dir = pathlib.Path(env['DATA_DIR'])

    @property
    def sandbox_home(self) -> str:
        """This process's own sandbox folder (the root may be shared), as logged."""
        assert self.wait_for_line(r'sandbox folder: '), self.log()
        line = next(l for l in self.lines if 'sandbox folder: ' in l)
        return line.split('sandbox folder: ', 1)[1].split(' [')[0].strip()

    def runner_id(self, backend: LocalBackend) -> str:
        """Its identity, from the backend's register event (names are unique per test)."""
        return backend.events.wait_for('register',
                                       timeout=TIMEOUT,
                                       outcome='ok',
                                       where=lambda e: e.data.get('name') == self.name).runner_id


class E2E:
    """Backends and runners of one test, all stopped and checked at teardown."""

    def __init__(self, tmp_path: pathlib.Path, docker_client: docker.DockerClient):
        self._tmp = tmp_path
        self._docker = docker_client
        self.backends: List[LocalBackend] = []
        self.runners: List[Runner] = []

    def backend(self, *, samples: bool = True, **options) -> LocalBackend:
        options.setdefault('runner_config', FAST_CONFIG)
        backend = LocalBackend(**options).start()
        self.backends.append(backend)
        if samples:
            backend.load_problems(SAMPLES / 'problems')
        return backend

    def runner(self,
               backend: LocalBackend,
               *,
               data_dir: Optional[pathlib.Path] = None,
               **env: str) -> Runner:
        """Starts `main.py`; two runners given one `data_dir` are one host restarted."""
        name = f'runner-{len(self.runners)}'
        runner = Runner({
            'BACKEND_URL': backend.url,
            'RUNNER_REGISTRATION_TOKEN': backend.registration_token,
            'SANDBOX_TOKEN': backend.sandbox_token,
            'RUNNER_NAME': name,
            'DATA_DIR': str(data_dir or self._tmp / name),
            'LONG_POLL_SEC': '2',
            'MAX_CONTAINER_NUMBER': '2',
            'DRAIN_TIMEOUT_SEC': '120',
            **env
        })
        self.runners.append(runner)
        return runner

    def stop(self, runner: Runner, sig: int = signal.SIGTERM) -> int:
        """Signals the runner, waits for its exit and returns its code; a runner
        that exits must leave no sandbox container behind."""
        runner.signal(sig)
        code = runner.wait(TIMEOUT * 2)
        assert code is not None, 'the runner did not exit:\n' + runner.log()
        assert self.containers(runner) == [], runner.log()
        return code

    def containers(self, runner: Runner) -> List[str]:
        found = self._docker.containers.list(
            all=True,
            ignore_removed=True,
            filters={'label': [LABEL, f'{INSTANCE_LABEL}={runner.sandbox_home}']})
        return [c.name for c in found]

    def close(self) -> None:
        """Kills what still runs and removes the containers a killed runner left."""
        for runner in self.runners:
            runner.kill()
            for name in self.containers(runner):
                try:
                    self._docker.containers.get(name).remove(force=True)
                except docker.errors.NotFound:
                    pass
        for backend in self.backends:
            backend.stop()
            backend.join(5)
