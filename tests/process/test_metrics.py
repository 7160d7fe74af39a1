"""Metrics change as jobs flow, scraped over HTTP from a running runner."""
import socket

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

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


def value(samples, metric, **labels):
    return samples.get((metric, tuple(sorted(labels.items()))), 0.0)


def test_metrics_follow_jobs(backend, start_runner):
    port = free_port()
    backend.serve_defaults()
    runner = start_runner(backend.url, METRICS_PORT=str(port), RUNNER_NAME='metered')
    assert runner.wait_for_line('serving metrics'), runner.log()
    assert runner.wait_for_line('running:'), runner.log()
    before = scrape(port)
    assert value(before, 'oj_runner_jobs_claimed_total') == 0
    assert value(before, 'oj_runner_sandboxes_max') == 2
    assert value(before, 'oj_runner_info', name='metered', version='1.0.0',
                 runner_id='rn_stub') == 1

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
    runner.signal()
    assert runner.wait(60) == 0
