import contextlib
import http.server
import json
import logging
import queue
import socket
import threading
import traceback
from typing import Optional

import pytest
import requests
import responses
import urllib3

from dispatcher.job import TaskMeta
from runner.backend.noj.client import (LONG_POLL_MARGIN_SEC, BackendClient, DownloadError, Outcome,
                                       ProtocolError, TokenRefused, TransportError, Unauthorized,
                                       UnexpectedStatus, transport_kind)
from runner.backend import http_session
from runner.backend.http_session import Interrupted, Interrupter
from runner.backend.noj.inbound import BadClaim, JobPayload, RunnerConfig, RunnerIdentity
from runner.backend.noj.outbound import AbortReason, complete_body
from sandbox.languages import Language
from sandbox.results import CaseResult, Status

BASE = 'http://backend:8080'
RUNNER_TOKEN = 'rk_runner-secret'
SANDBOX_TOKEN = 'sandbox-secret'
REGISTRATION_TOKEN = 'registration-secret'
SIGNATURE = 'sig-secret'
CODE_URL = f'https://store.example/bucket/code.zip?sig={SIGNATURE}'
SECRETS = (RUNNER_TOKEN, SANDBOX_TOKEN, REGISTRATION_TOKEN, SIGNATURE)
RN = 'rn_01'
JB = 'jb_01'


@pytest.fixture
def mock():
    with responses.RequestsMock(assert_all_requests_are_fired=True) as rsps:
        yield rsps


@pytest.fixture
def client():
    return BackendClient(BASE, sandbox_token=SANDBOX_TOKEN).with_identity(
        RunnerIdentity(RN, RUNNER_TOKEN))


def job_body(**changes):
    body = {
        'job_id':
        JB,
        'submission_id':
        '6650aa',
        'problem_id':
        7,
        'language':
        1,
        'code_url':
        CODE_URL,
        'checker':
        'diff',
        'tasks': [{
            'taskScore': 40,
            'memoryLimit': 65536,
            'timeLimit': 1000,
            'caseCount': 3
        }, {
            'taskScore': 60,
            'memoryLimit': 1024,
            'timeLimit': 500,
            'caseCount': 1
        }],
    }
    body.update(changes)
    return {key: value for key, value in body.items() if value is not ...}


# -- register -------------------------------------------------------------


def test_register_parses_identity_and_config(mock):
    mock.post(f'{BASE}/runners/register',
              status=201,
              json={
                  'runner_id': RN,
                  'token': RUNNER_TOKEN,
                  'config': {
                      'heartbeat_interval_sec': 10,
                      'poll_interval_sec': 1.5,
                      'max_concurrent_jobs': 2
                  }
              })
    registration = BackendClient(BASE).register(REGISTRATION_TOKEN, 'judge-7', '1.2.3')
    assert registration.identity == RunnerIdentity(RN, RUNNER_TOKEN)
    assert registration.config == RunnerConfig(10, 1.5, 2)
    request = mock.calls[0].request
    assert json.loads(request.body) == {
        'registration_token': REGISTRATION_TOKEN,
        'name': 'judge-7',
        'version': '1.2.3'
    }
    assert 'Authorization' not in request.headers


def test_register_missing_config_keys_fall_back_to_defaults(mock):
    mock.post(f'{BASE}/runners/register',
              status=201,
              json={
                  'runner_id': RN,
                  'token': RUNNER_TOKEN,
                  'config': {
                      'max_concurrent_jobs': 4
                  }
              })
    config = BackendClient(BASE).register(REGISTRATION_TOKEN, 'x').config
    assert config == RunnerConfig(heartbeat_interval_sec=15,
                                  poll_interval_sec=3,
                                  max_concurrent_jobs=4)


def test_register_without_config_uses_defaults(mock):
    mock.post(f'{BASE}/runners/register', status=201, json={'runner_id': RN, 'token': RUNNER_TOKEN})
    assert BackendClient(BASE).register(REGISTRATION_TOKEN, 'x').config == RunnerConfig()


def test_register_401_is_unauthorized(mock):
    mock.post(f'{BASE}/runners/register', status=401)
    with pytest.raises(Unauthorized):
        BackendClient(BASE).register(REGISTRATION_TOKEN, 'x')


def test_register_5xx_is_unexpected_status(mock):
    mock.post(f'{BASE}/runners/register', status=503)
    with pytest.raises(UnexpectedStatus) as caught:
        BackendClient(BASE).register(REGISTRATION_TOKEN, 'x')
    assert caught.value.status == 503


def test_register_connection_error_is_transport_error(mock):
    mock.post(f'{BASE}/runners/register', body=requests.ConnectionError('refused'))
    with pytest.raises(TransportError):
        BackendClient(BASE).register(REGISTRATION_TOKEN, 'x')


@pytest.mark.parametrize('body, field', [
    ({
        'token': RUNNER_TOKEN
    }, 'runner_id'),
    ({
        'runner_id': 'rn/../x',
        'token': RUNNER_TOKEN
    }, 'runner_id'),
    ({
        'runner_id': RN
    }, 'token'),
    ({
        'runner_id': RN,
        'token': 5
    }, 'token'),
    ({
        'runner_id': RN,
        'token': RUNNER_TOKEN,
        'config': []
    }, 'config'),
    ({
        'runner_id': RN,
        'token': RUNNER_TOKEN,
        'config': {
            'heartbeat_interval_sec': 0
        }
    }, 'config.heartbeat_interval_sec'),
    ({
        'runner_id': RN,
        'token': RUNNER_TOKEN,
        'config': {
            'poll_interval_sec': 'fast'
        }
    }, 'config.poll_interval_sec'),
    ({
        'runner_id': RN,
        'token': RUNNER_TOKEN,
        'config': {
            'max_concurrent_jobs': 1.5
        }
    }, 'config.max_concurrent_jobs'),
    ({
        'runner_id': RN,
        'token': RUNNER_TOKEN,
        'config': {
            'max_concurrent_jobs': True
        }
    }, 'config.max_concurrent_jobs'),
    ([], 'register body'),
])
def test_register_malformed_body_names_the_field(mock, body, field):
    mock.post(f'{BASE}/runners/register', status=201, json=body)
    with pytest.raises(ProtocolError, match=field.replace('.', r'\.')):
        BackendClient(BASE).register(REGISTRATION_TOKEN, 'x')


def test_register_non_json_body(mock):
    mock.post(f'{BASE}/runners/register', status=201, body='<html>')
    with pytest.raises(ProtocolError, match='not JSON'):
        BackendClient(BASE).register(REGISTRATION_TOKEN, 'x')


# -- heartbeat --------------------------------------------------------------


@pytest.mark.parametrize('status, outcome', [
    (204, Outcome.ACCEPTED),
    (401, Outcome.UNAUTHORIZED),
    (404, Outcome.FAILED),
    (500, Outcome.FAILED),
    (503, Outcome.FAILED),
])
def test_heartbeat_statuses(mock, client, status, outcome):
    mock.post(f'{BASE}/runners/{RN}/heartbeat', status=status)
    answer = client.heartbeat(['jb_1', 'jb_2'])
    assert (answer.outcome, answer.answered) == (outcome, True)
    request = mock.calls[0].request
    assert json.loads(request.body) == {'active_job_ids': ['jb_1', 'jb_2']}
    assert request.headers['Authorization'] == f'Bearer {RUNNER_TOKEN}'
    assert request.req_kwargs['timeout'][0] > 0 and request.req_kwargs['timeout'][1] > 0


def test_heartbeat_connection_error_is_failed(mock, client):
    mock.post(f'{BASE}/runners/{RN}/heartbeat', body=requests.ConnectTimeout('slow'))
    answer = client.heartbeat([])
    assert (answer.outcome, answer.answered) == (Outcome.FAILED, False)
    assert 'ConnectTimeout' in answer.detail


def test_runner_calls_need_an_identity():
    with pytest.raises(RuntimeError):
        BackendClient(BASE).heartbeat([])


# -- next-job ---------------------------------------------------------------


def test_next_job_parses_the_payload(mock, client):
    mock.get(f'{BASE}/runners/{RN}/next-job', status=200, json=job_body(problem_id='07'))
    claim = client.next_job()
    assert claim == JobPayload(job_id=JB,
                               submission_id='6650aa',
                               problem_id=7,
                               language=Language.CPP,
                               tasks=(TaskMeta(40, 65536, 1000, 3), TaskMeta(60, 1024, 500, 1)),
                               code_url=CODE_URL)
    request = mock.calls[0].request
    assert request.headers['Authorization'] == f'Bearer {RUNNER_TOKEN}'
    assert 'wait' not in request.url


def test_next_job_204_is_none(mock, client):
    mock.get(f'{BASE}/runners/{RN}/next-job', status=204)
    assert client.next_job() is None


def test_next_job_long_poll_timeout_exceeds_the_wait(mock, client):
    mock.get(f'{BASE}/runners/{RN}/next-job', status=204)
    assert client.next_job(wait_sec=45) is None
    request = mock.calls[0].request
    assert request.url.endswith('?wait=45')
    assert request.req_kwargs['timeout'][1] >= 45 + LONG_POLL_MARGIN_SEC


@pytest.mark.parametrize('status, error', [(401, Unauthorized), (500, UnexpectedStatus),
                                           (404, UnexpectedStatus)])
def test_next_job_error_statuses(mock, client, status, error):
    mock.get(f'{BASE}/runners/{RN}/next-job', status=status)
    with pytest.raises(error):
        client.next_job()


def test_next_job_connection_error(mock, client):
    mock.get(f'{BASE}/runners/{RN}/next-job', body=requests.ReadTimeout('slow'))
    with pytest.raises(TransportError, match=r'timed out \(ReadTimeout\)'):
        client.next_job()


@pytest.mark.parametrize('body', [
    'not json', '[1, 2]', '{"problem_id": 7}', '{"job_id": 7}', '{"job_id": "../../etc"}',
    '{"job_id": ""}'
])
def test_next_job_without_a_usable_job_id_is_a_protocol_error(mock, client, body):
    mock.get(f'{BASE}/runners/{RN}/next-job', status=200, body=body)
    with pytest.raises(ProtocolError):
        client.next_job()


@pytest.mark.parametrize('changes, field', [
    ({
        'submission_id': ...
    }, 'submission_id'),
    ({
        'submission_id': 6650
    }, 'submission_id'),
    ({
        'problem_id': ...
    }, 'problem_id'),
    ({
        'problem_id': 'seven'
    }, 'problem_id'),
    ({
        'problem_id': '-7'
    }, 'problem_id'),
    ({
        'problem_id': 7.5
    }, 'problem_id'),
    ({
        'problem_id': True
    }, 'problem_id'),
    ({
        'problem_id': -1
    }, 'problem_id'),
    ({
        'language': ...
    }, 'language'),
    ({
        'language': 3
    }, 'language'),
    ({
        'language': '0'
    }, 'language'),
    ({
        'code_url': ...
    }, 'code_url'),
    ({
        'code_url': 'file:///etc/passwd'
    }, 'code_url'),
    ({
        'code_url': 42
    }, 'code_url'),
    ({
        'tasks': ...
    }, 'tasks'),
    ({
        'tasks': []
    }, 'tasks'),
    ({
        'tasks': {}
    }, 'tasks'),
    ({
        'tasks': [5]
    }, 'tasks[0]'),
    ({
        'tasks': [{
            'memoryLimit': 1,
            'timeLimit': 1,
            'caseCount': 1
        }]
    }, 'tasks[0].taskScore'),
    ({
        'tasks': [{
            'taskScore': 100,
            'memoryLimit': '64M',
            'timeLimit': 1,
            'caseCount': 1
        }]
    }, 'tasks[0].memoryLimit'),
    ({
        'tasks': [{
            'taskScore': 100,
            'memoryLimit': 1,
            'timeLimit': 0,
            'caseCount': 1
        }]
    }, 'tasks[0].timeLimit'),
    ({
        'tasks': [{
            'taskScore': 100,
            'memoryLimit': 1,
            'timeLimit': 1,
            'caseCount': 0
        }]
    }, 'tasks[0].caseCount'),
    ({
        'tasks': [{
            'taskScore': 100,
            'memoryLimit': 1,
            'timeLimit': 1,
            'caseCount': 101
        }]
    }, 'tasks[0].caseCount'),
])
def test_next_job_malformed_field_is_a_bad_claim_naming_it(mock, client, changes, field):
    mock.get(f'{BASE}/runners/{RN}/next-job', status=200, json=job_body(**changes))
    claim = client.next_job()
    assert isinstance(claim, BadClaim)
    assert claim.job_id == JB
    assert claim.problem.startswith(field)
    assert SIGNATURE not in claim.problem


def test_next_job_oversized_body_without_a_job_id_is_refused(mock, client):
    mock.get(f'{BASE}/runners/{RN}/next-job', status=200, body='{"x": "' + 'a' * (2 << 20) + '"}')
    with pytest.raises(DownloadError):
        client.next_job()


def test_next_job_oversized_body_with_a_job_id_is_a_bad_claim(mock, client):
    body = json.dumps({**job_body(), 'checker': 'x' * (2 << 20)})
    mock.get(f'{BASE}/runners/{RN}/next-job', status=200, body=body)
    claim = client.next_job()
    assert claim == BadClaim(JB, 'the job payload is over the 1048576 byte limit')


# -- complete and abort -------------------------------------------------------

REPORT_STATUSES = [
    (204, Outcome.ACCEPTED),
    (200, Outcome.ACCEPTED),
    (409, Outcome.CONFLICT),
    (404, Outcome.NOT_FOUND),
    (400, Outcome.BAD_REQUEST),
    (401, Outcome.UNAUTHORIZED),
    (500, Outcome.FAILED),
    (502, Outcome.FAILED),
    (418, Outcome.FAILED),
]


@pytest.mark.parametrize('status, outcome', REPORT_STATUSES)
def test_complete_statuses(mock, client, status, outcome):
    results = ((CaseResult(Status.AC, exec_time_ms=5), ), )
    mock.put(f'{BASE}/runners/{RN}/jobs/{JB}/complete', status=status)
    assert client.complete(JB, complete_body(results, 1 << 20)).outcome is outcome
    request = mock.calls[0].request
    assert json.loads(request.body) == {
        'tasks': [[{
            'status': 'AC',
            'exitCode': 0,
            'execTime': 5,
            'memoryUsage': 0,
            'stdout': '',
            'stderr': ''
        }]]
    }
    assert request.headers['Authorization'] == f'Bearer {RUNNER_TOKEN}'


@pytest.mark.parametrize('status, outcome', [(202, Outcome.ACCEPTED)] + REPORT_STATUSES[2:])
def test_abort_statuses(mock, client, status, outcome):
    mock.put(f'{BASE}/runners/{RN}/jobs/{JB}/abort', status=status)
    assert client.abort(JB, AbortReason.DRAIN).outcome is outcome
    assert json.loads(mock.calls[0].request.body) == {'reason': 'drain'}


@pytest.mark.parametrize('call', ['complete', 'abort'])
def test_reports_connection_error_is_failed(mock, client, call):
    mock.put(f'{BASE}/runners/{RN}/jobs/{JB}/{call}', body=requests.ConnectionError('down'))
    answer = client.complete(JB, complete_body(
        (), 1 << 20)) if call == 'complete' else client.abort(JB, AbortReason.PREP_FAILED)
    assert answer.outcome is Outcome.FAILED


# -- testdata and code ------------------------------------------------------


def test_checksum_carries_the_sandbox_token_and_the_runner_token(mock, client):
    # Protocol §2: every call but register carries the runner's token; a
    # backend that checks it on the testdata channel must find it there.
    mock.get(f'{BASE}/problem/7/checksum', status=200, json={'data': 'abc123'})
    assert client.testdata_checksum(7) == 'abc123'
    request = mock.calls[0].request
    assert request.url.endswith(f'?token={SANDBOX_TOKEN}')
    assert request.headers['Authorization'] == f'Bearer {RUNNER_TOKEN}'


@pytest.mark.parametrize('status, error', [(401, TokenRefused), (403, TokenRefused),
                                           (404, UnexpectedStatus), (500, UnexpectedStatus)])
def test_checksum_error_statuses(mock, client, status, error):
    mock.get(f'{BASE}/problem/7/checksum', status=status)
    with pytest.raises(error) as caught:
        client.testdata_checksum(7)
    assert SANDBOX_TOKEN not in str(caught.value)


@pytest.mark.parametrize('body', [{'data': ''}, {'data': 5}, {}, ['abc']])
def test_checksum_malformed_body(mock, client, body):
    mock.get(f'{BASE}/problem/7/checksum', status=200, json=body)
    with pytest.raises(ProtocolError):
        client.testdata_checksum(7)


def test_download_testdata_writes_the_file(mock, client, tmp_path):
    mock.get(f'{BASE}/problem/7/testdata', status=200, body=b'zipbytes')
    dest = tmp_path / 't.zip'
    size = client.download_testdata(7, dest, max_bytes=100, deadline_sec=10, stop=threading.Event())
    assert (size, dest.read_bytes()) == (8, b'zipbytes')
    assert mock.calls[0].request.url.endswith(f'?token={SANDBOX_TOKEN}')
    assert mock.calls[0].request.headers['Authorization'] == f'Bearer {RUNNER_TOKEN}'


@pytest.mark.parametrize('status, error', [(401, TokenRefused), (403, TokenRefused),
                                           (404, UnexpectedStatus), (500, UnexpectedStatus)])
def test_download_testdata_error_statuses(mock, client, tmp_path, status, error):
    mock.get(f'{BASE}/problem/7/testdata', status=status)
    with pytest.raises(error):
        client.download_testdata(7,
                                 tmp_path / 't.zip',
                                 max_bytes=100,
                                 deadline_sec=10,
                                 stop=threading.Event())


def test_download_is_bounded_in_size(mock, client, tmp_path):
    mock.get(f'{BASE}/problem/7/testdata', status=200, body=b'x' * 101)
    with pytest.raises(DownloadError, match='limit'):
        client.download_testdata(7,
                                 tmp_path / 't.zip',
                                 max_bytes=100,
                                 deadline_sec=10,
                                 stop=threading.Event())


@pytest.mark.parametrize('declared', [True, False])
def test_download_is_bounded_in_size_whatever_it_declares(mock, client, declared):
    mock.get(CODE_URL, status=200, body=b'x' * 180, auto_calculate_content_length=declared)
    with pytest.raises(DownloadError, match='limit'):
        client.download_code(CODE_URL, max_bytes=100, deadline_sec=10, stop=threading.Event())
    assert ('Content-Length' in mock.calls[0].response.headers) == declared


def test_download_is_bounded_in_time(mock, tmp_path):
    now = [0.0]

    def clock():
        now[0] += 6
        return now[0]

    slow = BackendClient(BASE, clock=clock)
    mock.get(CODE_URL, status=200, body=b'x' * (200 * 1024))
    with pytest.raises(DownloadError, match='longer than'):
        slow.download_code(CODE_URL, max_bytes=1 << 20, deadline_sec=10, stop=threading.Event())


def test_download_stops_on_stop(mock, client):
    stop = threading.Event()
    stop.set()
    mock.get(CODE_URL, status=200, body=b'x' * 10)
    with pytest.raises(Interrupted):
        client.download_code(CODE_URL, max_bytes=100, deadline_sec=10, stop=stop)


def test_download_code_sends_no_authorization(mock, client):
    mock.get(CODE_URL, status=200, body=b'PK...')
    assert client.download_code(CODE_URL, max_bytes=100, deadline_sec=10,
                                stop=threading.Event()) == b'PK...'
    assert 'Authorization' not in mock.calls[0].request.headers


@pytest.mark.parametrize('status', [403, 404, 500])
def test_download_code_error_statuses(mock, client, status):
    mock.get(CODE_URL, status=status)
    with pytest.raises(UnexpectedStatus) as caught:
        client.download_code(CODE_URL, max_bytes=100, deadline_sec=10, stop=threading.Event())
    assert SIGNATURE not in str(caught.value)
    assert 'store.example/bucket/code.zip' in str(caught.value)


# -- secrets ------------------------------------------------------------------


def test_secrets_absent_from_logs_errors_and_reprs(mock, client, tmp_path, caplog):
    """Every failing call, logged the way the runner logs them (with tracebacks)."""
    caplog.set_level(logging.DEBUG)
    down = requests.ConnectionError(f'Max retries exceeded with url: /x?sig={SIGNATURE}'
                                    f'&token={SANDBOX_TOKEN}')
    mock.get(CODE_URL, body=down)
    mock.get(f'{BASE}/problem/7/checksum', body=down)
    mock.get(f'{BASE}/problem/7/testdata', body=down)
    mock.post(f'{BASE}/runners/register', body=down)
    mock.get(f'{BASE}/runners/{RN}/next-job', body=down)
    mock.put(f'{BASE}/runners/{RN}/jobs/{JB}/complete', body=down)
    calls = [
        lambda: client.download_code(CODE_URL, max_bytes=10, deadline_sec=1, stop=threading.Event()
                                     ),
        lambda: client.testdata_checksum(7),
        lambda: client.download_testdata(
            7, tmp_path / 'z', max_bytes=10, deadline_sec=1, stop=threading.Event()),
        lambda: BackendClient(BASE).register(REGISTRATION_TOKEN, 'x'),
        client.next_job,
    ]
    texts = []
    for call in calls:
        with pytest.raises(TransportError) as caught:
            call()
        logging.getLogger('test').exception('call failed: %s', caught.value)
        texts.append(''.join(traceback.format_exception(caught.value)))
    texts.append(client.complete(JB, complete_body((), 1 << 20)).detail)
    texts.append(caplog.text)
    texts += [repr(client), repr(RunnerIdentity(RN, RUNNER_TOKEN))]
    mock.get(f'{BASE}/runners/{RN}/next-job', json=job_body())
    texts.append(repr(client.next_job()))
    everything = '\n'.join(texts)
    for secret in SECRETS:
        assert secret not in everything


def register_with(mock, config):
    """A registration whose answer carries `config`."""
    mock.post(f'{BASE}/runners/register',
              status=201,
              json={
                  'runner_id': RN,
                  'token': RUNNER_TOKEN,
                  'config': config
              })
    return BackendClient(BASE).register(REGISTRATION_TOKEN, 'x')


@pytest.mark.parametrize('config, field', [
    ({
        'heartbeat_interval_sec': 1e10
    }, 'heartbeat_interval_sec'),
    ({
        'poll_interval_sec': 3601
    }, 'poll_interval_sec'),
    ({
        'max_concurrent_jobs': 10**9
    }, 'max_concurrent_jobs'),
])
def test_register_refuses_config_beyond_sane_bounds(mock, config, field):
    with pytest.raises(ProtocolError, match=field):
        register_with(mock, config)


def test_json_nested_beyond_the_parser_is_a_protocol_error(mock):
    mock.post(f'{BASE}/runners/register', status=201, body='[' * 100000 + ']' * 100000)
    with pytest.raises(ProtocolError):
        BackendClient(BASE).register(REGISTRATION_TOKEN, 'x')


def test_a_slow_drip_body_meets_its_deadline_and_stop():
    """A real server dripping a byte at a time: the download ends at its
    deadline, and at once when stopped (the socket is interrupted)."""
    dripping = threading.Event()
    done = threading.Event()

    class Drip(http.server.BaseHTTPRequestHandler):

        def do_GET(self):
            self.send_response(200)
            self.send_header('Content-Length', '1000000')
            self.end_headers()
            dripping.set()
            for _ in range(1000000):
                if done.wait(0.05):
                    return
                try:
                    self.wfile.write(b'x')
                    self.wfile.flush()
                except OSError:
                    return

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Drip)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f'http://127.0.0.1:{server.server_address[1]}/code.zip?sig=secret'
    try:
        ticks = iter(range(10**6))
        # Each read of the clock is a second later: the deadline passes after
        # a few bytes, whatever the scheduling.
        client = BackendClient(BASE, clock=lambda: float(next(ticks)))
        stop = threading.Event()
        with pytest.raises(DownloadError, match='longer than'):
            client.download_code(url, max_bytes=10**6, deadline_sec=5, stop=stop)

        dripping.clear()
        client = BackendClient(BASE)

        def stop_later():
            dripping.wait(10)
            stop.set()
            client.interrupt()

        threading.Thread(target=stop_later, daemon=True).start()
        with pytest.raises(Interrupted):
            client.download_code(url, max_bytes=10**6, deadline_sec=3600, stop=stop)
    finally:
        done.set()
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize('error, kind', [
    (requests.ConnectionError(
        urllib3.exceptions.NewConnectionError(
            None, 'Failed to establish a new connection: [Errno 111] Connection refused')),
     'connection refused'),
    (requests.ConnectionError(
        urllib3.exceptions.NameResolutionError(
            'web', None, socket.gaierror(-2,
                                         'Name or service not known'))), 'name resolution failed'),
    (requests.exceptions.SSLError('certificate verify failed'), 'TLS failure'),
    (requests.exceptions.ConnectTimeout('connect timeout'), 'timed out'),
    (requests.ConnectionError(ConnectionResetError(
        104, 'Connection reset by peer')), 'connection reset'),
    (requests.ConnectionError('something else'), 'connection failed'),
])
def test_transport_errors_say_what_kind_they_are(error, kind):
    assert transport_kind(error).startswith(kind)


@contextlib.contextmanager
def serving(*handler_classes):
    """A real local server for each handler class, shut when done."""
    servers = [http.server.ThreadingHTTPServer(('127.0.0.1', 0), c) for c in handler_classes]
    for server in servers:
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield servers
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()


def url_of(server) -> str:
    return f'http://127.0.0.1:{server.server_address[1]}'


def abort_in_time(server):
    """An abort's answer from `server`, or None when it did not come well
    within the 30 s read timeout, whatever the load."""
    client = BackendClient(url_of(server)).with_identity(RunnerIdentity(RN, RUNNER_TOKEN))
    answers = []
    caller = threading.Thread(target=lambda: answers.append(client.abort(JB, AbortReason.DRAIN)),
                              daemon=True)
    caller.start()
    caller.join(15)
    return answers[0] if answers else None


def test_reports_keep_their_connection():
    """A report's answer is read to its end, so the next call goes over the
    same connection: a new one for every report costs both sides a
    handshake and a local backend a thread."""
    connections = []

    class Answering(http.server.BaseHTTPRequestHandler):
        protocol_version = 'HTTP/1.1'

        def setup(self):
            super().setup()
            connections.append(self.client_address)

        def do_PUT(self):
            self.rfile.read(int(self.headers['Content-Length']))
            body = b'{"message": "ok"}'
            self.send_response(200)
            self.send_header('Content-Type', 'application/json')
            self.send_header('Content-Length', str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    with serving(Answering) as (server, ):
        client = BackendClient(url_of(server)).with_identity(RunnerIdentity(RN, RUNNER_TOKEN))
        for _ in range(3):
            assert client.abort(JB, AbortReason.DRAIN).outcome is Outcome.ACCEPTED
    assert len(connections) == 1


def test_the_environment_proxies_apply_and_netrc_never(monkeypatch, tmp_path):
    """The proxy and CA settings are read from the environment (the proxies
    once per host), NO_PROXY included; a ~/.netrc adds no credentials to
    any call."""
    (tmp_path / '.netrc').write_text('machine backend login user password netrc-secret\n')
    monkeypatch.setenv('HOME', str(tmp_path))
    monkeypatch.setenv('HTTPS_PROXY', 'http://proxy.example:3128')
    monkeypatch.setenv('HTTP_PROXY', 'http://proxy.example:3128')
    monkeypatch.setenv('NO_PROXY', 'backend')
    monkeypatch.setenv('REQUESTS_CA_BUNDLE', str(tmp_path / 'ca.pem'))
    session = BackendClient(BASE)._session()
    far = session.merge_environment_settings(CODE_URL, {}, True, None, None)
    assert far['proxies']['https'] == 'http://proxy.example:3128'
    near = session.merge_environment_settings(BASE + '/runners', {}, True, None, None)
    assert 'http' not in near['proxies']
    prepared = session.prepare_request(requests.Request('GET', BASE + '/runners'))
    assert 'Authorization' not in prepared.headers
    assert far['verify'] == str(tmp_path / 'ca.pem')


def answering_slowly(headers, then, release: threading.Event):
    """A handler that answers any call 200 with `headers`, then leaves its
    body to `then(wfile, release)`."""

    class Slow(http.server.BaseHTTPRequestHandler):
        protocol_version = 'HTTP/1.1'

        def do_GET(self):
            self.rfile.read(int(self.headers.get('Content-Length') or 0))
            self.send_response(200)
            for header in headers:
                self.send_header(*header)
            self.end_headers()
            self.wfile.flush()
            then(self.wfile, release)

        do_PUT = do_GET

        def log_message(self, *args):
            pass

    return Slow


def _withhold(wfile, release: threading.Event) -> None:
    release.wait(60)


def _drip_a_size_line(wfile, release: threading.Event) -> None:
    """A chunk-size line of zeros that never ends, a byte well within any
    per-read timeout."""
    while not release.wait(0.05):
        try:
            wfile.write(b'0')
            wfile.flush()
        except OSError:
            return


@pytest.mark.parametrize(
    'header, then',
    [
        # Drained, each socket read within what is left of the drain's bound.
        (('Content-Length', '100'), _withhold),
        # Never drained: a chunked body's size lines and trailers are read
        # on past any per-read timeout.
        (('Transfer-Encoding', 'chunked'), _drip_a_size_line),
    ])
def test_a_report_answer_that_does_not_come_holds_no_report(monkeypatch, header, then):
    """A backend that sends a report's headers and then nothing, or a
    chunked body that never ends, holds the report for the drain's bound
    at most, never for the whole read timeout."""
    monkeypatch.setattr('runner.backend.http_session.DRAIN_SEC', 0.2)
    release = threading.Event()

    try:
        with serving(answering_slowly((header, ), then, release)) as (server, ):
            answer = abort_in_time(server)
            assert answer is not None and answer.outcome is Outcome.ACCEPTED
    finally:
        release.set()


def test_a_redirect_gets_the_proxy_of_its_own_host(monkeypatch):
    """The backend's host is in NO_PROXY; the store it redirects a download
    to is not, so that request goes through the proxy."""

    class Answering(http.server.BaseHTTPRequestHandler):
        protocol_version = 'HTTP/1.1'
        body = b''

        def do_GET(self):
            self.send_response(200)
            self.send_header('Content-Length', str(len(self.body)))
            self.end_headers()
            self.wfile.write(self.body)

        def log_message(self, *args):
            pass

    class Proxy(Answering):
        body = b'via the proxy'

    class Store(Answering):
        body = b'direct'

    with serving(Proxy, Store) as (proxy, store):

        class Backend(Answering):

            def do_GET(self):
                self.send_response(302)
                self.send_header('Location',
                                 f'http://localhost:{store.server_address[1]}/code.zip?sig=secret')
                self.send_header('Content-Length', '0')
                self.end_headers()

        monkeypatch.setenv('HTTP_PROXY', url_of(proxy))
        monkeypatch.setenv('NO_PROXY', '127.0.0.1')
        with serving(Backend) as (backend, ):
            code = BackendClient(url_of(backend)).download_code(url_of(backend) + '/code',
                                                                max_bytes=1000,
                                                                deadline_sec=30,
                                                                stop=threading.Event())
    assert code == b'via the proxy'


def _drip_a_gzip_name(wfile, release: threading.Event) -> None:
    """A gzip header whose file name never ends: the decoder asks for more
    within one read, a byte well within any per-read timeout."""
    wfile.write(b'\x1f\x8b\x08\x08\x00\x00\x00\x00\x00\x03')
    _drip_a_size_line(wfile, release)


@pytest.mark.parametrize(
    'headers, then',
    [
        ((('Transfer-Encoding', 'chunked'), ), _drip_a_size_line),
        ((('Content-Encoding', 'gzip'), ('Content-Length', '100000')), _drip_a_gzip_name),
        # The answer takes the socket along: its connection has none left.
        ((('Transfer-Encoding', 'chunked'), ('Connection', 'close')), _drip_a_size_line),
    ])
@pytest.mark.parametrize('proxied', [False, True])
def test_a_body_dripped_within_one_read_meets_the_download_deadline(headers, then, proxied,
                                                                    monkeypatch):
    """A chunked or encoded body can be dripped inside what is one read of
    it (a chunk's size line, a gzip header): the deadline still ends the
    download, which would otherwise hold its claim for ever; through a
    proxy too."""
    release = threading.Event()
    try:
        raised = download_failure(BackendClient(BASE),
                                  answering_slowly(headers, then, release),
                                  0.5,
                                  threading.Event(),
                                  as_proxy=monkeypatch if proxied else None)
        assert isinstance(raised, DownloadError) and 'longer than' in str(raised)
    finally:
        release.set()


def test_a_stop_cuts_a_download_whose_answer_took_its_socket_along():
    """With `Connection: close` the answer holds the socket, not its
    connection: a stop still shuts it, and wakes a read dripped inside one
    read of a chunked body."""
    release = threading.Event()
    headers = (('Transfer-Encoding', 'chunked'), ('Connection', 'close'))
    stop = threading.Event()
    client = None

    def clock():
        # First read as the body's reading starts (its answer is in): the
        # stop comes then, from another thread, as a drain's would.
        if not stop.is_set():
            stop.set()
            threading.Thread(target=client.interrupt, daemon=True).start()
        return 0.0

    client = BackendClient(BASE, clock=clock)
    try:
        raised = download_failure(client, answering_slowly(headers, _drip_a_size_line, release),
                                  3600, stop)
        assert isinstance(raised, Interrupted)
    finally:
        release.set()


def download_failure(client,
                     handler_class,
                     deadline_sec: float,
                     stop: threading.Event,
                     as_proxy: Optional[pytest.MonkeyPatch] = None):
    """What a code download from a server of `handler_class` raised, or
    None when it did not end well within the 30 s read timeout. With
    `as_proxy`, the server is the environment's HTTP proxy for a download
    from another host."""
    raised = []

    def download(url):
        try:
            client.download_code(url, max_bytes=10**6, deadline_sec=deadline_sec, stop=stop)
        except Exception as exc:
            raised.append(exc)

    with serving(handler_class) as (server, ):
        url = url_of(server) + '/code.zip'
        if as_proxy is not None:
            as_proxy.setenv('HTTP_PROXY', url_of(server))
            as_proxy.delenv('NO_PROXY', raising=False)
            as_proxy.delenv('no_proxy', raising=False)
            url = 'http://store.example/code.zip'
        caller = threading.Thread(target=download, args=(url, ), daemon=True)
        caller.start()
        caller.join(15)
    return raised[0] if raised else None


def test_a_deadline_that_fires_after_its_cancel_shuts_nothing():
    """The timer's thread may be past its own check when the download ends
    and cancels it; the socket may carry another call's answer by then, so
    a late expiry must shut nothing."""
    from runner.backend.http_session import _Deadline
    ours, theirs = socket.socketpair()
    try:
        expired = threading.Event()
        deadline = _Deadline(ours, 3600, expired)
        deadline.cancel()
        deadline._expire()  # as the timer's thread would, running late
        assert not expired.is_set()
        theirs.sendall(b'still open')
        assert ours.recv(100) == b'still open'
    finally:
        ours.close()
        theirs.close()


def test_a_tls_tunnel_s_socket_is_shut_below_its_transport():
    """TLS through an https proxy reads through urllib3's SSLTransport, not
    a socket: a stop or a deadline shuts the socket below it."""
    from runner.backend.http_session import _shut
    ours, theirs = socket.socketpair()
    try:
        transport = urllib3.util.ssltransport.SSLTransport.__new__(
            urllib3.util.ssltransport.SSLTransport)
        transport.socket = ours
        _shut(transport)
        ours.settimeout(10)  # a socket left open fails the test, never hangs it
        assert ours.recv(100) == b''
    finally:
        ours.close()
        theirs.close()


@pytest.mark.parametrize('status', [301, 302, 303, 307, 308])
def test_a_report_answered_with_a_redirect_is_not_taken_for_accepted(mock, client, status):
    # Followed, a 301-303 would resend the PUT as a GET or without its body,
    # and the target's 200 would pass for the result's acceptance.
    results = ((CaseResult(Status.AC, exec_time_ms=5), ), )
    mock.put(f'{BASE}/runners/{RN}/jobs/{JB}/complete',
             status=status,
             headers={'Location': f'{BASE}/elsewhere'})
    answer = client.complete(JB, complete_body(results, 1 << 20))
    assert answer.outcome is Outcome.FAILED and 'set BACKEND_URL' in answer.detail
    assert len(mock.calls) == 1


@pytest.mark.parametrize('token', ['rk_\u2603snow', 'rk a', 'rk\r\nX-Injected: 1'])
def test_register_refuses_a_token_no_header_can_carry(mock, token):
    mock.post(f'{BASE}/runners/register', status=201, json={'runner_id': RN, 'token': token})
    with pytest.raises(ProtocolError, match='token'):
        BackendClient(BASE).register(REGISTRATION_TOKEN, 'x')


def test_a_request_that_cannot_be_made_is_a_transport_error():
    # A header value nothing can encode, whatever let it in: it fails before
    # any connection (port 9 of this host is never asked).
    client = BackendClient('http://127.0.0.1:9').with_identity(RunnerIdentity(RN, 'rk_\u2603'))
    answer = client.heartbeat([JB])  # raised, it ended the heartbeat's every beat
    assert answer.outcome is Outcome.FAILED and 'could not be made' in answer.detail


def test_an_integer_too_long_for_any_field_is_a_bad_claim_not_an_unread_body(mock, client):
    # Python reads no integer over 4300 digits: the whole body was "not
    # JSON", its job left to its lease instead of aborted.
    body = json.dumps(job_body(problem_id=7)).replace('"problem_id": 7',
                                                      '"problem_id": ' + '9' * 5000)
    mock.get(f'{BASE}/runners/{RN}/next-job', status=200, body=body)
    claim = client.next_job()
    assert isinstance(claim, BadClaim) and claim.job_id == JB
    assert claim.problem.startswith('problem_id')


@pytest.mark.parametrize('problem_id', [10**30, '1' + '0' * 30])
def test_a_problem_id_too_large_to_name_a_file_is_a_bad_claim(mock, client, problem_id):
    mock.get(f'{BASE}/runners/{RN}/next-job', status=200, json=job_body(problem_id=problem_id))
    claim = client.next_job()
    assert isinstance(claim, BadClaim) and claim.problem.startswith('problem_id')


def test_a_problem_id_of_many_leading_zeros_is_its_number(mock, client):
    mock.get(f'{BASE}/runners/{RN}/next-job', status=200, json=job_body(problem_id='0' * 30 + '7'))
    assert client.next_job().problem_id == 7


def test_a_memory_limit_no_host_could_give_is_parsed_for_the_memory_check(mock, client):
    # Not a bad payload (prep_failed): the poller hands it back as drain, for
    # a runner that can give it (protocol §2, faults of the host).
    body = job_body()
    body['tasks'][0]['memoryLimit'] = 1024**3 * 1024  # a TiB
    mock.get(f'{BASE}/runners/{RN}/next-job', status=200, json=body)
    assert client.next_job().tasks[0].memory_limit_kb == 1024**4


@pytest.mark.parametrize('config, heartbeat, poll', [
    ({
        'heartbeat_interval_sec': 3600
    }, 15, 3),
    ({
        'heartbeat_interval_sec': 20,
        'poll_interval_sec': 1e-9
    }, 15, 0.1),
    ({
        'heartbeat_interval_sec': 5,
        'poll_interval_sec': 0.01
    }, 5, 0.1),
])
def test_register_keeps_intervals_that_hold_leases_and_spin_no_loop(mock, config, heartbeat, poll,
                                                                    caplog):
    # A lease lasts 30 s: a beat every hour would lose every job mid-judging;
    # a poll every nanosecond would spin a core.
    with caplog.at_level(logging.WARNING):
        got = register_with(mock, config).config
    assert (got.heartbeat_interval_sec, got.poll_interval_sec) == (heartbeat, poll)
    assert 'is taken as' in caplog.text


def test_register_takes_a_whole_number_written_as_a_float(mock):
    assert register_with(mock, {'max_concurrent_jobs': 8.0}).config.max_concurrent_jobs == 8


@pytest.mark.parametrize('method, kwargs', [
    ('GET', {
        'params': {
            'wait': '25'
        },
        'headers': {
            'Authorization': 'Bearer rk'
        }
    }),
    ('GET', {
        'params': {
            'token': 'sbx'
        }
    }),
    ('PUT', {
        'json': {
            'tasks': [[{
                'status': 'AC'
            }]]
        },
        'headers': {
            'Authorization': 'Bearer rk'
        }
    }),
    ('POST', {
        'json': {
            'name': 'r'
        },
        'headers': {
            'Accept-Encoding': None,
            'X-A': 'b'
        }
    }),
])
def test_a_request_is_prepared_as_requests_prepares_it(method, kwargs):
    """The session's lean preparation (no Protocol isinstance checks) makes
    the same request as requests' own, its session headers and cookies too."""
    session = Interrupter().session()
    session.cookies.set('affinity', 'node-2', domain='backend.example')
    request = requests.Request(method, 'http://backend.example/runners/rn/next-job', **kwargs)
    ours = session.prepare_request(request)
    theirs = requests.Session.prepare_request(session, request)
    assert (ours.method, ours.url, dict(ours.headers),
            ours.body) == (theirs.method, theirs.url, dict(theirs.headers), theirs.body)
    assert ours.headers['Cookie'] == 'affinity=node-2'


@pytest.mark.parametrize('proxies, stream, verify, cert', [
    ({}, True, None, None),
    (None, None, True, None),
    ({
        'http': None,
        'https': 'http://call.example:1'
    }, False, False, 'client.pem'),
    ({
        'ftp': 'http://call.example:2'
    }, True, '/etc/ca.pem', ('c.pem', 'k.pem')),
])
def test_settings_merge_as_requests_merges_them(monkeypatch, proxies, stream, verify, cert):
    """The session's lean merge (no Protocol isinstance checks) gives what
    requests' own gives: the call's settings over the session's, a proxy
    set to None dropped."""
    for name in ('HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'NO_PROXY', 'http_proxy', 'https_proxy',
                 'all_proxy', 'no_proxy', 'REQUESTS_CA_BUNDLE', 'CURL_CA_BUNDLE'):
        monkeypatch.delenv(name, raising=False)
    session = Interrupter().session()
    session.proxies = {'http': 'http://session.example:3', 'ftp': 'http://session.example:4'}
    session.cert = 'session.pem'
    ours = session.merge_environment_settings(BASE, proxies, stream, verify, cert)
    theirs = requests.Session.merge_environment_settings(session, BASE, proxies, stream, verify,
                                                         cert)
    assert ours == {**theirs, 'proxies': dict(theirs['proxies'])}


class HeldLongPoll:
    """A real server holding one long poll (`/runners/rn_01/next-job`) until
    told to answer it with a job, or never; it notes whether it saw its
    caller leave (the end of the stream) before answering."""

    def __init__(self):
        self.holding = threading.Event()
        self.answer = threading.Event()
        self.caller_left = threading.Event()
        self.done = threading.Event()
        held = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = 'HTTP/1.1'

            def do_GET(self):
                held.holding.set()
                while not held.answer.wait(0.01):
                    if held.done.is_set():
                        return
                    if not held.caller_left.is_set() and self._left():
                        held.caller_left.set()
                body = json.dumps(job_body(code_url='http://store/code.zip')).encode()
                self.send_response(200)
                self.send_header('Content-Type', 'application/json')
                self.send_header('Content-Length', str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _left(self):
                try:
                    return self.connection.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b''
                except BlockingIOError:
                    return False

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f'http://127.0.0.1:{self.server.server_address[1]}'

    def close(self):
        self.done.set()
        self.server.shutdown()
        self.server.server_close()


def long_poll_on_a_thread(client):
    """The long poll's outcome (a claim or what it raised), on a queue."""
    outcome = queue.Queue()

    def poll():
        try:
            outcome.put(client.next_job(25))
        except Exception as exc:
            outcome.put(exc)

    threading.Thread(target=poll, daemon=True).start()
    return outcome


@contextlib.contextmanager
def a_long_poll_stopped():
    """A long poll the server holds, and the client's stop while it does:
    the server and the poll's outcome (a queue)."""
    held = HeldLongPoll()
    try:
        client = BackendClient(held.url).with_identity(RunnerIdentity(RN, RUNNER_TOKEN))
        outcome = long_poll_on_a_thread(client)
        assert held.holding.wait(10)
        client.interrupt()
        yield held, outcome
    finally:
        held.close()


def test_a_job_handed_out_to_a_long_poll_as_the_stop_comes_is_read(monkeypatch):
    """The backend leased the job before it could see the runner leave: the
    answer is still read (the poller hands it back at once), not left to
    lease expiry, which would spend an attempt."""
    monkeypatch.setattr(http_session, 'ARRIVING_GRACE_SEC', 30.0)  # however loaded the host
    with a_long_poll_stopped() as (held, outcome):
        held.answer.set()  # leased as the stop came
        claim = outcome.get(timeout=10)
    assert isinstance(claim, JobPayload) and claim.job_id == JB, claim


def test_a_stop_tells_the_backend_at_once(monkeypatch):
    """The backend sees the end of the stream at once, before the grace for
    an answer on its way ends: it leases nothing to a caller gone."""
    monkeypatch.setattr(http_session, 'ARRIVING_GRACE_SEC', 30.0)
    with a_long_poll_stopped() as (held, _):
        assert held.caller_left.wait(10)


def test_a_stop_ends_a_held_long_poll_after_the_grace():
    with a_long_poll_stopped() as (_, outcome):
        assert isinstance(outcome.get(timeout=10), TransportError)  # not the 25 s wait


@pytest.mark.parametrize('stop', ['interrupt', 'hang_up'])
def test_a_stopped_client_opens_no_connection_and_sends_nothing(stop):
    listener = socket.socket()
    listener.bind(('127.0.0.1', 0))
    listener.listen(1)
    listener.settimeout(0.5)
    try:
        client = BackendClient(f'http://127.0.0.1:{listener.getsockname()[1]}',
                               identity=RunnerIdentity(RN, RUNNER_TOKEN))
        getattr(client, stop)()
        with pytest.raises(TransportError):
            client.next_job(25)
        with pytest.raises(socket.timeout):
            listener.accept()  # not even a connection
    finally:
        listener.close()
