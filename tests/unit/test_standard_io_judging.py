import pytest

from standard_io.admission import MAX_SOURCE_BYTES, Refusal, admit
from sandbox.compare import compare_tokens
from standard_io.config import load
from standard_io.errors import NotJudgeable
from standard_io.languages import toolchain
from standard_io.package import Test, entry_name_ok, judging_order, program_source
from standard_io.scoring import Reason, TestOutcome, Verdict, details, score

EXAMPLE = load(b"""
type: standard-io@1
limits: {timeMs: 1000, memoryBytes: 67108864}
overrideLimits: {python: {timeMs: 2000}}
groups:
  - {group: 0, points: 0, examples: true}
  - {group: 1, points: 40}
  - {group: 2, points: 60}
""")
NAMES = ['config.yml'] + [
    f'tests/{no}.{kind}' for no in ('0a', '1a', '1b', '2a', '2b') for kind in ('in', 'out')
]


def outcomes(failing=(), reason=Reason.WRONG_ANSWER, percent=None):
    percent = percent or {}
    return [
        TestOutcome(t, reason if t.no in failing else None, percent.get(t.no, 100), 1500, 4096, '')
        for t in judging_order(NAMES, EXAMPLE)
    ]


def test_tests_come_in_group_then_letter_order():
    names = [
        'tests/12ab.in', 'tests/12ab.out', 'tests/2b.in', 'tests/2b.out', 'tests/2aa.in',
        'tests/2aa.out', 'tests/2z.in', 'tests/2z.out', 'tests/12a.in', 'tests/12a.out'
    ]
    config = load(b'type: standard-io@1\nlimits: {timeMs: 1, memoryBytes: 1}\n'
                  b'groups: [{group: 2, points: 1}, {group: 12, points: 1}]')
    assert [t.no for t in judging_order(names, config)] == ['2aa', '2b', '2z', '12a', '12ab']


@pytest.mark.parametrize('names, says', [
    (['tests/3a.in', 'tests/3a.out'], 'does not declare'),
    (['tests/1a.in'], 'no .out'),
    (['tests/1a.out'], 'has no input'),
    (['tests/README'], 'not a test file'),
    (['tests/1A.in', 'tests/1A.out'], 'not a test file'),
    (['tests/01a.in', 'tests/01a.out'], 'leading zero'),
    ([], 'group 1 has no tests'),
])
def test_a_bad_test_set_is_not_judgeable(names, says):
    config = load(b'type: standard-io@1\nlimits: {timeMs: 1, memoryBytes: 1}\n'
                  b'groups: [{group: 1, points: 1}]')
    with pytest.raises(NotJudgeable, match=says):
        judging_order(
            names + ['tests/1z.in', 'tests/1z.out'] if says == 'does not declare' else names,
            config)


def test_a_checker_makes_answers_optional_and_its_source_lives_in_its_folder():
    config = load(
        b'type: standard-io@1\nlimits: {timeMs: 1, memoryBytes: 1}\n'
        b'groups: [{group: 1, points: 1}]\nchecker: {source: checker/chk.cpp, language: cpp}')
    assert judging_order(['tests/1a.in'], config) == (Test('1a', 1, 'tests/1a.in', None), )
    assert program_source(['checker/chk.cpp'], 'checker', 'checker/chk.cpp') == 'checker/chk.cpp'
    with pytest.raises(NotJudgeable, match='not a file under'):
        program_source(['tests/1a.in'], 'checker', 'tests/1a.in')


def test_entry_names():
    assert entry_name_ok('tests/1a.in') and entry_name_ok('checker/testlib.h')
    for bad in ('tests/1 a.in', 'tests/\u00e9.in', 'a\\b', 'x:y', ''):
        assert not entry_name_ok(bad)


def test_the_contracts_example_a_python_submission_failing_only_2b():
    result = score(EXAMPLE, outcomes(failing={'2b'}))
    assert (result.score, result.max_score, result.verdict) == (40, 100, Verdict.WRONG_ANSWER)
    assert [(t.outcome.test.no, t.score, t.max_score) for t in result.tests] == [('0a', 0, 0),
                                                                                 ('1a', 20, 20),
                                                                                 ('1b', 20, 20),
                                                                                 ('2a', 0, 30),
                                                                                 ('2b', 0, 30)]
    document = details(result, EXAMPLE.limits, '')
    assert document['groups'][2] == {'group': 2, 'points': 0, 'maxPoints': 60, 'status': 'ERROR'}
    assert document['tests'][4] == {
        'no': '2b',
        'group': 2,
        'status': 'ERROR',
        'timeMs': 2,
        'memoryBytes': 4096,
        'score': 0,
        'maxScore': 30,
        'note': '',
        'reason': 'wrongAnswer'
    }
    assert 'reason' not in document['tests'][1]


def test_a_failing_example_keeps_the_score_and_names_the_verdict():
    result = score(EXAMPLE, outcomes(failing={'0a'}, reason=Reason.TIME_LIMIT))
    assert (result.score, result.verdict) == (100, Verdict.TIME_LIMIT)


def test_the_first_failing_test_in_order_names_the_verdict():
    result = score(EXAMPLE, [
        o if o.test.no != '1b' else TestOutcome(o.test, Reason.MEMORY_LIMIT, 0, 0, None, '')
        for o in outcomes(failing={'2a'}, reason=Reason.RUNTIME_ERROR)
    ])
    assert result.verdict == Verdict.MEMORY_LIMIT


def test_partial_credit_rounds_to_two_decimals():
    config = load(
        b'type: standard-io@1\nlimits: {timeMs: 1, memoryBytes: 1}\n'
        b'groups: [{group: 1, points: 10}]\nchecker: {source: checker/c.py, language: python}')
    names = [f'tests/1{x}.in' for x in 'abc']
    result = score(config,
                   [TestOutcome(t, None, 50, 0, None, '') for t in judging_order(names, config)])
    assert (result.score, result.verdict) == (5, Verdict.PARTIAL)
    assert [t.score for t in result.tests] == [1.67, 1.67, 1.67]
    assert details(result, config.limits, '')['tests'][0]['status'] == 'WARNING'
    full = score(config,
                 [TestOutcome(t, None, 100, 0, None, '') for t in judging_order(names, config)])
    assert (full.score, full.verdict) == (10, Verdict.ACCEPTED)


def test_a_refused_submission_lists_every_test_as_failed():
    refusal = admit(load(EXAMPLE_WITH_LANGUAGES), 'c11-gcc', 'main.c', 10)
    assert refusal == Refusal(Verdict.POLICY_VIOLATION, Reason.POLICY_VIOLATION,
                              'c11-gcc is not allowed for this problem', toolchain('c11-gcc'))
    config = load(EXAMPLE_WITH_LANGUAGES)
    result = score(config,
                   [TestOutcome.refused(t, refusal.reason) for t in judging_order(NAMES, config)])
    assert (result.score, result.verdict) == (0, Verdict.POLICY_VIOLATION)
    document = details(result, config.limits, refusal.log)
    assert document['compilation'] == {'status': 'WARNING', 'log': refusal.log}
    assert {t['status'] for t in document['tests']} == {'ERROR'}
    assert {t['timeMs'] for t in document['tests']} == {0}


EXAMPLE_WITH_LANGUAGES = (b'type: standard-io@1\nlimits: {timeMs: 1000, memoryBytes: 67108864}\n'
                          b'languages: [python3]\ngroups: [{group: 0, points: 0, examples: true}, '
                          b'{group: 1, points: 40}, {group: 2, points: 60}]')


def test_admission_checks_in_the_contracts_order():
    config = load(EXAMPLE_WITH_LANGUAGES)
    with pytest.raises(NotJudgeable):
        admit(config, 'java8', 'Main.java', 10)  # unknown before excluded
    assert admit(config, 'c11-gcc', 'main.py', 10).verdict == Verdict.POLICY_VIOLATION
    assert admit(config, 'python3', 'main.c', 10).verdict == Verdict.COMPILATION_ERROR
    assert admit(config, 'python3', 'main.c', MAX_SOURCE_BYTES + 1).verdict == \
        Verdict.COMPILATION_ERROR
    assert admit(config, 'python3', 'main.py', MAX_SOURCE_BYTES + 1).verdict == \
        Verdict.POLICY_VIOLATION
    assert admit(config, 'python', 'MAIN.PY', MAX_SOURCE_BYTES).id == 'python3'
    assert admit(load(EXAMPLE_WITH_LANGUAGES.replace(b'python3', b'cpp')), 'cpp17-gcc', 'a.cc',
                 1).id == 'cpp17-gcc'


def test_token_comparison_and_its_notes():
    assert compare_tokens(b'1 2\n3\n', b'1\n2 3') == (True, '')
    assert compare_tokens(b'', b'\n\n') == (True, '')
    assert compare_tokens(b'1 2 4', b'1 2 3') == (False, "token 3 differs: read '4'")
    assert compare_tokens(b'1 2', b'1 2 3') == (False, 'the output ended after 2 tokens')
    assert compare_tokens(b'1 2 3 x',
                          b'1 2 3') == (False, "expected 3 tokens, read more: token 4 is 'x'")
    secret = b'the answer is 42'
    assert b'42' not in compare_tokens(b'the answer is 41', secret)[1].encode()


def test_token_comparison_across_chunks():
    expected = b' '.join(b'%d' % i for i in range(200_000))
    actual = b'\n'.join(b'%d' % i for i in range(200_000))
    assert compare_tokens(actual, expected) == (True, '')
    wrong = actual.replace(b'\n150000\n', b'\n150001\n')
    assert compare_tokens(wrong, expected) == (False, "token 150001 differs: read '150001'")
    long_token = b'x' * (3 * 1024 * 1024)
    assert compare_tokens(b'a ' + long_token, b'a\n' + long_token) == (True, '')
    assert compare_tokens(b'a ' + long_token + b'y',
                          b'a\n' + long_token)[1].startswith("token 2 differs: read 'xxxx")
