"""`python main.py --check` on this host: passes when it is good, names the
broken part when it is not, and never claims anything."""
import subprocess
import sys

import pytest

from tests.process.runner_process import REPO

pytestmark = pytest.mark.docker


def check(tmp_path, backend_url, **env):
    return subprocess.run(
        [sys.executable, 'main.py', '--check'],
        cwd=REPO,
        env={
            'PATH': '/usr/local/bin:/usr/bin:/bin',
            'BACKEND_URL': backend_url,
            'RUNNER_REGISTRATION_TOKEN': 'regtok',
            'DATA_DIR': str(tmp_path / 'data'),
            **env
        },
        capture_output=True,
        text=True,
        timeout=300)


def test_a_good_host_passes_every_check(tmp_path, backend):
    done = check(tmp_path, backend.url)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert all(line.startswith('✓') for line in lines[:-1]), lines
    for part in ('docker engine', 'sandbox C:', 'sandbox CPP:', 'sandbox PYTHON:', 'backend'):
        assert any(part in line for line in lines), part
    assert not any('register' in c.path or 'next-job' in c.path for c in backend.calls)


def test_an_unreachable_docker_engine_is_named(tmp_path, backend):
    done = check(tmp_path, backend.url, DOCKER_URL='unix:///nonexistent/docker.sock')
    assert done.returncode == 1
    assert any(line.startswith('✗ docker engine') for line in done.stdout.splitlines())


def test_a_missing_image_is_named(tmp_path, backend):
    done = check(tmp_path, backend.url, SANDBOX_IMAGE_PYTHON='oj-no-such-image:1')
    assert done.returncode == 1
    assert any(line.startswith('✗ image oj-no-such-image:1') for line in done.stdout.splitlines())


def test_bad_configuration_is_named(tmp_path, backend):
    done = check(tmp_path, backend.url, RUNNER_REGISTRATION_TOKEN='')
    assert done.returncode == 2
    assert 'RUNNER_REGISTRATION_TOKEN' in done.stdout
