"""Every runner call and its status branches, over real HTTP on 127.0.0.1."""
import http.client
import io
import json
import logging
import socket
import threading
import zipfile

import pytest
import requests

from localbackend import LocalBackend
from localbackend.runner_api import clamp_wait
from tests.localbackend.helpers import (REG, SANDBOX, TIMEOUT, HttpRunner, body_for, case,
                                        start_backend)


@pytest.fixture
def runner(backend):
    return HttpRunner(backend, 'first')


def raw_post(backend, path: str, body: bytes, headers=None) -> requests.Response:
    return requests.post(backend.url + path,
                         data=body,
                         headers={
                             'Content-Type': 'application/json',
                             **(headers or {})
                         },
                         timeout=TIMEOUT)


# ------------------------------------------------------------------ register


def test_register_answers_201_with_identity_and_config(backend):
    answer = requests.post(backend.url + '/runners/register',
                           json={
                               'registration_token': REG,
                               'name': 'host'
                           },
                           timeout=TIMEOUT)
    assert answer.status_code == 201
    body = answer.json()
    assert body['runner_id'].startswith('rn_') and body['token'].startswith('rk_')
    assert body['config'] == {
        'heartbeat_interval_sec': 15,
        'poll_interval_sec': 3,
        'max_concurrent_jobs': 8
    }


def test_register_hands_out_a_partial_config_when_asked():
    backend = start_backend(runner_config={'max_concurrent_jobs': 2})
    try:
        answer = requests.post(backend.url + '/runners/register',
                               json={
                                   'registration_token': REG,
                                   'name': 'h'
                               },
                               timeout=TIMEOUT)
        assert answer.json()['config'] == {'max_concurrent_jobs': 2}
    finally:
        backend.stop()


@pytest.mark.parametrize('body', [
    b'{"registration_token": "wrong", "name": "x"}',
    b'{"registration_token": 123, "name": "x"}',
    b'{"registration_token": ["reg-secret-7f3a"], "name": "x"}',
    b'{"registration_token": null, "name": "x"}',
    b'{"registration_token": "\\ud800", "name": "x"}',
    b'{"registration_token": "reg-secret-7f3a\\udc00", "name": "x"}',
    b'{"name": "x"}',
    b'[]',
    b'not json',
    b'\xff\xfe',
    b'',
    pytest.param(b'[' * 100000, id='deep-nesting'),
])
def test_register_refuses_hostile_bodies_with_401_never_500(backend, body):
    assert raw_post(backend, '/runners/register', body).status_code == 401


def test_register_with_a_bad_name_is_400(backend):
    answer = raw_post(backend, '/runners/register',
                      b'{"registration_token": "%s", "name": 5}' % REG.encode())
    assert answer.status_code == 400


# ----------------------------------------------------------------- heartbeat


def test_heartbeat_answers_204_and_renews(backend, runner):
    backend.submit(1, 'c', 'x')
    job = runner.claim()
    backend.clock.advance(20)
    assert runner.heartbeat([job['job_id'], 'jb_other']).status_code == 204
    backend.clock.advance(20)
    assert runner.complete_ac(job).status_code == 204


@pytest.mark.parametrize('body',
                         [b'{}', b'{"active_job_ids": "jb"}', b'{"active_job_ids": [1]}', b'nope'])
def test_heartbeat_with_a_bad_body_is_400(backend, runner, body):
    answer = raw_post(backend, f'/runners/{runner.runner_id}/heartbeat', body, runner.headers)
    assert answer.status_code == 400


@pytest.mark.parametrize('authorization', [
    None, 'Bearer ', 'Bearer rk_wrong', 'Basic cms6eA==', 'bearer', b'Bearer \xff\xfe\x80',
    'Bearer %ED%A0%80'
])
def test_heartbeat_with_a_bad_identity_is_401(backend, runner, authorization):
    headers = {} if authorization is None else {'Authorization': authorization}
    answer = raw_post(backend, f'/runners/{runner.runner_id}/heartbeat', b'{"active_job_ids": []}',
                      headers)
    assert answer.status_code == 401


@pytest.mark.parametrize('runner_path', ['rn_unknown', '%ED%A0%80', '%00', '%2E%2E', 'rn_%2F'])
def test_hostile_runner_ids_in_the_path_are_401(backend, runner, runner_path):
    answer = raw_post(backend, f'/runners/{runner_path}/heartbeat', b'{"active_job_ids": []}',
                      runner.headers)
    assert answer.status_code == 401


def test_a_revoked_identity_gets_401_everywhere(backend, runner):
    backend.submit(1, 'c', 'x')
    job = runner.claim()
    backend.revoke(runner.runner_id)
    assert runner.heartbeat([]).status_code == 401
    assert runner.next_job().status_code == 401
    assert runner.complete_ac(job).status_code == 401
    assert runner.abort(job['job_id'], 'drain').status_code == 401


# ------------------------------------------------------------------ next-job


def test_next_job_is_204_when_empty_and_200_with_a_payload(backend, runner):
    assert runner.next_job().status_code == 204
    sid = backend.submit(1, 'python', 'print(1)')
    answer = runner.next_job()
    assert answer.status_code == 200
    job = answer.json()
    assert job['submission_id'] == sid and job['language'] == 2 and job['problem_id'] == 1
    assert [t['caseCount'] for t in job['tasks']] == [2, 1]
    assert job['code_url'].startswith(backend.url + f'/code/{job["job_id"]}?sig=')


def test_the_code_url_is_presigned_and_needs_no_auth_header(backend, runner):
    backend.submit(1, 'python', 'print(1)')
    job = runner.claim()
    answer = requests.get(job['code_url'], timeout=TIMEOUT)
    assert answer.status_code == 200
    with zipfile.ZipFile(io.BytesIO(answer.content)) as archive:
        assert archive.namelist() == ['main.py']
        assert archive.read('main.py') == b'print(1)'
    path = job['code_url'].split('?')[0]
    assert requests.get(path, timeout=TIMEOUT).status_code == 403
    assert requests.get(path + '?sig=00', timeout=TIMEOUT).status_code == 403
    other = job['code_url'].replace(job['job_id'], 'jb_other')
    assert requests.get(other, timeout=TIMEOUT).status_code == 403


def test_code_url_follows_the_host_the_runner_used(backend, runner):
    backend.submit(1, 'c', 'x')
    answer = runner.session.get(f'{backend.url}/runners/{runner.runner_id}/next-job',
                                headers={
                                    **runner.headers, 'Host': f'web:{backend.port}'
                                },
                                timeout=TIMEOUT)
    assert answer.json()['code_url'].startswith(f'http://web:{backend.port}/code/')


def test_long_poll_holds_the_call_until_a_submission_arrives(backend, runner):
    answers = []
    poll = threading.Thread(target=lambda: answers.append(runner.next_job(wait=60)))
    poll.start()
    backend.events.wait_for('long_poll', timeout=TIMEOUT, runner_id=runner.runner_id)
    sid = backend.submit(1, 'c', 'x')
    # Without the wake-up the call would be held for the full 60 s.
    poll.join(TIMEOUT)
    assert not poll.is_alive()
    assert answers[0].status_code == 200 and answers[0].json()['submission_id'] == sid


def test_a_long_poll_whose_runner_went_away_leases_nothing(backend, runner):
    held = socket.create_connection((backend._server.address[0], backend.port), timeout=TIMEOUT)
    held.sendall(f'GET /runners/{runner.runner_id}/next-job?wait=60 HTTP/1.1\r\n'
                 f'Host: localhost\r\nAuthorization: Bearer {runner.token}\r\n\r\n'.encode())
    backend.events.wait_for('long_poll', timeout=TIMEOUT, runner_id=runner.runner_id)
    held.close()  # the runner stopped: its held call has no one to answer
    sid = backend.submit(1, 'c', 'x')
    backend.events.wait_for('claim', timeout=TIMEOUT, outcome='abandoned')
    answer = runner.next_job()
    assert answer.status_code == 200 and answer.json()['submission_id'] == sid
    assert backend.store.job_attempts(answer.json()['job_id']) == 1


def test_long_poll_wakes_for_an_aborted_job(backend):
    first, second = HttpRunner(backend, 'a'), HttpRunner(backend, 'b')
    backend.submit(1, 'c', 'x')
    job = first.claim()
    answers = []
    poll = threading.Thread(target=lambda: answers.append(second.next_job(wait=60)))
    poll.start()
    backend.events.wait_for('long_poll', timeout=TIMEOUT, runner_id=second.runner_id)
    assert first.abort(job['job_id'], 'drain').status_code == 202
    poll.join(TIMEOUT)
    assert answers[0].status_code == 200 and answers[0].json()['job_id'] == job['job_id']


def test_long_poll_is_released_when_the_backend_stops():
    backend = start_backend()
    runner = HttpRunner(backend)
    answers = []

    def poll():
        try:
            answers.append(runner.next_job(wait=60).status_code)
        except requests.ConnectionError:
            answers.append('dropped')

    thread = threading.Thread(target=poll)
    thread.start()
    backend.events.wait_for('long_poll', timeout=TIMEOUT)
    backend.stop()
    thread.join(TIMEOUT)
    assert not thread.is_alive() and answers[0] in (204, 'dropped')
    # The held call itself ended too, not only the client's connection.
    backend.events.wait_for('claim', outcome='no_job', timeout=TIMEOUT)


def test_a_burst_of_connections_is_taken_even_before_any_is_accepted():
    # A runner opens many connections at once when a batch comes; over the
    # listen backlog the kernel drops the attempts, which come again only a
    # second later (protocol §2). Not started: nothing accepts meanwhile.
    backend = LocalBackend()
    sockets = []
    try:
        for _ in range(64):
            sock = socket.create_connection(backend._server.address, timeout=TIMEOUT)
            sockets.append(sock)
    finally:
        for sock in sockets:
            sock.close()
        backend.stop()
    assert len(sockets) == 64


def test_answers_are_not_held_back_by_nagle(backend, runner):
    runner.next_job()  # the runner's session keeps its connection open
    connections = list(backend._server._http._open)
    assert connections
    assert all(c.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) for c in connections)


@pytest.mark.parametrize('raw, expected', [(None, 0), ('0', 0), ('25', 25), ('2.5', 2.5),
                                           ('61', 60), ('1e9', 60), ('inf', 60), ('-3', 0),
                                           ('nan', 0), ('abc', 0), ('', 0)])
def test_wait_is_clamped_to_sixty_seconds(raw, expected):
    assert clamp_wait(raw) == expected


def test_a_garbage_wait_answers_at_once(backend, runner):
    assert runner.next_job(wait='abc').status_code == 204
    assert runner.next_job(wait=0).status_code == 204
    assert backend.events.count('long_poll') == 0


def test_raw_payloads_are_served_verbatim(backend, runner):
    backend.inject_job(b'{"job_id": "jb_1", truncated')
    answer = runner.next_job()
    assert answer.status_code == 200 and answer.content == b'{"job_id": "jb_1", truncated'
    payload = backend.job_payload(1, 'c')
    payload['problem_id'] = '07'
    payload['language'] = 9
    backend.inject_job(payload)
    assert runner.claim() == payload


def test_injected_code_zip_is_served_at_a_signed_url(backend, runner):
    from localbackend import build_zip
    payload = backend.job_payload(1, 'c')
    backend.inject_job(payload, code_zip=build_zip({'../evil.c': b'x', 'dir/': b''}))
    job = runner.claim()
    data = requests.get(job['code_url'], timeout=TIMEOUT).content
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert sorted(archive.namelist()) == ['../evil.c', 'dir/']


# ------------------------------------------------------------------ complete


def test_complete_lands_once_then_404(backend, runner):
    sid = backend.submit(1, 'c', 'x')
    job = runner.claim()
    assert runner.complete_ac(job).status_code == 204
    assert runner.complete_ac(job).status_code == 404
    assert backend.wait_result(sid, TIMEOUT).verdict == 'AC'
    assert backend.events.count('complete', outcome='landed', submission_id=sid) == 1


def test_complete_after_reclaim_is_409(backend):
    first, second = HttpRunner(backend, 'a'), HttpRunner(backend, 'b')
    backend.submit(1, 'c', 'x')
    job = first.claim()
    backend.clock.advance(30)
    assert second.claim()['job_id'] == job['job_id']
    assert first.complete_ac(job).status_code == 409
    assert first.abort(job['job_id'], 'drain').status_code == 409
    assert second.complete_ac(job).status_code == 204


def test_complete_of_a_stale_job_is_204_and_dropped(backend, runner):
    sid = backend.submit(1, 'c', 'x')
    job = runner.claim()
    backend.rejudge(sid)
    assert runner.complete_ac(job).status_code == 204
    assert backend.events.count('complete', outcome='stale_dropped') == 1
    assert not backend.submission(sid).done


def _body(first_task_second_case) -> bytes:
    return json.dumps({'tasks': [[case(), first_task_second_case], [case()]]}).encode()


BAD_BODIES = [
    pytest.param(b'not json', id='not-json'),
    pytest.param(b'{"tasks": "x"}', id='tasks-not-a-list'),
    pytest.param(b'[]', id='not-an-object'),
    pytest.param(json.dumps({
        'tasks': [[case()]]
    }).encode(), id='too-few-tasks'),
    pytest.param(json.dumps({
        'tasks': [[case(), case()], [case(), case()]]
    }).encode(),
                 id='too-many-cases'),
    pytest.param(_body(case('OK')), id='unknown-status'),
    pytest.param(_body(case(execTime=1.5)), id='float-time'),
    pytest.param(_body(case(exitCode=True)), id='bool-exit-code'),
    pytest.param(_body(case(memoryUsage='3')), id='string-memory'),
    pytest.param(_body(case(execTime=-1)), id='negative-time'),
    pytest.param(_body(case(stdout=None)), id='null-stdout'),
    pytest.param(_body({'status': 'AC'}), id='missing-fields'),
    pytest.param(_body('AC'), id='case-not-an-object'),
    pytest.param(_body(case()).replace(b'"stdout": ""', b'"stdout": "\\ud800"', 1),
                 id='lone-surrogate-stdout'),
]


@pytest.mark.parametrize('body', BAD_BODIES)
def test_complete_with_a_malformed_body_is_400_and_the_job_stays_held(backend, runner, body):
    sid = backend.submit(1, 'c', 'x')
    job = runner.claim()
    assert runner.complete(job['job_id'], body).status_code == 400
    assert runner.abort(job['job_id'], 'rejected').status_code == 202
    assert not backend.submission(sid).done


def test_complete_precedence_over_http(backend):
    first, second = HttpRunner(backend, 'a'), HttpRunner(backend, 'b')
    backend.submit(1, 'c', 'x')
    job = first.claim()
    wrong = HttpRunner.__new__(HttpRunner)
    wrong.__dict__.update(first.__dict__, token='rk_wrong')
    assert wrong.complete('jb_unknown', b'garbage').status_code == 401
    assert first.complete('jb_unknown', b'garbage').status_code == 404
    assert second.complete(job['job_id'], b'garbage').status_code == 409
    assert first.complete(job['job_id'], b'garbage').status_code == 400
    assert first.complete_ac(job).status_code == 204


# --------------------------------------------------------------------- abort


@pytest.mark.parametrize('reason, outcome', [('drain', 'requeued'), ('prep_failed', 'requeued'),
                                             ('rejected', 'requeued')])
def test_abort_is_202_and_the_job_can_be_claimed_again_at_once(backend, runner, reason, outcome):
    backend.submit(1, 'c', 'x')
    job = runner.claim()
    answer = runner.abort(job['job_id'], reason)
    assert answer.status_code == 202
    assert backend.events.list('abort')[-1].outcome == outcome
    assert runner.claim()['job_id'] == job['job_id']


@pytest.mark.parametrize('reason', ['DRAIN', 'other', None, 1, ['drain']])
def test_abort_with_a_bad_reason_is_400(backend, runner, reason):
    backend.submit(1, 'c', 'x')
    job = runner.claim()
    assert runner.abort(job['job_id'], reason).status_code == 400


def test_abort_of_an_unknown_job_is_404(backend, runner):
    assert runner.abort('jb_unknown', 'drain').status_code == 404


def test_the_abort_that_exhausts_attempts_answers_202_and_converges(backend, runner):
    sid = backend.submit(1, 'c', 'x')
    for _ in range(3):
        job = runner.claim()
        assert runner.abort(job['job_id'], 'prep_failed').status_code == 202
    assert backend.wait_result(sid, TIMEOUT).statuses == ('JE', 'JE', 'JE')
    assert runner.next_job().status_code == 204


# ------------------------------------------------------------ testdata channel


def test_checksum_and_testdata_need_the_sandbox_token(backend):
    url = f'{backend.url}/problem/1'
    checksum = requests.get(url + '/checksum', params={'token': SANDBOX}, timeout=TIMEOUT)
    assert checksum.status_code == 200
    assert checksum.json() == {'data': backend.store.problem(1).checksum}
    testdata = requests.get(url + '/testdata', params={'token': SANDBOX}, timeout=TIMEOUT)
    assert testdata.status_code == 200
    with zipfile.ZipFile(io.BytesIO(testdata.content)) as archive:
        assert sorted(archive.namelist()) == [
            '0000.in', '0000.out', '0001.in', '0001.out', '0100.in', '0100.out'
        ]
        assert archive.read('0100.out') == b'10\n'
    for params in ({}, {'token': 'wrong'}, {'token': SANDBOX + 'x'}, {'token': '\u00e9'}):
        assert requests.get(url + '/checksum', params=params, timeout=TIMEOUT).status_code == 401
        assert requests.get(url + '/testdata', params=params, timeout=TIMEOUT).status_code == 401
    missing = f'{backend.url}/problem/99/testdata'
    assert requests.get(missing, params={'token': SANDBOX}, timeout=TIMEOUT).status_code == 404


def test_changing_testdata_changes_the_served_checksum(backend):
    url = f'{backend.url}/problem/1/checksum'
    before = requests.get(url, params={'token': SANDBOX}, timeout=TIMEOUT).json()['data']
    returned = backend.set_testdata(1, {'0000.out': '4\n', 'chaos/extra.h': '#define X 1\n'})
    after = requests.get(url, params={'token': SANDBOX}, timeout=TIMEOUT).json()['data']
    assert after == returned != before


# -------------------------------------------------------------- HTTP plumbing


def test_unknown_paths_are_404_and_wrong_methods_405(backend):
    assert requests.get(backend.url + '/nope', timeout=TIMEOUT).status_code == 404
    assert requests.get(backend.url + '/runners/register', timeout=TIMEOUT).status_code == 405


def test_an_oversized_body_is_refused_without_reading_it(backend):
    connection = http.client.HTTPConnection('127.0.0.1', backend.port, timeout=TIMEOUT)
    connection.putrequest('POST', '/runners/register')
    connection.putheader('Content-Length', str(10**10))
    connection.endheaders()
    assert connection.getresponse().status == 413
    connection.close()


def test_many_submissions_each_land_exactly_once(backend):
    runners = [HttpRunner(backend, f'r{i}') for i in range(3)]
    sids = [backend.submit(1, 'python', f'print({i})') for i in range(12)]

    def work(runner):
        while True:
            answer = runner.next_job()
            if answer.status_code == 204:
                return
            job = answer.json()
            runner.heartbeat([job['job_id']])
            runner.complete_ac(job)

    threads = [threading.Thread(target=work, args=(r, )) for r in runners]
    for thread in threads:
        thread.start()
    results = backend.wait_results(sids, TIMEOUT)
    for thread in threads:
        thread.join(TIMEOUT)
    assert all(r.verdict == 'AC' for r in results)
    for sid in sids:
        assert backend.events.count('complete', outcome='landed', submission_id=sid) == 1
        assert backend.events.count('claim', outcome='ok', submission_id=sid) == 1


def test_no_secret_reaches_the_logs_or_reprs(backend, caplog):
    caplog.set_level(logging.DEBUG, logger='localbackend')
    runner = HttpRunner(backend)
    backend.submit(1, 'c', 'x')
    job = runner.claim()
    requests.get(job['code_url'], timeout=TIMEOUT)
    requests.get(job['code_url'] + 'x', timeout=TIMEOUT)
    for token in (SANDBOX, 'wrong'):
        requests.get(f'{backend.url}/problem/1/testdata', params={'token': token}, timeout=TIMEOUT)
    raw_post(backend, '/runners/register', json.dumps({'registration_token': REG + 'x'}).encode())
    runner.complete(job['job_id'], body_for([1]))
    runner.complete_ac(job)
    signature = job['code_url'].split('sig=')[1]
    secrets = (REG, SANDBOX, runner.token, signature)
    texts = [caplog.text, repr(backend), repr(backend.store), repr(backend.settings)]
    texts += [repr(e) for e in backend.events.list()]
    assert caplog.text
    for text in texts:
        for secret in secrets:
            assert secret not in text
