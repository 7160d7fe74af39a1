"""The wire format between the host and the in-container supervisor.

Both directions frame a message as a little-endian u32 length and its bytes.
A request is NUL-terminated `key=value` strings, an empty string, then argv.
A response is a text header of `key=value` lines; stdout, stderr and the
artifact follow it on the stream, with the lengths the header gives.

The supervisor runs beside the submission, so its answers are untrusted: every field is checked and every length is bounded by what the
request allowed before anything is read.
"""
import dataclasses
import enum
import socket
import struct
from typing import Dict, Optional, Tuple

MAX_HEADER = 4096
# Bumped with every change of this format; the images carry it as a label
# (oj-sandbox.protocol) and the supervisor repeats it in every answer.
PROTOCOL_VERSION = 9
_U32 = struct.Struct('<I')


class SupervisorProtocolError(Exception):
    """The supervisor's answer is malformed or out of bounds."""


class Kind(str, enum.Enum):
    """What a run is: it decides the supervisor's seccomp and Landlock rules."""
    COMPILE = 'compile'  # may start processes and write its working folder
    CASE = 'case'  # threads only; writes only /tmp and /dev/shm


UNLIMITED = -1  # for `stack_kb`


@dataclasses.dataclass(frozen=True)
class RunRequest:
    """`mem_kb` is the judged peak memory: the run is stopped once its peak
    resident memory passes it (0: not watched). `stack_kb` may be UNLIMITED."""
    kind: Kind
    argv: Tuple[str, ...]
    workdir: str
    cpu_ms: int
    wall_ms: int
    data_kb: int
    stack_kb: int
    fsize: int
    out_send: int
    err_send: int
    mem_kb: int = 0
    tail_send: int = 0
    stdin_path: str = ''
    # An interactive run's stdin and stdout: FIFOs whose other ends are the
    # peer run's (both or neither, never with `stdin_path`); the peer's
    # supervisor opens the same FIFO first, so one of the two says
    # `fifo_out_first`.
    fifo_in: str = ''
    fifo_out: str = ''
    fifo_out_first: bool = False
    # What the run writes to `fifo_out` passes a relay: > 0, it stops the run
    # past this many bytes (reported as out_size over it); `fifo_out_drop`,
    # once the peer has gone it drops what the run writes (its writes never
    # fail).
    fifo_out_max: int = 0
    fifo_out_drop: bool = False
    # An interactive pair's clock FIFO: the interactor's supervisor writes
    # its run's CPU time to it (`clock_out`); the program's reads it
    # (`clock_in`) and adds up to `wall_credit_ms` of it to the program's
    # wall bound, which the program spends waiting while the interactor
    # thinks (a silent pair adds nothing).
    clock_in: str = ''
    clock_out: str = ''
    wall_credit_ms: int = 0
    # A run that must see nothing an earlier run left, even of its own job
    # (a TLE's rerun): the supervisor serves it in a run init of its own.
    fresh: bool = False
    # A case whose argv runs a Python script: the supervisor may fork it from
    # an interpreter started once for the job (python_zygote.c), which
    # spares each case the interpreter's start. Never with FIFOs.
    zygote: bool = False
    nofile: int = 64
    artifact: str = ''
    artifact_max: int = 0
    env: Tuple[Tuple[str, str], ...] = ()

    def encode(self) -> bytes:
        fields = {
            'kind': Kind(self.kind).value,
            'workdir': self.workdir,
            'stdin': self.stdin_path,
            'cpu_ms': self.cpu_ms,
            'wall_ms': self.wall_ms,
            'mem_kb': self.mem_kb,
            'data_kb': self.data_kb,
            'stack_kb': self.stack_kb,
            'fsize': self.fsize,
            'nofile': self.nofile,
            'out_send': self.out_send,
            'err_send': self.err_send,
            'tail_send': self.tail_send,
            'artifact_max': self.artifact_max,
        }
        if self.fifo_in or self.fifo_out:
            fields.update(fifo_in=self.fifo_in,
                          fifo_out=self.fifo_out,
                          fifo_out_first=int(self.fifo_out_first),
                          fifo_out_max=self.fifo_out_max,
                          fifo_out_drop=int(self.fifo_out_drop))
        if self.clock_in:
            fields.update(clock_in=self.clock_in, wall_credit_ms=self.wall_credit_ms)
        if self.clock_out:
            fields.update(clock_out=self.clock_out)
        if self.fresh:
            fields.update(fresh=1)
        if self.zygote:
            fields.update(zygote=1)
        parts = [f'{k}={v}' for k, v in fields.items()]
        if self.artifact:
            parts.append(f'artifact={self.artifact}')
        parts += [f'env={k}={v}' for k, v in self.env]
        parts.append('')
        parts += list(self.argv)
        body = b''.join(p.encode() + b'\0' for p in parts)
        return _U32.pack(len(body)) + body


@dataclasses.dataclass(frozen=True)
class RunResponse:
    exit_code: int
    signal: int
    wall_timeout: bool
    cpu_timeout: bool
    # The peak resident memory passed `mem_kb` and the run was stopped there.
    mem_exceeded: bool
    cpu_us: int
    wall_us: int
    maxrss_kb: int
    oom_kills: int
    out_size: int
    err_size: int
    stdout: bytes
    stderr: bytes
    stderr_tail: bytes
    artifact_status: str
    artifact: Optional[bytes]
    landlock_abi: int  # 0: the kernel has no Landlock (README, known limits)
    from_zygote: bool = False  # forked from the job's Python zygote (RunRequest.zygote)


class SupervisorFailure(Exception):
    """The supervisor could not run the request (e.g. exec failed)."""


@dataclasses.dataclass(frozen=True)
class ResetRequest:
    """Ready the container for another job, whose runs get `next_uid`."""
    next_uid: int

    def encode(self) -> bytes:
        body = b'kind=reset\0next_uid=%d\0\0' % self.next_uid
        return _U32.pack(len(body)) + body


@dataclasses.dataclass(frozen=True)
class WarmRequest:
    """Read every file a run may read, once (the host's page cache)."""

    def encode(self) -> bytes:
        body = b'kind=warm\0\0'
        return _U32.pack(len(body)) + body


def read_warm_response(answer: 'AnswerReader') -> Tuple[int, int]:
    """The files and bytes read."""
    fields = _read_bare_answer(answer)
    try:
        return int(fields['files']), int(fields['bytes'])
    except (KeyError, ValueError):
        raise SupervisorProtocolError('missing or non-integer files or bytes') from None


def read_reset_response(answer: 'AnswerReader') -> int:
    """The memory the container's cgroup holds after a verified reset, in KiB
    (-1: unknown); SupervisorFailure when the reset could not be verified."""
    fields = _read_bare_answer(answer)
    try:
        return max(-1, int(fields.get('mem_kb', '-1')))
    except ValueError:
        raise SupervisorProtocolError('non-integer mem_kb') from None


_INT_FIELDS = ('exit_code', 'signal', 'wall_timeout', 'cpu_timeout', 'mem_exceeded', 'cpu_us',
               'wall_us', 'maxrss_kb', 'oom_kills', 'out_size', 'err_size', 'out_len', 'err_len',
               'tail_len', 'art_len', 'landlock', 'zygote', 'protocol')
_ARTIFACT_STATUSES = ('none', 'ok', 'missing', 'too_big')


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        k = sock.recv_into(view[got:], n - got)
        if k == 0:
            raise SupervisorProtocolError('supervisor closed the connection')
        got += k
    return bytes(buf)


# What one socket read of an answer asks for: a case's whole answer (its
# header and a small output) mostly.
_READ_AHEAD = 64 * 1024


class AnswerReader:
    """The answers on one supervisor connection, their parts read in as few
    socket reads as they came in: each read (a poll, then a recv, for the
    connection's timeout) lets go of the GIL, and under an exam's load every
    such let-go is a switch between the runner's threads. A part longer than
    a read is read to its exact end, nothing past it. What a read brings past
    an answer is the start of the next one (requests sent ahead): it is kept
    for that answer."""

    def __init__(self, sock: socket.socket):
        self._sock = sock
        self._buf = b''

    def exact(self, n: int) -> bytes:
        while len(self._buf) < n <= len(self._buf) + _READ_AHEAD:
            chunk = self._sock.recv(_READ_AHEAD)
            if not chunk:
                raise SupervisorProtocolError('supervisor closed the connection')
            self._buf += chunk
        if len(self._buf) >= n:
            part, self._buf = self._buf[:n], self._buf[n:]
            return part
        part = self._buf + _recv_exact(self._sock, n - len(self._buf))
        self._buf = b''
        return part

    def end(self) -> None:
        """Every answer asked for was read whole: the supervisor says
        nothing unasked."""
        if self._buf:
            raise SupervisorProtocolError('the supervisor sent more than its answer')


def _parse_header(raw: bytes) -> Dict[str, str]:
    try:
        text = raw.decode('ascii')
    except UnicodeDecodeError:
        raise SupervisorProtocolError('header is not ASCII') from None
    fields = {}
    for line in text.splitlines():
        key, sep, value = line.partition('=')
        if not sep:
            raise SupervisorProtocolError('malformed header line')
        fields[key] = value
    return fields


def _read_header(answer: AnswerReader) -> Dict[str, str]:
    (length, ) = _U32.unpack(answer.exact(_U32.size))
    if length > MAX_HEADER:
        raise SupervisorProtocolError('header too long')
    return _parse_header(answer.exact(length))


def _read_answer(answer: AnswerReader) -> Dict[str, str]:
    """The fields of an answer the supervisor says it carried out; every
    answer, a failure too, names the protocol it speaks."""
    fields = _read_header(answer)
    if fields.get('protocol') != str(PROTOCOL_VERSION):
        raise SupervisorProtocolError(
            f'supervisor speaks protocol {fields.get("protocol")!r:.40}, not {PROTOCOL_VERSION}')
    if fields.get('ok') != '1':
        raise SupervisorFailure(fields.get('error', 'unknown supervisor error')[:200])
    return fields


def _read_bare_answer(answer: AnswerReader) -> Dict[str, str]:
    """The fields of an answer that is its header alone (a reset's, a warm's,
    each asked alone)."""
    fields = _read_answer(answer)
    answer.end()
    return fields


def read_response(answer: AnswerReader, request: RunRequest) -> RunResponse:
    """The answer to `request`, the next on the connection. What was read
    past it is the next answer's: the caller checks, once no other request
    is outstanding, that nothing else came (`AnswerReader.end`)."""
    fields = _read_answer(answer)
    try:
        n = {k: int(fields[k]) for k in _INT_FIELDS}
    except (KeyError, ValueError):
        raise SupervisorProtocolError('missing or non-integer header field') from None
    if fields.get('art_status') not in _ARTIFACT_STATUSES:
        raise SupervisorProtocolError('bad artifact status')
    if not (0 <= n['out_len'] <= request.out_send and 0 <= n['err_len'] <= request.err_send and
            0 <= n['tail_len'] <= request.tail_send and 0 <= n['art_len'] <= request.artifact_max):
        raise SupervisorProtocolError('payload longer than requested')
    if any(n[k] < 0 for k in ('cpu_us', 'wall_us', 'maxrss_kb', 'out_size', 'err_size')):
        raise SupervisorProtocolError('negative measurement')
    stdout = answer.exact(n['out_len'])
    stderr = answer.exact(n['err_len'])
    stderr_tail = answer.exact(n['tail_len'])
    artifact = answer.exact(n['art_len']) if fields['art_status'] == 'ok' else None
    return RunResponse(exit_code=n['exit_code'],
                       signal=n['signal'],
                       wall_timeout=bool(n['wall_timeout']),
                       cpu_timeout=bool(n['cpu_timeout']),
                       mem_exceeded=bool(n['mem_exceeded']),
                       cpu_us=n['cpu_us'],
                       wall_us=n['wall_us'],
                       maxrss_kb=n['maxrss_kb'],
                       oom_kills=n['oom_kills'],
                       out_size=n['out_size'],
                       err_size=n['err_size'],
                       stdout=stdout,
                       stderr=stderr,
                       stderr_tail=stderr_tail,
                       artifact_status=fields['art_status'],
                       artifact=artifact,
                       landlock_abi=n['landlock'],
                       from_zygote=bool(n['zygote']))
