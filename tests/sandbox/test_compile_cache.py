"""A rejudge of an unchanged submission skips its compile: the second job with
the same build takes the cached program into its own fresh container and is
judged the same; a compile error is served from the cache too."""
import concurrent.futures
import logging
import threading
import uuid

import pytest

from sandbox.faults import Cancelled
from sandbox.job import CaseSpec, SandboxJob
from sandbox.languages import Language
from sandbox.results import Status

pytestmark = pytest.mark.docker

SOURCE = ('#include <stdio.h>\nint main(void){int a,b;scanf("%d %d",&a,&b);'
          'printf("%d\\n",a+b);return 0;}\n')


def job_of(tmp_path, source, name):
    src = tmp_path / name / 'src'
    src.mkdir(parents=True)
    (src / 'main.c').write_text(source)
    return SandboxJob(key=f'{name}-{uuid.uuid4()}', language=Language.C, source_dir=src)


def hits(caplog):
    return sum('compile cache hit' in r.getMessage() for r in caplog.records)


def test_the_second_compile_of_the_same_build_is_a_cache_hit(sandbox, tmp_path, caplog):
    (tmp_path / 'in').write_text('40 2\n')
    (tmp_path / 'out').write_text('42\n')
    case = CaseSpec(tmp_path / 'in', tmp_path / 'out', 1000, 65536)
    marker = f'// {uuid.uuid4()}\n'  # a build no earlier test made
    first, again = job_of(tmp_path, SOURCE + marker, 'first'), job_of(tmp_path, SOURCE + marker,
                                                                      'again')
    try:
        with caplog.at_level(logging.DEBUG, logger='sandbox.building'):
            assert sandbox.compile(first).ok
            assert hits(caplog) == 0
            assert sandbox.run_case(first, case).status is Status.AC
            sandbox.release(first.key)  # its containers and its program go
            assert sandbox.compile(again).ok
            assert hits(caplog) == 1
        assert sandbox.run_case(again, case).status is Status.AC
    finally:
        sandbox.release(first.key)
        sandbox.release(again.key)


def test_a_compile_error_is_served_from_the_cache_with_its_message(sandbox, tmp_path, caplog):
    broken = f'int main(void) {{ return {uuid.uuid4().hex[:8]}_undeclared; }}\n'
    jobs = [job_of(tmp_path, broken, name) for name in ('one', 'two')]
    try:
        with caplog.at_level(logging.DEBUG, logger='sandbox.building'):
            first, second = (sandbox.compile(job) for job in jobs)
        assert first.status is second.status is Status.CE
        assert second.message == first.message and 'undeclared' in first.message
        assert hits(caplog) == 1
    finally:
        for job in jobs:
            sandbox.release(job.key)


def test_jobs_that_want_one_build_at_once_compile_it_once(sandbox, tmp_path, caplog):
    # A class resubmitting one program at the end of an exam: without turns
    # every job would compile it beside the others, and none would hit.
    marker = f'// {uuid.uuid4()}\n'
    jobs = [job_of(tmp_path, SOURCE + marker, f'same-{n}') for n in range(4)]
    start = threading.Barrier(len(jobs))

    def compile_one(job):
        start.wait(timeout=60)
        return sandbox.compile(job)

    try:
        with caplog.at_level(logging.DEBUG, logger='sandbox.building'):
            with concurrent.futures.ThreadPoolExecutor(len(jobs)) as pool:
                results = list(pool.map(compile_one, jobs))
        assert all(result.ok for result in results)
        assert hits(caplog) == len(jobs) - 1
    finally:
        for job in jobs:
            sandbox.release(job.key)


# Evaluated by the compiler for seconds (here g++ gives up at its constexpr
# limit after about 7 s, a CE).
SLOW_BUILD = ('constexpr long spin() { long s = 0; for (long i = 0; i < 200000; ++i) '
              'for (long j = 0; j < 200000; ++j) s += i ^ j; return s; }\n'
              'static_assert(spin() != 0, "spun");\nint main() {}\n')


def test_a_job_waiting_for_the_compile_of_its_build_stops_at_its_cancel(sandbox, tmp_path):
    marker = f'// {uuid.uuid4()}\n'
    jobs = []
    for name in ('compiling', 'waiting'):
        src = tmp_path / name / 'src'
        src.mkdir(parents=True)
        (src / 'main.cpp').write_text(SLOW_BUILD + marker)
        jobs.append(SandboxJob(key=f'{name}-{uuid.uuid4()}', language=Language.CPP, source_dir=src))
    compiling_job, waiting_job = jobs
    # Observed inside: nothing public says that a job waits for a turn.
    turns = sandbox._builder._turns
    try:
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            first = pool.submit(sandbox.compile, compiling_job)
            assert turns.wait_for(lambda held, waiting: held == 1, 60)
            second = pool.submit(sandbox.compile, waiting_job)
            assert turns.wait_for(lambda held, waiting: waiting == 1, 60)
            sandbox.cancel(waiting_job.key)
            with pytest.raises(Cancelled):
                second.result(timeout=10)
            assert not first.done()
            sandbox.cancel(compiling_job.key)
            with pytest.raises(Cancelled):
                first.result(timeout=10)
    finally:
        for job in jobs:
            sandbox.release(job.key)
