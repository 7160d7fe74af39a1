"""The status port of a running runner: metrics change as jobs flow, the probes
say alive and ready, and nothing else is served."""
import socket
import threading
import time

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

from runner.version import VERSION

pytestmark = pytest.mark.docker


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def scrape(port):
    text = requests.get(f'http://127.0.0.1:{port}/metrics', timeout=10).text
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def eventually(condition, timeout=30.0):
    """Asks again until `condition()` holds: a scrape is evidence, not a clock."""
    pause = threading.Event()
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        pause.wait(0.05)
    return True


def value(samples, metric, **labels):
    return samples.get((metric, tuple(sorted(labels.items()))), 0.0)


def test_metrics_follow_jobs(backend, start_runner):
    port = free_port()
    backend.serve_defaults()
    runner = start_runner(backend.url, METRICS_PORT=str(port), RUNNER_NAME='metered')
    assert runner.wait_for_line('serving /metrics'), runner.log()
    assert runner.wait_for_line('running:'), runner.log()
    before = scrape(port)
    assert value(before, 'oj_runner_jobs_claimed_total') == 0
    assert value(before, 'oj_runner_sandboxes_max') == 2
    assert value(before, 'oj_runner_info', name='metered', version=VERSION,
                 runner_id='rn_stub') == 1
    # Every label set is there before its first event, and the process's own.
    assert ('oj_runner_cases_judged_total', (('language', 'PYTHON'), ('verdict', 'MLE'))) in before
    assert ('oj_runner_poll_failures_total', (('kind', 'transport'), )) in before
    assert value(before, 'process_resident_memory_bytes') > 0
    assert value(before, 'oj_runner_draining') == 0
    base = f'http://127.0.0.1:{port}'
    assert requests.get(f'{base}/healthz', timeout=10).status_code == 200
    assert requests.get(f'{base}/readyz', timeout=10).text == 'ok\n'
    assert requests.get(f'{base}/', timeout=10).status_code == 404
    assert requests.get(f'{base}/metricsx', timeout=10).status_code == 404

    backend.add_job('jb_m1')
    assert backend.wait_for(lambda calls: any(c.path.endswith('/jb_m1/complete') for c in calls))
    assert runner.wait_for_line('reported job jb_m1'), runner.log()
    after = scrape(port)
    assert value(after, 'oj_runner_jobs_claimed_total') == 1
    assert value(after, 'oj_runner_reports_total', kind='complete', outcome='accepted') == 1
    assert value(after, 'oj_runner_cases_judged_total', verdict='AC', language='C') == 1
    assert value(after, 'oj_runner_testdata_cache_misses_total') == 1
    assert value(after, 'oj_runner_testdata_download_bytes_total') > 0
    assert value(after, 'oj_runner_case_duration_seconds_count', language='C') == 1
    assert value(after, 'oj_runner_compile_duration_seconds_count', language='C') == 1
    assert value(after, 'oj_runner_live_claims') == 0
    assert value(after, 'oj_runner_sandboxes_busy') == 0
    assert value(after, 'oj_runner_poll_last_success_timestamp_seconds') > 0
    assert eventually(
        lambda: value(scrape(port), 'oj_runner_heartbeat_last_success_timestamp_seconds') > 0)
    runner.signal()
    assert runner.wait(60) == 0
