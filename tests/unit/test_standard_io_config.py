import pytest

from standard_io.config import Limits, load, merged
from standard_io.errors import NotJudgeable
from standard_io.languages import toolchain
from sandbox.languages import Language

EXAMPLE = b"""
# the contract's example (10.10)
type: "standard-io@1"
limits: {timeMs: 1000, memoryBytes: 67108864}
overrideLimits:
  python: {timeMs: 2000}
groups:
  - {group: 0, points: 0, examples: true}
  - {group: 1, points: 40}
  - {group: 2, points: 60}
"""


def test_the_contracts_example_and_its_limits():
    config = load(EXAMPLE)
    assert [g.group for g in config.groups] == [0, 1, 2]
    assert config.groups[0].examples
    python = toolchain('python3')
    assert config.language_limits(python) == Limits(2000, 67108864)
    assert config.language_limits(toolchain('c11-gcc')) == Limits(1000, 67108864)


def test_most_specific_limit_wins_field_by_field():
    config = load(b"""
type: standard-io@1
limits: {timeMs: 1000, memoryBytes: 1000000}
overrideLimits:
  cpp: {timeMs: 1500, memoryBytes: 2000000}
  cpp17-gcc: {timeMs: 1200}
groups:
  - {group: 1, points: 10, limits: {memoryBytes: 500000}}
  - {group: 2, points: 10}
""")
    cpp17 = toolchain('cpp17-gcc')
    assert config.test_limits(cpp17, config.groups[0]) == Limits(1200, 500000)
    assert config.test_limits(cpp17, config.groups[1]) == Limits(1200, 2000000)
    assert config.test_limits(toolchain('cpp'), config.groups[1]) == Limits(1500, 2000000)


def test_a_raised_global_limit_does_not_lift_a_groups_own():
    package = b"""
type: standard-io@1
limits: {timeMs: 1000, memoryBytes: 1000}
groups: [{group: 1, points: 10, limits: {timeMs: 500}}]
"""
    config = load(package, {'limits': {'timeMs': 3000}})
    assert config.test_limits(toolchain('c11-gcc'), config.groups[0]).time_ms == 500
    assert config.limits.time_ms == 3000


def test_the_overlay_merges_objects_and_groups_and_replaces_other_arrays():
    package = b"""
type: standard-io@1
limits: {timeMs: 1000, memoryBytes: 1000}
languages: [c, cpp]
groups: [{group: 0, points: 0, examples: true}, {group: 1, points: 40}]
"""
    config = load(
        package, {
            'type': 'something-else@9',
            'languages': ['python3'],
            'groups': [{
                'group': 1,
                'points': 100
            }, {
                'group': 2,
                'points': 5
            }]
        })
    assert config.languages == ('python3', )
    assert [(g.group, g.points, g.examples) for g in config.groups] == [(0, 0, True),
                                                                        (1, 100, False),
                                                                        (2, 5, False)]


def test_merging_never_removes():
    assert merged({'a': {
        'b': 1,
        'c': 2
    }}, {'a': {
        'c': None,
        'd': 3
    }}) == {
        'a': {
            'b': 1,
            'c': 2,
            'd': 3
        }
    }
    assert merged([1, 2], [3]) == [3]
    # Not every element has a distinct integer group: replaced whole.
    assert merged([{
        'group': 1
    }, {
        'group': 2
    }], [{
        'group': 1
    }, {
        'group': 1
    }]) == [{
        'group': 1
    }, {
        'group': 1
    }]


def test_older_packages_memory_in_kib_and_their_format_word():
    config = load(
        b"""
format: standard-io
version: 1
limits: {timeMs: 1000, memoryKib: 65536}
groups: [{group: 1, points: 10}]
""", {'limits': {
            'memoryBytes': 1024
        }})
    assert config.limits == Limits(1000, 1024)
    assert load(b'format: standard-io\nversion: 1\nlimits: {timeMs: 1, memoryKib: 2}\n'
                b'groups: [{group: 1, points: 1}]').limits.memory_bytes == 2048


@pytest.mark.parametrize('text, says', [
    (b'type: standard-io@2\nlimits: {timeMs: 1, memoryBytes: 1}\ngroups: [{group: 1, points: 1}]',
     'type'),
    (b'limits: {timeMs: 1, memoryBytes: 1}\ngroups: [{group: 1, points: 1}]', 'type'),
    (b'type: standard-io@1\ngroups: [{group: 1, points: 1}]', 'limits is required'),
    (b'type: standard-io@1\nlimits: {timeMs: 1}\ngroups: [{group: 1, points: 1}]', 'both required'),
    (b'type: standard-io@1\nlimits: {timeMs: 0, memoryBytes: 1}\ngroups: [{group: 1, points: 1}]',
     'timeMs'),
    (b'type: standard-io@1\nlimits: {timeMs: true, memoryBytes: 1}\n'
     b'groups: [{group: 1, points: 1}]', 'timeMs'),
    (b'type: standard-io@1\nlimits: {timeMs: 1, memoryBytes: 1}\ngroups: []', 'non-empty'),
    (b'type: standard-io@1\nlimits: {timeMs: 1, memoryBytes: 1}\n'
     b'groups: [{group: 1, points: 1}, {group: 1, points: 2}]', 'share a number'),
    (b'type: standard-io@1\nlimits: {timeMs: 1, memoryBytes: 1}\ngroups: [{group: 1, points: 1}]\n'
     b'surprise: 1', 'unknown member'),
    (b'type: standard-io@1\nlimits: {timeMs: 1, memoryBytes: 1, cores: 2}\n'
     b'groups: [{group: 1, points: 1}]', 'unknown member'),
    (b'type: standard-io@1\nlimits: {timeMs: 1, memoryBytes: 1}\n'
     b'groups: [{group: 1, points: 1, tests: 3}]', 'interactive'),
    (b'type: standard-io@1\nlimits: {timeMs: 1, memoryBytes: 1}\ngroups: [{group: 1, points: 1}]\n'
     b'overrideLimits: {java8: {timeMs: -5}}', 'timeMs'),
    (b'type: standard-io@1\nlimits: {timeMs: 1, memoryBytes: 1}\ngroups: [{group: 1, points: 1}]\n'
     b'checker: {source: checker/c.cpp, language: cpp}\n'
     b'interactor: {source: interactor/i.cpp, language: cpp}', 'never both'),
    (b'type: [unclosed', 'not valid YAML'),
    (b'- a list', 'must be an object'),
    (b'', 'must be an object'),
])
def test_a_bad_config_is_not_judgeable_and_says_why(text, says):
    with pytest.raises(NotJudgeable, match=says):
        load(text)


def test_an_overlay_cannot_smuggle_what_a_package_could_not_hold():
    with pytest.raises(NotJudgeable, match='unknown member'):
        load(EXAMPLE, {'sandbox': {'network': True}})
    with pytest.raises(NotJudgeable, match='timeMs'):
        load(EXAMPLE, {'limits': {'timeMs': -1}})


def test_a_yaml_alias_bomb_is_cheap():
    bomb = b'type: standard-io@1\nlimits: {timeMs: 1, memoryBytes: 1}\n' \
        b'groups: [{group: 1, points: 1}]\ncalibration:\n  a: &a [x, x, x, x, x, x, x, x, x]\n'
    for level in 'bcdefghij':
        prev = chr(ord(level) - 1)
        bomb += f'  {level}: &{level} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n'.encode(
        )
    assert load(bomb).limits == Limits(1, 1)


def test_a_yaml_alias_bomb_where_a_value_is_checked_is_refused_cheaply():
    # Written out, nine levels of nine are 387 million items (memory runs
    # out); six, half a million, enough to tell a message that writes it.
    lines = ['modelSolutions:', '  a0: &a0 [' + ', '.join(['lol'] * 9) + ']']
    lines += [f'  a{n}: &a{n} [' + ', '.join([f'*a{n - 1}'] * 9) + ']' for n in range(1, 6)]
    bomb = ('\n'.join(lines) + '\ntype: *a5\n').encode()
    with pytest.raises(NotJudgeable, match='config type a list is not standard-io@1'):
        load(bomb)


def test_a_number_too_long_to_read_is_not_judgeable():
    with pytest.raises(NotJudgeable, match='cannot be read'):
        load(b'type: standard-io@1\nlimits: {timeMs: ' + b'9' * 5000 + b', memoryBytes: 1}\n')


def test_the_languages_this_runner_evaluates():
    assert toolchain('cpp').id == 'cpp20-gcc'
    assert toolchain('python').language == Language.PYTHON
    assert toolchain('c89-gcc').compile_flags == ('-O2', '-std=c89', '-static', '-pedantic-errors')
    assert toolchain('c23-gcc').compile_flags == ('-O2', '-std=c2x', '-static')
    assert toolchain('cpp23-gcc').language == Language.CPP
    for other in ('c11-clang', 'pypy3', 'cpp17', 'java8', '', 'c11-gcc ', 'C11-GCC'):
        with pytest.raises(NotJudgeable, match='does not evaluate'):
            toolchain(other)
    with pytest.raises(NotJudgeable, match='props.language'):
        toolchain(None)
    with pytest.raises(NotJudgeable) as refused:
        toolchain('java8')
    assert str(refused.value) == 'this runner does not evaluate java8'  # the contract's words
    with pytest.raises(NotJudgeable) as refused:
        toolchain('c11\nlog line')
    assert str(refused.value) == "this runner does not evaluate 'c11\\nlog line'"


def test_file_names_fit_their_family_case_insensitively():
    cpp = toolchain('cpp17-gcc')
    assert cpp.fits('Main.CPP') and cpp.fits('a.c++') and cpp.fits('x.cc')
    assert not cpp.fits('main.c') and not cpp.fits('main.cpp.txt')


def test_limits_for_a_language_the_contract_does_not_name_apply_to_nothing_here():
    config = load(b'type: standard-io@1\nlimits: {timeMs: 1000, memoryBytes: 1048576}\n'
                  b'groups: [{group: 1, points: 1}]\noverrideLimits: {java8: {timeMs: 5000}}')
    assert 'java8' in config.override_limits
