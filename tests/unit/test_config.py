import pathlib

import pytest

from runner.config import ConfigError, Settings, check_folders

TOKEN = 'reg-secret-123'


def settings(**env):
    return Settings.from_env({
        'RUNNER_REGISTRATION_TOKEN': TOKEN,
        **env
    },
                             hostname=lambda: 'judge-7')


def test_defaults():
    s = settings()
    assert s.backend_url == 'http://web:8080'
    assert s.registration_token == TOKEN
    assert s.runner_name == 'judge-7'
    assert s.sandbox_token == ''
    assert s.redis_url is None
    assert s.max_container_number == 8
    assert s.drain_timeout_sec == 540
    assert s.data_dir == pathlib.Path('data')
    assert s.testdata_root == pathlib.Path('data/testdata')
    assert s.submission_dir == pathlib.Path('data/submissions')
    assert s.submission_backup_dir == pathlib.Path('data/backup')
    assert s.docker_url == 'unix:///var/run/docker.sock'
    assert s.long_poll_sec == 25
    assert s.output_limit == 32 * 1024 * 1024
    assert s.report_output_limit == 8192
    assert s.log_level == 'INFO'
    assert s.log_format == 'text'
    assert s.metrics_port is None


def test_every_setting_is_read():
    s = settings(BACKEND_URL='https://judge.example.edu/api/',
                 RUNNER_NAME='room-101',
                 SANDBOX_TOKEN='sbx',
                 REDIS_URL='redis://cache:6379/2',
                 MAX_CONTAINER_NUMBER='3',
                 DRAIN_TIMEOUT_SEC='120.5',
                 DATA_DIR='/srv/runner',
                 TESTDATA_ROOT='/fast/testdata',
                 DOCKER_URL='tcp://docker:2375',
                 LONG_POLL_SEC='0',
                 OUTPUT_LIMIT='1024',
                 REPORT_OUTPUT_LIMIT='100',
                 LOG_LEVEL='debug',
                 LOG_FORMAT='JSON',
                 METRICS_PORT='9100')
    assert s.backend_url == 'https://judge.example.edu/api'
    assert s.runner_name == 'room-101'
    assert s.sandbox_token == 'sbx'
    assert s.redis_url == 'redis://cache:6379/2'
    assert s.max_container_number == 3
    assert s.drain_timeout_sec == 120.5
    assert s.testdata_root == pathlib.Path('/fast/testdata')
    assert s.submission_dir == pathlib.Path('/srv/runner/submissions')
    assert s.submission_backup_dir == pathlib.Path('/srv/runner/backup')
    assert s.docker_url == 'tcp://docker:2375'
    assert s.long_poll_sec == 0
    assert (s.output_limit, s.report_output_limit) == (1024, 100)
    assert (s.log_level, s.log_format, s.metrics_port) == ('DEBUG', 'json', 9100)


@pytest.mark.parametrize('value', ['', '   '])
def test_registration_token_is_required(value):
    with pytest.raises(ConfigError, match='RUNNER_REGISTRATION_TOKEN'):
        Settings.from_env({'RUNNER_REGISTRATION_TOKEN': value})
    with pytest.raises(ConfigError, match='RUNNER_REGISTRATION_TOKEN'):
        Settings.from_env({})


@pytest.mark.parametrize('name, value', [
    ('MAX_CONTAINER_NUMBER', '0'),
    ('MAX_CONTAINER_NUMBER', '-2'),
    ('MAX_CONTAINER_NUMBER', '2.5'),
    ('MAX_CONTAINER_NUMBER', 'many'),
    ('DRAIN_TIMEOUT_SEC', '0'),
    ('DRAIN_TIMEOUT_SEC', '-1'),
    ('DRAIN_TIMEOUT_SEC', 'nan'),
    ('DRAIN_TIMEOUT_SEC', 'inf'),
    ('DRAIN_TIMEOUT_SEC', '1e10'),
    ('LONG_POLL_SEC', '-1'),
    ('LONG_POLL_SEC', 'soon'),
    ('OUTPUT_LIMIT', '0'),
    ('REPORT_OUTPUT_LIMIT', '8k'),
    ('METRICS_PORT', '0'),
    ('METRICS_PORT', '65536'),
    ('METRICS_PORT', 'http'),
    ('LOG_LEVEL', 'chatty'),
    ('LOG_FORMAT', 'xml'),
    ('BACKEND_URL', 'ftp://web'),
    ('BACKEND_URL', 'web:8080'),
    ('BACKEND_URL', 'http://web:99999'),
    ('BACKEND_URL', 'http://web/?x=1'),
    ('REDIS_URL', 'http://cache'),
    ('SANDBOX_MEMORY_MB', '0'),
    ('SANDBOX_MEMORY_MB', 'lots'),
    ('SANDBOX_JOBS_PER_CONTAINER', '0'),
    ('SANDBOX_JOBS_PER_CONTAINER', 'many'),
    ('CHECKER_TIME_LIMIT_MS', '0'),
    ('CHECKER_MEMORY_MB', 'lots'),
])
def test_invalid_values_name_the_setting(name, value):
    with pytest.raises(ConfigError) as caught:
        settings(**{name: value})
    assert str(caught.value).startswith(name)


def test_jobs_per_container_reaches_the_sandbox():
    assert settings().sandbox_settings().jobs_per_container == 100
    assert settings(SANDBOX_JOBS_PER_CONTAINER='1').sandbox_settings().jobs_per_container == 1


def test_checker_limits_reach_the_sandbox():
    sandbox = settings(CHECKER_TIME_LIMIT_MS='2500', CHECKER_MEMORY_MB='256').sandbox_settings()
    assert (sandbox.checker_time_ms, sandbox.checker_memory_kb) == (2500, 256 * 1024)
    default = settings().sandbox_settings()
    assert (default.checker_time_ms, default.checker_memory_kb) == (10000, 1024 * 1024)


def test_interactor_limits_reach_the_sandbox():
    sandbox = settings(INTERACTOR_TIME_LIMIT_MS='1500',
                       INTERACTOR_MEMORY_MB='128').sandbox_settings()
    assert (sandbox.interactor_time_ms, sandbox.interactor_memory_kb) == (1500, 128 * 1024)
    assert (sandbox.checker_time_ms, sandbox.checker_memory_kb) == (10000, 1024 * 1024)
    default = settings().sandbox_settings()
    assert (default.interactor_time_ms, default.interactor_memory_kb) == (10000, 1024 * 1024)


def test_decimal_seconds_are_accepted():
    s = settings(DRAIN_TIMEOUT_SEC='0.5', LONG_POLL_SEC='2.5')
    assert (s.drain_timeout_sec, s.long_poll_sec) == (0.5, 2.5)


def test_secrets_never_appear_in_errors():
    with pytest.raises(ConfigError) as caught:
        settings(REDIS_URL='http://:hunter2@cache:6379')
    assert 'hunter2' not in str(caught.value)
    with pytest.raises(ConfigError) as caught:
        settings(BACKEND_URL='http://admin:hunter2@web:8080')
    assert 'hunter2' not in str(caught.value)
    assert 'BACKEND_URL' in str(caught.value)


def test_repr_hides_secrets():
    s = settings(SANDBOX_TOKEN='sandbox-secret', REDIS_URL='redis://:hunter2@cache:6379/0')
    shown = repr(s)
    for secret in (TOKEN, 'sandbox-secret', 'hunter2'):
        assert secret not in shown
    assert 'registration_token=<set>' in shown
    assert 'max_container_number=8' in shown


def test_settings_are_frozen():
    s = settings()
    with pytest.raises(AttributeError):
        s.max_container_number = 3


def test_docker_host_is_honoured_when_docker_url_is_unset():
    assert settings(DOCKER_HOST='tcp://engine:2376').docker_url == 'tcp://engine:2376'
    assert settings(DOCKER_HOST='tcp://engine:2376',
                    DOCKER_URL='unix:///run/docker.sock').docker_url == 'unix:///run/docker.sock'


@pytest.mark.parametrize('env, named', [
    ({
        'DOCKER_URL': 'docker.sock'
    }, 'DOCKER_URL'),
    ({
        'DOCKER_HOST': 'engine:2375'
    }, 'DOCKER_URL'),
    ({
        'RUNNER_NAME': 'x' * 129
    }, 'RUNNER_NAME'),
    ({
        'RUNNER_NAME': 'judge\n7'
    }, 'RUNNER_NAME'),
    ({
        'MAX_CONTAINER_NUMBER': '1000'
    }, 'MAX_CONTAINER_NUMBER'),
    ({
        'REPORT_BODY_LIMIT': '0'
    }, 'REPORT_BODY_LIMIT'),
    ({
        'OUTPUT_LIMIT': str(4 * 1024**3)
    }, 'OUTPUT_LIMIT'),
])
def test_settings_that_would_break_judging_are_refused_by_name(env, named):
    with pytest.raises(ConfigError, match=f'^{named}: '):
        settings(**env)


def test_an_unusable_data_dir_is_refused_by_name(tmp_path):
    blocked = tmp_path / 'file'
    blocked.write_text('not a folder')
    with pytest.raises(ConfigError, match='^DATA_DIR: .* cannot be used'):
        check_folders(settings(DATA_DIR=str(blocked)))
    check_folders(settings(DATA_DIR=str(tmp_path / 'data')))


def test_a_small_report_body_limit_is_taken():
    # Outputs are shortened to fit it (a report whose verdicts alone pass it
    # goes with empty outputs): small is a choice, not a broken setting.
    assert settings(REPORT_BODY_LIMIT='1000').report_body_limit == 1000
