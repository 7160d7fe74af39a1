"""Output comparison (protocol §5): trailing whitespace on each line and trailing
empty lines are ignored; everything else must match byte for byte.

The cost is linear in the outputs with a small constant, and the comparison
stops at the first difference: the common prefix is skipped at memory speed,
then lines are compared in order (each with C-speed byte operations), and
once one side has no lines left the rest of the other must be blank. So a
program's output costs at most one pass over the bytes plus one step per line
of the expected answer, whatever it holds, and no single call holds the
interpreter for long: the heartbeat keeps its beat while every worker
compares. (One regular-expression pass over 32 MiB of " \\n" once took 5 s of
the runner's CPU in a single call.)
"""

_BLANKS = b' \t\r\v\f'
_PREFIX_CHUNK = 64 * 1024


def outputs_match(actual: bytes, expected: bytes) -> bool:
    if actual == expected:
        return True
    # Lines before the first differing byte are equal: start at its line.
    a = e = actual.rfind(b'\n', 0, _common_prefix(actual, expected)) + 1
    while a < len(actual) and e < len(expected):
        a_end = _line_end(actual, a)
        e_end = _line_end(expected, e)
        if actual[a:a_end].rstrip(_BLANKS) != expected[e:e_end].rstrip(_BLANKS):
            return False
        a, e = a_end + 1, e_end + 1
    return _blank_from(actual, a) and _blank_from(expected, e)


def _common_prefix(x: bytes, y: bytes) -> int:
    """A lower bound of the common prefix's length, within one chunk of it."""
    end = min(len(x), len(y))
    at = 0
    while at < end and x[at:at + _PREFIX_CHUNK] == y[at:at + _PREFIX_CHUNK]:
        at += _PREFIX_CHUNK
    return min(at, end)


def _line_end(data: bytes, start: int) -> int:
    end = data.find(b'\n', start)
    return len(data) if end < 0 else end


def _blank_from(data: bytes, start: int) -> bool:
    """Whether nothing but blanks and empty lines follows `start`."""
    return not data[start:].strip(_BLANKS + b'\n')
