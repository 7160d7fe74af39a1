"""`python main.py --check`: will this host judge correctly? Claims nothing.

One line per check, ✓ or ✗, with a hint for what failed: the configuration,
the Docker engine, the sandbox images, a tiny known program per language
through the real sandbox (verdict, time and memory sane), the data folders
(writable, free space), Redis when configured, and that the backend answers.
"""
import dataclasses
import itertools
import pathlib
import shutil
import tempfile
import uuid
from typing import Mapping, TextIO

import docker
import docker.errors
import requests

from runner.config import ConfigError, Settings
from sandbox.docker_sandbox import DockerSandbox, ImageMismatch, check_image
from sandbox.job import CaseSpec, SandboxJob
from sandbox.languages import Language
from sandbox.results import Status

MIN_FREE_BYTES = 1024**3
PROGRAMS = {
    Language.C: b'#include <stdio.h>\nint main(void){int a,b;scanf("%d %d",&a,&b);'
    b'printf("%d\\n",a+b);return 0;}\n',
    Language.CPP: b'#include <iostream>\nint main(){int a,b;std::cin>>a>>b;'
    b'std::cout<<a+b<<std::endl;}\n',
    Language.PYTHON: b'a, b = map(int, input().split())\nprint(a + b)\n',
}


@dataclasses.dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    hint: str = ''

    def line(self) -> str:
        text = f'{"✓" if self.ok else "✗"} {self.name}: {self.detail}'
        return text if self.ok or not self.hint else f'{text}\n    hint: {self.hint}'


def run(environ: Mapping[str, str], out: TextIO) -> int:
    """Print every check; 0 when all pass, 1 otherwise (2 for bad configuration)."""
    try:
        settings = Settings.from_env(environ)
    except ConfigError as exc:
        print(Check('configuration', False, str(exc), 'see python main.py --help').line(), file=out)
        return 2
    checks = []
    for check in itertools.chain([Check('configuration', True, 'valid')], _checks(settings)):
        checks.append(check)
        print(check.line(), file=out, flush=True)
    failed = [c for c in checks if not c.ok]
    print(f'{len(checks) - len(failed)}/{len(checks)} checks passed', file=out)
    return 1 if failed else 0


def _checks(settings: Settings):
    yield from _docker_checks(settings)
    for name, path in (('testdata folder', settings.testdata_root), ('submission folder',
                                                                     settings.submission_dir),
                       ('backup folder', settings.submission_backup_dir)):
        yield _folder(name, path)
    if settings.redis_url:
        yield _redis(settings.redis_url)
    yield _backend(settings.backend_url)


def _docker_checks(settings: Settings):
    from runner.daemon import sandbox_settings  # the sandbox exactly as the daemon makes it
    try:
        client = docker.DockerClient(base_url=settings.docker_url, timeout=30)
        version = client.version().get('Version', '?')
    except (docker.errors.DockerException, requests.RequestException) as exc:
        yield Check('docker engine', False, f'unreachable at {settings.docker_url} ({exc})',
                    'start dockerd, or set DOCKER_URL')
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
    if not images_ok:
        return
    # A root of its own: the check never touches a running runner's sandboxes.
    config = dataclasses.replace(sandbox_settings(settings),
                                 root=settings.data_dir / 'sandbox-check',
                                 spares_per_image=0,
                                 max_containers=2)
    sandbox = DockerSandbox(config, client=client)
    try:
        sandbox.start()
        for language, source in PROGRAMS.items():
            yield _judge(sandbox, language, source)
    finally:
        sandbox.stop()
        sandbox.join(30)
        sandbox.remove_leftovers()
        shutil.rmtree(config.root, ignore_errors=True)


def _judge(sandbox: DockerSandbox, language: Language, source: bytes) -> Check:
    name = f'sandbox {language.name}'
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        (tmp / 'src').mkdir()
        (tmp / 'src' / language.source_name).write_bytes(source)
        (tmp / 'in').write_bytes(b'40 2\n')
        (tmp / 'out').write_bytes(b'42\n')
        job = SandboxJob(key=f'check-{uuid.uuid4()}', language=language, source_dir=tmp / 'src')
        try:
            compiled = sandbox.compile(job)
            if not compiled.ok:
                return Check(name, False, f'compile: {compiled.status.value} '
                             f'{compiled.message[:200]}', 'the image lacks a working toolchain?')
            result = sandbox.run_case(job, CaseSpec(tmp / 'in', tmp / 'out', 2000, 262144))
        finally:
            sandbox.release(job.key)
    detail = f'{result.status.value}, {result.exec_time_ms} ms, {result.memory_kb} KB'
    if result.status is not Status.AC:
        return Check(name, False, f'{detail}: {result.stderr[:200]}',
                     'a known-good program must be AC')
    if not (result.exec_time_ms < 1000 and 0 < result.memory_kb < 128 * 1024):
        return Check(name, False, f'{detail}: time or memory out of the sane range',
                     'an overloaded host, or a broken measurement')
    return Check(name, True, detail)


def _folder(name: str, path: pathlib.Path) -> Check:
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / f'.check-{uuid.uuid4().hex}'
        probe.write_bytes(b'x')
        probe.unlink()
        free = shutil.disk_usage(path).free
    except OSError as exc:
        return Check(name, False, f'{path}: {exc.strerror}', 'make it writable by the runner')
    detail = f'{path}, {free / 1024**3:.1f} GiB free'
    if free < MIN_FREE_BYTES:
        return Check(name, False, detail, 'free some space: testdata and job folders live here')
    return Check(name, True, detail)


def _redis(url: str) -> Check:
    import redis
    try:
        redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5).ping()
    except redis.RedisError as exc:
        return Check('redis', False, f'no answer ({type(exc).__name__})',
                     'check REDIS_URL, or unset it to use a file lock')
    return Check('redis', True, 'answers')


def _backend(url: str) -> Check:
    try:
        response = requests.get(url + '/', timeout=(5, 10))
    except requests.RequestException as exc:
        return Check('backend', False, f'{url} does not answer ({type(exc).__name__})',
                     'check BACKEND_URL and the network')
    return Check('backend', True, f'{url} answers (HTTP {response.status_code})')
