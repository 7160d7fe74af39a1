"""The status port: /metrics, the two probes and their answers, nothing else."""
import prometheus_client
import pytest
import requests

from runner.status_server import StatusServer


@pytest.fixture
def serve():
    servers = []

    def start(alive=lambda: (True, 'ok'), ready=lambda: (True, 'ok')):
        registry = prometheus_client.CollectorRegistry()
        prometheus_client.Counter('probe_test_total', 'A counter.', registry=registry).inc()
        server = StatusServer(0, registry, alive, ready, addr='127.0.0.1')
        server.start()
        servers.append(server)
        return f'http://127.0.0.1:{server.port}'

    yield start
    for server in servers:
        server.stop()
        assert server.join(10)


def test_metrics_and_probes_answer(serve):
    base = serve()
    assert 'probe_test_total 1.0' in requests.get(f'{base}/metrics', timeout=10).text
    for path in ('/healthz', '/readyz'):
        answer = requests.get(base + path, timeout=10)
        assert (answer.status_code, answer.text) == (200, 'ok\n')


def test_a_failing_probe_is_503_with_its_reason(serve):
    base = serve(ready=lambda: (False, 'draining'))
    answer = requests.get(f'{base}/readyz', timeout=10)
    assert (answer.status_code, answer.text) == (503, 'draining\n')
    assert requests.get(f'{base}/healthz', timeout=10).status_code == 200


def test_a_probe_that_raises_is_503_and_the_port_lives(serve):

    def broken():
        raise RuntimeError('a bug')

    base = serve(alive=broken)
    answer = requests.get(f'{base}/healthz', timeout=10)
    assert answer.status_code == 503 and 'RuntimeError' in answer.text
    assert requests.get(f'{base}/metrics', timeout=10).status_code == 200


@pytest.mark.parametrize('path', ['/', '/metricsx', '/healthz/x', '/favicon.ico'])
def test_other_paths_are_404(serve, path):
    assert requests.get(serve() + path, timeout=10).status_code == 404
