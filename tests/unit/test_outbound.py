"""The bodies the runner sends: the complete body in index order, and its bound
(outputs shortened fairly, verdicts never cut)."""
import json

from runner.backend.noj.outbound import complete_body, fit_tasks, without_outputs
from sandbox.results import CaseResult, Status

FIELDS = ('status', 'exitCode', 'execTime', 'memoryUsage')


def case(stdout, stderr='', status='WA'):
    return {
        'status': status,
        'exitCode': -11,
        'execTime': 12,
        'memoryUsage': 345,
        'stdout': stdout,
        'stderr': stderr
    }


def body_len(tasks):
    return len(json.dumps({'tasks': tasks}))


def test_a_report_within_the_bound_is_unchanged():
    tasks = [[case('42\n')]]
    assert fit_tasks(tasks, 1 << 20) is tasks


def test_720_cases_of_control_bytes_fit_half_a_mebibyte():
    # 8 KiB of control bytes per stream: about 48 KiB each once escaped.
    tasks = [[case('\x01' * 8192, '\x02' * 8192) for _ in range(72)] for _ in range(10)]
    assert body_len(tasks) > 60 * 1024 * 1024
    fitted = fit_tasks(tasks, 512 * 1024)
    assert body_len(fitted) <= 512 * 1024
    for before, after in zip(sum(tasks, []), sum(fitted, [])):
        assert all(after[field] == before[field] for field in FIELDS)
        assert before['stdout'].startswith(after['stdout']) and after['stdout']
    lengths = {len(c['stdout'])
               for c in sum(fitted, [])} | {len(c['stderr'])
                                            for c in sum(fitted, [])}
    assert len(lengths) == 1  # every output got the same share


def test_short_outputs_keep_all_and_give_the_rest_to_long_ones():
    tasks = [[case('short'), case('y' * 5000), case('z' * 5000)]]
    fitted = fit_tasks(tasks, 6000)
    assert body_len(fitted) <= 6000
    assert fitted[0][0]['stdout'] == 'short'
    assert len(fitted[0][1]['stdout']) == len(fitted[0][2]['stdout']) > 2000


def test_escapes_and_non_ascii_are_never_cut_in_the_middle():
    tasks = [[case('é\n\x00"' * 2000)]]
    fitted = fit_tasks(tasks, 1000)
    assert body_len(fitted) <= 1000
    assert tasks[0][0]['stdout'].startswith(fitted[0][0]['stdout'])


def test_too_many_cases_for_the_bound_keep_their_verdicts():
    tasks = [[case('x' * 100, status='AC') for _ in range(100)] for _ in range(100)]
    fitted = fit_tasks(tasks, 64 * 1024)
    assert all(c['stdout'] == c['stderr'] == '' and c['status'] == 'AC' for c in sum(fitted, []))
    assert fitted == without_outputs(tasks)


def test_report_lists_tasks_then_cases_in_order():
    results = [[CaseResult(Status.AC, stdout='00'),
                CaseResult(Status.WA, stdout='01')],
               [CaseResult(Status.TLE, exit_code=-9, exec_time_ms=3000, stdout='10')]]
    tasks = complete_body(results, 1 << 20).tasks
    assert [[case['stdout'] for case in cases] for cases in tasks] == [['00', '01'], ['10']]
    assert tasks[1][0] == {
        'status': 'TLE',
        'exitCode': -9,
        'execTime': 3000,
        'memoryUsage': 0,
        'stdout': '10',
        'stderr': '',
    }


def test_a_body_that_cannot_be_fitted_is_sent_whole(monkeypatch):
    import runner.backend.noj.outbound as outbound

    def broken(tasks, limit):
        raise RuntimeError('a bug in the fitting')

    monkeypatch.setattr(outbound, 'fit_tasks', broken)
    results = ((CaseResult(Status.AC, stdout='x' * 100), ), )
    assert complete_body(results, 16).tasks[0][0]['stdout'] == 'x' * 100
