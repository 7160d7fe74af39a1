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
from typing import Any, Callable, Dict, Mapping, Optional, Union

from sandbox.settings import MiB, SandboxSettings

MAX_SECONDS = 86400  # a day: beyond, waits would overflow the platform's timeout
DEFAULT_DOCKER_URL = 'unix:///var/run/docker.sock'
DOCKER_SCHEMES = ('unix', 'tcp', 'http', 'https', 'ssh')
# The bundled backend takes 1..128 characters; a name it refuses would stop
# every registration.
MAX_NAME_CHARS = 128
MAX_CONTAINERS = 256
MAX_OUTPUT_BYTES = 1024**3
LOG_LEVELS = ('DEBUG', 'INFO', 'WARNING', 'ERROR', 'CRITICAL')
LOG_FORMATS = ('text', 'json')


class ConfigError(ValueError):
    """A setting is missing or invalid; the message names the setting."""


@dataclasses.dataclass(frozen=True)
class Setting:
    """One environment variable: the single place it is declared.

    `default` is written as in the environment (None: unset), or computed
    from the settings read before it (`Defaults`). A `secret` is never
    echoed and shows only as set or unset; `echo=False` keeps a value that
    may carry a credential (a URL) out of error messages.
    """
    variable: str
    default: Union[None, str, Callable[['Defaults'], Optional[str]]]
    parse: Callable[[str], Any]
    help: str
    secret: bool = False
    echo: bool = True
    # Or a function of the settings read before it (one protocol's only).
    required: Union[bool, Callable[['Defaults'], bool]] = False


@dataclasses.dataclass(frozen=True)
class Defaults:
    """What a computed default may look at."""
    earlier: Mapping[str, Any]  # the fields read so far, by field name
    environ: Mapping[str, str]
    hostname: Callable[[], str]


def _setting(variable: str, default, parse: Callable[[str], Any], help: str, **flags):
    return dataclasses.field(metadata={'setting': Setting(variable, default, parse, help, **flags)})


def _text(raw: str) -> str:
    return raw


def _below_data_dir(name: str) -> Callable[[Defaults], str]:
    return lambda d: str(d.earlier['data_dir'] / name)


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


PROTOCOLS = ('noj', 'algojudge')


def _protocol(raw: str) -> str:
    value = raw.lower()
    if value not in PROTOCOLS:
        raise ValueError(f'must be one of {", ".join(PROTOCOLS)}')
    return value


def _log_format(raw: str) -> str:
    value = raw.lower()
    if value not in LOG_FORMATS:
        raise ValueError(f'must be one of {", ".join(LOG_FORMATS)}')
    return value


@dataclasses.dataclass(frozen=True, repr=False)
class Settings:
    """Every setting, in `--help` order; each field declares its variable."""
    backend_protocol: str = _setting('BACKEND_PROTOCOL', 'noj', _protocol,
                                     'the backend\'s protocol: noj (Normal-OJ) or algojudge')
    backend_url: str = _setting('BACKEND_URL',
                                'http://web:8080',
                                _backend_url,
                                'backend base URL (http or https; AlgoJudge\'s includes /api/v1)',
                                echo=False)
    registration_token: str = _setting('RUNNER_REGISTRATION_TOKEN',
                                       None,
                                       _text,
                                       'shared secret for registration (required by noj)',
                                       secret=True,
                                       required=lambda d: d.earlier['backend_protocol'] == 'noj')
    runner_name: str = _setting('RUNNER_NAME',
                                lambda d: d.hostname(),
                                _runner_name,
                                'display name (default: the hostname)',
                                echo=False)
    sandbox_token: str = _setting('SANDBOX_TOKEN',
                                  '',
                                  _text,
                                  'token of the testdata channel',
                                  secret=True)
    redis_url: Optional[str] = _setting(
        'REDIS_URL',
        None,
        _redis_url,
        'Redis for the cross-process testdata lock (default: a file lock)',
        secret=True)  # it may hold a password
    max_container_number: int = _setting('MAX_CONTAINER_NUMBER',
                                         str(SandboxSettings.max_containers),
                                         _bounded_int(1, MAX_CONTAINERS), 'concurrent sandboxes')
    drain_timeout_sec: float = _setting('DRAIN_TIMEOUT_SEC', '540', _positive_seconds,
                                        'shutdown budget, seconds')
    data_dir: pathlib.Path = _setting('DATA_DIR', './data', pathlib.Path,
                                      'parent of the three folders below')
    runner_key_file: pathlib.Path = _setting(
        'RUNNER_KEY_FILE', _below_data_dir('runner.key'), pathlib.Path,
        'algojudge: the runner\'s Ed25519 key, made on first start (default: DATA_DIR/runner.key)')
    lease_sec: int = _setting('LEASE_SEC', '600', _bounded_int(1, 3600),
                              'algojudge: the lease asked for each claim, seconds')
    testdata_root: pathlib.Path = _setting('TESTDATA_ROOT', _below_data_dir('testdata'),
                                           pathlib.Path,
                                           'testdata cache (default: DATA_DIR/testdata)')
    submission_dir: pathlib.Path = _setting('SUBMISSION_DIR', _below_data_dir('submissions'),
                                            pathlib.Path,
                                            'job folders (default: DATA_DIR/submissions)')
    submission_backup_dir: pathlib.Path = _setting(
        'SUBMISSION_BACKUP_DIR', _below_data_dir('backup'), pathlib.Path,
        'job folders of failed reports (default: DATA_DIR/backup)')
    docker_url: str = _setting(
        'DOCKER_URL',
        lambda d: d.environ.get('DOCKER_HOST', '').strip() or DEFAULT_DOCKER_URL,
        _docker_url,
        f'Docker engine (default: DOCKER_HOST, else {DEFAULT_DOCKER_URL})',
        echo=False)
    sandbox_image_cpp: str = _setting('SANDBOX_IMAGE_CPP', SandboxSettings.cpp_image, _text,
                                      'sandbox image for C and C++')
    sandbox_image_python: str = _setting('SANDBOX_IMAGE_PYTHON', SandboxSettings.python_image,
                                         _text, 'sandbox image for Python 3')
    sandbox_memory_mb: int = _setting(
        'SANDBOX_MEMORY_MB', str(SandboxSettings.container_memory_bytes // MiB), _positive_int,
        'memory of one sandbox container, MiB (above the largest memoryLimit and the 1 GiB '
        'compile bound)')
    sandbox_jobs_per_container: int = _setting(
        'SANDBOX_JOBS_PER_CONTAINER', str(SandboxSettings.jobs_per_container),
        _bounded_int(1, 100000),
        'jobs one sandbox container serves in turn, reset and checked between them; 1: a new '
        'container for every job')
    checker_time_limit_ms: int = _setting(
        'CHECKER_TIME_LIMIT_MS', str(SandboxSettings.checker_time_ms), _bounded_int(1, 600000),
        'CPU time of a problem\'s checker per case, ms (not charged to the program)')
    checker_memory_mb: int = _setting(
        'CHECKER_MEMORY_MB', str(SandboxSettings.checker_memory_kb // 1024),
        _bounded_int(1, 1 << 20),
        'memory of a problem\'s checker, MiB (at most what a sandbox holds beside its own)')
    interactor_time_limit_ms: int = _setting(
        'INTERACTOR_TIME_LIMIT_MS', str(SandboxSettings.interactor_time_ms),
        _bounded_int(1, 600000),
        'CPU time of a problem\'s interactor per case, ms (not charged to the program)')
    interactor_memory_mb: int = _setting(
        'INTERACTOR_MEMORY_MB', str(SandboxSettings.interactor_memory_kb // 1024),
        _bounded_int(1, 1 << 20),
        'memory of a problem\'s interactor, MiB (at most what a sandbox holds beside its own)')
    long_poll_sec: float = _setting('LONG_POLL_SEC', '25', _non_negative_seconds,
                                    'wait asked of next-job, seconds; 0 turns long-poll off')
    output_limit: int = _setting('OUTPUT_LIMIT', str(SandboxSettings.output_limit),
                                 _bounded_int(1, MAX_OUTPUT_BYTES),
                                 'bytes per stream a program may write (OLE above)')
    report_output_limit: int = _setting('REPORT_OUTPUT_LIMIT', str(SandboxSettings.report_limit),
                                        _positive_int, 'bytes per stream reported to the backend')
    report_body_limit: int = _setting(
        'REPORT_BODY_LIMIT', str(512 * 1024), _bounded_int(1, 1 << 30),
        'bytes of a whole complete body; outputs are shortened to fit (proxies often stop at '
        '1 MiB)')
    log_level: str = _setting('LOG_LEVEL', 'INFO', _log_level,
                              'DEBUG, INFO, WARNING, ERROR or CRITICAL')
    log_format: str = _setting('LOG_FORMAT', 'text', _log_format,
                               'text, or json for one object per line')
    metrics_port: Optional[int] = _setting('METRICS_PORT', None, _port,
                                           'serve Prometheus metrics on this port when set')

    @classmethod
    def from_env(cls,
                 environ: Mapping[str, str],
                 hostname: Optional[Callable[[], str]] = None) -> 'Settings':
        values: Dict[str, Any] = {}
        for field in dataclasses.fields(cls):
            values[field.name] = _read(field.metadata['setting'], environ,
                                       Defaults(values, environ, hostname or socket.gethostname))
        return cls(**values)

    def sandbox_settings(self) -> SandboxSettings:
        """The sandbox these settings describe (the daemon's, and --check's)."""
        return SandboxSettings(root=self.data_dir / 'sandbox',
                               max_containers=self.max_container_number,
                               output_limit=self.output_limit,
                               report_limit=self.report_output_limit,
                               docker_url=self.docker_url,
                               cpp_image=self.sandbox_image_cpp,
                               python_image=self.sandbox_image_python,
                               container_memory_bytes=self.sandbox_memory_mb * MiB,
                               jobs_per_container=self.sandbox_jobs_per_container,
                               checker_time_ms=self.checker_time_limit_ms,
                               checker_memory_kb=self.checker_memory_mb * 1024,
                               interactor_time_ms=self.interactor_time_limit_ms,
                               interactor_memory_kb=self.interactor_memory_mb * 1024)

    def __repr__(self) -> str:
        shown = []
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if field.metadata['setting'].secret:
                shown.append(f'{field.name}={"<set>" if value else "<unset>"}')
            else:
                shown.append(f'{field.name}={value!r}')
        return f'Settings({", ".join(shown)})'


SETTINGS = tuple(field.metadata['setting'] for field in dataclasses.fields(Settings))
SETTINGS_HELP = '\n'.join(f'  {s.variable:<26} {s.help}' +
                          (f' [{s.default}]' if isinstance(s.default, str) and s.default else '')
                          for s in SETTINGS)


def _read(setting: Setting, environ: Mapping[str, str], defaults: Defaults) -> Any:
    """One variable, parsed; every error names it and never shows a secret."""
    raw = environ.get(setting.variable, '').strip() or None
    if raw is None:
        required = setting.required(defaults) if callable(setting.required) else setting.required
        if required:
            raise ConfigError(f'{setting.variable} is required and must not be empty')
        raw = setting.default(defaults) if callable(setting.default) else setting.default
        if raw is None:
            return None
    try:
        return setting.parse(raw)
    except ValueError as exc:
        shown = f' (got {raw[:80]!r})' if setting.echo and not setting.secret else ''
        raise ConfigError(f'{setting.variable}: {exc}{shown}') from None
