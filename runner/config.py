"""The runner's settings, parsed once from the environment (protocol §8).

Invalid configuration must fail at start with one clear line naming the
setting, and the line must never carry a secret: the two tokens and REDIS_URL
(it may hold a password) are never echoed, in errors or in the repr.
"""
import dataclasses
import pathlib
import socket
import urllib.parse
import uuid
from typing import Callable, Mapping, Optional, TypeVar

T = TypeVar('T')

MAX_SECONDS = 86400  # a day: beyond, waits would overflow the platform's timeout
DEFAULT_DOCKER_URL = 'unix:///var/run/docker.sock'
DOCKER_SCHEMES = ('unix', 'tcp', 'http', 'https', 'ssh')
# The bundled backend takes 1..128 characters; a name it refuses would stop
# every registration.
MAX_NAME_CHARS = 128
MAX_CONTAINERS = 256
MIN_REPORT_BODY_BYTES = 16 * 1024
MAX_OUTPUT_BYTES = 1024**3
LOG_LEVELS = ('DEBUG', 'INFO', 'WARNING', 'ERROR', 'CRITICAL')
LOG_FORMATS = ('text', 'json')


class ConfigError(ValueError):
    """A setting is missing or invalid; the message names the setting."""


# Every setting: name, default (as written in the environment; None when there
# is none) and meaning. The single source of the defaults and of `--help`.
VARIABLES = (
    ('BACKEND_URL', 'http://web:8080', 'backend base URL (http or https)'),
    ('RUNNER_REGISTRATION_TOKEN', None, 'shared secret for registration (required)'),
    ('RUNNER_NAME', None, 'display name (default: the hostname)'),
    ('SANDBOX_TOKEN', None, 'token of the testdata channel'),
    ('REDIS_URL', None, 'Redis for the cross-process testdata lock (default: a file lock)'),
    ('MAX_CONTAINER_NUMBER', '8', 'concurrent sandboxes'),
    ('DRAIN_TIMEOUT_SEC', '540', 'shutdown budget, seconds'),
    ('DATA_DIR', './data', 'parent of the three folders below'),
    ('TESTDATA_ROOT', None, 'testdata cache (default: DATA_DIR/testdata)'),
    ('SUBMISSION_DIR', None, 'job folders (default: DATA_DIR/submissions)'),
    ('SUBMISSION_BACKUP_DIR', None, 'job folders of failed reports (default: DATA_DIR/backup)'),
    ('DOCKER_URL', None, 'Docker engine (default: DOCKER_HOST, else unix:///var/run/docker.sock)'),
    ('SANDBOX_IMAGE_CPP', 'oj-sandbox-cpp:latest', 'sandbox image for C and C++'),
    ('SANDBOX_IMAGE_PYTHON', 'oj-sandbox-python:latest', 'sandbox image for Python 3'),
    ('SANDBOX_MEMORY_MB', '1536',
     'memory of one sandbox container, MiB (above the largest memoryLimit and the 1 GiB '
     'compile bound)'),
    ('LONG_POLL_SEC', '25', 'wait asked of next-job, seconds; 0 turns long-poll off'),
    ('OUTPUT_LIMIT', str(32 * 1024 * 1024), 'bytes per stream a program may write (OLE above)'),
    ('REPORT_OUTPUT_LIMIT', '8192', 'bytes per stream reported to the backend'),
    ('REPORT_BODY_LIMIT', str(512 * 1024),
     'bytes of a whole complete body; outputs are shortened to fit (proxies often stop at 1 MiB)'),
    ('LOG_LEVEL', 'INFO', 'DEBUG, INFO, WARNING, ERROR or CRITICAL'),
    ('LOG_FORMAT', 'text', 'text, or json for one object per line'),
    ('METRICS_PORT', None, 'serve Prometheus metrics on this port when set'),
)
_DEFAULTS = {name: default for name, default, _ in VARIABLES}
SETTINGS_HELP = '\n'.join(f'  {name:<26} {meaning}' +
                          (f' [{default}]' if default is not None else '')
                          for name, default, meaning in VARIABLES)


@dataclasses.dataclass(frozen=True, repr=False)
class Settings:
    backend_url: str
    registration_token: str
    runner_name: str
    sandbox_token: str
    redis_url: Optional[str]
    max_container_number: int
    drain_timeout_sec: float
    data_dir: pathlib.Path
    testdata_root: pathlib.Path
    submission_dir: pathlib.Path
    submission_backup_dir: pathlib.Path
    docker_url: str
    long_poll_sec: float
    output_limit: int
    report_output_limit: int
    report_body_limit: int
    log_level: str
    log_format: str
    metrics_port: Optional[int]
    sandbox_image_cpp: str
    sandbox_image_python: str
    sandbox_memory_mb: int

    @classmethod
    def from_env(cls,
                 environ: Mapping[str, str],
                 hostname: Optional[Callable[[], str]] = None) -> 'Settings':
        env = _Env(environ)
        data_dir = pathlib.Path(env.text('DATA_DIR', _DEFAULTS['DATA_DIR']))
        return cls(
            backend_url=env.parse('BACKEND_URL', _DEFAULTS['BACKEND_URL'], _backend_url,
                                  echo=False),
            registration_token=env.secret('RUNNER_REGISTRATION_TOKEN', required=True),
            runner_name=env.parse('RUNNER_NAME', (hostname or socket.gethostname)(),
                                  _runner_name,
                                  echo=False),
            sandbox_token=env.secret('SANDBOX_TOKEN', required=False),
            redis_url=env.parse('REDIS_URL', None, _redis_url, echo=False),
            max_container_number=env.parse('MAX_CONTAINER_NUMBER',
                                           _DEFAULTS['MAX_CONTAINER_NUMBER'],
                                           _bounded_int(1, MAX_CONTAINERS)),
            drain_timeout_sec=env.parse('DRAIN_TIMEOUT_SEC', _DEFAULTS['DRAIN_TIMEOUT_SEC'],
                                        _positive_seconds),
            data_dir=data_dir,
            testdata_root=pathlib.Path(env.text('TESTDATA_ROOT', str(data_dir / 'testdata'))),
            submission_dir=pathlib.Path(env.text('SUBMISSION_DIR', str(data_dir / 'submissions'))),
            submission_backup_dir=pathlib.Path(
                env.text('SUBMISSION_BACKUP_DIR', str(data_dir / 'backup'))),
            docker_url=env.parse('DOCKER_URL',
                                 env.text('DOCKER_HOST', DEFAULT_DOCKER_URL),
                                 _docker_url,
                                 echo=False),
            long_poll_sec=env.parse('LONG_POLL_SEC', _DEFAULTS['LONG_POLL_SEC'],
                                    _non_negative_seconds),
            output_limit=env.parse('OUTPUT_LIMIT', _DEFAULTS['OUTPUT_LIMIT'],
                                   _bounded_int(1, MAX_OUTPUT_BYTES)),
            report_output_limit=env.parse('REPORT_OUTPUT_LIMIT', _DEFAULTS['REPORT_OUTPUT_LIMIT'],
                                          _positive_int),
            report_body_limit=env.parse('REPORT_BODY_LIMIT', _DEFAULTS['REPORT_BODY_LIMIT'],
                                        _bounded_int(MIN_REPORT_BODY_BYTES, 1 << 30)),
            log_level=env.parse('LOG_LEVEL', _DEFAULTS['LOG_LEVEL'], _log_level),
            log_format=env.parse('LOG_FORMAT', _DEFAULTS['LOG_FORMAT'], _log_format),
            metrics_port=env.parse('METRICS_PORT', None, _port),
            sandbox_image_cpp=env.text('SANDBOX_IMAGE_CPP', _DEFAULTS['SANDBOX_IMAGE_CPP']),
            sandbox_image_python=env.text('SANDBOX_IMAGE_PYTHON',
                                          _DEFAULTS['SANDBOX_IMAGE_PYTHON']),
            sandbox_memory_mb=env.parse('SANDBOX_MEMORY_MB', _DEFAULTS['SANDBOX_MEMORY_MB'],
                                        _positive_int),
        )

    def __repr__(self) -> str:
        shown = []
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if field.name in _SECRET_FIELDS:
                shown.append(f'{field.name}={"<set>" if value else "<unset>"}')
            else:
                shown.append(f'{field.name}={value!r}')
        return f'Settings({", ".join(shown)})'


_SECRET_FIELDS = frozenset({'registration_token', 'sandbox_token', 'redis_url'})


class _Env:
    """Reads one variable at a time; every error names the variable."""

    def __init__(self, environ: Mapping[str, str]):
        self._environ = environ

    def text(self, name: str, default: Optional[str]) -> Optional[str]:
        value = self._environ.get(name, '').strip()
        return value if value else default

    def parse(self,
              name: str,
              default: Optional[str],
              parse: Callable[[str], T],
              echo: bool = True) -> Optional[T]:
        """`echo=False` for values that may carry a credential (URLs)."""
        raw = self.text(name, default)
        if raw is None:
            return None
        try:
            return parse(raw)
        except ValueError as exc:
            shown = f' (got {raw[:80]!r})' if echo else ''
            raise ConfigError(f'{name}: {exc}{shown}') from None

    def secret(self, name: str, required: bool) -> str:
        value = self.text(name, None)
        if value is None and required:
            raise ConfigError(f'{name} is required and must not be empty')
        return value or ''


def _bounded_int(low: int, high: int) -> Callable[[str], int]:

    def parse(raw: str) -> int:
        try:
            value = int(raw)
        except ValueError:
            raise ValueError(f'must be an integer from {low} to {high}') from None
        if not low <= value <= high:
            raise ValueError(f'must be an integer from {low} to {high}')
        return value

    return parse


def _runner_name(raw: str) -> str:
    if len(raw) > MAX_NAME_CHARS or not raw.isprintable():
        raise ValueError(f'must be 1 to {MAX_NAME_CHARS} printable characters '
                         '(the backend refuses others)')
    return raw


def _docker_url(raw: str) -> str:
    scheme = urllib.parse.urlsplit(raw).scheme
    if scheme not in DOCKER_SCHEMES:
        raise ValueError(f'must be a {", ".join(s + "://" for s in DOCKER_SCHEMES)} URL')
    return raw


def _positive_int(raw: str) -> int:
    try:
        value = int(raw)
    except ValueError:
        raise ValueError('must be a positive integer') from None
    if value <= 0:
        raise ValueError('must be a positive integer')
    return value


def _seconds(raw: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise ValueError('must be a number of seconds') from None
    if value != value or abs(value) > MAX_SECONDS:
        raise ValueError(f'must be a number of seconds up to {MAX_SECONDS}')
    return value


def check_folders(settings: 'Settings') -> None:
    """Raise ConfigError, naming the setting, when a data folder cannot be
    made or written (checked at start, before anything is claimed)."""
    for setting, folder in folder_settings(settings):
        check_folder(setting, folder)


def folder_settings(settings: 'Settings'):
    return (('DATA_DIR', settings.data_dir), ('TESTDATA_ROOT', settings.testdata_root),
            ('SUBMISSION_DIR', settings.submission_dir), ('SUBMISSION_BACKUP_DIR',
                                                          settings.submission_backup_dir))


def check_folder(setting: str, folder: pathlib.Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f'.check-{uuid.uuid4().hex}'
        probe.write_bytes(b'x')
        probe.unlink()
    except OSError as exc:
        raise ConfigError(f'{setting}: {folder} cannot be used ({exc.strerror})') from None


def _positive_seconds(raw: str) -> float:
    value = _seconds(raw)
    if value <= 0:
        raise ValueError('must be a positive number of seconds')
    return value


def _non_negative_seconds(raw: str) -> float:
    value = _seconds(raw)
    if value < 0:
        raise ValueError('must be zero (off) or a positive number of seconds')
    return value


def _port(raw: str) -> int:
    try:
        value = int(raw)
    except ValueError:
        raise ValueError('must be a port number (1-65535)') from None
    if not 1 <= value <= 65535:
        raise ValueError('must be a port number (1-65535)')
    return value


def _backend_url(raw: str) -> str:
    parts = urllib.parse.urlsplit(raw)
    if parts.scheme not in ('http', 'https') or not parts.hostname:
        raise ValueError('must be an http:// or https:// URL with a host')
    if parts.username or parts.password:
        raise ValueError('must not contain credentials')
    if parts.query or parts.fragment:
        raise ValueError('must not contain a query string or fragment')
    try:
        parts.port
    except ValueError:
        raise ValueError('has an invalid port') from None
    return raw.rstrip('/')


def _redis_url(raw: str) -> str:
    parts = urllib.parse.urlsplit(raw)
    if parts.scheme not in ('redis', 'rediss', 'unix'):
        raise ValueError('must be a redis://, rediss:// or unix:// URL')
    return raw


def _log_level(raw: str) -> str:
    value = raw.upper()
    if value not in LOG_LEVELS:
        raise ValueError(f'must be one of {", ".join(LOG_LEVELS)}')
    return value


def _log_format(raw: str) -> str:
    value = raw.lower()
    if value not in LOG_FORMATS:
        raise ValueError(f'must be one of {", ".join(LOG_FORMATS)}')
    return value
