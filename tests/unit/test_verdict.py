"""The verdict table of protocol §5 and its precedence, on synthetic measurements."""
import signal

import pytest

from runner.backend.noj.outbound import case_object
from sandbox.languages import Language
from sandbox.results import Status
from sandbox.verdict import Limits, case_result, report_text, status_of
from tests.unit.fakes import ended_run

LIMITS = Limits(time_ms=1000, memory_kb=65536, output_bytes=1024)
OK = ended_run()
CPP = Language.CPP.toolchain
PY = Language.PYTHON.toolchain

run = ended_run


@pytest.mark.parametrize(
    'measured, expected, toolchain',
    [
        (run(), Status.AC, CPP),
        (run(stdout=b'4\n'), Status.WA, CPP),
        (run(exit_code=1), Status.RE, CPP),
        (run(signal=signal.SIGSEGV), Status.RE, CPP),
        (run(cpu_us=1_000_001), Status.TLE, CPP),
        (run(cpu_us=1_000_000), Status.AC, CPP),
        (run(cpu_timeout=True, signal=9), Status.TLE, CPP),
        (run(wall_timeout=True, signal=9, cpu_us=0), Status.TLE, CPP),
        (run(wall_us=4_000_001), Status.TLE, CPP),
        # Raised by the program itself, with its time and output within bounds.
        (run(signal=signal.SIGXCPU), Status.RE, CPP),
        (run(maxrss_kb=65537), Status.MLE, CPP),
        (run(oom_kills=1, signal=9), Status.MLE, CPP),
        # Stopped by the supervisor when its peak passed the limit.
        (run(mem_exceeded=True, signal=9, maxrss_kb=65600), Status.MLE, CPP),
        (run(signal=6,
             stderr_tail=b"terminate called after throwing an instance of "
             b"'std::bad_alloc'\n  what():  std::bad_alloc\n"), Status.MLE, CPP),
        (run(exit_code=1, stderr_tail=b'Traceback...\nMemoryError\n'), Status.MLE, PY),
        (run(exit_code=1, stderr_tail=b'Traceback...\nMemoryError: no room\n'), Status.MLE, PY),
        # Only the runtime's last words count, only when the program failed,
        # and only its own runtime's.
        (run(stderr_tail=b'MemoryError\n'), Status.AC, PY),
        (run(exit_code=1, stderr_tail=b'ValueError: MemoryError\n'), Status.RE, PY),
        (run(exit_code=1, stderr_tail=b'MemoryError\nthen something else\n'), Status.RE, PY),
        (run(exit_code=1, stderr_tail=b'  what():  std::bad_alloc\n'), Status.RE, PY),
        (run(out_size=1025), Status.OLE, CPP),
        (run(err_size=1025), Status.OLE, CPP),
        (run(out_size=1024, stdout=b'3\n'), Status.AC, CPP),
        (run(signal=signal.SIGXFSZ), Status.RE, CPP),
        (run(signal=signal.SIGXFSZ, out_size=1025), Status.OLE, CPP),
    ])
def test_status(measured, expected, toolchain):
    assert status_of(measured, LIMITS, toolchain, b'3\n')[0] is expected


@pytest.mark.parametrize('measured, expected', [
    (run(cpu_us=2_000_000, maxrss_kb=10**6, out_size=10**6, exit_code=1), Status.TLE),
    (run(maxrss_kb=10**6, out_size=10**6, exit_code=1), Status.MLE),
    (run(out_size=10**6, exit_code=1), Status.OLE),
    (run(exit_code=1, stdout=b'4\n'), Status.RE),
])
def test_precedence(measured, expected):
    assert status_of(measured, LIMITS, CPP, b'3\n')[0] is expected


def test_case_result_reports_signal_as_negative_exit_code_and_truncates_text():
    result = case_result(run(signal=11, stdout=b'\xff' * 100, stderr=b'x' * 100),
                         LIMITS,
                         CPP,
                         b'',
                         report_limit=10)
    assert result.exit_code == -11
    assert result.stdout == '\ufffd' * 3  # 9 bytes: a fourth would make 12
    assert result.stderr == 'x' * 10
    report = case_object(result)
    assert set(report) == {'status', 'exitCode', 'execTime', 'memoryUsage', 'stdout', 'stderr'}
    assert report['execTime'] == 10 and report['memoryUsage'] == 2048


@pytest.mark.parametrize(
    'data, limit, expected',
    [
        (b'abc', 8, 'abc'),
        (b'', 8, ''),
        # The sandbox sent the first 8 bytes of more: the euro sign the cut
        # went through is left out, not reported as an invalid byte.
        ('€€€'.encode()[:8], 8, '€€'),
        ('ab€'.encode(), 8, 'ab€'),
        # Shorter than the limit: the program itself ended mid-character.
        (b'ab\xe2\x82', 8, 'ab\ufffd'),
        (b'\xff\xfe', 8, '\ufffd\ufffd'),
        # Each invalid byte becomes three once replaced: still at most 8.
        (b'\xff' * 8, 8, '\ufffd\ufffd'),
        (b'a\xffbcdefg', 8, 'a\ufffdbcde'),
    ])
def test_report_text_is_at_most_the_limit_in_utf8_and_cut_between_characters(data, limit, expected):
    text = report_text(data, limit)
    assert text == expected
    assert len(text.encode()) <= limit
