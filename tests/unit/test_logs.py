"""Log lines: JSON objects that parse and carry the job's ids; no secrets."""
import http.server
import io
import json
import logging
import re
import threading

import pytest

from runner.backend.noj.client import BackendClient, UnexpectedStatus
from runner.backend.noj.inbound import RunnerIdentity
from runner.logs import about_job, configure_logging, set_runner_id

SIGNATURE = 'sig-secret'
RUNNER_TOKEN = 'rk-secret'
SANDBOX_TOKEN = 'sandbox-secret'


@pytest.fixture
def captured():
    root = logging.getLogger()
    saved = root.handlers[:], root.level
    yield io.StringIO()
    root.handlers[:], level = saved
    root.setLevel(level)


def test_json_lines_parse_and_carry_the_ids(captured):
    configure_logging('INFO', 'json', captured)
    log = logging.getLogger('anything.at.all')
    with about_job('jb_7', 'sub_9'):
        log.info('judging %s', 'now')
    log.warning('between jobs')
    first, second = [json.loads(line) for line in captured.getvalue().splitlines()]
    assert first['message'] == 'judging now' and first['level'] == 'INFO'
    assert first['logger'] == 'anything.at.all'
    assert first['job_id'] == 'jb_7' and first['submission_id'] == 'sub_9'
    assert 'job_id' not in second
    # RFC 3339 in UTC, to the millisecond.
    assert re.fullmatch(r'\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z', first['time']), first['time']


def test_json_lines_keep_extra_fields_and_carry_the_runner_id(captured):
    configure_logging('INFO', 'json', captured)
    logging.getLogger('x').info('before registration')
    set_runner_id('rn_42')
    try:
        logging.getLogger('x').info('claimed', extra={'claims': 3})
    finally:
        set_runner_id(None)
    first, second = [json.loads(line) for line in captured.getvalue().splitlines()]
    assert 'runner_id' not in first
    assert second['runner_id'] == 'rn_42' and second['claims'] == 3


def test_text_lines_carry_the_ids(captured):
    configure_logging('INFO', 'text', captured)
    with about_job('jb_7', None):
        logging.getLogger('x').info('hello')
    assert captured.getvalue().rstrip().endswith('hello [job=jb_7 submission=-]')


def test_exceptions_stay_on_one_json_line(captured):
    configure_logging('INFO', 'json', captured)
    try:
        raise ValueError('boom')
    except ValueError:
        logging.getLogger('x').exception('failed')
    (line, ) = captured.getvalue().splitlines()
    assert 'ValueError: boom' in json.loads(line)['exception']


def test_url_query_strings_never_reach_a_line(captured):
    configure_logging('INFO', 'text', captured)
    logging.getLogger('urllib3.connection').error('Failed to parse headers (url=%s)',
                                                  'http://h:1/problem/1/checksum?token=SECRET42')
    logging.getLogger('x').warning("code at 'https://s3/c.zip?X-Amz-Signature=SIG&a=b' gone")
    logging.getLogger('some.library').warning(
        '"GET /problem/7/testdata?token=BARE77 HTTP/1.1" 500 0')
    text = captured.getvalue()
    assert 'SECRET42' not in text and 'SIG' not in text and 'BARE77' not in text
    assert '"GET /problem/7/testdata?<redacted> HTTP/1.1"' in text
    assert 'http://h:1/problem/1/checksum?<redacted>' in text


def test_no_secret_in_debug_logs_over_real_http(captured):
    """A real socket, so that urllib3's own DEBUG lines (full URLs) are in play."""

    class Failing(http.server.BaseHTTPRequestHandler):

        def do_GET(self):
            self.send_response(500)
            self.send_header('Content-Length', '0')
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Failing)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        configure_logging('DEBUG', 'text', captured)
        base = f'http://127.0.0.1:{server.server_address[1]}'
        real = BackendClient(base, sandbox_token=SANDBOX_TOKEN).with_identity(
            RunnerIdentity('rn_1', RUNNER_TOKEN))
        with pytest.raises(UnexpectedStatus):
            real.download_code(f'{base}/code.zip?sig={SIGNATURE}',
                               max_bytes=10,
                               deadline_sec=10,
                               stop=threading.Event())
        with pytest.raises(UnexpectedStatus):
            real.testdata_checksum(7)
    finally:
        server.shutdown()
        server.server_close()
    assert SIGNATURE not in captured.getvalue()
    assert SANDBOX_TOKEN not in captured.getvalue()
    assert RUNNER_TOKEN not in captured.getvalue()
