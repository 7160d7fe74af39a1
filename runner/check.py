"""`python main.py --check`: will this host judge correctly? Claims nothing.

One line per check, ✓ or ✗, with a hint for what failed: the configuration,
the data folders (writable, free space), the Docker engine, the sandbox
images, a known program per language judged in a fresh sandbox, Redis when
configured, and the backend: that it is a runner API, that it takes the
registration token (by registering: the backend keeps an identity that is
never used and expires) and that its testdata channel takes SANDBOX_TOKEN.
With BACKEND_PROTOCOL=algojudge: the runner's key file, and that the server
answers its health call (registering there is a start, shown on the
server's panel, so the check does not register).
Every step is bounded, and a step that can take a while says what it waits
for first.
"""
import dataclasses
import itertools
import pathlib
import shutil
from typing import Mapping, TextIO

import docker
import docker.errors
import requests

from runner.backend.algojudge import identity
from runner.backend.algojudge.client import AlgoJudgeClient
from runner.backend.noj.client import (TOKEN_PROBE_PROBLEM, BackendClient, BackendError,
                                       ProtocolError, Unauthorized, UnexpectedStatus)
from runner.config import ConfigError, Settings, check_folder, folder_settings
from runner.exit_codes import ExitCode
from runner.version import VERSION
from sandbox.docker_sandbox import DockerSandbox, ImageMismatch, check_image
from sandbox.languages import Language
from sandbox.results import Status

MIN_FREE_BYTES = 1024**3
CHECK_FAILED = 1  # --check's exit when a check failed (bad configuration: ExitCode.CONFIG)
ENGINE_TIMEOUT_SEC = 30


@dataclasses.dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    hint: str = ''

    def line(self) -> str:
        text = f'{"✓" if self.ok else "✗"} {self.name}: {self.detail}'
        return text if self.ok or not self.hint else f'{text}\n    hint: {self.hint}'


class Waiting(str):
    """A line said before a step that can take a while."""


def run(environ: Mapping[str, str], out: TextIO) -> int:
    """Print every check; 0 when all pass, 1 otherwise (2 for bad configuration)."""
    try:
        settings = Settings.from_env(environ)
    except ConfigError as exc:
        print(Check('configuration', False, str(exc), 'see python main.py --help').line(), file=out)
        return ExitCode.CONFIG
    checks = []
    for check in itertools.chain([Check('configuration', True, 'valid')], _checks(settings)):
        if isinstance(check, Waiting):
            print(f'… {check}', file=out, flush=True)
            continue
        checks.append(check)
        print(check.line(), file=out, flush=True)
    failed = [c for c in checks if not c.ok]
    print(f'{len(checks) - len(failed)}/{len(checks)} checks passed', file=out)
    return CHECK_FAILED if failed else ExitCode.OK


def _checks(settings: Settings):
    folders_ok = True
    for setting, path in folder_settings(settings):
        check = _folder(setting, path)
        folders_ok &= check.ok
        yield check
    yield from _docker_checks(settings, folders_ok)
    if settings.redis_url:
        yield _redis(settings.redis_url)
    if settings.backend_protocol == 'algojudge':
        yield from _algojudge_checks(settings)
    else:
        yield from _backend_checks(settings)


def _folder(setting: str, path: pathlib.Path) -> Check:
    try:
        check_folder(setting, path)
        free = shutil.disk_usage(path).free
    except (ConfigError, OSError) as exc:
        return Check(setting, False,
                     str(exc).split(': ', 1)[-1],
                     f'make {path} a folder the runner can write, or set {setting}')
    detail = f'{path}, {free / 1024**3:.1f} GiB free'
    if free < MIN_FREE_BYTES:
        return Check(setting, False, detail, 'free some space: testdata and job folders live here')
    return Check(setting, True, detail)


def _docker_checks(settings: Settings, folders_ok: bool):
    yield Waiting(f'waiting for the Docker engine at {settings.docker_url} '
                  f'(up to {ENGINE_TIMEOUT_SEC} s)')
    try:
        client = docker.DockerClient(base_url=settings.docker_url, timeout=ENGINE_TIMEOUT_SEC)
        version = client.version().get('Version', '?')
    except (docker.errors.DockerException, requests.RequestException) as exc:
        yield Check('docker engine', False, f'unreachable at {settings.docker_url} ({exc})',
                    'start dockerd, or set DOCKER_URL (or DOCKER_HOST)')
        return
    yield Check('docker engine', True, f'Docker {version} at {settings.docker_url}')
    images_ok = True
    for image in (settings.sandbox_image_cpp, settings.sandbox_image_python):
        try:
            check_image(client, image)
            yield Check(f'image {image}', True, 'present')
        except docker.errors.ImageNotFound:
            images_ok = False
            yield Check(f'image {image}', False, 'missing',
                        'build it: sandbox/images/build-offline.sh (or docker load it)')
        except ImageMismatch as exc:
            images_ok = False
            yield Check(f'image {image}', False, 'built for another runner version', str(exc))
    if not (images_ok and folders_ok):
        return
    # A root of its own: the check never touches a running runner's sandboxes.
    # The sandbox exactly as the daemon makes it, but for its root.
    config = dataclasses.replace(settings.sandbox_settings(),
                                 root=settings.data_dir / 'sandbox-check',
                                 spares_per_image=0,
                                 max_containers=2)
    yield Waiting('judging a known program per language, each in a fresh sandbox')
    sandbox = DockerSandbox(config, client=client)
    try:
        sandbox.start()
        for language in Language:
            yield _judge(sandbox, language)
    except OSError as exc:
        yield Check('sandbox', False, f'{config.root}: {exc.strerror}', 'check DATA_DIR')
    finally:
        sandbox.stop()
        sandbox.join(30)
        sandbox.remove_leftovers()
        shutil.rmtree(config.root, ignore_errors=True)


def _judge(sandbox: DockerSandbox, language: Language) -> Check:
    name = f'sandbox {language.name}'
    try:
        result = sandbox.judge_known(language)
    except Exception as exc:  # any failure here is what the check reports
        return Check(name, False, f'{type(exc).__name__}: {str(exc)[:200]}',
                     'the sandbox cannot start or run: see the Docker engine\'s log')
    detail = f'{result.status.value}, {result.exec_time_ms} ms, {result.memory_kb} KB'
    if result.status is not Status.AC:
        return Check(name, False, f'{detail}: {result.stderr[:200]}',
                     'a known-good program must be AC')
    if not (result.exec_time_ms < 1000 and 0 < result.memory_kb < 128 * 1024):
        return Check(name, False, f'{detail}: time or memory out of the sane range',
                     'an overloaded host, or a broken measurement')
    return Check(name, True, detail)


def _redis(url: str) -> Check:
    import redis
    try:
        redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5).ping()
    except redis.RedisError as exc:
        return Check('redis', False, f'no answer ({type(exc).__name__})',
                     'check REDIS_URL, or unset it to use a file lock')
    return Check('redis', True, 'answers')


def _algojudge_checks(settings: Settings):
    try:
        key = identity.load_or_create(settings.runner_key_file)
    except identity.KeyFileError as exc:
        yield Check(
            'runner key', False, str(exc), 'point RUNNER_KEY_FILE at the runner\'s key '
            'file, or at a path where one can be made')
        return
    yield Check(
        'runner key', True, f'{settings.runner_key_file}, fingerprint '
        f'{key.fingerprint[:16]}... (an administrator approves it once)')
    yield Waiting(f'asking {settings.backend_url} for its health')
    client = AlgoJudgeClient(settings.backend_url, key)
    try:
        level = client.health_level()
    except BackendError as exc:
        yield Check('AlgoJudge server', False, f'{settings.backend_url}: {exc}',
                    'BACKEND_URL must be the server\'s API root, /api/v1 included')
        return
    if level == 'open':
        yield Check('AlgoJudge server', True, f'{settings.backend_url} answers, open')
    else:
        yield Check(
            'AlgoJudge server', True, f'{settings.backend_url} answers, in maintenance '
            f'({level}): the runner waits until it opens')


def _backend_checks(settings: Settings):
    client = BackendClient(settings.backend_url, sandbox_token=settings.sandbox_token)
    yield Waiting(f'registering with {settings.backend_url} to check the registration token '
                  '(the backend keeps an identity that is never used and expires)')
    try:
        registration = client.register(settings.registration_token, settings.runner_name, VERSION)
    except Unauthorized:
        yield Check('registration token', False, 'the backend refused RUNNER_REGISTRATION_TOKEN '
                    '(401)', 'check RUNNER_REGISTRATION_TOKEN')
    except UnexpectedStatus as exc:
        yield Check('backend', False, f'{settings.backend_url} answers, but not as a runner API '
                    f'({exc})', 'BACKEND_URL must be the base URL of the runner API')
        return
    except BackendError as exc:
        if isinstance(exc, ProtocolError):  # an answer, but not one of the runner API's
            yield Check('backend', False,
                        f'{settings.backend_url} answers, but not as a runner API ({exc})',
                        'BACKEND_URL must be the base URL of the runner API')
        else:
            yield Check('backend', False, f'{settings.backend_url} does not answer ({exc})',
                        'check BACKEND_URL and the network')
        return
    else:
        yield Check('registration token', True,
                    f'accepted (registered as {registration.identity.runner_id}, never used)')
        client = client.with_identity(registration.identity)
    if not settings.sandbox_token:
        yield Check('testdata token', False, 'SANDBOX_TOKEN is not set',
                    'set SANDBOX_TOKEN: every testdata download needs it')
        return
    yield Waiting(f'asking the testdata channel for problem {TOKEN_PROBE_PROBLEM}\'s checksum')
    refusal = client.sandbox_token_refusal()
    if refusal is None:
        yield Check('testdata token', True, 'SANDBOX_TOKEN accepted')
    else:
        yield Check('testdata token', False, refusal, 'check SANDBOX_TOKEN and BACKEND_URL')
