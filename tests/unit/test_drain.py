"""The drain's order and its single deadline, with fakes on a fake clock."""
import pathlib

import pytest

from dispatcher.job import Job, TaskMeta
from runner.backend.noj.outbound import AbortReason
from runner.drain import POLLER_SHARE_SEC, drain
from runner.backend.noj.reports import AbortReport
from sandbox.languages import Language

BUDGET = 100.0


class Clock:
    """Each read advances a little, as real time does between calls."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        self.now += 0.01
        return self.now


def job(n):
    return Job(job_id=f'jb_{n}',
               submission_id=f's{n}',
               problem_id=1,
               language=Language.C,
               tasks=(TaskMeta(100, 65536, 1000, 1), ),
               job_dir=pathlib.Path(f'/nowhere/{n}'))


class World:
    """Fakes of every part, writing one shared log. `spend` makes a wait use up
    what it was granted (a stuck part)."""

    def __init__(self, clock, unstarted=((), ()), spend=()):
        self.clock = clock
        self.log = []
        self.grants = {}
        self.unstarted = list(unstarted)
        self.spend = set(spend)
        self.claims = 0

    def waited(self, name, timeout, done=True):
        self.log.append(name)
        self.grants[name] = timeout
        if name in self.spend:
            self.clock.now += timeout
            return False
        return done

    # dispatcher
    def stop_accepting(self):
        self.log.append('latch')

    def drain_unstarted(self, hand_back):
        self.log.append('scan')
        jobs = list(self.unstarted.pop(0)) if self.unstarted else []
        for job in jobs:
            hand_back(job)
        return jobs

    def wait_in_flight(self, timeout):
        return self.waited('wait_in_flight', timeout)

    def submit(self, report):
        self.log.append(('submit', report))


class Part:

    def __init__(self, world, name):
        self.world = world
        self.name = name

    def stop(self):
        self.world.log.append(f'{self.name}.stop')

    def join(self, timeout=None):
        return self.world.waited(f'{self.name}.join', timeout)


class Dispatcher(Part):

    def __init__(self, world):
        super().__init__(world, 'dispatcher')

    def __getattr__(self, name):
        return getattr(self.world, name)


def run(world, budget=BUDGET, poller=None, sender=None):
    """The drain over the world's fakes; `poller`/`sender` replace theirs."""
    sender = sender or Part(world, 'sender')
    sender.submit = world.submit
    if not hasattr(sender, 'given_up'):
        sender.given_up = 0
    return drain(dispatcher=Dispatcher(world),
                 poller=poller or Part(world, 'poller'),
                 sender=sender,
                 heartbeat=Part(world, 'heartbeat'),
                 claims=lambda: world.claims,
                 budget_sec=budget,
                 hand_back=lambda job: sender.submit(AbortReport.for_job(job, AbortReason.DRAIN)),
                 clock=world.clock)


def test_steps_run_in_the_spec_order():
    world = World(Clock(), unstarted=([job(1)], [job(2)]))
    outcome = run(world)
    assert world.log == [
        'latch',
        'poller.stop',
        'poller.join',
        'scan',
        ('submit', AbortReport.for_job(job(1), AbortReason.DRAIN)),
        'wait_in_flight',
        'scan',
        ('submit', AbortReport.for_job(job(2), AbortReason.DRAIN)),
        'poller.join',  # is it done? (yes: no second wait, no third scan)
        'dispatcher.stop',
        'dispatcher.join',
        'sender.stop',
        'sender.join',
        'heartbeat.stop',
        'heartbeat.join',
    ]
    assert outcome.clean and outcome.aborted == 2


def test_every_wait_draws_on_one_deadline():
    world = World(Clock())
    run(world)
    g = world.grants
    assert g['poller.join'] <= POLLER_SHARE_SEC and g['dispatcher.join'] <= 5
    # The in-flight wait keeps the reporting reserve back.
    assert g['wait_in_flight'] < BUDGET - 0.2 * BUDGET
    # Each later wait gets what remains of the one budget: strictly less than
    # the wait before it, never a fresh budget.
    assert g['sender.join'] < BUDGET
    assert g['heartbeat.join'] < g['sender.join']


def test_waits_that_use_their_whole_grant_cannot_push_past_the_deadline():
    world = World(Clock(), spend={'poller.join', 'wait_in_flight', 'dispatcher.join'})
    outcome = run(world)
    # A stuck poller and stuck jobs leave the reporting reserve intact.
    assert world.grants['sender.join'] >= 0.2 * BUDGET - 0.5
    assert world.grants['sender.join'] > 0
    assert not outcome.clean and not outcome.in_flight_finished
    assert world.clock.now <= BUDGET + 1


def test_a_stuck_sender_spends_only_what_remains():
    world = World(Clock(), spend={'sender.join'})
    outcome = run(world)
    assert world.grants['heartbeat.join'] == pytest.approx(0, abs=0.1)
    assert not outcome.reports_flushed and not outcome.clean


def test_claims_left_after_reporting_make_the_drain_unclean():
    world = World(Clock())
    world.claims = 1
    assert not run(world).clean


def test_a_report_given_up_during_the_drain_makes_it_unclean():
    world = World(Clock())

    class GivingUp(Part):
        given_up = 0

        def join(self, timeout=None):
            GivingUp.given_up = 1  # an abort(drain) exhausted its retries
            return super().join(timeout)

    outcome = run(world, sender=GivingUp(world, 'sender'))
    assert outcome.reports_given_up == 1 and not outcome.clean


def test_a_poller_busy_past_its_share_is_joined_again_before_the_sender_stops():
    world = World(Clock(), unstarted=([], [], [job(3)]))

    class SlowPoller(Part):
        joins = 0

        def join(self, timeout=None):
            SlowPoller.joins += 1
            self.world.log.append(f'poller.join {SlowPoller.joins}')
            return SlowPoller.joins >= 3  # its share, the check, then done

    run(world, poller=SlowPoller(world, 'poller'))
    late_abort = ('submit', AbortReport.for_job(job(3), AbortReason.DRAIN))
    assert world.log.index('poller.join 3') < world.log.index(late_abort)
    assert world.log.index(late_abort) < world.log.index('sender.stop')


def test_progress_says_where_the_drain_stands(caplog):
    import logging

    from runner import metrics
    from runner.drain import Deadline, DrainProgress

    class Dispatching:

        def jobs_started(self):
            return 3

    class Sending:

        def queued(self):
            return 2

    clock = Clock()
    progress = DrainProgress(Dispatching(), Sending(), lambda: 5, Deadline(BUDGET, clock), clock)
    with caplog.at_level(logging.INFO, logger='runner.drain'):
        progress.report()
    assert '3 job(s) running, 2 report(s) queued, 5 claim(s) held' in caplog.text
    assert metrics.DRAIN_LEFT._value.get() == 5 and metrics.DRAIN_SECONDS._value.get() > 0


def test_the_drain_leaves_its_gauges_as_it_ended():
    from runner import metrics
    world = World(Clock())
    world.claims = 1
    run(world)
    assert metrics.DRAIN_LEFT._value.get() == 1


def test_started_jobs_past_the_deadline_are_handed_back_when_the_protocol_can():
    world = World(Clock(), spend={'wait_in_flight'})
    given_up = []

    def give_up_unfinished():
        world.log.append('give up')
        world.spend.discard('wait_in_flight')  # stopped: nothing is in flight now
        given_up.append(1)
        return 1

    sender = Part(world, 'sender')
    sender.submit = world.submit
    sender.given_up = 0
    outcome = drain(dispatcher=Dispatcher(world),
                    poller=Part(world, 'poller'),
                    sender=sender,
                    heartbeat=Part(world, 'heartbeat'),
                    claims=lambda: world.claims,
                    budget_sec=BUDGET,
                    hand_back=world.submit,
                    give_up_unfinished=give_up_unfinished,
                    clock=world.clock)
    assert given_up == [1]
    assert world.log.index('give up') < world.log.index('sender.stop')  # its releases flushed
    assert outcome.in_flight_finished and outcome.clean
    # The look after the give-up may wait for the dispatcher's lock (a worker
    # ending a step holds it a moment): with 0 it took that for a running job.
    assert world.grants['wait_in_flight'] > 0


class FlushingSender(Part):
    """A flush needs a moment: a join of 0 right after its stop finds its
    threads still alive (as WorkerThreads' does)."""

    given_up = 0

    def join(self, timeout=None):
        self.world.log.append('sender.join')
        self.world.grants['sender.join'] = timeout
        return timeout is None or timeout > 0


def test_a_poller_holding_a_long_poll_past_every_grant_leaves_the_reporting_reserve():
    # A backend that does not end a hung-up long poll: the poller is still
    # reading it at every join. A small budget (under the poller's share)
    # still leaves the sender its reserve: an idle runner drains clean.
    world = World(Clock(), spend={'poller.join'})
    outcome = run(world, budget=1.0, sender=FlushingSender(world, 'sender'))
    assert world.claims == 0
    assert outcome.clean, (outcome, world.grants)
    assert world.grants['sender.join'] > 0
