"""What a `standard-io@1` checker answers (docs/algojudge.md §10.6, SIO2's
contract): `checker <in> <participant's out> <expected out>` prints `OK` or
`WRONG` on its first line, an optional comment on the second and an
optional percentage (0 to 100) on the third, and exits 0.

Anything else is a broken checker: the package's fault, an infrastructure
failure, never the participant's wrong answer.
"""
import dataclasses
import re

from standard_io.errors import NotJudgeable

MAX_NOTE_CHARS = 1000
_PERCENT = re.compile(r'[0-9]{1,3}')


@dataclasses.dataclass(frozen=True)
class CheckerAnswer:
    ok: bool
    note: str
    percent: int  # what an OK earns of the test's share; 0 for WRONG


def parse_answer(exit_code: int, stdout: bytes) -> CheckerAnswer:
    if exit_code != 0:
        raise NotJudgeable(f'the checker is broken: it exited with status {exit_code}')
    text = stdout.decode('utf-8', 'replace')
    lines = text.split('\n', 3)[:3]
    first = lines[0].strip()
    if first not in ('OK', 'WRONG'):
        raise NotJudgeable(f'the checker is broken: its first line is {first[:40]!r}, '
                           'not OK or WRONG')
    note = lines[1].strip()[:MAX_NOTE_CHARS] if len(lines) > 1 else ''
    percent = 100
    if len(lines) > 2 and lines[2].strip():
        word = lines[2].strip()
        if not _PERCENT.fullmatch(word) or int(word) > 100:
            raise NotJudgeable(f'the checker is broken: {word[:40]!r} is not a percentage '
                               'from 0 to 100')
        percent = int(word)
    return CheckerAnswer(first == 'OK', note, percent if first == 'OK' else 0)
