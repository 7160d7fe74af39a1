"""SandboxContainer's runs against a fake supervisor: a run may be sent while
one is under way (a lane, sandbox/engine.py), and each gets its own answer,
in the order sent."""
import dataclasses
import socket
import struct
import threading
import types

import pytest

from sandbox.container import AheadFailed, SandboxBroken, SandboxContainer, TRANSFER_GRACE_SEC
from sandbox.settings import ContainerLimits
from tests.unit.fakes import CASE_REQUEST
from tests.unit.test_protocol import GOOD, framed

LIMITS = ContainerLimits(memory_bytes=1 << 30,
                         pids=64,
                         work_tmpfs_bytes=1 << 20,
                         tmp_tmpfs_bytes=1 << 20,
                         cpus=1.0)
WAIT_SEC = 10


def answer_bytes(stdout: bytes) -> bytes:
    return framed({**GOOD, 'out_size': str(len(stdout)), 'out_len': str(len(stdout))}, stdout)


def read_request(sock) -> dict:
    (length, ) = struct.unpack('<I', sock.recv(4, socket.MSG_WAITALL))
    body = sock.recv(length, socket.MSG_WAITALL)
    fields = {}
    for part in body.split(b'\0'):
        key, sep, value = part.partition(b'=')
        if sep:
            fields[key.decode()] = value.decode()
    return fields


class Supervisor:
    """The other end of a container's connection, driven by the test."""

    def __init__(self, tmp_path):
        self.container = SandboxContainer(None, 'img', tmp_path / 'boxes', LIMITS, {})
        host, self.sock = socket.socketpair()
        self.sock.settimeout(WAIT_SEC)
        self.container._use(host)

    def run_in_thread(self, stdin, request=CASE_REQUEST, files=None):
        done = {}

        def run():
            try:
                done['answer'] = self.container.run(request, stdin, files)
            except Exception as exc:
                done['answer'] = exc

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        return thread, done


def test_a_run_sent_behind_another_gets_its_own_answer_in_turn(tmp_path):
    supervisor = Supervisor(tmp_path)
    inputs = []
    for n in range(2):
        inputs.append(tmp_path / f'{n}.in')
        inputs[-1].write_text(f'input {n}')
    first = supervisor.container.send(CASE_REQUEST, inputs[0])
    second = supervisor.container.send(CASE_REQUEST, inputs[1])
    asked = [read_request(supervisor.sock) for _ in range(2)]
    # Each its own input, in the box together until each is answered.
    stdin_names = [fields['stdin'].rsplit('/', 1)[1] for fields in asked]
    assert len(set(stdin_names)) == 2
    assert [(supervisor.container.box / name).read_text()
            for name in stdin_names] == ['input 0', 'input 1']
    # Both answers in one write: the second is kept for its own reader.
    supervisor.sock.sendall(answer_bytes(b'zero\n') + answer_bytes(b'one\n'))
    got = {}
    reader = threading.Thread(target=lambda: got.update(second=supervisor.container.answer(second)))
    reader.start()
    assert supervisor.container.answer(first).stdout == b'zero\n'
    reader.join(WAIT_SEC)
    assert got['second'].stdout == b'one\n'
    assert not (supervisor.container.box / stdin_names[0]).exists()
    assert not (supervisor.container.box / stdin_names[1]).exists()
    assert not supervisor.container.broken


def test_the_second_answer_waits_for_the_first(tmp_path):
    supervisor = Supervisor(tmp_path)
    first = supervisor.container.send(CASE_REQUEST, None)
    second = supervisor.container.send(CASE_REQUEST, None)
    got = {}
    reader = threading.Thread(target=lambda: got.update(second=supervisor.container.answer(second)))
    reader.start()
    supervisor.sock.sendall(answer_bytes(b'zero\n'))
    reader.join(0.3)
    assert reader.is_alive()  # the first answer is not its to read
    assert supervisor.container.answer(first).stdout == b'zero\n'
    supervisor.sock.sendall(answer_bytes(b'one\n'))
    reader.join(WAIT_SEC)
    assert got['second'].stdout == b'one\n'


def test_when_a_run_breaks_the_conversation_those_sent_behind_it_fail_as_not_theirs(tmp_path):
    supervisor = Supervisor(tmp_path)
    first = supervisor.container.send(CASE_REQUEST, None)
    second = supervisor.container.send(CASE_REQUEST, None)
    got = {}

    def read_second():
        try:
            supervisor.container.answer(second)
        except Exception as exc:
            got['second'] = exc

    reader = threading.Thread(target=read_second)
    reader.start()
    supervisor.sock.sendall(answer_bytes(b'zero\n')[:10])
    supervisor.sock.close()
    with pytest.raises(SandboxBroken) as first_failure:
        supervisor.container.answer(first)
    assert not isinstance(first_failure.value, AheadFailed)
    reader.join(WAIT_SEC)
    assert isinstance(got['second'], AheadFailed)
    assert supervisor.container.broken
    with pytest.raises(AheadFailed):
        supervisor.container.send(CASE_REQUEST, None)


def test_bytes_past_the_last_answer_asked_for_break_the_container(tmp_path):
    supervisor = Supervisor(tmp_path)
    thread, done = supervisor.run_in_thread(None)
    read_request(supervisor.sock)
    supervisor.sock.sendall(answer_bytes(b'zero\n') + b'unasked')
    thread.join(WAIT_SEC)
    assert isinstance(done['answer'], SandboxBroken)
    assert 'more than its answer' in str(done['answer'])
    assert supervisor.container.broken


def test_nothing_is_sent_beside_a_run_with_files_of_its_own(tmp_path):
    supervisor = Supervisor(tmp_path)
    secret = tmp_path / 'answer'
    secret.write_text('the expected output')
    with_files = supervisor.container.send(CASE_REQUEST, None, files={'answer': secret})
    with pytest.raises(RuntimeError):
        supervisor.container.send(CASE_REQUEST, None)
    supervisor.sock.sendall(answer_bytes(b''))
    supervisor.container.answer(with_files)
    assert not (supervisor.container.box / 'job' / 'answer').exists()
    plain = supervisor.container.send(CASE_REQUEST, None)
    with pytest.raises(RuntimeError):
        supervisor.container.send(CASE_REQUEST, None, files={'answer': secret})
    supervisor.sock.sendall(answer_bytes(b''))
    supervisor.container.answer(plain)


def test_each_run_is_read_within_its_own_bound(tmp_path):
    supervisor = Supervisor(tmp_path)
    short = dataclasses.replace(CASE_REQUEST, wall_ms=1000)
    long = dataclasses.replace(CASE_REQUEST, wall_ms=9000)
    first = supervisor.container.send(short, None)
    second = supervisor.container.send(long, None)
    supervisor.sock.sendall(answer_bytes(b'') + answer_bytes(b''))
    supervisor.container.answer(first)
    assert supervisor.container._conn.gettimeout() == 1 + TRANSFER_GRACE_SEC
    supervisor.container.answer(second)
    assert supervisor.container._conn.gettimeout() == 9 + TRANSFER_GRACE_SEC


def test_a_reading_stopped_half_way_is_not_taken_up_by_the_next_run(tmp_path, monkeypatch):
    supervisor = Supervisor(tmp_path)
    first = supervisor.container.send(CASE_REQUEST, None)
    second = supervisor.container.send(CASE_REQUEST, None)
    supervisor.sock.sendall(answer_bytes(b'zero\n') + answer_bytes(b'one\n'))

    def stopped(answers, request):
        answers.exact(10)  # half-way through the first answer
        raise RuntimeError("a bug")

    monkeypatch.setattr('sandbox.container.read_response', stopped)
    with pytest.raises(RuntimeError):
        supervisor.container.answer(first)
    with pytest.raises(AheadFailed):
        supervisor.container.answer(second)


class FailingSends:
    """A connection whose sends after the first `fail_after` fail, and which
    says when its reader reads."""

    def __init__(self, sock, fail_after=1):
        self._sock, self._sends, self._fail_after = sock, 0, fail_after
        self.reading = threading.Event()

    def recv(self, *args):
        self.reading.set()
        return self._sock.recv(*args)

    def recv_into(self, *args):
        self.reading.set()
        return self._sock.recv_into(*args)

    def sendall(self, data):
        self._sends += 1
        if self._sends > self._fail_after:
            raise BrokenPipeError('the supervisor is gone')
        self._sock.sendall(data)

    def __getattr__(self, name):
        return getattr(self._sock, name)


def test_a_send_that_fails_wakes_the_reader_and_leaves_it_its_socket(tmp_path):
    supervisor = Supervisor(tmp_path)
    conn = FailingSends(supervisor.container._conn)
    supervisor.container._use(conn)
    thread, done = supervisor.run_in_thread(None)
    read_request(supervisor.sock)  # the first is sent
    assert conn.reading.wait(WAIT_SEC)  # its reader waits for its answer
    with pytest.raises(SandboxBroken):
        supervisor.container.send(CASE_REQUEST, None)
    assert supervisor.container._conn is not None  # not closed under its reader
    thread.join(WAIT_SEC)
    assert not thread.is_alive()  # woken, not left to its timeout
    assert isinstance(done['answer'], SandboxBroken)
    assert supervisor.container._conn is None  # closed by its reader


class Turns:
    """The runs' turns of one container, watched: how many runs each
    answer or failure wakes, and when `expected` runs wait at once. The
    turn of the run sent `raising_at` (0 the first) raises in its wait, as
    an exception sent to its thread would."""

    def __init__(self, monkeypatch, expected, raising_at=None):
        self.woken = 0
        self.waiting = 0
        self.all_waiting = threading.Event()
        self.made = 0
        turns = self

        class Turn:

            def __init__(self, lock):
                self._turn = threading.Condition(lock)
                self._raises = turns.made == raising_at
                turns.made += 1

            def wait(self):
                turns.waiting += 1
                if turns.waiting == expected:
                    turns.all_waiting.set()
                try:
                    if self._raises:
                        raise KeyboardInterrupt
                    self._turn.wait()
                finally:
                    turns.waiting -= 1

            def notify(self):
                turns.woken += 1
                self._turn.notify()

        monkeypatch.setattr('sandbox.container.threading',
                            types.SimpleNamespace(Condition=Turn, Lock=threading.Lock))


def answer_on_a_thread(container, run):
    done = {}

    def read():
        try:
            done['answer'] = container.answer(run)
        except BaseException as exc:
            done['answer'] = exc

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread, done


def test_an_answer_read_wakes_the_next_run_alone(tmp_path, monkeypatch):
    """Red when each answer wakes every run behind it: on a lane of n runs,
    n - 1 thread switches an answer, each for the interpreter lock, where
    one is woken for its own."""
    supervisor = Supervisor(tmp_path)
    turns = Turns(monkeypatch, expected=2)
    sent = [supervisor.container.send(CASE_REQUEST, None) for _ in range(3)]
    readers = [answer_on_a_thread(supervisor.container, run) for run in sent[1:]]
    assert turns.all_waiting.wait(WAIT_SEC)  # both behind the first
    supervisor.sock.sendall(b''.join(answer_bytes(b'%d\n' % n) for n in range(3)))
    assert supervisor.container.answer(sent[0]).stdout == b'0\n'
    for thread, _ in readers:
        thread.join(WAIT_SEC)
    assert [done['answer'].stdout for _, done in readers] == [b'1\n', b'2\n']
    assert turns.woken == 2  # each once, for its own answer


def test_a_send_that_fails_fails_at_once_the_runs_waiting_behind_one_not_read_yet(
        tmp_path, monkeypatch):
    """Red when only an answer wakes the run behind: with the run ahead not
    reading yet (between its send and its answer), it waited for it."""
    supervisor = Supervisor(tmp_path)
    conn = FailingSends(supervisor.container._conn, fail_after=2)
    supervisor.container._use(conn)
    turns = Turns(monkeypatch, expected=1)
    first = supervisor.container.send(CASE_REQUEST, None)
    second = supervisor.container.send(CASE_REQUEST, None)
    thread, done = answer_on_a_thread(supervisor.container, second)
    assert turns.all_waiting.wait(WAIT_SEC)
    with pytest.raises(SandboxBroken):
        supervisor.container.send(CASE_REQUEST, None)
    thread.join(WAIT_SEC)
    assert isinstance(done['answer'], AheadFailed)
    with pytest.raises(AheadFailed):
        supervisor.container.answer(first)  # the conversation is over


def test_a_run_that_stops_waiting_for_its_answer_ends_the_conversation(tmp_path, monkeypatch):
    """Red when it only leaves the line: its answer, unread, would be read
    by the run behind it as its own. Every run of the conversation is made
    again on its own (none of them is to blame)."""
    supervisor = Supervisor(tmp_path)
    Turns(monkeypatch, expected=1, raising_at=1)
    sent = [supervisor.container.send(CASE_REQUEST, None) for _ in range(3)]
    with pytest.raises(KeyboardInterrupt):
        supervisor.container.answer(sent[1])
    for run in (sent[0], sent[2]):
        with pytest.raises(AheadFailed):
            supervisor.container.answer(run)
    assert supervisor.container.broken
