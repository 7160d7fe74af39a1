"""The admin API: problems, submissions, results, raw jobs, events, protection."""
import base64
import json
import threading

import pytest
import requests

from localbackend import LocalBackend, build_zip
from tests.localbackend.helpers import REG, SANDBOX, TIMEOUT, HttpRunner, body_for


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def admin(backend, method, path, **kwargs):
    return requests.request(method, backend.url + '/admin' + path, timeout=TIMEOUT, **kwargs)


def test_submit_then_wait_for_the_result(backend):
    created = admin(backend,
                    'POST',
                    '/submissions',
                    json={
                        'problem_id': 1,
                        'language': 'cpp',
                        'source': 'int main(){}'
                    })
    assert created.status_code == 201
    sid, job_id = created.json()['submission_id'], created.json()['job_id']
    pending = admin(backend, 'GET', f'/submissions/{sid}').json()
    assert pending['done'] is False and pending['language'] == 1 and pending['verdict'] is None
    runner = HttpRunner(backend)
    answers = []
    waiting = threading.Thread(
        target=lambda: answers.append(admin(backend, 'GET', f'/submissions/{sid}?wait=60')))
    waiting.start()
    job = runner.claim()
    assert job['job_id'] == job_id
    runner.complete(
        job_id, {
            'tasks': [[
                {
                    'status': 'AC',
                    'exitCode': 0,
                    'execTime': 5,
                    'memoryUsage': 100,
                    'stdout': '',
                    'stderr': ''
                },
                {
                    'status': 'WA',
                    'exitCode': 0,
                    'execTime': 6,
                    'memoryUsage': 101,
                    'stdout': '',
                    'stderr': ''
                },
            ],
                      [{
                          'status': 'AC',
                          'exitCode': 0,
                          'execTime': 7,
                          'memoryUsage': 102,
                          'stdout': '',
                          'stderr': ''
                      }]]
        })
    waiting.join(TIMEOUT)
    document = answers[0].json()
    assert document['done'] and document['verdict'] == 'WA' and document['score'] == 50
    assert document['tasks'][1][0]['execTime'] == 7
    listed = admin(backend, 'GET', '/submissions').json()
    assert [d['submission_id'] for d in listed] == [sid]


@pytest.mark.parametrize('body', [{
    'problem_id': 9,
    'language': 'c',
    'source': 'x'
}, {
    'problem_id': '1',
    'language': 'c',
    'source': 'x'
}, {
    'problem_id': 1,
    'language': 'rust',
    'source': 'x'
}, {
    'problem_id': 1,
    'language': 'c'
}, {
    'problem_id': 1,
    'language': 'c',
    'source_b64': '!!'
}, []])
def test_bad_submissions_are_400(backend, body):
    assert admin(backend, 'POST', '/submissions', json=body).status_code in (400, 404)


def test_unknown_submission_is_404(backend):
    assert admin(backend, 'GET', '/submissions/nope').status_code == 404
    assert admin(backend, 'POST', '/submissions/nope/rejudge').status_code == 404


def test_rejudge_over_the_admin_api(backend):
    sid = backend.submit(1, 'c', 'x')
    first = backend.submission(sid).current_job_id
    answer = admin(backend, 'POST', f'/submissions/{sid}/rejudge')
    assert answer.status_code == 201 and answer.json()['job_id'] != first
    assert backend.submission(sid).current_job_id == answer.json()['job_id']


def test_add_a_problem_and_change_its_testdata(backend):
    document = {
        'id': 5,
        'name': 'echo',
        'tasks': [{
            'taskScore': 100,
            'memoryLimit': 1024,
            'timeLimit': 100,
            'caseCount': 1
        }]
    }
    files = {'0000.in': b64(b'x\n'), '0000.out': b64(b'x\n')}
    added = admin(backend, 'POST', '/problems', json={'problem': document, 'files': files})
    assert added.status_code == 201
    before = added.json()['checksum']
    changed = admin(backend,
                    'POST',
                    '/problems/5/testdata',
                    json={'files': {
                        '0000.out': b64(b'y\n'),
                        '0000.in': None
                    }})
    assert changed.status_code == 200 and changed.json()['checksum'] != before
    assert sorted(backend.store.problem(5).files) == ['0000.out']
    listed = admin(backend, 'GET', '/problems').json()
    assert [p['id'] for p in listed] == [1, 5]
    incomplete = dict(document, id=6)
    assert admin(backend, 'POST', '/problems', json={
        'problem': incomplete,
        'files': {}
    }).status_code == 400
    assert admin(backend, 'POST', '/problems/77/testdata', json={'files': {}}).status_code == 404


def test_inject_raw_jobs_over_the_admin_api(backend):
    runner = HttpRunner(backend)
    text = admin(backend, 'POST', '/jobs', json={'payload_text': 'garbage{'})
    assert text.status_code == 201
    assert runner.next_job().content == b'garbage{'
    payload = backend.job_payload(1, 'python')
    created = admin(backend,
                    'POST',
                    '/jobs',
                    json={
                        'payload': payload,
                        'code_entries': {
                            'main.py': b64(b'print(1)'),
                            'extra.txt': b64(b'')
                        }
                    })
    assert created.json()['job_id'] == payload['job_id']
    job = runner.claim()
    code = requests.get(job['code_url'], timeout=TIMEOUT).content
    assert code == build_zip({'main.py': b'print(1)', 'extra.txt': b''})
    raw_zip = admin(backend,
                    'POST',
                    '/jobs',
                    json={
                        'payload': {
                            'job_id': 'jb_zip'
                        },
                        'code_zip_b64': b64(b'not a zip')
                    })
    assert raw_zip.status_code == 201
    job = runner.claim()
    assert requests.get(job['code_url'], timeout=TIMEOUT).content == b'not a zip'
    assert admin(backend, 'POST', '/jobs', json={'nothing': 1}).status_code == 400


def test_events_since_and_by_kind(backend):
    runner = HttpRunner(backend)
    runner.heartbeat([])
    everything = admin(backend, 'GET', '/events').json()
    assert [e['kind'] for e in everything] == ['register', 'heartbeat']
    later = admin(backend, 'GET', '/events', params={'since': 1}).json()
    assert [e['kind'] for e in later] == ['heartbeat']
    beats = admin(backend, 'GET', '/events', params={'kind': 'heartbeat'}).json()
    assert beats[0]['runner_id'] == runner.runner_id
    assert admin(backend, 'GET', '/events', params={'since': 'x'}).status_code == 400


def test_sweep_reclaims_expired_leases(backend):
    runner = HttpRunner(backend)
    backend.submit(1, 'c', 'x')
    runner.claim()
    backend.clock.advance(30)
    assert admin(backend, 'POST', '/sweep').status_code == 204
    assert backend.events.count('reclaim') == 1


def test_an_admin_token_protects_the_admin_api_only():
    backend = LocalBackend(registration_token=REG, sandbox_token=SANDBOX,
                           admin_token='adm-1').start()
    try:
        assert admin(backend, 'GET', '/events').status_code == 401
        assert admin(backend, 'GET', '/events', headers={
            'Authorization': 'Bearer wrong'
        }).status_code == 401
        assert admin(backend, 'GET', '/events', headers={
            'Authorization': 'Bearer adm-1'
        }).status_code == 200
        HttpRunner(backend)
        assert 'adm-1' not in repr(backend)
    finally:
        backend.stop()


def test_wait_results_and_the_verdict_table(backend):
    runner = HttpRunner(backend)
    sid = backend.submit(1, 'c', 'x')
    job = runner.claim()
    runner.complete(job['job_id'], body_for([2, 1], 'TLE'))
    [result] = backend.wait_results([sid], TIMEOUT)
    assert result.verdict == 'TLE' and result.score == 0
    table = backend.format_result(sid)
    assert 'TLE' in table and 'time ms' in table and 'mem KB' in table
    assert json.dumps(backend.events.list()[0].to_wire())
