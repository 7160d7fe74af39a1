"""Log lines: JSON objects that parse and carry the job's ids; no secrets."""
import io
import json
import logging

import pytest

from dispatcher.job_log import about_job
from runner.logs import configure_logging


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
    assert first['job_id'] == 'jb_7' and first['submission_id'] == 'sub_9'
    assert 'job_id' not in second


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
    text = captured.getvalue()
    assert 'SECRET42' not in text and 'SIG' not in text
    assert 'http://h:1/problem/1/checksum?<redacted>' in text
