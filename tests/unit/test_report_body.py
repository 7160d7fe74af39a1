"""The complete body's bound: outputs shortened fairly, verdicts never cut."""
import json

from dispatcher.report import fit_report, without_outputs

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
    assert fit_report(tasks, 1 << 20) is tasks


def test_720_cases_of_control_bytes_fit_half_a_mebibyte():
    # 8 KiB of control bytes per stream: about 48 KiB each once escaped.
    tasks = [[case('\x01' * 8192, '\x02' * 8192) for _ in range(72)] for _ in range(10)]
    assert body_len(tasks) > 60 * 1024 * 1024
    fitted = fit_report(tasks, 512 * 1024)
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
    fitted = fit_report(tasks, 6000)
    assert body_len(fitted) <= 6000
    assert fitted[0][0]['stdout'] == 'short'
    assert len(fitted[0][1]['stdout']) == len(fitted[0][2]['stdout']) > 2000


def test_escapes_and_non_ascii_are_never_cut_in_the_middle():
    tasks = [[case('é\n\x00"' * 2000)]]
    fitted = fit_report(tasks, 1000)
    assert body_len(fitted) <= 1000
    assert tasks[0][0]['stdout'].startswith(fitted[0][0]['stdout'])


def test_too_many_cases_for_the_bound_keep_their_verdicts():
    tasks = [[case('x' * 100, status='AC') for _ in range(100)] for _ in range(100)]
    fitted = fit_report(tasks, 64 * 1024)
    assert all(c['stdout'] == c['stderr'] == '' and c['status'] == 'AC' for c in sum(fitted, []))
    assert fitted == without_outputs(tasks)
