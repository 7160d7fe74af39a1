"""The deployment files agree with the runner: each stop timeout is above the
drain budget, the probes are the runner's, DATA_DIR is the same path inside
and out. (Their syntax is checked by .ci/run: systemd-analyze verify and
kubernetes-validate.)"""
import configparser
import pathlib
import re

import yaml

from runner.config import Settings

REPO = pathlib.Path(__file__).resolve().parents[2]
DRAIN_SEC = float(Settings.__dataclass_fields__['drain_timeout_sec'].metadata['setting'].default)


def test_the_kubernetes_daemonset_outlasts_the_drain_and_probes_the_runner():
    config, daemonset = yaml.safe_load_all((REPO / 'deploy/kubernetes/oj-runner.yaml').read_text())
    pod = daemonset['spec']['template']['spec']
    (container, ) = pod['containers']
    assert pod['terminationGracePeriodSeconds'] > float(config['data']['DRAIN_TIMEOUT_SEC'])
    assert container['livenessProbe']['httpGet']['path'] == '/healthz'
    assert container['readinessProbe']['httpGet']['path'] == '/readyz'
    assert str(container['ports'][0]['containerPort']) == config['data']['METRICS_PORT']
    env = {item['name']: item.get('value') for item in container['env']}
    mounts = {m['name']: m['mountPath'] for m in container['volumeMounts']}
    host_paths = {v['name']: v['hostPath']['path'] for v in pod['volumes']}
    assert env['DATA_DIR'] == mounts['data'] == host_paths['data']
    assert mounts['docker-socket'] == host_paths['docker-socket'] == '/var/run/docker.sock'


def test_the_systemd_unit_outlasts_the_drain_and_restarts_but_on_a_bad_setting():
    unit = configparser.ConfigParser(strict=False, interpolation=None)
    unit.optionxform = str
    unit.read(REPO / 'deploy/systemd/oj-runner.service')
    service = unit['Service']
    assert float(service['TimeoutStopSec']) > DRAIN_SEC
    assert service['Restart'] == 'on-failure' and service['RestartPreventExitStatus'] == '2'
    assert service['KillSignal'] == 'SIGTERM'
    assert service['Environment'] == 'DATA_DIR=/var/lib/oj-runner'
    assert service['StateDirectory'] == 'oj-runner'


def test_the_compose_service_outlasts_the_drain():
    compose = yaml.safe_load((REPO / 'docker-compose.yml').read_text())
    runner = compose['services']['runner']
    grace = re.fullmatch(r'(\d+)s', runner['stop_grace_period'])
    assert grace and float(grace.group(1)) > DRAIN_SEC
    assert '/healthz' in ' '.join(runner['healthcheck']['test'])
