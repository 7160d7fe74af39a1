"""A two-task C job judged end to end through the dispatcher and the real sandbox."""
import queue

import pytest

from dispatcher.dispatcher import Dispatcher
from dispatcher.job import Job, TaskMeta
from sandbox.languages import Language
from tests.sandbox.conftest import sandbox_of_its_own

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


PYTHON_SOURCE = b'''a, b = map(int, input().split())
if a < 0:
    while True:
        pass
print(a + b)
'''


@pytest.mark.docker
def test_jobs_whose_cases_follow_one_another_on_one_core_are_each_judged_right(
        docker_client, tmp_path):
    # One core and more workers than jobs: each job's cases follow one
    # another in its lane (sandbox/engine.py), sent before the one under
    # way has ended, a TLE's rerun on its own between them.
    jobs, expected = [], []
    for index, (language, source, name) in enumerate(
        ((Language.C, SOURCE, 'main.c'), (Language.PYTHON, PYTHON_SOURCE, 'main.py')) * 2):
        folder = tmp_path / f'job{index}'
        (folder / 'src').mkdir(parents=True)
        (folder / 'testdata').mkdir()
        (folder / 'src' / name).write_bytes(source)
        cases = [(b'1 2\n', b'3\n', 'AC'), (b'2 2\n', b'5\n', 'WA'), (b'40 2\n', b'42\n', 'AC'),
                 (b'-1 0\n', b'0\n', 'TLE'), (b'5 %d\n' % index, b'%d\n' % (5 + index), 'AC'),
                 (b'7 7\n', b'14\n', 'AC')]
        for case, (given, answer, _) in enumerate(cases):
            (folder / 'testdata' / f'00{case:02d}.in').write_bytes(given)
            (folder / 'testdata' / f'00{case:02d}.out').write_bytes(answer)
        jobs.append(
            Job(job_id=f'jb_lane{index}',
                submission_id=f'sub{index}',
                problem_id=1,
                language=language,
                tasks=(TaskMeta(task_score=100,
                                memory_limit_kb=65536,
                                time_limit_ms=300,
                                case_count=len(cases)), ),
                job_dir=folder))
        expected.append([[verdict for _, _, verdict in cases]])
    done = queue.Queue()
    with sandbox_of_its_own(docker_client, tmp_path / 'root', max_parallel_runs=1,
                            max_containers=4) as sandbox:
        dispatcher = Dispatcher(sandbox,
                                on_complete=lambda j, tasks: done.put((j.job_id, tasks)),
                                max_workers=8)
        dispatcher.start()
        try:
            for job in jobs:
                dispatcher.handle(job)
            finished = dict(done.get(timeout=240) for _ in jobs)
        finally:
            dispatcher.stop()
            dispatcher.join(30)
    for job, verdicts in zip(jobs, expected):
        tasks = finished[job.job_id]
        assert [[case.status.value for case in task] for task in tasks] == verdicts, job.job_id
        assert [case.stdout for case in tasks[0]][4] == f'{5 + int(job.job_id[-1])}\n'
