"""The host never trusts the supervisor: malformed or oversized answers are errors."""
import dataclasses
import socket
import struct
import threading

import pytest

from sandbox.protocol import (PROTOCOL_VERSION, AnswerReader, Kind, ResetRequest, RunRequest,
                              SupervisorFailure, SupervisorProtocolError, read_reset_response,
                              read_response)
from tests.unit.fakes import CASE_REQUEST

REQUEST = CASE_REQUEST
GOOD = {
    'ok': '1',
    'error': '',
    'exited': '1',
    'exit_code': '0',
    'signal': '0',
    'wall_timeout': '0',
    'cpu_timeout': '0',
    'mem_exceeded': '0',
    'cpu_us': '5',
    'wall_us': '6',
    'maxrss_kb': '7',
    'oom_kills': '0',
    'out_size': '3',
    'err_size': '0',
    'out_len': '3',
    'err_len': '0',
    'tail_len': '0',
    'art_status': 'none',
    'art_len': '0',
    'landlock': '7',
    'zygote': '0',
    'protocol': str(PROTOCOL_VERSION),
}


def framed(fields, payload=b''):
    header = ''.join(f'{k}={v}\n' for k, v in fields.items()).encode()
    return struct.pack('<I', len(header)) + header + payload


def answer(fields, payload=b''):
    return AnswerReader(answered(framed(fields, payload)))


def answered(data):
    """The host's end of a connection on which `data` came, then the end."""
    host, supervisor = socket.socketpair()
    supervisor.sendall(data)
    supervisor.close()
    return host


def test_encodes_fields_and_argv():
    body = RunRequest(kind=Kind.COMPILE,
                      argv=('python3', 'main.py'),
                      workdir='/work/run',
                      cpu_ms=1,
                      wall_ms=2,
                      data_kb=3,
                      stack_kb=4,
                      fsize=5,
                      out_send=6,
                      err_send=7,
                      env=(('A', 'b=c'), )).encode()
    (length, ) = struct.unpack('<I', body[:4])
    parts = body[4:].split(b'\0')
    assert length == len(body) - 4
    assert b'env=A=b=c' in parts and b'cpu_ms=1' in parts and b'kind=compile' in parts
    assert parts[-3:] == [b'python3', b'main.py', b'']


def test_reads_a_good_answer():
    response = read_response(answer(GOOD, b'hi\n'), REQUEST)
    assert response.stdout == b'hi\n' and response.cpu_us == 5 and response.artifact is None
    assert response.landlock_abi == 7 and not response.mem_exceeded


@pytest.mark.parametrize(
    'change',
    [
        {
            'out_len': '11',
            'out_size': '11'
        },  # more than the request allowed
        {
            'cpu_us': 'lots'
        },
        {
            'maxrss_kb': '-1'
        },
        {
            'art_status': 'weird'
        },
        {
            'art_status': 'ok',
            'art_len': '1'
        },  # no artifact was asked for
        {
            'protocol': str(PROTOCOL_VERSION + 1)
        },  # an image built for another runner
        {
            'wall_us': '-1'
        },
    ])
def test_rejects_out_of_bounds_answers(change):
    with pytest.raises(SupervisorProtocolError):
        read_response(answer({**GOOD, **change}, b'x' * 20), REQUEST)


def test_rejects_a_missing_field_and_a_short_stream():
    fields = dict(GOOD)
    del fields['wall_us']
    with pytest.raises(SupervisorProtocolError):
        read_response(answer(fields), REQUEST)
    with pytest.raises(SupervisorProtocolError):
        read_response(answer(GOOD, b'h'), REQUEST)


def test_rejects_a_huge_header():
    host, supervisor = socket.socketpair()
    supervisor.sendall(struct.pack('<I', 10**9))
    with pytest.raises(SupervisorProtocolError):
        read_response(AnswerReader(host), REQUEST)


def test_supervisor_failure_is_its_own_error():
    with pytest.raises(SupervisorFailure, match='exec'):
        read_response(
            answer({
                'ok': '0',
                'error': 'exec ./main: No such file',
                'protocol': str(PROTOCOL_VERSION)
            }), REQUEST)


def test_a_reset_names_the_next_uid_and_has_no_argv():
    assert ResetRequest(123456).encode()[4:] == b'kind=reset\0next_uid=123456\0\0'


def test_a_reset_is_done_only_when_the_supervisor_says_so():
    assert read_reset_response(
        answer({
            'ok': '1',
            'error': '',
            'mem_kb': '2048',
            'protocol': str(PROTOCOL_VERSION)
        })) == 2048
    assert read_reset_response(answer({'ok': '1', 'protocol': str(PROTOCOL_VERSION)})) == -1
    with pytest.raises(SupervisorFailure, match='a process outlived'):
        read_reset_response(
            answer({
                'ok': '0',
                'error': 'a process outlived the last job',
                'protocol': str(PROTOCOL_VERSION)
            }))
    for fields in ({
            'ok': '1'
    }, {
            'ok': '1',
            'protocol': str(PROTOCOL_VERSION - 1)
    }, {
            'ok': '1',
            'mem_kb': 'lots',
            'protocol': str(PROTOCOL_VERSION)
    }):
        with pytest.raises(SupervisorProtocolError):
            read_reset_response(answer(fields))
    with pytest.raises(SupervisorProtocolError):
        read_reset_response(answer({'ok': '1', 'protocol': 'x' * 5000}))


class CountingSocket:
    """A socket's reads, counted: each is a let-go of the GIL."""

    def __init__(self, sock):
        self._sock, self.reads = sock, 0

    def recv(self, n):
        self.reads += 1
        return self._sock.recv(n)

    def recv_into(self, view, n):
        self.reads += 1
        return self._sock.recv_into(view, n)


def test_a_small_answer_is_read_in_one_read():
    host = CountingSocket(answered(framed(GOOD, b'hi\n')))
    assert read_response(AnswerReader(host), REQUEST).stdout == b'hi\n'
    assert host.reads == 1


def test_an_answer_that_comes_a_byte_at_a_time_is_read_whole():
    header = ''.join(f'{k}={v}\n' for k, v in GOOD.items()).encode()
    host, supervisor = socket.socketpair()
    whole = struct.pack('<I', len(header)) + header + b'hi\n'

    def drip():
        for i in range(len(whole)):
            supervisor.sendall(whole[i:i + 1])
        supervisor.close()

    writer = threading.Thread(target=drip)
    writer.start()
    assert read_response(AnswerReader(host), REQUEST).stdout == b'hi\n'
    writer.join()


def test_a_long_output_is_read_to_its_end():
    request = dataclasses.replace(REQUEST, out_send=1 << 20)
    out = bytes(range(256)) * 1000
    fields = {**GOOD, 'out_len': str(len(out)), 'out_size': str(len(out))}
    host, supervisor = socket.socketpair()
    header = ''.join(f'{k}={v}\n' for k, v in fields.items()).encode()
    writer = threading.Thread(target=lambda: (supervisor.sendall(
        struct.pack('<I', len(header)) + header + out), supervisor.close()))
    writer.start()
    assert read_response(AnswerReader(host), request).stdout == out
    writer.join()


def test_more_than_the_answers_asked_for_is_a_protocol_error():
    # The supervisor speaks only when asked: bytes past the last answer
    # asked for would be taken for the next one's.
    reader = answer(GOOD, b'hi\nextra')
    assert read_response(reader, REQUEST).stdout == b'hi\n'
    with pytest.raises(SupervisorProtocolError, match='more than its answer'):
        reader.end()
    with pytest.raises(SupervisorProtocolError, match='more than its answer'):
        read_reset_response(answer({'ok': '1', 'protocol': str(PROTOCOL_VERSION)}, b'x'))


def test_answers_that_came_in_one_read_are_each_read_in_turn():
    # Requests sent ahead (a job's cases following one another): one read
    # may bring an answer and the start of the next, which is kept for it.
    second = dict(GOOD, cpu_us='9', out_len='2', out_size='2')
    host = CountingSocket(answered(framed(GOOD, b'hi\n') + framed(second, b'yo')))
    reader = AnswerReader(host)
    assert read_response(reader, REQUEST).stdout == b'hi\n'
    then = read_response(reader, REQUEST)
    assert (then.stdout, then.cpu_us) == (b'yo', 9)
    reader.end()
    assert host.reads == 1
