import pytest

from sandbox.compare import outputs_match


@pytest.mark.parametrize('actual, expected', [
    (b'3\n', b'3\n'),
    (b'3', b'3\n'),
    (b'3   \n', b'3\n'),
    (b'3\t\r\n', b'3\n'),
    (b'1 2\n3\n\n\n', b'1 2\n3\n'),
    (b'', b''),
    (b'\n\n', b''),
    (b'a\0b\xff\n', b'a\0b\xff'),
])
def test_matches_ignoring_trailing_whitespace_and_empty_lines(actual, expected):
    assert outputs_match(actual, expected)


@pytest.mark.parametrize('actual, expected', [
    (b' 3\n', b'3\n'),
    (b'1\n\n2\n', b'1\n2\n'),
    (b'1 2\n', b'12\n'),
    (b'3\n', b'4\n'),
    (b'', b'0\n'),
    (b'3\n4\n', b'3\n'),
])
def test_differs(actual, expected):
    assert not outputs_match(actual, expected)


def test_long_runs_of_inner_whitespace_are_compared_in_linear_time():
    # Quadratic matching would take hours on this (the test's timeout fails it).
    actual = b' ' * (4 << 20) + b'x\n'
    assert not outputs_match(actual, b'x\n')
    assert outputs_match(actual, b' ' * (4 << 20) + b'x   \n')
