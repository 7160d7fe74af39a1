"""`python main.py --check` on this host, against the bundled backend: passes
when the host is good, names the broken part (with a hint, never a traceback)
when it is not, and never claims anything."""
import http.server
import subprocess
import sys
import threading

import pytest

from localbackend import LocalBackend
from tests.process.runner_process import REPO

pytestmark = pytest.mark.docker


@pytest.fixture
def local():
    backend = LocalBackend().start()
    yield backend
    backend.stop()
    backend.join(5)


@pytest.fixture
def not_a_runner_api():
    """A web server that answers every call with a page."""

    class Page(http.server.BaseHTTPRequestHandler):

        def do_GET(self):
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b'<html>welcome</html>')

        do_POST = do_GET

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f'http://127.0.0.1:{server.server_port}'
    server.shutdown()


def check(tmp_path, backend, **env):
    done = subprocess.run(
        [sys.executable, 'main.py', '--check'],
        cwd=REPO,
        env={
            'PATH': '/usr/local/bin:/usr/bin:/bin',
            'BACKEND_URL': backend.url,
            'RUNNER_REGISTRATION_TOKEN': backend.registration_token,
            'SANDBOX_TOKEN': backend.sandbox_token,
            'DATA_DIR': str(tmp_path / 'data'),
            **env
        },
        capture_output=True,
        text=True,
        timeout=300)
    assert 'Traceback' not in done.stdout + done.stderr, done.stdout + done.stderr
    return done


def failed(done):
    return [line for line in done.stdout.splitlines() if line.startswith('✗')]


def test_a_good_host_passes_every_check_and_claims_nothing(tmp_path, local):
    done = check(tmp_path, local)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert all(line.startswith(('✓', '…')) for line in lines[:-1]), lines
    for part in ('docker engine', 'sandbox C:', 'sandbox CPP:', 'sandbox PYTHON:',
                 'registration token: accepted', 'testdata token: SANDBOX_TOKEN accepted'):
        assert any(part in line for line in lines), part
    assert any(line.startswith('… registering') and 'expires' in line for line in lines)
    assert local.events.count('claim') == 0 and local.events.count('register', outcome='ok') == 1


def test_an_unreachable_docker_engine_is_named(tmp_path, local):
    done = check(tmp_path, local, DOCKER_URL='unix:///nonexistent/docker.sock')
    assert done.returncode == 1
    assert [line.split(':')[0] for line in failed(done)] == ['✗ docker engine']


def test_a_missing_image_is_named(tmp_path, local):
    done = check(tmp_path, local, SANDBOX_IMAGE_PYTHON='oj-no-such-image:1')
    assert done.returncode == 1
    assert [line.split(':')[0] for line in failed(done)] == ['✗ image oj-no-such-image']


def test_bad_configuration_is_named(tmp_path, local):
    done = check(tmp_path, local, RUNNER_REGISTRATION_TOKEN='')
    assert done.returncode == 2
    assert 'RUNNER_REGISTRATION_TOKEN' in done.stdout


def test_a_wrong_registration_token_is_named(tmp_path, local):
    done = check(tmp_path, local, RUNNER_REGISTRATION_TOKEN='wrong')
    assert done.returncode == 1
    assert failed(done) == [
        '✗ registration token: the backend refused RUNNER_REGISTRATION_TOKEN (401)'
    ]


def test_a_wrong_sandbox_token_is_named(tmp_path, local):
    done = check(tmp_path, local, SANDBOX_TOKEN='wrong')
    assert done.returncode == 1
    assert len(failed(done)) == 1 and 'refused SANDBOX_TOKEN' in failed(done)[0]


def test_a_url_that_is_not_a_runner_api_is_named(tmp_path, local, not_a_runner_api):
    done = check(tmp_path, local, BACKEND_URL=not_a_runner_api)
    assert done.returncode == 1
    assert len(failed(done)) == 1 and 'answers, but not as a runner API' in failed(done)[0]


def test_an_unusable_data_dir_is_named_without_a_traceback(tmp_path, local):
    blocked = tmp_path / 'a-file'
    blocked.write_text('not a folder')
    done = check(tmp_path, local, DATA_DIR=str(blocked))
    assert done.returncode == 1
    assert failed(done)[0].startswith('✗ DATA_DIR: ') and 'cannot be used' in failed(done)[0]
