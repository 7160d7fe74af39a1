"""Dispatcher parts on their own: job validation, the generation."""
import dataclasses
import pathlib

import pytest

from dispatcher.generation import Generation
from dispatcher.job import TaskMeta, check_job
from sandbox.results import CaseResult, CompileResult, Status
from tests.unit.fake_sandbox import make_job

GOOD = make_job('good', cases=(2, 1))


def with_task(**changes):
    return dataclasses.replace(GOOD,
                               tasks=(GOOD.tasks[0], dataclasses.replace(GOOD.tasks[1], **changes)))


def test_a_good_job_passes():
    check_job(GOOD)
    check_job(dataclasses.replace(GOOD, tasks=(TaskMeta(100, 1, 1, 100), ) * 100))


@pytest.mark.parametrize('bad, says', [
    ('jb_1', 'expected a Job'),
    (dataclasses.replace(GOOD, job_id=''), 'job_id'),
    (dataclasses.replace(GOOD, job_id=7), 'job_id'),
    (dataclasses.replace(GOOD, submission_id=b'6650'), 'submission_id'),
    (dataclasses.replace(GOOD, problem_id='7'), 'problem_id'),
    (dataclasses.replace(GOOD, problem_id=-1), 'problem_id'),
    (dataclasses.replace(GOOD, language=0), 'language'),
    (dataclasses.replace(GOOD, job_dir='/jobs/good'), 'job_dir'),
    (dataclasses.replace(GOOD, tasks=list(GOOD.tasks)), 'tuple'),
    (dataclasses.replace(GOOD, tasks=()), '1 to 100 tasks'),
    (dataclasses.replace(GOOD, tasks=GOOD.tasks * 51), '1 to 100 tasks'),
    (dataclasses.replace(GOOD, tasks=(GOOD.tasks[0], None)), 'task 1: expected a TaskMeta'),
    (with_task(case_count=0), 'task 1 case_count'),
    (with_task(case_count=101), 'task 1 case_count'),
    (with_task(case_count=2.0), 'task 1 case_count'),
    (with_task(time_limit_ms=0), 'task 1 time_limit_ms'),
    (with_task(memory_limit_kb=False), 'task 1 memory_limit_kb'),
    (with_task(task_score=-5), 'task 1 task_score'),
])
def test_a_bad_job_is_refused_with_a_clear_message(bad, says):
    with pytest.raises(ValueError, match=says):
        check_job(bad)


def test_each_generation_is_its_own():
    first, second = Generation(GOOD), Generation(GOOD)
    assert first.key != second.key
    assert first.sandbox_job.source_dir == pathlib.Path('/jobs/good/src')
    assert (first.job_id, first.submission_id) == ('jb_good', 'sub_good')
    assert first.case_results == [[None, None], [None]]
    assert (first.started, first.compile_result) == (False, None)


def test_context_is_complete_once_every_case_is_resolved():
    gen = Generation(GOOD)
    gen.resolve_case(0, 1, CaseResult(Status.AC))
    gen.resolve_case(0, 1, CaseResult(Status.AC))
    gen.resolve_case(1, 0, CaseResult(Status.AC))
    assert not gen.complete
    gen.resolve_case(0, 0, CaseResult(Status.WA))
    assert gen.complete


def test_failed_compile_resolves_every_case_with_its_message():
    gen = Generation(GOOD)
    gen.resolve_all_cases(CompileResult(Status.CE, 'boom'))
    assert gen.complete
    assert {(r.status, r.stderr)
            for cases in gen.case_results
            for r in cases} == {(Status.CE, 'boom')}


def test_sandbox_release_is_taken_once_and_only_when_nothing_runs():
    gen = Generation(GOOD)
    assert gen.take_sandbox_release() is None
    gen.running = 1
    gen.retire()
    assert gen.take_sandbox_release() is None
    gen.running = 0
    assert gen.take_sandbox_release() == gen.key
    assert gen.take_sandbox_release() is None
