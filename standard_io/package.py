"""What a `standard-io@1` package holds (docs/algojudge.md §10.2): the rules
on its entries, and its tests in judging order.

The bytes are extracted by the runner's zip reader with the bounds below
(runner/prep/zips.py); this module sees names only.
"""
import dataclasses
import re
from typing import Dict, Iterable, Optional, Tuple

from standard_io.config import Config
from standard_io.errors import NotJudgeable

# Entries are at most runner/prep/zips.py's MAX_ENTRIES (10 000, the contract's).
MAX_ENTRY_BYTES = 256 * 1024**2
MAX_TOTAL_BYTES = 1024**3
MAX_EXPANSION = 1000  # the files' bytes over the zip's
CONFIG_NAME = 'config.yml'

_ENTRY_NAME = re.compile(r'[A-Za-z0-9._/-]+')
_TEST_FILE = re.compile(r'tests/(?P<group>[0-9]{1,6})(?P<letters>[a-z]{1,8})\.(?P<kind>in|out)')
# A group has at most 26 tests in an interactive problem; a plain one may
# name more (`1aa` after `1z`).
MAX_TESTS = 5000


@dataclasses.dataclass(frozen=True)
class Test:
    __test__ = False  # not a pytest class
    no: str  # `1a`: what the details call it
    group: int
    input_name: str  # the entry names in the package
    answer_name: Optional[str]  # None only when a checker judges


MAX_NAME_CHARS = 1024
MAX_PART_CHARS = 255  # what a file name may be on the host


def entry_name_ok(name: str) -> bool:
    """The characters an entry name may hold, and lengths the host's file
    system takes; the zip reader refuses `..`, absolute paths and symlinks
    on its own."""
    return (_ENTRY_NAME.fullmatch(name) is not None and len(name) <= MAX_NAME_CHARS
            and all(len(part) <= MAX_PART_CHARS for part in name.split('/')))


def judging_order(names: Iterable[str], config: Config) -> Tuple[Test, ...]:
    """The package's tests in judging order: by group, then by letters as
    words are (`a`, `aa`, `b`: the contract's (group, letters), as the
    reference orders them), each with its files; NotJudgeable when a test
    is in no declared group, a group has none, or an answer is missing."""
    inputs: Dict[Tuple[int, str], str] = {}
    answers: Dict[Tuple[int, str], str] = {}
    for name in names:
        if not name.startswith('tests/'):
            continue
        match = _TEST_FILE.fullmatch(name)
        if match is None:
            raise NotJudgeable(f'package: {_show(name)} is not a test file (tests/1a.in, '
                               'tests/1a.out)')
        group = match.group('group')
        if len(group) > 1 and group.startswith('0'):
            raise NotJudgeable(f'package: {_show(name)}: a group number has no leading zero')
        key = (int(group), match.group('letters'))
        (inputs if match.group('kind') == 'in' else answers)[key] = name
    if len(inputs) > MAX_TESTS:
        raise NotJudgeable(f'package: more than {MAX_TESTS} tests')
    orphans = sorted(set(answers) - set(inputs))
    if orphans:
        raise NotJudgeable(f'package: {_show(answers[orphans[0]])} has no input')
    declared = {g.group for g in config.groups}
    found = []
    for group, letters in sorted(inputs):
        no = f'{group}{letters}'
        if group not in declared:
            raise NotJudgeable(f'package: test {no} is in group {group}, which config.yml does '
                               'not declare')
        answer = answers.get((group, letters))
        if answer is None and config.checker is None:
            raise NotJudgeable(f'package: test {no} has no .out (and there is no checker)')
        found.append(Test(no, group, inputs[(group, letters)], answer))
    with_tests = {t.group for t in found}
    for group in config.groups:
        if group.group not in with_tests:
            raise NotJudgeable(f'package: group {group.group} has no tests')
    return tuple(found)


def program_source(names: Iterable[str], role: str, source: str) -> str:
    """The entry of a checker's (or interactor's) source, which must be
    under its own folder of the package."""
    if not source.startswith(f'{role}/') or source not in set(names):
        raise NotJudgeable(f'package: the {role} source {_show(source)} is not a file under '
                           f'{role}/')
    return source


def _show(text: str) -> str:
    return repr(text[:64]) + ('...' if len(text) > 64 else '')
