"""Output comparison (SPEC §2): trailing whitespace on each line and trailing
empty lines are ignored; everything else must match byte for byte."""
import re

# Whitespace at the end of every line (`$` matches before each newline). The
# lookbehind makes a match start only where a run of whitespace starts: without
# it, a long run inside a line is rescanned from each of its characters, which
# is quadratic (a hostile output could stall the judge for hours).
_TRAILING_SPACE = re.compile(rb'(?<![ \t\r\v\f])[ \t\r\v\f]+$', re.MULTILINE)


def _normalised(data: bytes) -> bytes:
    # One regular-expression pass and one copy: outputs of tens of MiB are
    # compared without splitting them into millions of line objects.
    return _TRAILING_SPACE.sub(b'', data).rstrip(b'\n')


def outputs_match(actual: bytes, expected: bytes) -> bool:
    return actual == expected or _normalised(actual) == _normalised(expected)
