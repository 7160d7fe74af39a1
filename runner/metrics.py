"""Prometheus metrics of the runner, served only when METRICS_PORT is set.

Names follow Prometheus conventions: a `oj_runner_` prefix, `_total` for
counters, base units (`_seconds`, `_bytes`).
"""
import time
from typing import Optional

import prometheus_client
from prometheus_client import Counter, Gauge, Histogram, Info

from sandbox.job import CaseSpec, SandboxJob
from sandbox.languages import Language
from sandbox.results import CaseResult, CompileResult, Status
from sandbox.faults import FaultKind
from sandbox.pool import CREATION_CAUSES
from sandbox.sandbox import Sandbox

REGISTRY = prometheus_client.CollectorRegistry()

RUNNER = Info('oj_runner',
              'The runner: name, version and the id the backend gave it.',
              registry=REGISTRY)
JOBS_CLAIMED = Counter('oj_runner_jobs_claimed_total',
                       'Jobs claimed from the backend.',
                       registry=REGISTRY)
REPORTS = Counter('oj_runner_reports_total',
                  'Reports by kind (complete, or abort_<reason>) and final '
                  'outcome (accepted, dropped_409, dropped_404, rejected, exhausted).',
                  ['kind', 'outcome'],
                  registry=REGISTRY)
REPORT_RETRIES = Counter('oj_runner_report_retries_total',
                         'Report attempts that were retried.',
                         registry=REGISTRY)
CASES = Counter('oj_runner_cases_judged_total',
                'Cases judged, by verdict and language.', ['verdict', 'language'],
                registry=REGISTRY)
COMPILE_SECONDS = Histogram('oj_runner_compile_duration_seconds',
                            'Wall time of compile steps, sandbox included (and a wait for '
                            'another job\'s compile of the same build).', ['language'],
                            buckets=(0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 40),
                            registry=REGISTRY)
CASE_SECONDS = Histogram('oj_runner_case_duration_seconds',
                         'Wall time of judging one case, sandbox included.', ['language'],
                         buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
                         registry=REGISTRY)
LIVE_CLAIMS = Gauge('oj_runner_live_claims',
                    'Claims held (leases being renewed).',
                    registry=REGISTRY)
SANDBOXES_BUSY = Gauge('oj_runner_sandboxes_busy',
                       'Runs (compiles and cases) holding a core now; not those waiting for one.',
                       registry=REGISTRY)
SANDBOXES_MAX = Gauge('oj_runner_sandboxes_max', 'MAX_CONTAINER_NUMBER.', registry=REGISTRY)
SANDBOX_CONTAINERS = Gauge('oj_runner_sandbox_containers',
                           'Sandbox containers alive now, spares included.',
                           registry=REGISTRY)
SANDBOX_START_FAILURES = Counter('oj_runner_sandbox_start_failures_total',
                                 'Sandbox containers that did not start.',
                                 registry=REGISTRY)
SANDBOX_CONTAINERS_CREATED = Counter(
    'oj_runner_sandbox_containers_created_total',
    'Sandbox containers made, by cause: spare (kept ready), room (an acquire with room), '
    'replacement (in a doomed one\'s slot), eviction (in the slot of a container of another '
    'image, destroyed for it), self_test (the host\'s probe) and warm_up (the page cache at '
    'start), both outside the pool.', ['cause'],
    registry=REGISTRY)
HEARTBEAT_LAST_SUCCESS = Gauge('oj_runner_heartbeat_last_success_timestamp_seconds',
                               'When the backend last accepted a heartbeat (Unix time).',
                               registry=REGISTRY)
POLL_FAILURES = Counter('oj_runner_poll_failures_total',
                        'next-job calls that failed, by kind (transport, status, protocol).',
                        ['kind'],
                        registry=REGISTRY)
POLL_LAST_SUCCESS = Gauge('oj_runner_poll_last_success_timestamp_seconds',
                          'When a next-job call last got an answer (Unix time).',
                          registry=REGISTRY)
DRAINING = Gauge('oj_runner_draining', '1 while the runner drains.', registry=REGISTRY)
HEARTBEAT_FAILURES = Counter('oj_runner_heartbeat_failures_total',
                             'Heartbeats that were not accepted.',
                             registry=REGISTRY)
TESTDATA_HITS = Counter('oj_runner_testdata_cache_hits_total',
                        'Job preparations served by the testdata cache.',
                        registry=REGISTRY)
TESTDATA_MISSES = Counter('oj_runner_testdata_cache_misses_total',
                          'Job preparations that downloaded testdata.',
                          registry=REGISTRY)
TESTDATA_BYTES = Counter('oj_runner_testdata_download_bytes_total',
                         'Bytes of testdata downloaded.',
                         registry=REGISTRY)
HOST_HEALTHY = Gauge('oj_runner_host_healthy',
                     '1 while this host can judge; 0 during a host fault (no claims).',
                     registry=REGISTRY)
HOST_FAULTS = Counter('oj_runner_host_faults_total',
                      'Host faults by kind (engine, image, disk, token, memory): jobs handed '
                      'back unjudged.', ['kind'],
                      registry=REGISTRY)
DRAIN_SECONDS = Gauge('oj_runner_drain_duration_seconds',
                      'How long the last drain took.',
                      registry=REGISTRY)
DRAIN_LEFT = Gauge('oj_runner_drain_claims_left',
                   'Claims the last drain left to lease expiry.',
                   registry=REGISTRY)

# The process's own CPU, memory and descriptors, and the Python it runs on.
prometheus_client.ProcessCollector(registry=REGISTRY)
prometheus_client.PlatformCollector(registry=REGISTRY)

REPORT_KINDS = ('complete', 'abort_drain', 'abort_prep_failed', 'abort_rejected')
REPORT_OUTCOMES = ('accepted', 'dropped_409', 'dropped_404', 'rejected', 'exhausted', 'other')
POLL_FAILURE_KINDS = ('transport', 'status', 'protocol')


def _zero_label_sets() -> None:
    """Every label set exists from the start, at zero: a rate over a series that
    appears only at its first event misses that event."""
    for kind in REPORT_KINDS:
        for outcome in REPORT_OUTCOMES:
            REPORTS.labels(kind, outcome)
    for language in Language:
        for status in Status:
            CASES.labels(status.value, language.name)
        COMPILE_SECONDS.labels(language.name)
        CASE_SECONDS.labels(language.name)
    for kind in FaultKind:
        HOST_FAULTS.labels(kind.value)
    for kind in POLL_FAILURE_KINDS:
        POLL_FAILURES.labels(kind)
    for cause in CREATION_CAUSES + ('self_test', 'warm_up'):
        SANDBOX_CONTAINERS_CREATED.labels(cause)


_zero_label_sets()


def count_cases(language: str, results) -> None:
    """Every case of a finished job, CE and JE included, by its reported verdict."""
    for cases in results:
        for case in cases:
            CASES.labels(case.status.value, language).inc()


class MeteredSandbox(Sandbox):
    """The sandbox layer, counted and timed: a decorator the dispatcher uses
    in place of the real sandbox, so neither layer knows about metrics."""

    def __init__(self, inner: Sandbox, clock=time.monotonic):
        self._inner = inner
        self._clock = clock

    def compile(self, job: SandboxJob) -> CompileResult:
        started = self._clock()
        try:
            return self._inner.compile(job)
        finally:
            COMPILE_SECONDS.labels(job.language.name).observe(self._clock() - started)

    def run_case(self, job: SandboxJob, case: CaseSpec) -> CaseResult:
        started = self._clock()
        try:
            return self._inner.run_case(job, case)
        finally:
            CASE_SECONDS.labels(job.language.name).observe(self._clock() - started)

    def cancel(self, job_key: str) -> None:
        self._inner.cancel(job_key)

    def release(self, job_key: str) -> None:
        self._inner.release(job_key)

    def check_limits(self, memory_limit_kb: int) -> None:
        self._inner.check_limits(memory_limit_kb)

    def self_test(self,
                  language: Language = Language.C,
                  since: Optional[float] = None) -> Optional[str]:
        return self._inner.self_test(language, since)
