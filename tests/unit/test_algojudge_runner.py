"""The AlgoJudge side's coordination, driven step by step with a scripted
client and an injected clock (no threads of their own, no sleeps): the
lease keeper, the reporter and the claimer."""
import threading

import pytest

from runner.backend.algojudge.claimer import Claimer
from runner.backend.algojudge.client import Refused, Unreachable
from runner.backend.algojudge.held import HeldJobs
from runner.backend.algojudge.lease_keeper import LeaseKeeper
from runner.backend.algojudge.reporter import Release, Reporter
from runner.backend.algojudge.reports import JobReport, failure
from runner.backend.algojudge.wire import BatchItem, Claimed, Problem, Reported
from sandbox.faults import FaultKind, HostFault
from standard_io.errors import NotJudgeable


class Clock:

    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def refused(status, code=None, retry_after=None):
    return Refused('call', Problem(status, code, '', retry_after))


class Client:
    """Scripted: each call takes the next answer of its list (an exception is raised)."""

    def __init__(self, **answers):
        self.answers = {k: list(v) for k, v in answers.items()}
        self.calls = []

    def _next(self, name, *args):
        self.calls.append((name, ) + args)
        answer = self.answers[name].pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    def renew_all(self, jobs, lease_sec):
        return self._next('renew_all', tuple(jobs), lease_sec)

    def renew(self, job_id, token, lease_sec):
        return self._next('renew', job_id, token, lease_sec)

    def heartbeat(self):
        return self._next('heartbeat')

    def report(self, job_id, body):
        return self._next('report', job_id, body)

    def release(self, job_id, token):
        return self._next('release', job_id, token)

    def upload(self, name, content_type, data):
        return self._next('upload', name)

    def attach(self, job_id, token, file_id, name):
        return self._next('attach', job_id, name)

    def claim(self, lease_sec, wait_sec):
        return self._next('claim', lease_sec, wait_sec)

    def interrupt(self):
        self.calls.append(('interrupt', ))


def claimed(n=1):
    return Claimed(f'job-{n}', f'token-{n}', submission_id=f'sub-{n}')


# The lease keeper.


def test_leases_are_renewed_a_quarter_lease_after_the_claim_in_one_batch():
    clock, held = Clock(), HeldJobs()
    a = held.add(claimed(1), 40, clock())
    b = held.add(claimed(2), 40, clock())
    client = Client(renew_all=[(BatchItem('job-1', None), BatchItem('job-2', None))])
    keeper = LeaseKeeper(client, held, lease_sec=40, on_lost=lambda h: None, clock=clock)
    clock.now += 9.9
    keeper.tick()
    assert client.calls == []  # not due yet: the first renewal is one interval after the claim
    clock.now += 0.1
    keeper.tick()
    assert client.calls == [('renew_all', (('job-1', 'token-1'), ('job-2', 'token-2')), 40)]
    assert a.next_renewal == b.next_renewal == clock.now + 10
    assert keeper.accepted_within(1)


def test_a_failed_renewal_keeps_the_timer_and_the_job():
    clock, held = Clock(), HeldJobs()
    h = held.add(claimed(), 40, clock())
    lost = []
    client = Client(renew_all=[Unreachable('down'), refused(503, 'server.maintenance')])
    keeper = LeaseKeeper(client, held, lease_sec=40, on_lost=lost.append, clock=clock)
    for _ in range(2):
        clock.now = h.next_renewal
        keeper.tick()
    assert lost == [] and held.holds(h)
    assert h.next_renewal == clock.now + 10


@pytest.mark.parametrize('code',
                         ['runner.lease.stale', 'runner.lease.foreign', 'job.state', 'not_found'])
def test_a_job_refused_as_not_mine_is_lost_at_once(code):
    clock, held = Clock(), HeldJobs()
    mine = held.add(claimed(1), 40, clock())
    gone = held.add(claimed(2), 40, clock())
    lost = []
    client = Client(renew_all=[(BatchItem('job-1', None), BatchItem('job-2', code))])
    keeper = LeaseKeeper(client, held, lease_sec=40, on_lost=lost.append, clock=clock)
    clock.now += 10
    keeper.tick()
    assert lost == [gone]
    assert held.holds(mine)


def test_an_older_server_without_the_batch_route_is_renewed_job_by_job():
    clock, held = Clock(), HeldJobs()
    h = held.add(claimed(), 40, clock())
    lost = []
    client = Client(renew_all=[refused(404)] * 3,
                    renew=[None, None, None, refused(403, 'runner.lease.stale')])
    keeper = LeaseKeeper(client, held, lease_sec=40, on_lost=lost.append, clock=clock)
    for _ in range(3):
        clock.now += 10
        keeper.tick()
    # Every round renewed all the same (a lease never waits for the route),
    # and after three in a row the route is not asked any more.
    assert [c[0] for c in client.calls] == ['renew_all', 'renew'] * 3 and lost == []
    clock.now += 10
    keeper.tick()
    assert [c[0] for c in client.calls] == ['renew_all', 'renew'] * 3 + ['renew']
    assert lost == [h]


@pytest.mark.parametrize('status, code', [(422, 'runner.batch.size'), (404, 'not_found'),
                                          (405, None), (400, 'request.invalid')])
def test_a_refused_batch_call_renews_its_jobs_one_by_one(status, code):
    clock, held = Clock(), HeldJobs()
    held.add(claimed(), 40, clock())
    client = Client(renew_all=[refused(status, code)], renew=[None])
    keeper = LeaseKeeper(client, held, lease_sec=40, on_lost=lambda h: None, clock=clock)
    clock.now += 10
    keeper.tick()
    assert [c[0] for c in client.calls] == ['renew_all', 'renew']


@pytest.mark.parametrize('status, code', [(503, 'server.maintenance'), (429, None),
                                          (401, 'unauthenticated')])
def test_a_batch_refused_while_the_server_is_away_is_not_repeated_job_by_job(status, code):
    clock, held = Clock(), HeldJobs()
    held.add(claimed(), 40, clock())
    client = Client(renew_all=[refused(status, code)])
    keeper = LeaseKeeper(client, held, lease_sec=40, on_lost=lambda h: None, clock=clock)
    clock.now += 10
    keeper.tick()
    assert [c[0] for c in client.calls] == ['renew_all']


def test_a_bare_404_is_never_taken_for_not_mine():
    clock, held = Clock(), HeldJobs()
    held.add(claimed(), 40, clock())
    lost = []
    client = Client(renew_all=[refused(404)], renew=[refused(404)])
    keeper = LeaseKeeper(client, held, lease_sec=40, on_lost=lost.append, clock=clock)
    clock.now += 10
    keeper.tick()
    assert lost == []
    assert refused(404).transient and not refused(404).not_mine
    assert refused(404, 'not_found').not_mine


def test_two_claims_of_one_job_never_share_a_batch():
    clock, held = Clock(), HeldJobs()
    older = held.add(claimed(1), 40, clock())
    newer = held.add(Claimed('job-1', 'token-new'), 40, clock())
    lost = []
    client = Client(renew_all=[(BatchItem('job-1', None), )],
                    renew=[refused(403, 'runner.lease.stale')])
    keeper = LeaseKeeper(client, held, lease_sec=40, on_lost=lost.append, clock=clock)
    clock.now += 10
    keeper.tick()
    assert client.calls == [('renew_all', (('job-1', 'token-1'), ), 40),
                            ('renew', 'job-1', 'token-new', 40)]
    assert lost == [newer] and held.holds(older)


def test_maintenance_answers_count_as_contact_and_a_withdrawn_approval_asks_to_rejoin():
    from runner.backend.algojudge.enrolment import Rejoin
    clock, held = Clock(), HeldJobs()
    rejoin = Rejoin()
    client = Client(heartbeat=[
        refused(503, 'server.maintenance', retry_after=30),
        refused(403, 'runner.notApproved')
    ])
    keeper = LeaseKeeper(client,
                         held,
                         lease_sec=40,
                         on_lost=lambda h: None,
                         rejoin=rejoin,
                         heartbeat_sec=60,
                         clock=clock)
    keeper.tick()
    assert keeper.accepted_within(1) and not rejoin.take()
    clock.now += 60
    keeper.tick()
    assert rejoin.take()


def test_the_liveness_interval_follows_the_longest_lease_held():
    clock, held = Clock(), HeldJobs()
    keeper = LeaseKeeper(Client(),
                         held,
                         lease_sec=3600,
                         on_lost=lambda h: None,
                         heartbeat_sec=60,
                         clock=clock)
    assert keeper.interval_sec == 60
    held.add(claimed(), 3600, clock())
    assert keeper.interval_sec == 900


def test_a_heartbeat_only_while_nothing_is_held():
    clock, held = Clock(), HeldJobs()
    client = Client(heartbeat=[None, None])
    keeper = LeaseKeeper(client,
                         held,
                         lease_sec=40,
                         on_lost=lambda h: None,
                         heartbeat_sec=60,
                         clock=clock)
    keeper.tick()
    clock.now += 59
    keeper.tick()
    assert client.calls == [('heartbeat', )]
    held.add(claimed(), 400, clock())
    clock.now += 10
    keeper.tick()
    assert client.calls == [('heartbeat', )]


# The reporter.


def reporter_of(client, held, clock, finalized, waits):

    def wait(seconds):
        waits.append(seconds)
        clock.now += seconds

    return Reporter(client, held, finalized.append, workers=1, wait=wait, clock=clock)


def drive(reporter):
    """Handles everything submitted, on this thread."""
    reporter.stop()
    reporter._workers._run()


def test_a_report_is_resent_as_the_same_body_and_retry_after_only_lengthens():
    clock, held, finalized, waits = Clock(), HeldJobs(), [], []
    h = held.add(claimed(), 600, clock())
    client = Client(report=[
        Unreachable('lost answer'),
        refused(503, 'server.maintenance', retry_after=30),
        refused(429, None, retry_after=0),
        Reported('completed', True)
    ])
    reporter = reporter_of(client, held, clock, finalized, waits)
    report = failure('job-1', 'token-1', 'the checker is broken')
    reporter.submit(report, h)
    drive(reporter)
    bodies = [c[2] for c in client.calls]
    assert len(bodies) == 4 and all(b is report.body for b in bodies)
    assert waits[1] >= 30 and waits[2] >= 4  # Retry-After: 0 never shortens the backoff
    assert finalized == [h] and not held.holds(h)


@pytest.mark.parametrize('status', [301, 302, 307, 308])
def test_a_report_answered_with_a_redirect_is_sent_again_not_given_up(status):
    # A proxy's redirect (http to https, say), not the server's refusal.
    clock, held, finalized, waits = Clock(), HeldJobs(), [], []
    h = held.add(claimed(), 600, clock())
    client = Client(report=[refused(status), Reported('completed', False)])
    reporter = reporter_of(client, held, clock, finalized, waits)
    reporter.submit(failure('job-1', 'token-1', 'x'), h)
    drive(reporter)
    assert len(client.calls) == 2 and finalized == [h]


def test_report_resends_stop_at_the_lease_length():
    clock, held, finalized, waits = Clock(), HeldJobs(), [], []
    h = held.add(claimed(), 20, clock())
    client = Client(report=[refused(502)] * 50)
    reporter = reporter_of(client, held, clock, finalized, waits)
    reporter.submit(failure('job-1', 'token-1', 'x'), h)
    drive(reporter)
    assert sum(waits) <= 20
    assert reporter.given_up == 1 and finalized == [h]


@pytest.mark.parametrize('code', ['runner.lease.stale', 'runner.lease.foreign', 'job.state'])
def test_a_report_refused_as_not_mine_is_dropped_silently(code):
    clock, held, finalized, waits = Clock(), HeldJobs(), [], []
    h = held.add(claimed(), 600, clock())
    client = Client(report=[refused(403 if code != 'job.state' else 409, code)])
    reporter = reporter_of(client, held, clock, finalized, waits)
    reporter.submit(failure('job-1', 'token-1', 'x'), h)
    drive(reporter)
    assert len(client.calls) == 1 and reporter.given_up == 0 and waits == []


def test_our_bug_is_not_resent():
    clock, held, finalized, waits = Clock(), HeldJobs(), [], []
    h = held.add(claimed(), 600, clock())
    client = Client(report=[refused(422, 'opaque.tooLarge')])
    reporter = reporter_of(client, held, clock, finalized, waits)
    reporter.submit(failure('job-1', 'token-1', 'x'), h)
    drive(reporter)
    assert len(client.calls) == 1 and reporter.given_up == 1


def test_attachments_go_before_the_report_and_a_failed_one_does_not_stop_it():
    clock, held, finalized, waits = Clock(), HeldJobs(), [], []
    h = held.add(claimed(), 600, clock())
    from runner.backend.algojudge.reports import Attachment
    report = JobReport('job-1', {
        'leaseToken': 'token-1',
        'infrastructureFailure': False
    }, (Attachment('details', 'd.json', 'application/json',
                   b'{}'), Attachment('log', 'log.txt', 'text/plain', b'')))
    client = Client(upload=['f1', Unreachable('x')],
                    attach=[None],
                    report=[Reported('completed', False)])
    reporter = reporter_of(client, held, clock, finalized, waits)
    reporter.submit(report, h)
    drive(reporter)
    assert [c[0] for c in client.calls] == ['upload', 'attach', 'upload', 'report']


def test_a_release_finalizes_first_and_a_newer_claim_of_the_job_is_untouched():
    clock, held, finalized, waits = Clock(), HeldJobs(), [], []
    older = held.add(claimed(), 600, clock())
    newer = held.add(Claimed('job-1', 'token-2'), 600, clock())  # the same job, claimed again
    client = Client(release=[refused(403, 'runner.lease.stale')])
    reporter = reporter_of(client, held, clock, finalized, waits)
    reporter.submit(Release(older, 'the runner is stopping'))
    reporter.submit(failure('job-1', 'token-1', 'late'), older)  # the older claim's: never sent
    drive(reporter)
    assert client.calls == [('release', 'job-1', 'token-1')]
    assert finalized == [older] and held.holds(newer)


# The claimer.


class Preparer:

    def __init__(self, outcome):
        self.outcome = outcome
        self.seen_held = None

    def prepare(self, claimed, stop):
        self.seen_held = held_now[0]()
        if isinstance(self.outcome, Exception):
            raise self.outcome
        return self.outcome


held_now = [lambda: 0]


class Dispatcher:

    def __init__(self, memory_kb=1 << 30):
        self.handled = []
        self.memory_kb = memory_kb

    def check_limits(self, memory_limit_kb):
        if memory_limit_kb > self.memory_kb:
            raise HostFault(FaultKind.MEMORY, f'cannot hold {memory_limit_kb} KB')

    def handle(self, job):
        self.handled.append(job)


class Reports:

    def __init__(self):
        self.items = []

    def submit(self, item, held=None):
        self.items.append((item, held))


def claimer_of(client, held, preparer, clock, **kw):
    claimer = Claimer(client,
                      held,
                      preparer,
                      Dispatcher(),
                      Reports(),
                      capacity=2,
                      lease_sec=60,
                      wait_sec=20,
                      clock=clock,
                      **kw)
    claimer._workers.submit = lambda task: task()  # preparations run in place
    return claimer


def test_a_claim_is_held_before_its_downloads():
    clock, held = Clock(), HeldJobs()
    held_now[0] = lambda: len(held)
    preparer = Preparer(NotJudgeable('the package does not match its SHA-256'))
    client = Client(claim=[(claimed(), 60.0)])
    claimer = claimer_of(client, held, preparer, clock)
    assert claimer.claim_once() == 0
    assert preparer.seen_held == 1
    (item, h), = claimer._reporter.items
    assert item.body['infrastructureFailure'] is True
    assert item.body['failureReason'] == 'the package does not match its SHA-256'
    assert 'score' not in item.body and 'verdict' not in item.body


def test_a_held_empty_answer_asks_again_at_once_an_immediate_one_backs_off():
    clock, held = Clock(), HeldJobs()

    class Slow(Client):

        def claim(self, lease_sec, wait_sec):
            clock.now += 10  # held for half the wait
            return super().claim(lease_sec, wait_sec)

    assert claimer_of(Slow(claim=[(None, None)]), held, Preparer(None), clock).claim_once() == 0
    assert claimer_of(Client(claim=[(None, None)]), held, Preparer(None), clock).claim_once() >= 1


def test_retry_after_lengthens_the_wait_after_a_refused_claim():
    clock, held = Clock(), HeldJobs()
    client = Client(claim=[refused(503, 'server.maintenance', retry_after=30)])
    assert claimer_of(client, held, Preparer(None), clock).claim_once() >= 30


def test_an_unexpected_failure_of_a_claim_backs_off_and_claiming_goes_on():
    # An answer nothing foresaw (a header past the calendar) must not end
    # the claimer's thread: no claim would ever be made again.
    clock, held = Clock(), HeldJobs()
    client = Client(claim=[OverflowError('date value out of range'), (claimed(), 60.0)])
    claimer = claimer_of(client, held, Preparer(None), clock)
    assert claimer.claim_once() >= 0.5
    assert claimer.claim_once() == 0 and len(client.calls) == 2


def test_a_claim_answered_after_the_stop_is_released():
    clock, held = Clock(), HeldJobs()
    client = Client(claim=[(claimed(), 60.0)])
    claimer = claimer_of(client, held, Preparer(None), clock)
    claimer._stop.set()
    claimer.claim_once()
    (item, _), = claimer._reporter.items
    assert isinstance(item, Release)


def test_a_host_fault_in_preparation_releases_the_claim_never_a_score():
    clock, held = Clock(), HeldJobs()
    client = Client(claim=[(claimed(), 60.0)])
    claimer = claimer_of(client, held, Preparer(HostFault(FaultKind.DISK, 'DATA_DIR is full')),
                         clock)
    claimer.claim_once()
    (item, _), = claimer._reporter.items
    assert isinstance(item, Release)


def test_a_granted_lease_is_what_the_server_said_unless_it_is_absurd():
    clock, held = Clock(), HeldJobs()
    client = Client(claim=[(claimed(1), 30.0), (claimed(2), None), (claimed(3),
                                                                    0.01), (claimed(4), 1e11)])
    claimer = claimer_of(client, held, Preparer(NotJudgeable('x')), clock)
    for _ in range(4):
        claimer.claim_once()
    leases = {h.job_id: h.lease_sec for h in held.snapshot()}
    # Skewed or absurd: the lease asked (60 s), clamped as the server clamps it.
    assert leases == {'job-1': 30.0, 'job-2': 60.0, 'job-3': 60.0, 'job-4': 60.0}


def test_a_claim_ends_once_a_late_release_after_its_report_does_nothing():
    clock, held, finalized, waits = Clock(), HeldJobs(), [], []
    h = held.add(claimed(), 600, clock())
    client = Client(report=[Reported('completed', False)])
    reporter = reporter_of(client, held, clock, finalized, waits)
    reporter.submit(failure('job-1', 'token-1', 'x'), h)
    reporter.submit(Release(h, 'the runner is stopping'))
    drive(reporter)
    assert [c[0] for c in client.calls] == ['report']
    assert finalized == [h]


class Prepared:
    """A prepared job, as far as the claimer looks."""

    def __init__(self, memory_kb=65536):
        from dispatcher.job import TaskMeta
        self.job = type('Job', (), {'tasks': (TaskMeta(10, memory_kb, 1000, 1), )})()
        self.refusal = None


def test_an_unexpected_failure_in_preparation_still_ends_the_claim():
    clock, held = Clock(), HeldJobs()
    claimer = claimer_of(Client(claim=[(claimed(), 60.0)]), held, Preparer(KeyError('bug')), clock)
    claimer.claim_once()
    (item, h), = claimer._reporter.items
    assert item.body['infrastructureFailure'] is True
    assert 'KeyError' in item.body['failureReason']


def test_a_full_disk_in_preparation_releases_the_claim():
    import errno
    clock, held = Clock(), HeldJobs()
    claimer = claimer_of(Client(claim=[(claimed(), 60.0)]), held,
                         Preparer(OSError(errno.ENOSPC, 'No space left on device')), clock)
    claimer.claim_once()
    (item, _), = claimer._reporter.items
    assert isinstance(item, Release)


def test_a_memory_limit_no_sandbox_here_can_give_is_a_failure_of_that_job_alone():
    clock, held = Clock(), HeldJobs()
    claimer = claimer_of(Client(claim=[(claimed(), 60.0)]), held, Preparer(Prepared(1 << 31)),
                         clock)
    claimer._dispatcher.memory_kb = 1 << 20
    claimer.claim_once()
    (item, _), = claimer._reporter.items
    assert item.body['infrastructureFailure'] is True
    assert 'memory limit' in item.body['failureReason']
    assert claimer._dispatcher.handled == []


def test_a_claim_prepared_while_the_host_is_unhealthy_is_released_not_parked():

    class Unhealthy:
        healthy = False

    clock, held = Clock(), HeldJobs()
    claimer = claimer_of(Client(claim=[(claimed(), 60.0)]),
                         held,
                         Preparer(Prepared()),
                         clock,
                         health=Unhealthy())
    claimer.claim_once()
    (item, _), = claimer._reporter.items
    assert isinstance(item, Release) and claimer._dispatcher.handled == []


def test_files_fetched_while_the_server_is_away_are_retried_within_the_lease():
    clock, held = Clock(), HeldJobs()

    class Away:
        calls = 0

        def prepare(self, claimed, stop):
            Away.calls += 1
            raise refused(503, 'server.maintenance', retry_after=15)

    claimer = claimer_of(Client(claim=[(claimed(), 60.0)]), held, Away(), clock)
    claimer._stop.wait = lambda seconds: clock.__setattr__('now', clock.now + seconds)
    claimer.claim_once()
    assert 3 <= Away.calls <= 5  # every 15 s at least (Retry-After), for 60 s
    assert claimer._reporter.items == [] and len(held) == 0  # left to its lease


def test_files_cut_by_the_stop_past_the_lease_are_released_never_left_to_it():
    # The stop's interrupt comes after the claims' settle and the answers'
    # grace: with a short lease, the download it cut may seem to have run out
    # of the lease too.
    clock, held = Clock(), HeldJobs()
    claimer = claimer_of(Client(claim=[(claimed(), 4.0)]), held, None, clock)

    class CutByTheStop:

        def prepare(self, claimed, stop):
            clock.now += 3.5
            claimer._stop.set()
            raise Unreachable('GET /runner/files/{id}: connection reset (ConnectionError)')

    claimer._preparer = CutByTheStop()
    claimer.claim_once()
    (item, _), = claimer._reporter.items
    assert isinstance(item, Release) and claimer._dispatcher.handled == []


def test_approval_withdrawn_while_reporting_keeps_the_result_and_asks_to_rejoin():
    from runner.backend.algojudge.enrolment import Rejoin
    clock, held, finalized, waits = Clock(), HeldJobs(), [], []
    h = held.add(claimed(), 600, clock())
    client = Client(report=[refused(403, 'runner.notApproved'), Reported('completed', False)])
    rejoin = Rejoin()
    reporter = Reporter(client,
                        held,
                        finalized.append,
                        workers=1,
                        rejoin=rejoin,
                        wait=lambda s: waits.append(s),
                        clock=clock)
    reporter.submit(failure('job-1', 'token-1', 'x'), h)
    drive(reporter)
    assert [c[0] for c in client.calls] == ['report', 'report']
    assert rejoin.take() and reporter.given_up == 0


def test_a_job_taken_back_while_its_report_is_resent_gets_no_further_call():
    clock, held, finalized, waits = Clock(), HeldJobs(), [], []
    h = held.add(claimed(), 600, clock())
    client = Client(report=[refused(503)] * 3)

    def wait(seconds):
        held.remove(h)  # the lease keeper heard it was taken back

    reporter = Reporter(client, held, finalized.append, workers=1, wait=wait, clock=clock)
    reporter.submit(failure('job-1', 'token-1', 'x'), h)
    drive(reporter)
    assert len(client.calls) == 1


def test_a_report_that_cannot_be_made_is_a_failure_of_the_judge():
    clock, held, finalized, waits = Clock(), HeldJobs(), [], []
    h = held.add(claimed(), 600, clock())
    client = Client(report=[Reported('queued', False)])
    reporter = reporter_of(client, held, clock, finalized, waits)

    def broken():
        raise ZeroDivisionError()

    reporter.submit(broken, h)
    drive(reporter)
    (call, ) = client.calls
    assert call[2]['infrastructureFailure'] is True
    assert 'ZeroDivisionError' in call[2]['failureReason']


@pytest.mark.parametrize('status, code', [(401, 'unauthenticated'), (403, 'runner.nonce.expired'),
                                          (403, 'runner.signature'), (404, 'runner.key.unknown')])
def test_a_refusal_about_the_runner_itself_keeps_the_result(status, code):
    from runner.backend.algojudge.enrolment import Rejoin
    clock, held, finalized, waits = Clock(), HeldJobs(), [], []
    h = held.add(claimed(), 600, clock())
    client = Client(report=[refused(status, code), Reported('completed', False)])
    rejoin = Rejoin()
    reporter = Reporter(client,
                        held,
                        finalized.append,
                        workers=1,
                        rejoin=rejoin,
                        wait=lambda s: waits.append(s),
                        clock=clock)
    reporter.submit(failure('job-1', 'token-1', 'x'), h)
    drive(reporter)
    assert len(client.calls) == 2 and reporter.given_up == 0 and rejoin.take()


def test_a_claim_refused_for_the_runner_again_and_again_backs_off():
    # A server (or a proxy that strips Authorization) answering every claim
    # 401: each refusal asks to join again, and the claims slow down instead
    # of hammering it.
    from runner.backend.algojudge.enrolment import Rejoin
    clock, held, rejoin = Clock(), HeldJobs(), Rejoin()
    client = Client(claim=[refused(401, 'unauthenticated')] * 4)
    claimer = claimer_of(client, held, Preparer(None), clock, rejoin=rejoin)
    delays = [claimer.claim_once() for _ in range(4)]
    assert all(delay > 0 for delay in delays) and delays[-1] > delays[0]
    assert rejoin.take()


def test_a_revoked_runner_claims_no_more():
    from runner.backend.algojudge.enrolment import Rejoin
    clock, held = Clock(), HeldJobs()
    rejoin = Rejoin()
    rejoin.ask('approval withdrawn')
    client = Client(claim=[])
    claimer = claimer_of(client,
                         held,
                         Preparer(None),
                         clock,
                         rejoin=rejoin,
                         on_not_approved=lambda: False)
    claimer._run()  # returns: no claim is asked after a revocation
    assert client.calls == []
