"""Dispatcher: handle, generations, compile gating, verdict fallbacks, bound, lifecycle.

Every wait is on an event of the fake sandbox or of the result queue; GUARD_SEC
only turns a hang into a failure.
"""
import dataclasses
import logging
import pathlib
import queue
import threading

import pytest

from dispatcher.dispatcher import Dispatcher
from dispatcher.job import TaskMeta
from sandbox.languages import Language
from sandbox.results import CaseResult, CompileResult, Status
from sandbox.faults import FaultKind, HostFault
from tests.unit.fake_sandbox import (COMPILE, GUARD_SEC, Completions, FakeSandbox, make_job,
                                     ok_case, stop_and_join)


def statuses(tasks):
    return [[case.status.value for case in cases] for cases in tasks]


# A job: compile, then every case, reported in order.


def test_job_compiles_then_runs_every_case_and_reports_in_order(make_dispatcher):
    fake = FakeSandbox()
    dispatcher, completions = make_dispatcher(fake)
    job = make_job('a', cases=(2, 1))

    assert dispatcher.handle(job) is False

    done, tasks = completions.next()
    assert done is job
    assert tasks == ((ok_case('a', 0, 0), ok_case('a', 0, 1)), (ok_case('a', 1, 0), ))
    assert [c[:3] for c in fake.calls if c[0] in ('compile', 'run')] == [('compile', 'a', COMPILE),
                                                                         ('run', 'a', (0, 0)),
                                                                         ('run', 'a', (0, 1)),
                                                                         ('run', 'a', (1, 0))]


def test_sandbox_sees_one_key_per_generation_and_the_case_limits(make_dispatcher):
    fake = FakeSandbox()
    dispatcher, completions = make_dispatcher(fake)
    job = dataclasses.replace(make_job('a', cases=(1, )),
                              language=Language.PYTHON,
                              tasks=(TaskMeta(40, 1024, 300, 1), TaskMeta(60, 2048, 500, 1)))
    dispatcher.handle(job)
    completions.next()
    again = make_job('b', job_id=job.job_id)
    dispatcher.handle(again)
    completions.next()

    first, second = fake.sandbox_jobs
    assert (first.language, first.source_dir) == (Language.PYTHON, pathlib.Path('/jobs/a/src'))
    assert first.key != second.key
    assert [(s.input_path, s.answer_path, s.time_limit_ms, s.memory_limit_kb)
            for s in fake.specs[:2]] == [
                (job.input_path(0, 0), job.answer_path(0, 0), 300, 1024),
                (job.input_path(1, 0), job.answer_path(1, 0), 500, 2048),
            ]


def test_report_is_in_case_order_whatever_order_cases_finish_in(make_dispatcher):
    fake = FakeSandbox()
    fake.hold('a', (0, 0))
    fake.hold('a', (0, 1))
    dispatcher, completions = make_dispatcher(fake, max_workers=3)
    dispatcher.handle(make_job('a', cases=(3, )))

    fake.wait_entered('a', (0, 0))
    fake.wait_entered('a', (0, 1))
    fake.wait_for(lambda f: ('return', 'a', (0, 2)) in [c[:3] for c in f.calls])
    fake.let_go('a', (0, 1))
    fake.wait_for(lambda f: ('return', 'a', (0, 1)) in [c[:3] for c in f.calls])
    fake.let_go('a', (0, 0))

    _, tasks = completions.next()
    assert [case.stdout for case in tasks[0]] == ['a:0:0', 'a:0:1', 'a:0:2']


# handle() is atomic.

GOOD = make_job('good', cases=(2, 1), job_id='jb_x')


@pytest.mark.parametrize('bad', [
    dataclasses.replace(GOOD, tasks=(GOOD.tasks[0], TaskMeta(10, 65536, 1000, 0))),
    dataclasses.replace(GOOD, tasks=(GOOD.tasks[0], TaskMeta(10, 65536, 1000, 101))),
    dataclasses.replace(GOOD, tasks=(GOOD.tasks[0], TaskMeta(10, 65536, -1, 1))),
    dataclasses.replace(GOOD, tasks=(GOOD.tasks[0], TaskMeta(10, True, 1000, 1))),
    dataclasses.replace(GOOD, tasks=(GOOD.tasks[0], {
        'caseCount': 1
    })),
    dataclasses.replace(GOOD, tasks=[GOOD.tasks[0]]),
    dataclasses.replace(GOOD, tasks=()),
    dataclasses.replace(GOOD, language=2),
    dataclasses.replace(GOOD, submission_id=None),
    dataclasses.replace(GOOD, job_dir='/jobs/good'),
],
                         ids=[
                             'no-cases', 'too-many-cases', 'negative-time', 'bool-memory',
                             'raw-dict-task', 'tasks-list', 'no-tasks', 'raw-language',
                             'no-submission', 'str-dir'
                         ])
def test_invalid_job_raises_and_changes_nothing(make_dispatcher, bad):
    fake = FakeSandbox()
    dispatcher, completions = make_dispatcher(fake, start=False)
    live = make_job('live', job_id='jb_x')
    dispatcher.handle(live)

    with pytest.raises(ValueError):
        dispatcher.handle(bad)

    # The live generation of the same job_id is untouched and nothing of the
    # bad job was queued: only the live job ever reaches the sandbox.
    dispatcher.start()
    done, _ = completions.next()
    assert done is live
    stop_and_join(dispatcher)
    assert fake.labels_called() == {'live'}
    assert completions.results.empty()


def test_invalid_job_on_an_empty_dispatcher_leaves_it_empty(make_dispatcher):
    dispatcher, _ = make_dispatcher(FakeSandbox(), start=False)
    with pytest.raises(ValueError):
        dispatcher.handle(dataclasses.replace(GOOD, job_id=''))
    with pytest.raises(ValueError):
        dispatcher.handle('jb_x')
    assert dispatcher.drain_unstarted() == []
    assert dispatcher.wait_in_flight(0)


def test_a_job_and_its_tasks_are_queued_under_the_lock_that_publishes_it(monkeypatch):
    # An entry queued before its context is published could be taken and
    # dropped as stale, leaving the job in flight forever. Every put must
    # happen while the lock is held: a concurrent non-blocking wait_in_flight(0)
    # cannot get the lock then (with nothing started, it is True only when it
    # gets the lock).
    seen = []

    class WatchedQueue(queue.SimpleQueue):

        def put(self, item, block=True, timeout=None):
            look = threading.Thread(target=lambda: seen.append(dispatcher.wait_in_flight(0)))
            look.start()
            look.join(GUARD_SEC)
            super().put(item, block, timeout)

    monkeypatch.setattr(queue, 'SimpleQueue', WatchedQueue)
    dispatcher = Dispatcher(FakeSandbox(), Completions(), 1)
    dispatcher.handle(make_job('a', cases=(2, 1)))
    dispatcher.handle(make_job('b', job_id='jb_a'))

    assert seen == [False] * 6
    assert dispatcher.wait_in_flight(0) is True


# Generations: every entry carries its context; stale ones are dropped.

# (old shape, new shape): a stale entry standing in for the fresh generation
# would run a case twice, compile twice, or index a task the new one lacks.
SHAPES = [((2, ), (2, )), ((1, ), (2, )), ((2, ), (1, )), ((1, 1, 1), (3, )), ((1, 1, 3), (1, ))]


@pytest.mark.parametrize('old_shape, new_shape', SHAPES)
def test_stale_entries_queued_before_a_fresh_generation_are_dropped(make_dispatcher, old_shape,
                                                                    new_shape):
    fake = FakeSandbox()
    dispatcher, completions = make_dispatcher(fake, start=False)
    old = make_job('old', cases=old_shape, job_id='jb_x')
    new = make_job('new', cases=new_shape, job_id='jb_x')
    assert dispatcher.handle(old) is False
    assert dispatcher.handle(new) is True
    # Queued last: the workers are still alive and well after the stale ones.
    after = make_job('after')
    dispatcher.handle(after)

    dispatcher.start()
    done, tasks = completions.next()
    assert completions.next()[0] is after
    # One worker, FIFO: every entry was taken before `after` completed.
    stop_and_join(dispatcher)

    assert done is new
    assert statuses(tasks) == [['AC'] * count for count in new_shape]
    assert completions.results.empty()
    assert fake.labels_called() == {'new', 'after'}
    assert len(fake.calls_of('new', 'compile')) == 1
    expected_runs = [(task, case) for task, count in enumerate(new_shape) for case in range(count)]
    assert sorted(c[2] for c in fake.calls_of('new', 'run')) == expected_runs


def test_a_superseded_generations_compile_result_is_never_read(make_dispatcher):
    fake = FakeSandbox()
    fake.hold('old', (0, 0))
    fake.hold('old', (0, 1))
    fake.hold('new', COMPILE)
    fake.answer('new', COMPILE, CompileResult(Status.CE, 'new: syntax error'))
    dispatcher, completions = make_dispatcher(fake, max_workers=2)

    # The old generation compiled fine and both workers are in its cases.
    dispatcher.handle(make_job('old', cases=(2, ), job_id='jb_x'))
    fake.wait_entered('old', (0, 0))
    fake.wait_entered('old', (0, 1))
    assert dispatcher.handle(make_job('new', cases=(2, ), job_id='jb_x')) is True

    # One worker takes the new compile and holds it ...
    fake.let_go('old', (0, 0))
    fake.wait_entered('new', COMPILE)
    # ... the other takes the new cases, then a probe job queued behind them:
    # once the probe is compiled, the new cases have been dequeued.
    fake.let_go('old', (0, 1))
    probe = make_job('probe')
    dispatcher.handle(probe)
    assert completions.next()[0] is probe
    assert fake.calls_of('new', 'run') == []

    fake.let_go('new', COMPILE)
    done, tasks = completions.next()
    assert done.job_dir.name == 'new'
    assert statuses(tasks) == [['CE', 'CE']]
    assert fake.calls_of('new', 'run') == []


def test_superseding_a_running_generation_discards_it_and_releases_after_its_call(make_dispatcher):
    fake = FakeSandbox()
    fake.hold('old', (0, 0))
    dispatcher, completions = make_dispatcher(fake)
    dispatcher.handle(make_job('old', cases=(2, ), job_id='jb_x'))
    fake.wait_entered('old', (0, 0))
    old_key = fake.key_of('old')

    assert dispatcher.handle(make_job('new', cases=(2, ), job_id='jb_x')) is True
    # Its run is still going: releasing now could leave that sandbox behind.
    assert old_key not in fake.released_keys()

    fake.let_go('old', (0, 0))
    done, tasks = completions.next()
    assert done.job_dir.name == 'new'
    assert statuses(tasks) == [['AC', 'AC']]
    stop_and_join(dispatcher)
    assert completions.results.empty()
    assert fake.calls_of('old', 'run') == [('run', 'old', (0, 0), old_key)]
    order = [c[0] for c in fake.calls if c[3] == old_key]
    assert order == ['compile', 'return', 'run', 'return', 'release']


def test_superseding_an_unstarted_generation_releases_it_at_once(make_dispatcher):
    fake = FakeSandbox()
    dispatcher, _ = make_dispatcher(fake, start=False)
    dispatcher.handle(make_job('old', job_id='jb_x'))
    assert fake.released_keys() == []
    assert dispatcher.handle(make_job('new', job_id='jb_x')) is True
    assert len(fake.released_keys()) == 1


def test_handle_reports_no_supersede_once_the_older_generation_is_gone(make_dispatcher):
    fake = FakeSandbox()
    dispatcher, completions = make_dispatcher(fake)
    dispatcher.handle(make_job('first', job_id='jb_x'))
    completions.next()
    assert dispatcher.handle(make_job('second', job_id='jb_x')) is False
    completions.next()


# Cases wait for their own generation's compile.


def test_cases_wait_for_their_compile_without_holding_a_worker(make_dispatcher):
    fake = FakeSandbox()
    fake.hold('a', COMPILE)
    dispatcher, completions = make_dispatcher(fake, max_workers=2)
    dispatcher.handle(make_job('a', cases=(2, )))
    fake.wait_entered('a', COMPILE)

    # The free worker takes a's cases, then this probe: the probe completing
    # proves a's cases were dequeued, and that they did not hold the worker.
    probe = make_job('probe')
    dispatcher.handle(probe)
    assert completions.next()[0] is probe
    assert fake.calls_of('a', 'run') == []

    fake.let_go('a', COMPILE)
    done, tasks = completions.next()
    assert done.job_dir.name == 'a'
    assert statuses(tasks) == [['AC', 'AC']]
    a_calls = [c[0] for c in fake.calls if c[1] == 'a']
    assert a_calls[:2] == ['compile', 'return']


# Verdict fallbacks: CE fans out, any sandbox exception is JE.


@pytest.mark.parametrize('language', list(Language))
def test_failed_compile_fans_out_to_every_case(make_dispatcher, language):
    fake = FakeSandbox()
    fake.answer('a', COMPILE, CompileResult(Status.CE, 'main:1: error'))
    dispatcher, completions = make_dispatcher(fake)
    dispatcher.handle(dataclasses.replace(make_job('a', cases=(2, 1)), language=language))

    _, tasks = completions.next()
    assert statuses(tasks) == [['CE', 'CE'], ['CE']]
    assert {case.stderr for cases in tasks for case in cases} == {'main:1: error'}
    assert fake.calls_of('a', 'compile') != []
    assert fake.calls_of('a', 'run') == []


@pytest.mark.parametrize(
    'failure', [RuntimeError('docker down'),
                CompileResult(Status.WA),
                CaseResult(Status.AC)],
    ids=['raises', 'not-a-compile-status', 'wrong-type'])
def test_compile_failing_in_the_judge_is_je_for_every_case(make_dispatcher, failure):
    fake = FakeSandbox()
    fake.answer('a', COMPILE, failure)
    dispatcher, completions = make_dispatcher(fake)
    dispatcher.handle(make_job('a', cases=(2, )))

    _, tasks = completions.next()
    assert statuses(tasks) == [['JE', 'JE']]
    assert fake.calls_of('a', 'run') == []


@pytest.mark.parametrize(
    'failure',
    [OSError('container vanished'), CompileResult(Status.AC)],
    ids=['raises', 'wrong-type'])
def test_case_failing_in_the_judge_is_je_for_that_case(make_dispatcher, failure):
    fake = FakeSandbox()
    fake.answer('a', (0, 1), failure)
    dispatcher, completions = make_dispatcher(fake)
    dispatcher.handle(make_job('a', cases=(3, )))

    _, tasks = completions.next()
    assert statuses(tasks) == [['AC', 'JE', 'AC']]
    assert 'container vanished' not in tasks[0][1].stderr


# The concurrency bound.


def test_sandbox_calls_never_exceed_max_workers(make_dispatcher):
    max_workers = 3
    fake = FakeSandbox(hold_all_cases=True)
    dispatcher, completions = make_dispatcher(fake, max_workers=max_workers)
    jobs = [make_job(f'j{index}', cases=(2, 1)) for index in range(12)]
    total_cases = 3 * len(jobs)
    for job in jobs:
        dispatcher.handle(job)

    # Let the held cases go only when the workers are all busy (or the work is
    # running out), so the bound is pushed against on every round.
    while fake.case_calls_returned < total_cases:
        fake.wait_for(lambda f: f.held_count >= max_workers or
                      (f.case_calls_entered == total_cases and f.held_count > 0
                       ) or f.case_calls_returned == total_cases)
        fake.let_go_held()

    assert {completions.next()[0].job_id for _ in jobs} == {job.job_id for job in jobs}
    assert fake.max_in_flight == max_workers
    assert len(fake.calling_threads) <= max_workers


def test_max_workers_must_be_a_positive_int():
    for bad in (0, -1, 1.5, True, None):
        with pytest.raises(ValueError):
            Dispatcher(FakeSandbox(), Completions(), bad)


# Lifecycle: daemon workers, blocking run loop, prompt stop.


def test_workers_are_daemon_threads(make_dispatcher):
    before = set(threading.enumerate())
    make_dispatcher(FakeSandbox(), max_workers=3)
    owned = set(threading.enumerate()) - before
    assert len(owned) == 3
    assert all(thread.daemon for thread in owned)


def test_idle_dispatcher_stops_promptly(make_dispatcher):
    before = set(threading.enumerate())
    dispatcher, _ = make_dispatcher(FakeSandbox(), max_workers=4)
    owned = set(threading.enumerate()) - before
    dispatcher.stop()
    dispatcher.join(GUARD_SEC)
    assert not any(thread.is_alive() for thread in owned)


def test_stop_leaves_queued_work_alone(make_dispatcher):
    fake = FakeSandbox()
    fake.hold('a', COMPILE)
    dispatcher, completions = make_dispatcher(fake)
    dispatcher.handle(make_job('a', cases=(2, )))
    fake.wait_entered('a', COMPILE)
    dispatcher.handle(make_job('b'))

    dispatcher.stop()
    fake.let_go('a', COMPILE)
    dispatcher.join(GUARD_SEC)

    assert fake.labels_called() == {'a'}
    assert fake.calls_of('a', 'run') == []
    assert completions.results.empty()


def test_start_twice_is_refused(make_dispatcher):
    dispatcher, _ = make_dispatcher(FakeSandbox())
    with pytest.raises(RuntimeError):
        dispatcher.start()


# Releasing a generation's sandbox.


def test_completed_generation_is_released_after_its_result_is_handed_over(make_dispatcher):
    fake = FakeSandbox()
    order = []
    completions = Completions()

    def on_complete(job, tasks):
        order.append(('complete', list(fake.released_keys())))
        completions(job, tasks)

    dispatcher, _ = make_dispatcher(fake, on_complete=on_complete)
    dispatcher.handle(make_job('a', cases=(2, )))
    completions.next()
    key = fake.key_of('a')
    fake.wait_for(lambda f: key in f.released_keys())
    assert order == [('complete', [])]
    assert fake.released_keys() == [key]


def test_release_errors_are_logged_never_raised(make_dispatcher, caplog):
    fake = FakeSandbox()
    fake.release_error = RuntimeError('docker rm failed')
    dispatcher, completions = make_dispatcher(fake, start=False)
    dispatcher.handle(make_job('old', job_id='jb_x'))
    with caplog.at_level(logging.ERROR):
        assert dispatcher.handle(make_job('new', job_id='jb_x')) is True
        dispatcher.handle(make_job('b'))
        dispatcher.start()
        assert completions.next()[0].job_dir.name == 'new'
        assert completions.next()[0].job_dir.name == 'b'
        fake.wait_for(lambda f: len(f.released_keys()) == 3)
        stop_and_join(dispatcher)
    assert sum('release' in record.getMessage() for record in caplog.records) == 3


def test_on_complete_failure_is_logged_and_the_job_leaves(make_dispatcher, caplog):
    fake = FakeSandbox()

    def on_complete(job, tasks):
        raise RuntimeError('result queue broken')

    dispatcher, _ = make_dispatcher(fake, on_complete=on_complete)
    with caplog.at_level(logging.ERROR):
        dispatcher.handle(make_job('a'))
        # Released only after the job has left the dispatcher.
        fake.wait_for(lambda f: len(f.released_keys()) == 1)
    assert dispatcher.wait_in_flight(0)
    assert any('on_complete failed' in record.getMessage() for record in caplog.records)


def test_a_superseded_generation_is_handed_over_for_cleanup_after_its_last_call():
    fake = FakeSandbox()
    fake.hold('old', (0, 0))
    retired = []
    dispatcher = Dispatcher(fake, Completions(), 1, on_superseded=retired.append)
    dispatcher.start()
    try:
        dispatcher.handle(make_job('old', cases=(2, ), job_id='jb_x'))
        fake.wait_entered('old', (0, 0))
        dispatcher.handle(make_job('new', cases=(2, ), job_id='jb_x'))
        # Its case is still running in the old folder: not yet.
        assert retired == []
        fake.let_go('old', (0, 0))
        fake.wait_for(lambda f: f.calls_of('new', 'run'))
    finally:
        stop_and_join(dispatcher)
    assert [job.job_dir.name for job in retired] == ['old']


# A fault of the host: the job goes back unjudged, never with a verdict.


class Abandoned:
    """`on_abandon` and `on_host_fault`: what went back, and what was said."""

    def __init__(self, dispatcher_of):
        self.jobs = queue.Queue()
        self.faults = []
        self.locked_at_abandon = []
        self._dispatcher_of = dispatcher_of

    def on_abandon(self, job, fault):
        self.locked_at_abandon.append(self._dispatcher_of()._lock._is_owned())
        self.jobs.put((job, fault))

    def on_host_fault(self, fault):
        self.faults.append(fault)


def abandoning_dispatcher(fake, max_workers=1):
    completions = Completions()
    holder = {}
    abandoned = Abandoned(lambda: holder['dispatcher'])
    dispatcher = Dispatcher(fake,
                            completions,
                            max_workers,
                            on_abandon=abandoned.on_abandon,
                            on_host_fault=abandoned.on_host_fault)
    holder['dispatcher'] = dispatcher
    dispatcher.start()
    return dispatcher, completions, abandoned


@pytest.mark.parametrize('stage', [COMPILE, (0, 1)])
def test_a_host_fault_hands_the_job_back_with_no_verdict(stage):
    fault = HostFault(FaultKind.ENGINE, 'sandboxes cannot start')
    fake = FakeSandbox()
    fake.answer('a', stage, fault)
    dispatcher, completions, abandoned = abandoning_dispatcher(fake)
    try:
        dispatcher.handle(make_job('a', cases=(3, )))
        job, told = abandoned.jobs.get(timeout=GUARD_SEC)
        assert job.job_id == 'jb_a' and told is fault
        assert abandoned.locked_at_abandon == [True]  # handed over before the job leaves
        assert dispatcher.wait_in_flight(GUARD_SEC)
        fake.wait_for(lambda f: f.released_keys())
        assert abandoned.faults == [fault]
        assert completions.results.empty()  # no complete, no JE: nothing was judged
    finally:
        stop_and_join(dispatcher)
    assert not any(c[0] == 'run' and c[2] == (0, 2) for c in fake.calls)


def test_a_limit_the_host_cannot_give_is_refused_before_anything_is_published():
    fault = HostFault(FaultKind.MEMORY, 'SANDBOX_MEMORY_MB=1536 cannot hold ...')

    class Small(FakeSandbox):

        def check_limits(self, memory_limit_kb):
            if memory_limit_kb > 65536:
                raise fault

    fake = Small()
    dispatcher, completions, abandoned = abandoning_dispatcher(fake)
    try:
        big = dataclasses.replace(make_job('big'), tasks=(TaskMeta(100, 65537, 1000, 1), ))
        with pytest.raises(HostFault):
            dispatcher.handle(big)
        assert dispatcher.drain_unstarted() == []
        assert fake.calls == []
    finally:
        stop_and_join(dispatcher)


def test_a_host_fault_is_said_before_the_generation_is_released():
    order = []
    fault = HostFault(FaultKind.ENGINE, 'sandboxes cannot start')

    class Ordered(FakeSandbox):

        def release(self, job_key):
            order.append('release')
            super().release(job_key)

    fake = Ordered()
    fake.answer('a', COMPILE, fault)
    dispatcher = Dispatcher(fake,
                            Completions(),
                            1,
                            on_abandon=lambda job, fault: None,
                            on_host_fault=lambda fault: order.append('fault'))
    dispatcher.start()
    try:
        dispatcher.handle(make_job('a'))
        fake.wait_for(lambda f: f.released_keys())
    finally:
        stop_and_join(dispatcher)
    assert order == ['fault', 'release']


def test_drain_unstarted_hands_each_job_back_under_the_lock(make_dispatcher):
    dispatcher, _ = make_dispatcher(FakeSandbox(), start=False)
    dispatcher.handle(make_job('a'))
    locked = []
    jobs = dispatcher.drain_unstarted(lambda job: locked.append(dispatcher._lock._is_owned()))
    assert [job.job_id for job in jobs] == ['jb_a'] and locked == [True]


def test_a_paused_dispatcher_starts_nothing_until_it_resumes(make_dispatcher):
    fake = FakeSandbox()
    fake.hold('busy', COMPILE)
    dispatcher, completions = make_dispatcher(fake)
    dispatcher.handle(make_job('busy'))
    fake.wait_entered('busy', COMPILE)
    dispatcher.handle(make_job('waiting'))  # queued while the one worker is busy
    dispatcher.pause()
    fake.let_go('busy', COMPILE)
    # busy's case went back on the queue behind waiting's compile, so the
    # worker took waiting's compile (and held it back) before busy completed.
    job, _ = completions.next()
    assert job.job_id == 'jb_busy'
    assert 'waiting' not in fake.labels_called()
    dispatcher.resume()
    job, tasks = completions.next()
    assert job.job_id == 'jb_waiting' and statuses(tasks) == [['AC']]


def test_a_cancelled_job_stops_at_once_and_is_never_reported(make_dispatcher):
    fake = FakeSandbox()
    fake.hold('a', (0, 0))
    dispatcher, completions = make_dispatcher(fake)
    job = make_job('a', cases=(3, ))
    dispatcher.handle(job)
    fake.wait_entered('a', (0, 0))
    key = fake.key_of('a')

    assert dispatcher.cancel(make_job('a', cases=(3, ))) is False  # not that generation
    assert dispatcher.cancel(job) is True
    # The sandbox is told while the run is still going (that is what stops
    # it); released only once the call has come back.
    assert [c[0] for c in fake.calls if c[3] == key][-1] == 'cancel'
    assert key not in fake.released_keys()
    fake.let_go('a', (0, 0))
    fake.wait_for(lambda f: key in f.released_keys())
    stop_and_join(dispatcher)
    assert completions.results.empty()
    assert fake.calls_of('a', 'run') == [('run', 'a', (0, 0), key)]  # nothing more of it ran
    assert dispatcher.cancel(job) is False
