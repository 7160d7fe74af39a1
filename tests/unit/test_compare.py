import random

import pytest

from sandbox import compare
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


def _reference(data: bytes) -> bytes:
    """The rule, written plainly: each line without trailing blanks, then no
    trailing empty lines."""
    lines = [line.rstrip(b' \t\r\v\f') for line in data.split(b'\n')]
    while lines and not lines[-1]:
        lines.pop()
    return b'\n'.join(lines)


def test_agrees_with_the_rule_on_random_outputs():
    rng = random.Random(20261201)
    alphabet = [b'a', b'b', b' ', b'\t', b'\r', b'\n', b'\n', b'\x0b', b'\x0c', b'\0']
    for _ in range(20000):
        expected = b''.join(rng.choice(alphabet) for _ in range(rng.randrange(12)))
        actual = bytearray(expected)
        for _ in range(rng.randrange(3)):  # a few edits, so that many pairs are close
            at = rng.randrange(len(actual) + 1)
            actual[at:at + rng.randrange(2)] = rng.choice(alphabet)
        actual = bytes(actual)
        assert outputs_match(actual,
                             expected) == (_reference(actual) == _reference(expected)), (actual,
                                                                                         expected)


def test_a_long_common_prefix_then_a_difference():
    lines = b''.join(b'%d\n' % n for n in range(200000))
    assert outputs_match(lines + b'  \n\n', lines)
    assert outputs_match(lines.rstrip(b'\n'), lines)
    assert not outputs_match(lines + b'x', lines)
    assert not outputs_match(lines.replace(b'199999', b'199998'), lines)


class CountedLines:
    """Counts the steps of a comparison's lines (each a chunk of one side's
    lines split and stripped at once)."""

    def __init__(self, monkeypatch):
        self.steps = 0
        real = compare._stripped_lines

        def counted(chunk):
            self.steps += 1
            return real(chunk)

        monkeypatch.setattr(compare, '_stripped_lines', counted)


def test_a_million_lines_each_with_a_trailing_blank_take_a_few_steps(monkeypatch):
    # Not one Python step per line (half a second for these): a chunk of
    # lines at a time.
    counted = CountedLines(monkeypatch)
    assert outputs_match(b'1 \n' * 1_000_000, b'1\n' * 1_000_000)
    assert not outputs_match(b'1 \n' * 999_999 + b'2\n', b'1\n' * 1_000_000)
    assert counted.steps <= 2 * 2 * (3_000_000 // compare._LINE_CHUNK_BYTES + 2)


def test_hostile_blank_lines_stop_at_the_first_difference(monkeypatch):
    counted = CountedLines(monkeypatch)
    assert not outputs_match(b' \n' * (16 << 20), b'42\n')
    assert not outputs_match(b' \n' * (16 << 20), b'42\n' * 100000)
    assert counted.steps <= 4


def test_hostile_trailing_blanks_cost_one_pass_not_one_step_per_line(monkeypatch):
    counted = CountedLines(monkeypatch)
    assert outputs_match(b'42\n' + b' \n' * (16 << 20), b'42\n')
    assert not outputs_match(b'42\n' + b' \n' * (16 << 20) + b'x', b'42\n')
    assert counted.steps <= 4
