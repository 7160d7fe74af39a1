"""The token comparison of `standard-io@1` (docs/algojudge.md §10.6): both
sides split on whitespace, the sequences must be equal. The note says which
token differed and what was printed, never what was expected (it is shown
to the participant).

A program's output may be 64 MiB of one-byte tokens: the sides are split a
chunk at a time and compared a slice at a time, so the runner's work is a
few C-speed passes, never a Python step per token, and its memory one
chunk's tokens.
"""
import re
from typing import List, Tuple

_CHUNK_BYTES = 256 * 1024
_SPACE = re.compile(rb'[ \t\n\r\x0b\x0c]')  # what bytes.split() splits on
_SHOWN_BYTES = 40


def compare_tokens(actual: bytes, expected: bytes) -> Tuple[bool, str]:
    """(equal, note); the note is '' when equal."""
    if actual == expected:
        return True, ''
    ours, theirs = _Tokens(actual), _Tokens(expected)
    seen = 0
    while True:
        a, e = ours.peek(), theirs.peek()
        if not a or not e:
            break
        n = min(len(a), len(e))
        if a[:n] != e[:n]:
            at = next(i for i in range(n) if a[i] != e[i])
            return False, f'token {seen + at + 1} differs: read {_show(a[at])}'
        ours.take(n)
        theirs.take(n)
        seen += n
    a, e = ours.peek(), theirs.peek()
    if a:
        return False, f'expected {seen} tokens, read more: token {seen + 1} is {_show(a[0])}'
    if e:
        return False, f'the output ended after {seen} tokens'
    return True, ''


class _Tokens:
    """One side's tokens, a chunk at a time."""

    def __init__(self, data: bytes):
        self._data = data
        self._at = 0
        self._batch: List[bytes] = []
        self._used = 0

    def peek(self) -> List[bytes]:
        """The tokens not yet taken of the current chunk ([] at the end)."""
        if self._used == len(self._batch):
            self._batch, self._used = self._next_batch(), 0
        return self._batch[self._used:] if self._used else self._batch

    def take(self, n: int) -> None:
        self._used += n

    def _next_batch(self) -> List[bytes]:
        data = self._data
        while self._at < len(data):
            end = min(len(data), self._at + _CHUNK_BYTES)
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
