"""Output comparison (SPEC §2): trailing whitespace on each line and trailing
empty lines are ignored; everything else must match byte for byte."""

_TRAILING = b' \t\r\v\f'


def _normalised_lines(data: bytes):
    lines = [line.rstrip(_TRAILING) for line in data.split(b'\n')]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def outputs_match(actual: bytes, expected: bytes) -> bool:
    return _normalised_lines(actual) == _normalised_lines(expected)
