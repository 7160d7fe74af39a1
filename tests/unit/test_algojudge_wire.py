"""What the AlgoJudge wire boundary makes of what a server may write: a
header's count in ASCII digits only, a token that headers can carry, a
source of any size (its verdict, not a defect), a date past the calendar."""
import pytest

from runner.backend.algojudge.client import _granted_sec
from runner.backend.algojudge.wire import TYPE, WireError, parse_claimed, parse_problem, parse_token
from runner.backend.http_session import header_number


@pytest.mark.parametrize('value, number', [('12', 12), (' 7 ', 7), ('0', 0), ('²', None),
                                           ('¹2', None), ('1e3', None), ('-1', None), ('', None),
                                           (None, None), ('9' * 19, None)])
def test_a_headers_count_is_ascii_digits_alone(value, number):
    assert header_number(value) == number


def test_retry_after_in_anything_but_ascii_seconds_is_ignored():
    assert parse_problem(503, None, '30').retry_after_sec == 30
    assert parse_problem(503, None, '999999').retry_after_sec == 3600
    assert parse_problem(503, None, '²').retry_after_sec is None
    assert parse_problem(503, None, 'Wed, 21 Oct 2026 07:28:00 GMT').retry_after_sec is None


@pytest.mark.parametrize('token', ['t€', 'a b', 'a\nb'])
def test_a_token_no_header_can_carry_is_a_wire_error(token):
    with pytest.raises(WireError, match='printable ASCII'):
        parse_token({'token': token})
    assert parse_token({'token': 'eyJ.abc-_~+/='}).token == 'eyJ.abc-_~+/='


def claim(size_bytes, file_name='main.cpp'):
    return {
        'jobId':
        'job-1',
        'leaseToken':
        'lease',
        'problemType':
        TYPE,
        'submissionId':
        'sub-1',
        'packageFileId':
        'pkg',
        'packageSha256':
        '0' * 64,
        'files': [{
            'name': 'source',
            'fileName': file_name,
            'fileId': 'src',
            'sha256': '1' * 64,
            'sizeBytes': size_bytes
        }]
    }


def test_a_source_of_any_size_or_name_length_is_read_for_its_verdict():
    # Over 8 MiB is the submission's PolicyViolation (standard_io/admission.py).
    claimed = parse_claimed(claim(100 * 1024 * 1024, 'a' * 300 + '.cpp'))
    assert claimed.defect is None and claimed.source.size_bytes == 100 * 1024 * 1024
    assert parse_claimed(claim(-1)).defect is not None


def test_a_date_past_the_calendar_reads_no_lease():
    assert _granted_sec('2026-12-04T10:00:00+00:00',
                        'Mon, 01 Jan 99999999999999999999 00:00:00 GMT') is None
    assert _granted_sec('2026-12-04T10:01:00+00:00', 'Fri, 04 Dec 2026 10:00:00 GMT') == 60
