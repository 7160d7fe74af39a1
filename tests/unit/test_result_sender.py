import json
import pathlib
import threading

import pytest

from runner.active_jobs import ActiveJobs
from runner.backend.noj.client import Answer, Outcome
from runner.backend.noj.outbound import AbortReason, complete_body
from runner.backend.noj.reports import AbortReport, CompleteReport
from runner.backend.noj.result_sender import ResultSender
from sandbox.results import CaseResult, Status
from tests.unit.fakes import NoJitter

JOIN_GUARD_SEC = 60  # only guards against a hang; nothing asserts on time
JOB_DIR = pathlib.Path('/jobs/jb_1.gen')

TASKS = ((CaseResult(Status.AC), ), )

ANSWERS = {
    '2xx': Answer(Outcome.ACCEPTED, 'HTTP 204'),
    '409': Answer(Outcome.CONFLICT, 'HTTP 409'),
    '404': Answer(Outcome.NOT_FOUND, 'HTTP 404'),
    '400': Answer(Outcome.BAD_REQUEST, 'HTTP 400'),
    '401': Answer(Outcome.UNAUTHORIZED, 'HTTP 401'),
    '5xx': Answer(Outcome.FAILED, 'HTTP 503'),
    'connection error': Answer(Outcome.FAILED, 'PUT ...: ConnectionError'),
}
TERMINAL = ['2xx', '409', '404']
RETRIED = ['401', '5xx', 'connection error']


class Rig:
    """Everything the sender touches writes into one ordered log."""

    def __init__(self, complete=(), abort=(), sleep=None, workers=1):
        # One worker unless a test is about several: the scripted answers and
        # the ordered log assume one report at a time.
        self.log = []
        self.complete_answers = [ANSWERS[name] for name in complete]
        self.abort_answers = [ANSWERS[name] for name in abort]
        self.sleeps = []
        self.tracker = LoggingTracker(self.log)
        self.folders = FakeFolders(self.log)
        self.sender = ResultSender(self,
                                   self.tracker,
                                   self.folders,
                                   sleep=sleep or self.sleeps.append,
                                   rng=NoJitter(),
                                   workers=workers)

    def complete(self, job_id, body):
        self.log.append(('complete', job_id))
        assert body == complete_body(TASKS, self.sender._body_limit)
        return self.complete_answers.pop(0)

    def abort(self, job_id, reason):
        self.log.append(('abort', job_id, reason.value))
        return self.abort_answers.pop(0)


class LoggingTracker(ActiveJobs):

    def __init__(self, log):
        super().__init__()
        self.log = log
        self.released = threading.Condition()

    def remove(self, job_id):
        self.log.append(('release', job_id))
        super().remove(job_id)
        with self.released:
            self.released.notify_all()

    def wait_empty_of(self, job_id, timeout):
        with self.released:
            return self.released.wait_for(lambda: job_id not in self.snapshot(), timeout)


class FakeFolders:

    def __init__(self, log, fail=False):
        self.log = log
        self.fail = fail

    def remove(self, job_dir):
        self.log.append(('remove', job_dir))
        if self.fail:
            raise OSError('busy')

    def back_up(self, job_dir):
        self.log.append(('back_up', job_dir))
        if self.fail:
            raise OSError('busy')


def claimed(rig, job_id='jb_1'):
    rig.tracker.add(job_id)
    return rig


# -- complete -------------------------------------------------------------------


@pytest.mark.parametrize('answer', TERMINAL)
def test_complete_terminal_answers_send_then_finalize(answer):
    rig = claimed(Rig(complete=[answer]))
    rig.sender.process(CompleteReport('jb_1', JOB_DIR, TASKS))
    assert rig.log == [('complete', 'jb_1'), ('release', 'jb_1'), ('remove', JOB_DIR)]
    assert rig.sleeps == []
    assert len(rig.tracker) == 0


def test_complete_400_becomes_abort_rejected_finalized_before_sending():
    rig = claimed(Rig(complete=['400'], abort=['2xx']))
    rig.sender.process(CompleteReport('jb_1', JOB_DIR, TASKS))
    assert rig.log == [('complete', 'jb_1'), ('release', 'jb_1'), ('back_up', JOB_DIR),
                       ('abort', 'jb_1', 'rejected')]
    assert len(rig.tracker) == 0


@pytest.mark.parametrize('answer', RETRIED)
def test_complete_retries_with_backoff_and_keeps_the_lease(answer):
    rig = claimed(Rig(complete=[answer, answer, '2xx']))
    rig.sender.process(CompleteReport('jb_1', JOB_DIR, TASKS))
    assert rig.sleeps == [1, 2]
    assert rig.log == [('complete', 'jb_1')] * 3 + [('release', 'jb_1'), ('remove', JOB_DIR)]


@pytest.mark.parametrize('answer', RETRIED)
def test_complete_exhaustion_backs_up_and_gives_up(answer):
    rig = claimed(Rig(complete=[answer] * 6))
    rig.sender.process(CompleteReport('jb_1', JOB_DIR, TASKS))
    assert rig.sleeps == [1, 2, 4, 8, 16]
    assert rig.log == [('complete', 'jb_1')] * 6 + [('release', 'jb_1'), ('back_up', JOB_DIR)]
    assert len(rig.tracker) == 0


def test_complete_then_rejected_abort_exhausted():
    rig = claimed(Rig(complete=['400'], abort=['5xx'] * 6))
    rig.sender.process(CompleteReport('jb_1', JOB_DIR, TASKS))
    assert rig.log[:3] == [('complete', 'jb_1'), ('release', 'jb_1'), ('back_up', JOB_DIR)]
    assert rig.log[3:] == [('abort', 'jb_1', 'rejected')] * 6
    assert rig.sleeps == [1, 2, 4, 8, 16]


def test_a_crashing_complete_call_is_retried_and_still_finalized():
    rig = claimed(Rig())

    def crash(job_id, body):
        rig.log.append(('complete', job_id))
        raise TypeError('not serializable')

    rig.complete = crash
    rig.sender.process(CompleteReport('jb_1', JOB_DIR, TASKS))
    assert rig.log[-2:] == [('release', 'jb_1'), ('back_up', JOB_DIR)]
    assert len(rig.tracker) == 0


# -- abort ------------------------------------------------------------------------

REASONS = [AbortReason.DRAIN, AbortReason.PREP_FAILED, AbortReason.REJECTED]


def folder_step(reason):
    return 'back_up' if reason is AbortReason.REJECTED else 'remove'


@pytest.mark.parametrize('reason', REASONS)
@pytest.mark.parametrize('answer', TERMINAL + ['400'])
def test_abort_finalizes_before_sending(reason, answer):
    rig = claimed(Rig(abort=[answer]))
    rig.sender.process(AbortReport('jb_1', reason, JOB_DIR))
    assert rig.log == [('release', 'jb_1'), (folder_step(reason), JOB_DIR),
                       ('abort', 'jb_1', reason.value)]
    assert rig.sleeps == []


@pytest.mark.parametrize('reason', REASONS)
@pytest.mark.parametrize('answer', RETRIED)
def test_abort_retries(reason, answer):
    rig = claimed(Rig(abort=[answer, answer, answer, '2xx']))
    rig.sender.process(AbortReport('jb_1', reason, JOB_DIR))
    assert rig.sleeps == [1, 2, 4]
    assert rig.log == [('release', 'jb_1'),
                       (folder_step(reason), JOB_DIR)] + [('abort', 'jb_1', reason.value)] * 4


@pytest.mark.parametrize('reason', REASONS)
def test_abort_exhaustion_gives_up_already_finalized(reason):
    rig = claimed(Rig(abort=['5xx'] * 6))
    rig.sender.process(AbortReport('jb_1', reason, JOB_DIR))
    assert rig.sleeps == [1, 2, 4, 8, 16]
    assert rig.log == [('release', 'jb_1'),
                       (folder_step(reason), JOB_DIR)] + [('abort', 'jb_1', reason.value)] * 6


def test_abort_without_a_folder_only_releases():
    rig = claimed(Rig(abort=['2xx']))
    rig.sender.process(AbortReport('jb_1', AbortReason.PREP_FAILED, None))
    assert rig.log == [('release', 'jb_1'), ('abort', 'jb_1', 'prep_failed')]


def test_abort_is_sent_even_when_the_folder_cannot_be_removed():
    rig = claimed(Rig(abort=['2xx']))
    rig.folders.fail = True
    rig.sender.process(AbortReport('jb_1', AbortReason.DRAIN, JOB_DIR))
    assert rig.log == [('release', 'jb_1'), ('remove', JOB_DIR), ('abort', 'jb_1', 'drain')]
    assert len(rig.tracker) == 0


def test_abort_leaves_nothing_of_the_old_claim_when_the_backend_gets_it():
    """The ABA case: the moment the backend has the abort, it may hand the job
    to this runner again. By then the old claim's count and folder are gone,
    so nothing the old claim does afterwards can touch the new one."""
    rig = claimed(Rig())
    seen_by_backend = []

    def abort(job_id, reason):
        seen_by_backend.append((len(rig.tracker), ('remove', JOB_DIR) in rig.log))
        rig.tracker.add(job_id)  # requeued, and re-claimed at once by the poller
        return ANSWERS['2xx']

    rig.abort = abort
    rig.sender.process(AbortReport('jb_1', AbortReason.DRAIN, JOB_DIR))
    assert seen_by_backend == [(0, True)]
    assert len(rig.tracker) == 1  # the new claim, untouched


# -- the thread -----------------------------------------------------------------


def test_stop_flushes_everything_queued_before_it():
    rig = Rig(complete=['2xx', '5xx', '2xx'], abort=['2xx', '2xx'])
    for job_id in ('jb_1', 'jb_2', 'jb_3'):
        rig.tracker.add(job_id)
    reports = [
        CompleteReport('jb_1', JOB_DIR, TASKS),
        AbortReport('jb_2', AbortReason.DRAIN, None),
        CompleteReport('jb_3', JOB_DIR, TASKS),
        AbortReport('jb_4', AbortReason.PREP_FAILED, None),
    ]
    rig.tracker.add('jb_4')
    for report in reports:
        rig.sender.submit(report)
    rig.sender.stop()
    rig.sender.start()  # started after stop: the flush still covers all of them
    assert rig.sender.join(JOIN_GUARD_SEC)
    assert len(rig.tracker) == 0
    assert [entry for entry in rig.log
            if entry[0] in ('complete', 'abort')] == [('complete', 'jb_1'),
                                                      ('abort', 'jb_2', 'drain'),
                                                      ('complete', 'jb_3'), ('complete', 'jb_3'),
                                                      ('abort', 'jb_4', 'prep_failed')]


def test_the_thread_survives_a_failing_report(caplog):
    rig = Rig(complete=['2xx'])
    rig.tracker.add('jb_2')
    processed = []
    real_process = rig.sender.process

    def process(report):
        processed.append(report.job_id)
        if report.job_id == 'jb_1':
            raise RuntimeError('bug')
        real_process(report)

    rig.sender.process = process
    rig.sender.start()
    rig.sender.submit(AbortReport('jb_1', AbortReason.DRAIN, None))
    rig.sender.submit(CompleteReport('jb_2', JOB_DIR, TASKS))
    rig.sender.stop()
    assert rig.sender.join(JOIN_GUARD_SEC)
    assert processed == ['jb_1', 'jb_2']
    assert len(rig.tracker) == 0
    assert 'job jb_1: reporting failed unexpectedly' in caplog.text  # which claim is stuck


def test_threads_are_daemons():
    rig = Rig(workers=3)
    assert all(thread.daemon for thread in rig.sender._workers._threads)
    assert rig.sender.join(0)


def test_a_report_in_its_retries_does_not_hold_up_the_others():
    retrying, release = threading.Event(), threading.Event()

    def sleep(seconds):
        retrying.set()
        assert release.wait(JOIN_GUARD_SEC)

    rig = Rig(complete=['5xx', '2xx'], abort=['2xx'], sleep=sleep, workers=2)
    rig.tracker.add('jb_slow')
    rig.tracker.add('jb_drained')
    rig.sender.start()
    rig.sender.submit(CompleteReport('jb_slow', JOB_DIR, TASKS))
    assert retrying.wait(JOIN_GUARD_SEC)  # the complete waits out a backoff...
    rig.sender.submit(AbortReport('jb_drained', AbortReason.DRAIN, JOB_DIR))
    rig.sender.stop()
    # ...while the abort behind it is delivered.
    assert rig.tracker.wait_empty_of('jb_drained', JOIN_GUARD_SEC)
    assert ('abort', 'jb_drained', 'drain') in rig.log
    release.set()
    assert rig.sender.join(JOIN_GUARD_SEC)
    assert rig.log.count(('complete', 'jb_slow')) == 2 and rig.sender.given_up == 0


def test_given_up_reports_are_counted():
    rig = Rig(complete=['5xx'] * 6, abort=['5xx'] * 6)
    rig.tracker.add('jb_1')
    rig.tracker.add('jb_2')
    rig.sender.process(CompleteReport('jb_1', JOB_DIR, TASKS))
    rig.sender.process(AbortReport('jb_2', AbortReason.DRAIN, JOB_DIR))
    assert rig.sender.given_up == 2


def test_an_abort_retry_never_returns_a_later_claim_of_the_same_job():
    """The first abort landed but its answer was lost; during the backoff the
    poller claims the job again. The retry must not hand that claim back."""
    rig = None

    def sleep(seconds):
        rig.tracker.add('jb_1')  # the re-claim

    rig = Rig(abort=['connection error', '2xx'], sleep=sleep)
    rig.tracker.add('jb_1')
    rig.sender.process(AbortReport('jb_1', AbortReason.PREP_FAILED, JOB_DIR))
    assert [e for e in rig.log if e[0] == 'abort'] == [('abort', 'jb_1', 'prep_failed')]
    assert len(rig.tracker) == 1  # the new claim's count stands
    assert rig.sender.given_up == 0


def test_an_older_claim_of_the_same_job_does_not_stop_abort_retries():
    rig = Rig(abort=['5xx', '2xx'])
    rig.tracker.add('jb_1')  # an older generation, still held
    rig.tracker.add('jb_1')  # the claim being aborted
    rig.sender.process(AbortReport('jb_1', AbortReason.PREP_FAILED, JOB_DIR))
    assert [e for e in rig.log if e[0] == 'abort'] == [('abort', 'jb_1', 'prep_failed')] * 2


# -- the body bound ------------------------------------------------------------------


class BodyRig(Rig):
    """Records every complete body sent; answers 413 while it is over `takes` bytes."""

    def __init__(self, takes, **kwargs):
        super().__init__(**kwargs)
        self.takes = takes
        self.bodies = []
        self.sender._body_limit = 4096

    def complete(self, job_id, body):
        tasks = body.tasks
        self.log.append(('complete', job_id))
        self.bodies.append(tasks)
        size = len(json.dumps({'tasks': tasks}))
        return ANSWERS['2xx'] if size <= self.takes else Answer(Outcome.TOO_LARGE, 'HTTP 413')


def _cases(n, output):
    return ((CaseResult(Status.WA, exec_time_ms=1, memory_kb=2, stdout=output, stderr=output), ) *
            n, )


def test_complete_is_bounded_before_the_first_attempt():
    rig = claimed(BodyRig(takes=4096))
    rig.sender.process(CompleteReport('jb_1', JOB_DIR, _cases(10, '\x01' * 1000)))
    assert len(rig.bodies) == 1 and len(json.dumps({'tasks': rig.bodies[0]})) <= 4096
    assert rig.log[-2:] == [('release', 'jb_1'), ('remove', JOB_DIR)]


def test_a_413_sends_the_verdicts_without_outputs():
    rig = claimed(BodyRig(takes=1500))  # below what the bound leaves
    rig.sender.process(CompleteReport('jb_1', JOB_DIR, _cases(10, 'x' * 1000)))
    assert len(rig.bodies) == 2
    assert all(case['stdout'] == case['stderr'] == '' for case in rig.bodies[1][0])
    assert [case['status'] for case in rig.bodies[1][0]] == ['WA'] * 10
    assert rig.log[-2:] == [('release', 'jb_1'), ('remove', JOB_DIR)]


def test_a_413_without_outputs_too_is_given_up_with_a_backup():
    rig = claimed(BodyRig(takes=10))
    rig.sender.process(CompleteReport('jb_1', JOB_DIR, _cases(10, 'x')))
    assert len(rig.bodies) == 2
    assert rig.log[-2:] == [('release', 'jb_1'), ('back_up', JOB_DIR)]
    assert rig.sender.given_up == 1


def test_a_release_only_abort_finalizes_and_sends_nothing():
    rig = claimed(Rig())
    rig.tracker.add('jb_1')  # the newer claim of the same job
    rig.sender.process(AbortReport('jb_1', AbortReason.DRAIN, JOB_DIR, release_only=True))
    assert rig.log == [('release', 'jb_1'), ('remove', JOB_DIR)]
    assert rig.tracker.claims_of('jb_1') == 1


def test_a_result_that_cannot_be_encoded_is_given_up_and_finalized():
    rig = claimed(Rig(complete=['2xx']))
    rig.sender.process(CompleteReport('jb_1', JOB_DIR, (('not a result', ), )))
    assert rig.log == [('release', 'jb_1'), ('back_up', JOB_DIR)]
    assert rig.sender.given_up == 1
