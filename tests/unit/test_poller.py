import logging
import pathlib
import threading

import pytest

from dispatcher.job import Job, TaskMeta
from runner.active_jobs import ActiveJobs
from runner.backend.noj.client import ProtocolError, TransportError, UnexpectedStatus
from runner.backend.noj.inbound import BadClaim, JobPayload
from runner.backend.noj.outbound import AbortReason
from runner.backend.noj.poller import Poller
from runner.backend.noj.reports import AbortReport
from sandbox.languages import Language
from sandbox.faults import FaultKind, HostFault
from tests.unit.fakes import FakeTime, NoJitter

JOIN_GUARD_SEC = 60  # only guards against a hang; nothing asserts on time
POLL_SEC = 3


def payload(job_id='jb_1'):
    return JobPayload(job_id=job_id,
                      submission_id='sub',
                      problem_id=7,
                      language=Language.C,
                      tasks=(TaskMeta(100, 1024, 1000, 1), ),
                      code_url='https://store/code.zip?sig=s')


def job_for(claim):
    return Job(claim.job_id, claim.submission_id, claim.problem_id, claim.language, claim.tasks,
               pathlib.Path(f'/jobs/{claim.job_id}.gen'))


class FakeClient:

    def __init__(self, *answers, duration=0.0, time=None):
        self.answers = list(answers)
        self.calls = []
        self.duration = duration
        self.time = time
        self.interrupted = False

    def interrupt(self):
        self.interrupted = True

    def sandbox_token_refusal(self):
        return None

    def next_job(self, wait_sec=0):
        self.calls.append(wait_sec)
        if self.time:
            self.time.now += self.duration
        answer = self.answers.pop(0) if self.answers else None
        if isinstance(answer, BaseException):
            raise answer
        return answer


class FakePreparer:
    """`script` holds, per attempt, an exception to raise or None to succeed;
    `during` is called at the start of each attempt with the attempt number."""

    def __init__(self, tracker, script=(None, ), during=None):
        self.tracker = tracker
        self.script = list(script)
        self.during = during
        self.attempts = 0
        self.tracked_at_prep = []

    def prepare(self, claim, stop):
        self.attempts += 1
        self.tracked_at_prep.append((claim.job_id in self.tracker.snapshot(), len(self.tracker)))
        if self.during:
            self.during(self.attempts)
        outcome = self.script.pop(0) if self.script else None
        if outcome is not None:
            raise outcome
        return job_for(claim)


class FakeDispatcher:

    def __init__(self, result=False, memory_kb=None):
        self.result = result
        self.handled = []
        self.memory_kb = memory_kb  # the most a case may have, when limited

    def check_limits(self, memory_limit_kb):
        if self.memory_kb is not None and memory_limit_kb > self.memory_kb:
            raise HostFault(FaultKind.MEMORY, 'SANDBOX_MEMORY_MB=1536 cannot hold it')

    def handle(self, job):
        self.handled.append(job)
        if isinstance(self.result, BaseException):
            raise self.result
        return self.result


class FakeSender:

    def __init__(self):
        self.reports = []

    def submit(self, report):
        self.reports.append(report)


class Inline:
    """Runs each preparation at once in the poller's thread, so that a test
    driving poll_once() sees it through."""

    def start(self):
        pass

    def submit(self, task):
        task()

    def offer(self, task):
        return False  # no claim beside the poll loop: a test drives each one

    def stop(self):
        pass

    def join(self, timeout=None):
        return True


class Rig:

    def __init__(self,
                 *answers,
                 script=(None, ),
                 during=None,
                 dispatch=False,
                 max_jobs=2,
                 duration=0.0,
                 long_poll=0):
        self.time = FakeTime()
        self.tracker = ActiveJobs()
        self.client = FakeClient(*answers, duration=duration, time=self.time)
        self.preparer = FakePreparer(self.tracker, script, during)
        self.dispatcher = FakeDispatcher(dispatch)
        self.sender = FakeSender()
        self.poller = Poller(self.client,
                             self.tracker,
                             self.preparer,
                             self.dispatcher,
                             self.sender,
                             max_concurrent_jobs=max_jobs,
                             poll_interval_sec=POLL_SEC,
                             long_poll_sec=long_poll,
                             workers=Inline(),
                             clock=self.time.clock,
                             wait=self.time.wait,
                             rng=NoJitter())

    def stop(self):
        self.poller.stop()


def test_claims_only_below_capacity():
    rig = Rig(payload(), max_jobs=2)
    rig.tracker.add('jb_a')
    rig.tracker.add('jb_b')
    rig.poller.poll_once()
    assert rig.client.calls == []
    assert rig.time.waits == [POLL_SEC]
    rig.tracker.remove('jb_a')
    rig.poller.poll_once()
    assert len(rig.client.calls) == 1
    assert [job.job_id for job in rig.dispatcher.handled] == ['jb_1']


def test_204_waits_the_poll_interval():
    rig = Rig(None)
    rig.poller.poll_once()
    assert rig.time.waits == [POLL_SEC]
    assert len(rig.tracker) == 0
    assert rig.sender.reports == []


def test_long_poll_asks_to_wait_and_does_not_wait_again():
    rig = Rig(None, long_poll=25, duration=25)
    rig.poller.poll_once()
    assert rig.client.calls == [25]
    assert rig.time.waits == []


def test_backend_ignoring_the_long_poll_falls_back_to_the_poll_interval():
    rig = Rig(None, long_poll=25, duration=1)
    rig.poller.poll_once()
    assert rig.time.waits == [POLL_SEC - 1]


@pytest.mark.parametrize('error, wait', [(TransportError('down'), 1),
                                         (UnexpectedStatus('GET', 503), 1),
                                         (ProtocolError('no job_id'), POLL_SEC)])
def test_next_job_failure_waits_and_claims_nothing(error, wait):
    rig = Rig(error)
    rig.poller.poll_once()
    assert rig.time.waits == [wait]
    assert len(rig.tracker) == 0
    assert rig.sender.reports == []


def test_an_outage_backs_off_and_is_said_when_it_starts_and_ends(caplog):
    rig = Rig(*[TransportError('GET next-job: connection refused (ConnectionError)')] * 8, None)
    with caplog.at_level(logging.INFO, logger='runner.backend.noj.poller'):
        for _ in range(9):
            rig.poller.poll_once()
    assert rig.time.waits[:8] == [1, 2, 4, 8, 16, 30, 30, 30]
    said = [r.getMessage() for r in caplog.records]
    assert len([m for m in said if 'does not answer' in m]) == 1
    assert 'connection refused' in said[0]
    assert said[-1] == 'the backend answers again (after 8 failed polls)'


def test_a_poll_cut_short_by_stop_says_nothing(caplog):
    rig = Rig(TransportError('GET next-job: connection failed (ConnectionError)'))
    rig.stop()
    with caplog.at_level(logging.INFO, logger='runner.backend.noj.poller'):
        rig.poller.poll_once()
    assert caplog.records == []


# -- host faults ------------------------------------------------------------------


class FakeHealth:

    def __init__(self, healthy=True):
        self.healthy = healthy
        self.reports = []

    def report(self, fault, recheck=None):
        self.reports.append((fault, recheck))
        self.healthy = False


def health_rig(*answers, **kwargs):
    rig = Rig(*answers, **kwargs)
    rig.health = FakeHealth()
    rig.poller._health = rig.health
    return rig


def test_an_unhealthy_host_claims_nothing():
    rig = health_rig(payload())
    rig.health.healthy = False
    rig.poller.poll_once()
    assert rig.client.calls == [] and rig.time.waits == [POLL_SEC]


@pytest.mark.parametrize('kind', [FaultKind.DISK, FaultKind.TOKEN])
def test_a_host_fault_in_prep_hands_the_claim_back_as_drain_at_once(kind):
    fault = HostFault(kind, 'the host is broken')
    rig = health_rig(payload(), script=(fault, None, None))
    rig.poller.poll_once()
    assert rig.preparer.attempts == 1  # no retries: the job is not to blame
    assert rig.sender.reports == [AbortReport('jb_1', AbortReason.DRAIN, None)]
    assert [reported for reported, _ in rig.health.reports] == [fault]
    recheck = rig.health.reports[0][1]
    assert (recheck is not None) == (kind is FaultKind.TOKEN)


def test_a_host_fault_at_dispatch_hands_the_claim_back_as_drain():
    fault = HostFault(FaultKind.ENGINE, 'sandboxes cannot start')
    rig = health_rig(payload(), dispatch=fault)
    rig.poller.poll_once()
    assert rig.sender.reports == [
        AbortReport('jb_1', AbortReason.DRAIN, pathlib.Path('/jobs/jb_1.gen'))
    ]
    assert rig.health.reports[0][0] is fault


def test_a_memory_limit_the_host_cannot_give_hands_back_that_job_alone_before_prep():
    rig = health_rig(payload(), payload(), payload(), max_jobs=5)
    rig.time.advance = True  # a wait is time passing: the hold it served is over
    rig.dispatcher.memory_kb = 512  # the payload asks for 1024
    for _ in range(3):
        rig.poller.poll_once()
    assert rig.preparer.attempts == 0  # nothing downloaded for it
    assert rig.health.reports == [] and rig.health.healthy  # the host judges other jobs
    # Handed back jobs come first again: the third refusal ends it as prep_failed.
    assert [r.reason
            for r in rig.sender.reports] == [AbortReason.DRAIN] * 2 + [AbortReason.PREP_FAILED]
    assert rig.time.waits == [POLL_SEC] * 3  # never at once again


def test_a_job_prepared_while_the_host_became_unhealthy_is_not_dispatched():
    rig = health_rig(payload())
    rig.preparer.during = lambda attempt: setattr(rig.health, 'healthy', False)
    rig.poller.poll_once()
    assert rig.dispatcher.handled == []
    assert rig.sender.reports == [
        AbortReport('jb_1', AbortReason.DRAIN, pathlib.Path('/jobs/jb_1.gen'))
    ]


def test_a_claim_that_came_in_as_the_host_became_unhealthy_is_handed_back_unprepared():
    rig = health_rig(payload())

    def answer_then_fault(wait_sec=0):
        rig.health.healthy = False  # another preparation met a fault meanwhile
        return payload()

    rig.client.next_job = answer_then_fault
    rig.poller.poll_once()
    assert rig.preparer.attempts == 0 and rig.dispatcher.handled == []
    assert rig.sender.reports == [AbortReport('jb_1', AbortReason.DRAIN, None)]


def test_claim_is_tracked_before_prep():
    rig = Rig(payload())
    rig.poller.poll_once()
    assert rig.preparer.tracked_at_prep == [(True, 1)]
    assert len(rig.tracker) == 1  # held until its report
    assert len(rig.dispatcher.handled) == 1


def test_prep_retries_with_backoff_then_prep_failed():
    rig = Rig(payload(), script=[OSError('disk'), OSError('disk'), OSError('disk')])
    rig.poller.poll_once()
    assert rig.preparer.attempts == 3
    assert rig.time.waits == [1, 2]
    assert rig.sender.reports == [AbortReport('jb_1', AbortReason.PREP_FAILED, None)]
    assert rig.dispatcher.handled == []
    assert len(rig.tracker) == 1  # the sender releases it, before sending


def test_prep_succeeds_on_a_retry():
    rig = Rig(payload(), script=[OSError('disk'), None])
    rig.poller.poll_once()
    assert rig.preparer.attempts == 2
    assert len(rig.dispatcher.handled) == 1
    assert rig.sender.reports == []


def test_stop_during_prep_returns_the_claim_as_drain():
    rig = Rig(payload(), script=[OSError('interrupted')], during=lambda attempt: rig.stop())
    rig.poller.poll_once()
    assert rig.preparer.attempts == 1  # stop is checked at the top of every attempt
    assert rig.sender.reports == [AbortReport('jb_1', AbortReason.DRAIN, None)]


def test_stop_during_the_last_attempt_is_still_drain():
    rig = Rig(payload(),
              script=[OSError('a'), OSError('b'), OSError('c')],
              during=lambda attempt: attempt == 3 and rig.stop())
    rig.poller.poll_once()
    assert rig.preparer.attempts == 3
    assert rig.sender.reports == [AbortReport('jb_1', AbortReason.DRAIN, None)]


def test_stop_during_a_prep_backoff_is_drain():
    rig = Rig(payload(), script=[OSError('a'), OSError('b'), OSError('c')])
    rig.time.on_wait = lambda count: rig.stop()
    rig.poller.poll_once()
    assert rig.preparer.attempts == 1
    assert rig.sender.reports == [AbortReport('jb_1', AbortReason.DRAIN, None)]


def test_stop_during_a_successful_prep_is_drain_and_nothing_is_dispatched():
    rig = Rig(payload(), during=lambda attempt: rig.stop())
    rig.poller.poll_once()
    assert rig.dispatcher.handled == []
    assert rig.sender.reports == [
        AbortReport('jb_1', AbortReason.DRAIN, pathlib.Path('/jobs/jb_1.gen'))
    ]


def test_dispatch_is_attempted_once_and_its_failure_is_prep_failed():
    rig = Rig(payload(), dispatch=RuntimeError('invalid job'))
    rig.poller.poll_once()
    assert len(rig.dispatcher.handled) == 1
    assert rig.preparer.attempts == 1
    assert rig.sender.reports == [
        AbortReport('jb_1', AbortReason.PREP_FAILED, pathlib.Path('/jobs/jb_1.gen'))
    ]


def test_dispatch_failure_during_a_stop_is_drain():

    class Latched(FakeDispatcher):
        handled = []

        def handle(self, job):
            self.handled.append(job)
            rig.stop()  # the stop lands while dispatching
            raise RuntimeError('not accepting')

    rig = Rig(payload())
    rig.poller._dispatcher = Latched()
    rig.poller.poll_once()
    assert rig.sender.reports == [
        AbortReport('jb_1', AbortReason.DRAIN, pathlib.Path('/jobs/jb_1.gen'))
    ]


def test_supersede_releases_the_older_claim():
    rig = Rig(payload(), dispatch=True)
    rig.tracker.add('jb_1')  # the older generation, still live in the dispatcher
    rig.poller.poll_once()
    assert len(rig.tracker) == 1
    assert rig.tracker.snapshot() == ['jb_1']


def test_no_supersede_keeps_both_claims():
    rig = Rig(payload(), dispatch=False)
    rig.tracker.add('jb_1')
    rig.poller.poll_once()
    assert len(rig.tracker) == 2


def test_bad_claim_is_tracked_and_aborted_as_prep_failed():
    rig = Rig(BadClaim('jb_9', 'language: unknown language 7'))
    rig.poller.poll_once()
    assert rig.preparer.attempts == 0
    assert rig.tracker.snapshot() == ['jb_9']
    assert rig.sender.reports == [AbortReport('jb_9', AbortReason.PREP_FAILED, None)]


def test_the_loop_survives_unexpected_errors():
    """In a real thread: a crash in next-job and one in dispatch do not end the loop."""
    done = threading.Event()

    class Dispatcher(FakeDispatcher):
        calls = 0

        def handle(self, job):
            Dispatcher.calls += 1
            if Dispatcher.calls == 1:
                raise KeyError('dispatcher bug')
            done.set()
            rig.stop()
            return False

    rig = Rig(RuntimeError('client bug'), payload('jb_1'), payload('jb_2'))
    rig.poller._dispatcher = Dispatcher()
    rig.poller.start()
    assert done.wait(JOIN_GUARD_SEC)
    assert rig.poller.join(JOIN_GUARD_SEC)
    assert Dispatcher.calls == 2
    assert rig.sender.reports == [
        AbortReport('jb_1', AbortReason.PREP_FAILED, pathlib.Path('/jobs/jb_1.gen'))
    ]


def test_stop_wakes_a_real_wait():
    """With the default wait: a poller waiting an hour for capacity stops at once."""
    gated = threading.Event()

    class FullTracker(ActiveJobs):

        def __len__(self):
            gated.set()
            return 1

    poller = Poller(FakeClient(),
                    FullTracker(),
                    None,
                    None,
                    None,
                    max_concurrent_jobs=1,
                    poll_interval_sec=3600)
    poller.start()
    assert gated.wait(JOIN_GUARD_SEC)
    poller.stop()
    assert poller.join(JOIN_GUARD_SEC)


def test_a_release_wakes_a_poller_waiting_for_capacity():
    """With the default wait: a claim released is claimed for again at once,
    not at the next poll interval (an hour here)."""
    asked = threading.Event()

    class Client(FakeClient):

        def next_job(self, wait_sec=0):
            asked.set()
            return super().next_job(wait_sec)

    class Tracker(ActiveJobs):

        def __len__(self):
            waiting.set()
            return super().__len__()

    waiting = threading.Event()
    tracker = Tracker()
    tracker.add('jb_a')
    poller = Poller(Client(),
                    tracker,
                    None,
                    None,
                    None,
                    max_concurrent_jobs=1,
                    poll_interval_sec=3600,
                    long_poll_sec=3600)
    poller.start()
    try:
        assert waiting.wait(JOIN_GUARD_SEC)
        assert not asked.is_set()
        tracker.remove('jb_a')
        assert asked.wait(JOIN_GUARD_SEC)
    finally:
        poller.stop()
        assert poller.join(JOIN_GUARD_SEC)


def test_stop_cuts_short_the_request_in_progress():
    rig = Rig()
    rig.poller.stop()
    assert rig.client.interrupted


class HangingUp(FakeClient):

    def __init__(self, *answers, **kw):
        super().__init__(*answers, **kw)
        self.hung_up = False

    def hang_up(self):
        self.hung_up = True


def test_stop_hangs_up_the_long_poll_and_a_job_it_still_brings_goes_back_as_drain():
    # The contract lets a backend lease a job to a held long poll until its
    # wait is over, unaware of the hang-up: that answer is read, not cut.
    rig = Rig(long_poll=25)
    long_polls = HangingUp(payload('jb_late'))
    poller = Poller(rig.client,
                    rig.tracker,
                    rig.preparer,
                    rig.dispatcher,
                    rig.sender,
                    max_concurrent_jobs=2,
                    poll_interval_sec=POLL_SEC,
                    long_poll_sec=25,
                    long_poll_client=long_polls,
                    workers=Inline(),
                    clock=rig.time.clock,
                    wait=rig.time.wait,
                    rng=NoJitter())
    poller.stop()
    assert long_polls.hung_up and not long_polls.interrupted
    assert rig.client.interrupted  # downloads and claims beside: cut
    poller.poll_once()  # the long poll in flight at the stop, answered now
    assert long_polls.calls == [25] and rig.client.calls == []
    assert [(r.job_id, r.reason.value) for r in rig.sender.reports] == [('jb_late', 'drain')]


# -- preparations at once ----------------------------------------------------------


class Recording:
    """A dispatcher and a sender that say when `wanted` things reached them."""

    def __init__(self, wanted):
        self.handled, self.reports = [], []
        self.wanted = wanted
        self.done = threading.Event()
        self._lock = threading.Lock()

    def check_limits(self, memory_limit_kb):
        pass

    def handle(self, job):
        return self._note(self.handled, job) and False

    def submit(self, report):
        self._note(self.reports, report)

    def _note(self, into, item):
        with self._lock:
            into.append(item)
            if len(self.handled) + len(self.reports) >= self.wanted:
                self.done.set()
        return True


def real_poller(preparer, recording, claims, tracker=None):
    """A running poller with real preparation threads; an hour between polls."""
    poller = Poller(FakeClient(*claims),
                    tracker if tracker is not None else ActiveJobs(),
                    preparer,
                    recording,
                    recording,
                    max_concurrent_jobs=len(claims),
                    poll_interval_sec=3600)
    poller.start()
    return poller


def test_claims_are_prepared_at_once():
    """A claim whose downloads are slow does not hold up the next: the two
    preparations are under way together (each waits for the other)."""
    together = threading.Barrier(2, timeout=10)

    class Preparer:

        def prepare(self, claim, stop):
            together.wait()
            return job_for(claim)

    recording = Recording(wanted=2)
    poller = real_poller(Preparer(), recording, [payload('jb_1'), payload('jb_2')])
    try:
        assert recording.done.wait(JOIN_GUARD_SEC)
    finally:
        poller.stop()
        assert poller.join(JOIN_GUARD_SEC)
    assert sorted(job.job_id for job in recording.handled) == ['jb_1', 'jb_2']
    assert recording.reports == []


def test_a_stop_during_preparations_at_once_hands_each_claim_back_as_drain():
    entered = threading.Semaphore(0)

    class Preparer:
        """Downloads that only a stop ends."""

        def prepare(self, claim, stop):
            entered.release()
            stop.wait()
            raise OSError('cut short by the stop')

    recording = Recording(wanted=2)
    tracker = ActiveJobs()
    poller = real_poller(Preparer(), recording, [payload('jb_1'), payload('jb_2')], tracker)
    try:
        assert entered.acquire(timeout=JOIN_GUARD_SEC) and entered.acquire(timeout=JOIN_GUARD_SEC)
        assert sorted(tracker.snapshot()) == ['jb_1', 'jb_2']  # both counted while preparing
    finally:
        poller.stop()
        assert poller.join(JOIN_GUARD_SEC)  # every preparation has ended
    assert recording.handled == []
    assert sorted(recording.reports, key=lambda r: r.job_id) == [
        AbortReport('jb_1', AbortReason.DRAIN, None),
        AbortReport('jb_2', AbortReason.DRAIN, None)
    ]


def test_a_preparation_submitted_after_every_worker_ended_runs_in_place():
    from runner.prep_workers import PrepWorkers
    workers = PrepWorkers(2)
    workers.start()
    workers.stop()
    assert workers.join(JOIN_GUARD_SEC)
    ran = []
    workers.submit(lambda: ran.append(threading.current_thread()))
    assert ran == [threading.current_thread()]  # no claim is left without its report


def test_a_task_is_offered_only_to_a_thread_idle_now_and_never_after_stop():
    """A preparation waits for its helper task (the code's download): one a
    busy or stopping pool would queue and never run would hold its claim for
    ever. So the pool takes it only with a thread idle to run it (red when
    it takes it anyway: the second offer's task never runs)."""
    from runner.prep_workers import PrepWorkers
    workers = PrepWorkers(1)
    workers.start()
    busy, release, ran = threading.Event(), threading.Event(), threading.Event()

    def hold():
        busy.set()
        release.wait(JOIN_GUARD_SEC)

    try:
        # Its one thread idle once it waits for a task: the offer is taken.
        assert workers.wait_idle(JOIN_GUARD_SEC) and workers.offer(hold)
        assert busy.wait(JOIN_GUARD_SEC)
        assert not workers.offer(ran.set)  # its one thread is busy
        release.set()
        assert workers.wait_idle(JOIN_GUARD_SEC) and workers.offer(ran.set)
        assert ran.wait(JOIN_GUARD_SEC)
    finally:
        release.set()
        workers.stop()
    assert not workers.offer(ran.set)
    assert workers.join(JOIN_GUARD_SEC)


class OverlappingClient:
    """A backend that hands out `jobs` and lets claims through only when
    `together` of them are in flight at once (red when they go one at a
    time: each would wait for the others), checking at each claim that the
    live claims and the claims in flight stay within the capacity."""

    def __init__(self, jobs, tracker, capacity, together):
        self._jobs = list(jobs)
        self._tracker, self._capacity = tracker, capacity
        self._barrier = threading.Barrier(together, timeout=JOIN_GUARD_SEC)
        self._lock = threading.Lock()
        self._in_flight = 0
        self.over_capacity = []
        self.first = True

    def interrupt(self):
        self._barrier.abort()

    def sandbox_token_refusal(self):
        return None

    def next_job(self, wait_sec=0):
        with self._lock:
            self._in_flight += 1
            if len(self._tracker) + self._in_flight > self._capacity:
                self.over_capacity.append((len(self._tracker), self._in_flight))
            first, self.first = self.first, False
        try:
            if not first:
                self._barrier.wait()
            with self._lock:
                return self._jobs.pop(0) if self._jobs else None
        except threading.BrokenBarrierError:
            raise TransportError('GET next-job: cut short') from None
        finally:
            with self._lock:
                self._in_flight -= 1


def test_after_a_claim_the_rest_of_the_capacity_is_claimed_at_once():
    recording = Recording(wanted=4)
    tracker = ActiveJobs()
    client = OverlappingClient([payload(f'jb_{n}') for n in range(1, 5)],
                               tracker,
                               capacity=4,
                               together=3)

    class Preparer:

        def prepare(self, claim, stop):
            return job_for(claim)

    poller = Poller(client,
                    tracker,
                    Preparer(),
                    recording,
                    recording,
                    max_concurrent_jobs=4,
                    poll_interval_sec=3600)
    poller.start()
    try:
        assert recording.done.wait(JOIN_GUARD_SEC), recording.reports
    finally:
        poller.stop()
        assert poller.join(JOIN_GUARD_SEC)
    assert sorted(job.job_id for job in recording.handled) == ['jb_1', 'jb_2', 'jb_3', 'jb_4']
    assert client.over_capacity == []


def test_a_claim_beside_the_poll_loop_answered_at_a_stop_goes_back_as_drain():
    tracker = ActiveJobs()
    stopping = threading.Event()
    recording = Recording(wanted=2)

    class Client(FakeClient):

        def next_job(self, wait_sec=0):
            claim = super().next_job(wait_sec)
            if wait_sec == 0 and claim is not None:
                stopping.set()  # the stop lands while this claim is answered
            return claim

    class Preparer:

        def prepare(self, claim, stop):
            stop.wait(JOIN_GUARD_SEC)
            raise OSError('cut short by the stop')

    poller = Poller(Client(payload('jb_1'), payload('jb_2')),
                    tracker,
                    Preparer(),
                    recording,
                    recording,
                    max_concurrent_jobs=2,
                    poll_interval_sec=3600,
                    long_poll_sec=5)
    poller.start()
    try:
        assert stopping.wait(JOIN_GUARD_SEC)
    finally:
        poller.stop()
        assert poller.join(JOIN_GUARD_SEC)
    assert recording.done.wait(JOIN_GUARD_SEC)
    assert recording.handled == []
    assert sorted(recording.reports, key=lambda r: r.job_id) == [
        AbortReport('jb_1', AbortReason.DRAIN, None),
        AbortReport('jb_2', AbortReason.DRAIN, None)
    ]


def test_a_claim_in_flight_holds_its_place_until_its_job_is_counted():
    """Red when the place is let go before the job is counted: the poll
    loop could claim one more than the capacity meanwhile."""
    adding, counted = threading.Event(), threading.Event()

    class Tracker(ActiveJobs):

        def add(self, job_id):
            if job_id == 'jb_2':
                adding.set()
                assert counted.wait(JOIN_GUARD_SEC)
            super().add(job_id)

    recording = Recording(wanted=2)
    tracker = Tracker()
    poller = real_poller(
        type('P', (), {
            'prepare': lambda self, claim, stop: job_for(claim)
        })(), recording, [payload('jb_1'), payload('jb_2')], tracker)
    try:
        assert adding.wait(JOIN_GUARD_SEC)  # jb_2, claimed beside the poll loop, not yet counted
        assert poller._free() == 0
        counted.set()
        assert recording.done.wait(JOIN_GUARD_SEC)
    finally:
        counted.set()
        poller.stop()
        assert poller.join(JOIN_GUARD_SEC)


def claim_beside(rig):
    """One claim beside the poll loop, its place in the capacity taken first
    as _claim_more takes it."""
    with rig.poller._in_flight_lock:
        rig.poller._in_flight += 1
    rig.poller._claim_one()


def test_a_memory_refusal_beside_the_poll_loop_holds_off_every_claim():
    """Red when the hold is the refusing thread's alone: the loop and the
    other claims took the job straight back, and its third refusal made it
    a Judge Error within milliseconds."""
    rig = health_rig(payload(), payload(), max_jobs=5)
    rig.dispatcher.memory_kb = 512  # the payload asks for 1024
    claim_beside(rig)
    assert [r.reason for r in rig.sender.reports] == [AbortReason.DRAIN]
    assert rig.time.waits == []  # its thread and its place let go at once
    claim_beside(rig)
    rig.poller.poll_once()
    assert len(rig.client.calls) == 1  # neither the other claim nor the loop asked
    assert rig.time.waits == [POLL_SEC]  # the loop waits out the hold
    assert rig.poller._claims_in_flight() == 0


def test_a_failed_claim_beside_the_poll_loop_is_counted_and_said(caplog):
    rig = Rig(ProtocolError('GET next-job: the body has no job_id'))
    claim_beside(rig)
    assert 'no job_id' in caplog.text
    assert rig.poller._claims_in_flight() == 0


def test_no_long_poll_while_claims_are_in_flight_beside_the_poll_loop():
    """Red when the loop long-polls beside them: a backend may cut a runner's
    earlier long poll short when another call comes, and the loop then
    waited a poll interval with a job in the queue."""
    rig = Rig(payload(), long_poll=25)
    with rig.poller._in_flight_lock:
        rig.poller._in_flight += 1
    rig.poller.poll_once()
    assert rig.client.calls == [] and rig.time.waits == [POLL_SEC]  # woken by `freed`


def test_a_claim_counted_and_then_failing_is_handed_back_not_leaked():
    rig = Rig(payload())
    rig.dispatcher.check_limits = lambda memory_limit_kb: 1 / 0
    rig.poller.poll_once()
    assert rig.sender.reports == [AbortReport('jb_1', AbortReason.PREP_FAILED, None)]


def test_while_jobs_come_the_loop_asks_without_waiting_and_long_polls_once_none_came():
    rig = Rig(payload('jb_1'), None, None, long_poll=25, max_jobs=4)
    for _ in range(3):
        rig.poller.poll_once()
    assert rig.client.calls == [25, 0, 25]
    # Only the long poll's 204 at once is waited out (a backend that ignores
    # `wait`), not the 204 to an ask without waiting.
    assert rig.time.waits == [POLL_SEC]


def test_a_refusal_holds_off_the_loop_before_its_abort_can_wake_it():
    """The abort's release wakes the loop at once (the sender finalizes
    before it sends): red when the hold comes after the abort, as the loop
    then took the handed back job straight again."""
    rig = Rig(payload('jb_big'), max_jobs=4, long_poll=25)
    rig.dispatcher.memory_kb = 512  # the payload asks for 1024
    woken = []

    def submit(report):
        rig.sender.reports.append(report)
        rig.tracker.remove(report.job_id)
        rig.client.answers.insert(0, payload(report.job_id))  # handed back: first again
        if not woken:
            woken.append(1)
            rig.poller.poll_once()  # the loop, woken by the release, runs now

    rig.sender.submit = submit
    claim_beside(rig)
    assert len(rig.client.calls) == 1 and len(rig.sender.reports) == 1


def test_the_loop_asks_without_waiting_beside_a_claim_in_flight():
    rig = Rig(payload('jb_1'), payload('jb_2'), max_jobs=4, long_poll=25)
    rig.poller.poll_once()  # jb_1: jobs come
    with rig.poller._in_flight_lock:
        rig.poller._in_flight += 1  # a claim beside the loop, still in flight
    rig.poller.poll_once()
    assert rig.client.calls == [25, 0] and rig.time.waits == []


def test_a_204_beside_the_loop_makes_its_next_ask_a_long_poll():
    rig = Rig(payload('jb_1'), None, None, max_jobs=4, long_poll=25)
    rig.poller.poll_once()
    claim_beside(rig)  # the queue found empty beside the loop
    rig.poller.poll_once()
    assert rig.client.calls == [25, 0, 25]


def test_a_job_claimed_beside_the_loop_makes_it_ask_without_waiting():
    rig = Rig(None, payload('jb_2'), None, max_jobs=4, long_poll=25, duration=25)
    rig.poller.poll_once()  # a long poll's 204 after its whole wait
    claim_beside(rig)  # jobs come again
    rig.poller.poll_once()
    assert rig.client.calls == [25, 0, 0]


def test_without_long_polls_a_204_after_a_job_still_waits_the_poll_interval():
    rig = Rig(payload('jb_1'), None, None, max_jobs=4, long_poll=0)
    for _ in range(3):
        rig.poller.poll_once()
    assert rig.client.calls == [0, 0, 0] and rig.time.waits == [POLL_SEC, POLL_SEC]


class IdleThreads(Inline):
    """A pool with threads idle now: each claim offered is kept, to be run
    by the test."""

    def __init__(self):
        self.offered = []

    def offer(self, task):
        self.offered.append(task)
        return True


def test_while_jobs_come_every_free_place_is_claimed_beside_the_loop_which_only_waits():
    """Red when the loop claims one itself: a place freed during that
    claim's round trip waited for it (a backend 20 ms away spent a fifth of
    each job's place so)."""
    rig = Rig(payload('jb_1'), payload('jb_2'), payload('jb_3'), max_jobs=3, long_poll=25)
    rig.poller._workers = pool = IdleThreads()
    rig.poller.poll_once()  # jb_1, the loop's own long poll: jobs come
    assert rig.client.calls == [25] and len(pool.offered) == 2
    rig.poller.poll_once()  # every place taken or being claimed
    assert rig.client.calls == [25] and rig.time.waits == [POLL_SEC]  # woken by `freed`
    for claim in pool.offered:
        claim()
    rig.tracker.remove('jb_2')
    rig.poller.poll_once()  # the place jb_2 let go
    assert rig.client.calls == [25, 0, 0] and len(pool.offered) == 3
    assert rig.poller._claims_in_flight() == 1


def test_a_failed_claim_beside_the_loop_makes_its_next_ask_its_own_and_backed_off():
    """Red when the claims beside the loop go on after a failure: every
    place would ask a backend that is away again at once, without backoff."""
    rig = Rig(payload('jb_1'),
              TransportError('GET next-job: refused'),
              TransportError('GET next-job: refused'),
              max_jobs=3)
    rig.poller._workers = pool = IdleThreads()
    rig.poller.poll_once()
    pool.offered.pop()()  # the backend went away
    rig.poller.poll_once()
    assert rig.client.calls == [0, 0, 0] and len(pool.offered) == 1  # asked by the loop
    assert rig.time.waits == [1]  # and backed off as from its own failures


def test_after_its_own_failed_ask_the_loop_alone_asks_again():
    """Red when the loop's failure leaves the claims to the pool: after each
    backoff every free place would ask a backend that is away at once."""
    rig = Rig(payload('jb_1'),
              TransportError('GET next-job: refused'),
              payload('jb_2'),
              max_jobs=3,
              long_poll=25)
    rig.poller.poll_once()  # jb_1; no thread idle to claim the rest beside the loop
    rig.poller.poll_once()  # still none idle: the loop asks, and the backend is away
    rig.poller._workers = IdleThreads()
    rig.poller.poll_once()
    assert rig.client.calls == [25, 0, 25]  # its own ask, a long poll


def test_a_claim_answered_beside_the_loop_ends_an_outage_and_its_backoff():
    """Red when only the loop's own answers end an outage: while jobs come
    it seldom asks, so each short outage later backed off further, up to
    30 s with places free."""
    refused = TransportError('GET next-job: refused')
    rig = Rig(payload('jb_1'), refused, refused, payload('jb_2'), refused, refused, max_jobs=3)
    rig.poller._workers = pool = IdleThreads()
    rig.poller.poll_once()  # jb_1; two claims offered beside the loop
    pool.offered.pop(0)()  # refused: the loop asks next
    rig.poller.poll_once()  # refused too: it backs off
    pool.offered.pop(0)()  # jb_2: the backend answers again
    rig.poller.poll_once()  # jobs come: the last place offered, and waited for
    pool.offered.pop(0)()  # refused: the loop asks next
    rig.poller.poll_once()
    assert rig.time.waits == [1, POLL_SEC, 1]  # each outage backed off from its first step


class Waits:
    """The loop's waits: on which event, and whether it was set already."""

    def __init__(self, rig):
        self.seen = []
        rig.poller._wait = self.wait

    def wait(self, event, seconds):
        self.seen.append((event, event.is_set(), seconds))
        return event.is_set()


def full(rig):
    """Jobs come and every place is taken (max_jobs=2)."""
    rig.poller._workers = pool = IdleThreads()
    rig.poller.poll_once()
    pool.offered.pop()()
    assert len(rig.tracker) == 2


def test_with_every_place_taken_the_loop_waits_for_one_on_freed_cleared_first():
    """Red when `freed` is not cleared first (set by the last claim's end,
    it woke the loop at once, for ever: a busy loop) or when the loop waits
    on anything else (a place let go waited out the poll interval)."""
    rig = Rig(payload('jb_1'), payload('jb_2'), max_jobs=2)
    full(rig)
    assert rig.tracker.freed.is_set()
    waits = Waits(rig)
    rig.poller.poll_once()
    assert waits.seen == [(rig.tracker.freed, False, POLL_SEC)]


def test_a_stop_landing_as_the_loop_claims_beside_it_is_not_waited_out():
    """Red without the stop check before the wait: the stop's own wake-up
    of `freed` may come before the clear, and the drain waited a poll
    interval for the loop."""
    rig = Rig(payload('jb_1'), payload('jb_2'), max_jobs=2)
    full(rig)
    waits = Waits(rig)
    rig.poller._stop.set()  # as stop() does, its wake-up of `freed` come and gone
    rig.poller.poll_once()
    assert waits.seen == []
