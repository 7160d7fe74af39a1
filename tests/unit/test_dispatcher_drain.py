"""Dispatcher during a drain: the latch, drain_unstarted, wait_in_flight, and the
result being queued before the job leaves."""
import threading

from tests.unit.fake_sandbox import (COMPILE, GUARD_SEC, Completions, FakeSandbox, make_job,
                                     stop_and_join)


def statuses(tasks):
    return [[case.status.value for case in cases] for cases in tasks]


# The latch.


def test_after_the_latch_a_queued_unstarted_job_never_reaches_the_sandbox(make_dispatcher):
    fake = FakeSandbox()
    fake.hold('started', COMPILE)
    fake.hold('busy', COMPILE)
    dispatcher, completions = make_dispatcher(fake, max_workers=2)
    started = make_job('started', cases=(2, 1))
    waiting = make_job('waiting', cases=(2, ))

    # Both workers held in a compile; started's cases are parked behind its
    # compile (the second worker took them before taking busy's compile).
    dispatcher.handle(started)
    fake.wait_entered('started', COMPILE)
    dispatcher.handle(make_job('busy'))
    fake.wait_entered('busy', COMPILE)
    # Queued while no worker is free, so it is unstarted when the latch lands.
    dispatcher.handle(waiting)

    dispatcher.stop_accepting()
    fake.let_go('started', COMPILE)
    fake.let_go('busy', COMPILE)

    finished = dict(completions.next() for _ in range(2))
    # started's cases went back on the queue behind waiting's entries, so
    # waiting's entries were taken before started could complete.
    stop_and_join(dispatcher)
    assert {job.job_dir.name for job in finished} == {'started', 'busy'}
    assert statuses(finished[started]) == [['AC', 'AC'], ['AC']]
    assert 'waiting' not in fake.labels_called()
    assert dispatcher.drain_unstarted() == [waiting]


def test_a_job_handled_after_the_latch_never_starts_and_in_flight_ones_finish(make_dispatcher):
    fake = FakeSandbox()
    fake.hold('started', COMPILE)
    dispatcher, completions = make_dispatcher(fake, max_workers=2)
    started = make_job('started', cases=(3, ))
    dispatcher.handle(started)
    fake.wait_entered('started', COMPILE)
    # The probe completing proves the free worker has parked started's cases.
    probe = make_job('probe')
    dispatcher.handle(probe)
    assert completions.next()[0] is probe

    dispatcher.stop_accepting()
    late = make_job('late', cases=(2, ))
    dispatcher.handle(late)
    fake.let_go('started', COMPILE)

    done, tasks = completions.next()
    stop_and_join(dispatcher)
    assert done is started
    assert statuses(tasks) == [['AC', 'AC', 'AC']]
    assert 'late' not in fake.labels_called()
    assert dispatcher.drain_unstarted() == [late]


def test_drain_unstarted_removes_and_releases_only_jobs_that_never_started(make_dispatcher):
    fake = FakeSandbox()
    fake.hold('started', COMPILE)
    dispatcher, completions = make_dispatcher(fake)
    started = make_job('started', cases=(2, ))
    dispatcher.handle(started)
    fake.wait_entered('started', COMPILE)
    first, second = make_job('first'), make_job('second')
    dispatcher.handle(first)
    dispatcher.handle(second)
    dispatcher.stop_accepting()

    assert dispatcher.drain_unstarted() == [first, second]
    assert dispatcher.drain_unstarted() == []
    released = fake.released_keys()
    assert len(released) == 2
    assert fake.key_of('started') not in released

    fake.let_go('started', COMPILE)
    assert completions.next()[0] is started
    assert dispatcher.drain_unstarted() == []


def test_a_drained_generation_leaves_no_trace_for_the_next_claim(make_dispatcher):
    fake = FakeSandbox()
    dispatcher, completions = make_dispatcher(fake, start=False)
    drained = make_job('drained', job_id='jb_x')
    dispatcher.handle(drained)
    assert dispatcher.drain_unstarted() == [drained]

    # The same runner may claim the same job again right after the abort.
    assert dispatcher.handle(make_job('again', job_id='jb_x')) is False
    dispatcher.start()
    assert completions.next()[0].job_dir.name == 'again'
    assert fake.labels_called() == {'again'}


# wait_in_flight.


def test_wait_in_flight_ignores_jobs_that_never_started(make_dispatcher):
    dispatcher, _ = make_dispatcher(FakeSandbox(), start=False)
    dispatcher.handle(make_job('a'))
    assert dispatcher.wait_in_flight(0) is True


def test_wait_in_flight_blocks_until_the_started_job_completes(make_dispatcher):
    fake = FakeSandbox()
    fake.hold('a', (0, 1))
    dispatcher, completions = make_dispatcher(fake)
    dispatcher.handle(make_job('a', cases=(2, )))
    fake.wait_entered('a', (0, 1))
    assert dispatcher.wait_in_flight(0) is False

    waited = []
    waiter = threading.Thread(target=lambda: waited.append(
        (dispatcher.wait_in_flight(GUARD_SEC), completions.results.qsize())))
    waiter.start()
    fake.let_go('a', (0, 1))
    waiter.join(GUARD_SEC)
    assert waited == [(True, 1)]


def test_a_superseded_started_generation_is_no_longer_in_flight(make_dispatcher):
    fake = FakeSandbox()
    fake.hold('old', COMPILE)
    dispatcher, _ = make_dispatcher(fake)
    dispatcher.handle(make_job('old', job_id='jb_x'))
    fake.wait_entered('old', COMPILE)
    dispatcher.stop_accepting()
    assert dispatcher.wait_in_flight(0) is False

    # The poller releases the old claim; the new generation has not started.
    assert dispatcher.handle(make_job('new', job_id='jb_x')) is True
    assert dispatcher.wait_in_flight(0) is True
    fake.let_go('old', COMPILE)


# The result is queued before the job leaves the dispatcher.


def test_result_is_queued_before_release_as_seen_by_a_concurrent_drain(make_dispatcher):
    fake = FakeSandbox()
    results = Completions()
    seen = []
    dispatcher = None

    def drain_looks():
        # What main's drain relies on: "nothing in flight" implies "every
        # result is on the result queue".
        seen.append((dispatcher.wait_in_flight(0), results.results.qsize()))

    def on_complete(job, tasks):
        # A drain running right now, in another thread, before the put.
        drain = threading.Thread(target=drain_looks)
        drain.start()
        drain.join(GUARD_SEC)
        results(job, tasks)

    dispatcher, _ = make_dispatcher(fake, on_complete=on_complete)
    dispatcher.handle(make_job('a', cases=(2, )))
    # The sandbox release comes after the job has left the dispatcher.
    fake.wait_for(lambda f: len(f.released_keys()) == 1)
    drain_looks()

    assert seen[0] == (False, 0)
    assert seen[1] == (True, 1)
