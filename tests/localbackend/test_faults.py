"""Injected faults: bursts, latency, dropped connections, slow bodies, revoked identities."""
import threading

import pytest
import requests

from localbackend.faults import Burst, Drip, Drop, FaultPlan, Latency, fault_from_wire
from tests.localbackend.helpers import SANDBOX, TIMEOUT, HttpRunner, start_backend


@pytest.fixture
def runner(backend):
    return HttpRunner(backend)


# ------------------------------------------------------------------ the plan


def test_a_rule_applies_to_its_next_count_calls_only():
    plan = FaultPlan()
    plan.burst('heartbeat', count=2, status=500)
    assert plan.take('next-job').burst is None
    assert plan.take('heartbeat').burst == Burst(500)
    assert plan.take('heartbeat').burst == Burst(500)
    assert not plan.take('heartbeat')
    assert plan.rules() == []


def test_one_rule_of_each_type_applies_per_call_in_order_added():
    plan = FaultPlan()
    plan.burst('complete', count=1, status=500)
    plan.burst('complete', count=1, status=503)
    plan.latency('complete', 0.5, count=None)
    applied = plan.take('complete')
    assert applied.burst == Burst(500) and applied.latency == Latency(0.5)
    applied = plan.take('complete')
    assert applied.burst == Burst(503) and applied.latency == Latency(0.5)
    assert plan.take('complete').names() == ['latency']


def test_wildcard_and_clear():
    plan = FaultPlan()
    plan.drop('*', count=None)
    plan.drip('testdata', chunk_size=3, interval=0)
    assert plan.take('register').drop == Drop(False)
    assert plan.take('testdata').drip == Drip(3, 0)
    plan.clear('testdata')
    assert plan.take('code').drop == Drop(False)
    plan.clear()
    assert not plan.take('code')


@pytest.mark.parametrize('call', [
    lambda p: p.burst('heartbeat', status=404),
    lambda p: p.burst('nope'),
    lambda p: p.burst('heartbeat', count=0),
    lambda p: p.burst('heartbeat', count=True),
    lambda p: p.latency('heartbeat', -1),
    lambda p: p.latency('heartbeat', float('nan')),
    lambda p: p.drip('testdata', chunk_size=0),
])
def test_bad_rules_are_refused(call):
    with pytest.raises(ValueError):
        call(FaultPlan())


def test_rules_from_the_wire():
    assert fault_from_wire({'fault': 'burst', 'endpoint': 'abort'}) == ('abort', Burst(503), 1)
    assert fault_from_wire({
        'fault': 'drop',
        'endpoint': '*',
        'after': True,
        'count': None
    }) == ('*', Drop(True), None)
    for bad in ({
            'fault': 'latency',
            'endpoint': 'abort'
    }, {
            'fault': 'x',
            'endpoint': 'a'
    }, [], {
            'fault': 'burst'
    }, {
            'fault': 'burst',
            'endpoint': 'a',
            'status': 'x'
    }):
        with pytest.raises(ValueError):
            fault_from_wire(bad)


# ---------------------------------------------------------------- over HTTP


def test_a_burst_answers_5xx_without_processing_the_call(backend, runner):
    backend.faults.burst('heartbeat', count=2, status=503)
    assert runner.heartbeat([]).status_code == 503
    assert runner.heartbeat([]).status_code == 503
    assert backend.events.count('heartbeat') == 0
    assert runner.heartbeat([]).status_code == 204
    assert backend.events.count('heartbeat', outcome='ok') == 1
    assert backend.events.count('fault') == 2


def test_a_burst_on_complete_leaves_the_job_held_for_the_retry(backend, runner):
    sid = backend.submit(1, 'c', 'x')
    job = runner.claim()
    backend.faults.burst('complete', count=1, status=500)
    assert runner.complete_ac(job).status_code == 500
    assert not backend.submission(sid).done
    assert runner.complete_ac(job).status_code == 204
    assert backend.events.count('complete', outcome='landed') == 1


def test_a_burst_on_register_and_every_endpoint(backend):
    backend.faults.burst('*', count=1)
    with pytest.raises(AssertionError):
        HttpRunner(backend)
    HttpRunner(backend)
    assert backend.events.count('register', outcome='ok') == 1


def test_admin_calls_are_never_faulted(backend):
    backend.faults.burst('*', count=None)
    assert requests.get(backend.url + '/admin/events', timeout=TIMEOUT).status_code == 200


def test_a_dropped_claim_is_not_processed(backend, runner):
    backend.submit(1, 'c', 'x')
    backend.faults.drop('next-job')
    with pytest.raises(requests.ConnectionError):
        runner.next_job()
    assert backend.events.count('claim') == 0
    assert runner.next_job().status_code == 200


def test_a_lost_answer_to_complete_lands_once_and_the_retry_is_404(backend, runner):
    sid = backend.submit(1, 'c', 'x')
    job = runner.claim()
    backend.faults.drop('complete', after=True)
    with pytest.raises(requests.ConnectionError):
        runner.complete_ac(job)
    assert backend.wait_result(sid, TIMEOUT).verdict == 'AC'
    assert runner.complete_ac(job).status_code == 404
    assert backend.events.count('complete', outcome='landed', job_id=job['job_id']) == 1


def test_a_lost_answer_to_a_claim_leaves_the_job_to_lease_expiry(backend, runner):
    sid = backend.submit(1, 'c', 'x')
    backend.faults.drop('next-job', after=True)
    with pytest.raises(requests.ConnectionError):
        runner.next_job()
    assert runner.next_job().status_code == 204
    backend.clock.advance(30)
    job = runner.claim()
    assert job['submission_id'] == sid
    assert backend.events.list('claim', outcome='ok')[-1].attempts == 2


def test_latency_holds_the_call_before_processing_it():
    backend = start_backend()
    runner = HttpRunner(backend)
    backend.faults.latency('heartbeat', 60)
    outcome = []

    def beat():
        try:
            outcome.append(runner.heartbeat([]).status_code)
        except requests.ConnectionError:
            outcome.append('dropped')

    thread = threading.Thread(target=beat)
    thread.start()
    backend.events.wait_for('fault', timeout=TIMEOUT)
    # Still held: stopping the backend ends the wait without an answer.
    backend.stop()
    thread.join(TIMEOUT)
    assert outcome == ['dropped']
    assert backend.events.count('heartbeat') == 0


def test_a_short_latency_still_answers(backend, runner):
    backend.faults.latency('heartbeat', 0.01, count=1)
    assert runner.heartbeat([]).status_code == 204
    assert backend.events.list('fault')[-1].data == {
        'endpoint': 'heartbeat',
        'faults': ('latency', )
    }


def test_a_dripped_body_arrives_whole(backend):
    backend.faults.drip('testdata', chunk_size=7, interval=0)
    answer = requests.get(f'{backend.url}/problem/1/testdata',
                          params={'token': SANDBOX},
                          timeout=TIMEOUT)
    assert answer.status_code == 200
    assert answer.content == backend.store.problem(1).testdata_zip


def test_a_slow_body_sends_its_first_chunk_and_holds_the_rest():
    backend = start_backend()
    backend.faults.drip('testdata', chunk_size=10, interval=60)
    answer = requests.get(f'{backend.url}/problem/1/testdata',
                          params={'token': SANDBOX},
                          timeout=TIMEOUT,
                          stream=True)
    expected = backend.store.problem(1).testdata_zip
    assert int(answer.headers['Content-Length']) == len(expected)
    assert answer.raw.read(10) == expected[:10]
    backend.stop()
    rest = b''
    try:
        rest = answer.raw.read()
    except Exception:  # urllib3 reports the short body as an error
        pass
    assert len(rest) < len(expected) - 10


def test_revoked_identity_over_the_admin_api(backend, runner):
    answer = requests.post(f'{backend.url}/admin/runners/{runner.runner_id}/revoke',
                           timeout=TIMEOUT)
    assert answer.status_code == 204
    assert runner.heartbeat([]).status_code == 401
    runners = requests.get(f'{backend.url}/admin/runners', timeout=TIMEOUT).json()
    assert runners[0]['revoked'] and not runners[0]['alive']
    unknown = requests.post(f'{backend.url}/admin/runners/rn_nope/revoke', timeout=TIMEOUT)
    assert unknown.status_code == 404


def test_faults_over_the_admin_api(backend, runner):
    url = backend.url + '/admin/faults'
    added = requests.post(url,
                          json={
                              'fault': 'burst',
                              'endpoint': 'heartbeat',
                              'count': 1,
                              'status': 500
                          },
                          timeout=TIMEOUT)
    assert added.status_code == 201
    assert requests.get(url, timeout=TIMEOUT).json() == [{
        'endpoint': 'heartbeat',
        'fault': 'burst',
        'remaining': 1,
        'status': 500
    }]
    assert runner.heartbeat([]).status_code == 500
    requests.post(url, json={'fault': 'drop', 'endpoint': 'heartbeat', 'count': None}, timeout=5)
    assert requests.delete(url, timeout=TIMEOUT).status_code == 204
    assert runner.heartbeat([]).status_code == 204
    bad = requests.post(url, json={'fault': 'burst', 'endpoint': 'x'}, timeout=TIMEOUT)
    assert bad.status_code == 400
