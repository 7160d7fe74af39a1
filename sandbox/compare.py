"""Output comparison. By lines (protocol §5): trailing whitespace on each line
and trailing empty lines are ignored; everything else must match byte for
byte. By tokens (standard-io@1): both sides split on whitespace, the
sequences must be equal, and a note says which token differed and what was
printed, never what was expected (the participant sees it).

The cost is linear in the outputs with a small constant, and the comparison
stops at the first difference: the common prefix is skipped at memory speed,
then lines are compared in order, a chunk of whole lines at a time (split,
stripped and compared by C-speed calls), and once one side has no lines
left the rest of the other must be blank. So a program's output costs a few
passes over the bytes of as many lines as the expected answer has, whatever
it holds, and no single call holds the interpreter for long: the heartbeat
keeps its beat while every worker compares. (One regular-expression pass
over 32 MiB of " \\n" once took 5 s of the runner's CPU in a single call.)
Tokens are split a chunk at a time and compared a slice at a time, for the
same reason: a few C-speed passes, never a Python step per token, and one
chunk's tokens in memory.
"""
import re
from typing import List, Tuple

_BLANKS = b' \t\r\v\f'
_PREFIX_CHUNK = 64 * 1024


def outputs_match(actual: bytes, expected: bytes) -> bool:
    if actual == expected:
        return True
    # Lines before the first differing byte are equal: start at its line.
    start = actual.rfind(b'\n', 0, _common_prefix(actual, expected)) + 1
    ours, theirs = _Lines(actual, start), _Lines(expected, start)
    _, differs = _equal_run(ours, theirs)
    # Else one side has no lines left: the rest of the other must be blank.
    return not differs and ours.blank_rest() and theirs.blank_rest()


def _equal_run(ours: '_Chunked', theirs: '_Chunked') -> Tuple[int, bool]:
    """Takes the two sides' items (lines, tokens: `peek` and `take`) in step
    while they are equal, a slice at a time: (how many were equal, whether a
    pair then differed, which is then the next item of each side), or a side
    ran out."""
    equal = 0
    while True:
        a, e = ours.peek(), theirs.peek()
        if not a or not e:
            return equal, False
        n = min(len(a), len(e))
        if a[:n] != e[:n]:
            at = next(i for i in range(n) if a[i] != e[i])
            ours.take(at)
            theirs.take(at)
            return equal + at, True
        ours.take(n)
        theirs.take(n)
        equal += n


_LINE_CHUNK_BYTES = 256 * 1024


class _Chunked:
    """One side's items (lines, tokens), a chunk of them at a time: `peek`
    gives those not yet taken of the current chunk ([] at the end), `take`
    takes some; a subclass makes the next chunk (`_next_batch`)."""

    def __init__(self, data: bytes, start: int = 0):
        self._data = data
        self._at = start
        self._batch: List[bytes] = []
        self._used = 0

    def peek(self) -> List[bytes]:
        if self._used == len(self._batch):
            self._batch, self._used = self._next_batch(), 0
        return self._batch[self._used:] if self._used else self._batch

    def take(self, n: int) -> None:
        self._used += n

    def _next_batch(self) -> List[bytes]:
        raise NotImplementedError


class _Lines(_Chunked):
    """A side's lines from `start`, each without its trailing blanks, a chunk
    of whole lines at a time: split and stripped by C-speed calls (a list
    comprehension), never a Python step per byte, and compared a slice of
    lines at a time. (A Python step per line made an answer of a million
    lines, each printed with a trailing space, cost half a second.)"""

    def _next_batch(self) -> List[bytes]:
        data = self._data
        if self._at >= len(data):
            return []
        end = data.find(b'\n', min(self._at + _LINE_CHUNK_BYTES, len(data)))
        end = len(data) if end < 0 else end
        batch = _stripped_lines(data[self._at:end])
        self._at = end + 1
        return batch

    def blank_rest(self) -> bool:
        return not any(self._batch[self._used:]) and _blank_from(self._data, self._at)


def _stripped_lines(chunk: bytes) -> List[bytes]:
    return [line.rstrip(_BLANKS) for line in chunk.split(b'\n')]


def _common_prefix(x: bytes, y: bytes) -> int:
    """A lower bound of the common prefix's length, within one chunk of it."""
    end = min(len(x), len(y))
    at = 0
    while at < end and x[at:at + _PREFIX_CHUNK] == y[at:at + _PREFIX_CHUNK]:
        at += _PREFIX_CHUNK
    return min(at, end)


def _blank_from(data: bytes, start: int) -> bool:
    """Whether nothing but blanks and empty lines follows `start`."""
    return not data[start:].strip(_BLANKS + b'\n')


_TOKEN_CHUNK_BYTES = 256 * 1024
_SPACE = re.compile(rb'[ \t\n\r\x0b\x0c]')  # what bytes.split() splits on
_SHOWN_BYTES = 40


def compare_tokens(actual: bytes, expected: bytes) -> Tuple[bool, str]:
    """(equal, note); the note is '' when equal."""
    if actual == expected:
        return True, ''
    ours, theirs = _Tokens(actual), _Tokens(expected)
    seen, differs = _equal_run(ours, theirs)
    if differs:
        return False, f'token {seen + 1} differs: read {_show(ours.peek()[0])}'
    a, e = ours.peek(), theirs.peek()
    if a:
        return False, f'expected {seen} tokens, read more: token {seen + 1} is {_show(a[0])}'
    if e:
        return False, f'the output ended after {seen} tokens'
    return True, ''


class _Tokens(_Chunked):
    """One side's tokens, a chunk at a time."""

    def _next_batch(self) -> List[bytes]:
        data = self._data
        while self._at < len(data):
            end = min(len(data), self._at + _TOKEN_CHUNK_BYTES)
            # A token cut by the chunk's end goes whole into this chunk.
            if end < len(data):
                space = _SPACE.search(data, end)
                end = len(data) if space is None else space.start()
            batch = data[self._at:end].split()
            self._at = end
            if batch:
                return batch
        return []


def _show(token: bytes) -> str:
    text = token[:_SHOWN_BYTES].decode('utf-8', 'replace')
    return repr(text) + ('...' if len(token) > _SHOWN_BYTES else '')
