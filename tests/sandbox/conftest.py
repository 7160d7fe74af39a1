"""Fixtures for tests that run real Docker sandboxes (the engine itself:
`docker_client` in tests/conftest.py)."""
import contextlib
import pathlib
import uuid

import docker
import pytest

from sandbox.container import LABEL
from sandbox.docker_sandbox import ROOT_LABEL, DockerSandbox, SandboxSettings
from sandbox.job import SandboxJob
from sandbox.languages import Language

CANARY = pathlib.Path('/tmp/oj-sandbox-canary')
# The Python zygote's uid (supervisor.c, ZYGOTE_UID), as `docker top` shows it.
ZYGOTE_UID = '61002'
SECRET = b'SECRET answer 1234'


def _containers_of(client, root: pathlib.Path):
    return client.containers.list(all=True,
                                  ignore_removed=True,
                                  filters={'label': [LABEL, f'{ROOT_LABEL}={root.resolve()}']})


@pytest.fixture(scope='session')
def sandbox_root(tmp_path_factory):
    return tmp_path_factory.mktemp('sandbox-root')


@pytest.fixture(scope='session')
def sandbox(docker_client, sandbox_root):
    sb = DockerSandbox(SandboxSettings(root=sandbox_root,
                                       max_containers=4,
                                       output_limit=8 * 1024 * 1024,
                                       report_limit=8192,
                                       checker_time_ms=3000,
                                       interactor_time_ms=3000),
                       client=docker_client)
    sb.start()
    yield sb
    sb.stop()
    sb.join(60)
    left = _containers_of(docker_client, sandbox_root)
    for c in left:
        c.remove(force=True)
    sb.remove_leftovers()  # the image's copy
    assert not left, f'sandbox containers left behind: {[c.name for c in left]}'


@pytest.fixture(scope='session')
def canary():
    CANARY.write_bytes(b'canary\n')
    CANARY.chmod(0o644)
    yield CANARY
    CANARY.unlink(missing_ok=True)


@pytest.fixture(scope='session')
def other_job(sandbox, tmp_path_factory):
    """A live job of someone else, holding secrets, while the tests run."""
    src = tmp_path_factory.mktemp('other-job') / 'src'
    src.mkdir()
    (src / 'main.c').write_bytes(b'/* ' + SECRET + b' */\nint main(void) { return 0; }\n')
    (src / 'secret.txt').write_bytes(SECRET + b'\n')
    job = SandboxJob(key=f'other-{uuid.uuid4()}', language=Language.C, source_dir=src)
    assert sandbox.compile(job).ok
    yield job
    sandbox.release(job.key)


def assert_nothing_left_running(client, root: pathlib.Path):
    """Every sandbox container runs its supervisor, the run init of its job
    and the one made for the next (supervisor.c), and, below a run init, at
    most the job's Python zygote (python_zygote.c), and nothing else:
    nothing of any run."""
    for container in _containers_of(client, root):
        try:
            container.reload()
            if container.status != 'running':
                continue
            processes = container.top()['Processes']
        except docker.errors.NotFound:
            continue  # destroyed meanwhile (a released job's container)
        except docker.errors.APIError as exc:
            if 'is not running' in str(exc):
                continue
            raise
        # UID PID PPID ... CMD, host pids: PID 1 (its parent is the engine's,
        # outside the container), at most two children of its own, the
        # supervisor's image too, and a zygote below one of them.
        pids = {process[1] for process in processes}
        inits = [process for process in processes if process[2] not in pids]
        assert len(inits) == 1, f'{container.name} runs {processes}'
        supervisor = inits[0]
        run_inits = [process for process in processes if process[2] == supervisor[1]]
        below = [
            process for process in processes
            if process is not supervisor and process[2] != supervisor[1]
        ]
        assert len(run_inits) <= 2 and all(
            process[-1] == supervisor[-1]
            for process in run_inits), (f'{container.name} still runs {processes}')
        parents = [process[2] for process in below]
        assert len(set(parents)) == len(parents) and all(
            process[0] == ZYGOTE_UID and process[2] in {run_init[1]
                                                        for run_init in run_inits}
            for process in below), f'{container.name} still runs {processes}'


@contextlib.contextmanager
def sandbox_of_its_own(client, root: pathlib.Path, **settings):
    """A sandbox for one test, with `settings`, that leaves nothing behind."""
    sandbox = DockerSandbox(SandboxSettings(root=root, spares_per_image=0, **settings),
                            client=client)
    sandbox.start()
    try:
        yield sandbox
    finally:
        sandbox.stop()
        sandbox.join(60)
        sandbox.remove_leftovers()
