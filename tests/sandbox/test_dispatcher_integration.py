"""A two-task C job judged end to end through the dispatcher and the real sandbox."""
import queue

import pytest

from dispatcher.dispatcher import Dispatcher
from dispatcher.job import Job, TaskMeta
from sandbox.languages import Language

SOURCE = b'''#include <stdio.h>
int main(void) {
    long a, b;
    if (scanf("%ld %ld", &a, &b) != 2) return 1;
    if (a < 0) for (;;) {}
    printf("%ld\\n", a + b);
    return 0;
}
'''


@pytest.mark.docker
def test_two_task_c_job(sandbox, tmp_path):
    (tmp_path / 'src').mkdir()
    (tmp_path / 'testdata').mkdir()
    (tmp_path / 'src' / 'main.c').write_bytes(SOURCE)
    cases = {
        '0000': (b'1 2\n', b'3\n'),  # AC
        '0001': (b'2 2\n', b'5\n'),  # WA
        '0100': (b'-1 0\n', b'0\n'),  # TLE
        '0101': (b'x\n', b'0\n'),  # RE
        '0102': (b'40 2\n', b'42\n'),  # AC
    }
    for name, (given, expected) in cases.items():
        (tmp_path / 'testdata' / f'{name}.in').write_bytes(given)
        (tmp_path / 'testdata' / f'{name}.out').write_bytes(expected)
    job = Job(job_id='jb_integration',
              submission_id='sub1',
              problem_id=1,
              language=Language.C,
              tasks=(TaskMeta(task_score=40, memory_limit_kb=65536, time_limit_ms=500,
                              case_count=2),
                     TaskMeta(task_score=60, memory_limit_kb=65536, time_limit_ms=500,
                              case_count=3)),
              job_dir=tmp_path)
    done = queue.Queue()
    dispatcher = Dispatcher(sandbox,
                            on_complete=lambda j, tasks: done.put((j, tasks)),
                            max_workers=2)
    dispatcher.start()
    try:
        assert dispatcher.handle(job) is False
        finished, tasks = done.get(timeout=120)
    finally:
        dispatcher.stop()
        dispatcher.join(30)
    assert finished is job
    assert [[case.status.value for case in task] for task in tasks] == [['AC', 'WA'],
                                                                        ['TLE', 'RE', 'AC']]
    assert tasks[0][0].stdout == '3\n' and tasks[1][1].exit_code == 1
    assert all(isinstance(c.exec_time_ms, int) and c.memory_kb > 0 for t in tasks for c in t)
