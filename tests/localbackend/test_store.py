"""The backend's rules, without HTTP, on an injected clock."""
import threading

import pytest

from localbackend import ManualClock
from localbackend.reports import ReportError
from localbackend.settings import Settings
from localbackend.store import AbortReason, Outcome, Store
from tests.localbackend.helpers import REG, SANDBOX, make_store, register, report_for

AC = report_for([2, 1])


def submit_and_claim(store, runner_id, token):
    sid = store.submit(1, 'python', 'print(3)')
    served = store.claim(runner_id, token).value
    return sid, served.job_id


# ------------------------------------------------------------------ identity


def test_register_hands_out_an_identity_stored_as_a_hash_only():
    store = make_store()
    answer = store.register(REG, 'host-1')
    assert answer.outcome is Outcome.OK
    registration = answer.value
    assert registration.runner_id.startswith('rn_') and registration.token.startswith('rk_')
    assert registration.config == {
        'heartbeat_interval_sec': 15,
        'poll_interval_sec': 3,
        'max_concurrent_jobs': 8
    }
    stored = store._runners[registration.runner_id]
    assert registration.token not in repr(vars(stored))
    assert stored.token_hash != registration.token.encode()


@pytest.mark.parametrize('candidate', [
    'wrong', '', None, 123, 1.5, True, ['reg'], {
        'a': 1
    }, b'reg-secret-7f3a', '\ud800', REG + '\udfff', 'réglé'
])
def test_register_refuses_wrong_or_hostile_tokens(candidate):
    store = make_store()
    assert store.register(candidate, 'x').outcome is Outcome.UNAUTHORIZED
    assert store.events.list('register')[-1].outcome == 'unauthorized'


def test_an_empty_registration_token_disables_registration():
    store = Store(Settings(registration_token='', sandbox_token=''))
    assert store.register('', 'x').outcome is Outcome.UNAUTHORIZED
    assert store.checksum('1', '').outcome is Outcome.UNAUTHORIZED


@pytest.mark.parametrize('name', [None, 5, '', 'x' * 129, 'bad\ud800'])
def test_register_rejects_a_bad_name_after_the_token_check(name):
    store = make_store()
    assert store.register(REG, name).outcome is Outcome.REJECTED
    assert store.register('wrong', name).outcome is Outcome.UNAUTHORIZED


@pytest.mark.parametrize('token', [None, 7, ['rk_x'], '\ud800', 'rk_\udc00', '', 'rk_wrong'])
def test_every_runner_call_refuses_hostile_tokens(token):
    store = make_store()
    runner_id, real = register(store)
    sid, job_id = submit_and_claim(store, runner_id, real)
    assert store.heartbeat(runner_id, token, [job_id]).outcome is Outcome.UNAUTHORIZED
    assert store.claim(runner_id, token).outcome is Outcome.UNAUTHORIZED
    assert store.complete(runner_id, token, job_id, AC).outcome is Outcome.UNAUTHORIZED
    assert store.abort(runner_id, token, job_id, AbortReason.DRAIN).outcome is Outcome.UNAUTHORIZED


@pytest.mark.parametrize('runner_id', [None, 3, ['rn_x'], '\ud800', 'rn_unknown'])
def test_hostile_runner_ids_are_refused(runner_id):
    store = make_store()
    _, token = register(store)
    assert store.claim(runner_id, token).outcome is Outcome.UNAUTHORIZED
    assert store.heartbeat(runner_id, token, []).outcome is Outcome.UNAUTHORIZED


def test_a_token_is_bound_to_its_own_runner():
    store = make_store()
    first, _ = register(store, 'a')
    _, second_token = register(store, 'b')
    assert store.claim(first, second_token).outcome is Outcome.UNAUTHORIZED


def test_revoked_identity_is_refused_at_once():
    store = make_store()
    runner_id, token = register(store)
    store.revoke(runner_id)
    assert store.heartbeat(runner_id, token, []).outcome is Outcome.UNAUTHORIZED
    assert store.claim(runner_id, token).outcome is Outcome.UNAUTHORIZED


def test_identity_expires_without_heartbeats_and_is_never_revived():
    clock = ManualClock()
    store = make_store(clock, identity_ttl_sec=100)
    runner_id, token = register(store)
    clock.advance(99)
    assert store.heartbeat(runner_id, token, []).outcome is Outcome.OK
    clock.advance(99)
    assert store.claim(runner_id, token).outcome is Outcome.NO_JOB  # renewed by the beat
    clock.advance(1)
    assert store.heartbeat(runner_id, token, []).outcome is Outcome.UNAUTHORIZED
    clock.advance(1)
    assert store.heartbeat(runner_id, token, []).outcome is Outcome.UNAUTHORIZED


# -------------------------------------------------------------- leases, reclaim


def test_lease_expires_after_ttl_and_another_runner_reclaims():
    clock = ManualClock()
    store = make_store(clock)
    a_id, a_token = register(store, 'a')
    b_id, b_token = register(store, 'b')
    sid, job_id = submit_and_claim(store, a_id, a_token)
    clock.advance(29.9)
    assert store.claim(b_id, b_token).outcome is Outcome.NO_JOB
    clock.advance(0.1)
    answer = store.claim(b_id, b_token)
    assert answer.outcome is Outcome.OK and answer.value.job_id == job_id
    reclaim = store.events.list('reclaim')
    assert [(e.outcome, e.runner_id, e.attempts) for e in reclaim] == [('requeued', a_id, 1)]
    assert store.job_attempts(job_id) == 2
    assert store.complete(a_id, a_token, job_id, AC).outcome is Outcome.CONFLICT
    assert store.complete(b_id, b_token, job_id, AC).outcome is Outcome.LANDED


def test_heartbeat_renews_only_listed_jobs_held_by_the_runner():
    clock = ManualClock()
    store = make_store(clock)
    a_id, a_token = register(store, 'a')
    b_id, b_token = register(store, 'b')
    store.submit(1, 'c', 'int main(){}')
    store.submit(1, 'c', 'int main(){}')
    kept = store.claim(a_id, a_token).value.job_id
    dropped = store.claim(a_id, a_token).value.job_id
    clock.advance(20)
    assert store.heartbeat(a_id, a_token, [kept, 'jb_not_mine', kept]).outcome is Outcome.OK
    beat = store.events.list('heartbeat')[-1]
    assert beat.data == {'renewed': (kept, ), 'ignored': ('jb_not_mine', )}
    # Another runner listing the job does not renew it.
    assert store.heartbeat(b_id, b_token, [dropped]).outcome is Outcome.OK
    clock.advance(15)
    store.sweep()
    assert [e.job_id for e in store.events.list('reclaim')] == [dropped]
    assert store.complete(a_id, a_token, kept, AC).outcome is Outcome.LANDED


def test_heartbeat_with_a_malformed_list_is_rejected_after_auth():
    store = make_store()
    runner_id, token = register(store)
    assert store.heartbeat(runner_id, token, None).outcome is Outcome.REJECTED
    assert store.heartbeat(runner_id, 'bad', None).outcome is Outcome.UNAUTHORIZED


def test_claims_are_served_oldest_first_and_a_requeued_job_comes_back_first():
    store = make_store()
    runner_id, token = register(store)
    first = store.submit(1, 'c', 'a')
    store.submit(1, 'c', 'b')
    job = store.claim(runner_id, token).value
    assert job.payload['submission_id'] == first
    assert store.abort(runner_id, token, job.job_id, AbortReason.DRAIN).outcome is Outcome.REQUEUED
    again = store.claim(runner_id, token).value
    assert again.job_id == job.job_id


def test_a_claim_whose_caller_has_gone_leases_nothing():
    store = make_store()
    runner_id, token = register(store)
    store.submit(1, 'c', 'x')
    gone = store.claim(runner_id, token, caller_present=lambda: False)
    assert gone.outcome is Outcome.NO_JOB
    assert store.events.list('claim')[-1].outcome == 'abandoned'
    (queued, ) = store.queued_job_ids()
    assert store.job_attempts(queued) == 0
    assert store.claim(runner_id, token).value.job_id == queued
    assert store.job_attempts(queued) == 1


def test_claim_event_counts_claims_held_by_the_runner():
    store = make_store()
    runner_id, token = register(store)
    for _ in range(3):
        store.submit(1, 'c', 'x')
    for _ in range(3):
        store.claim(runner_id, token)
    assert [e.data['held'] for e in store.events.list('claim', outcome='ok')] == [1, 2, 3]


def test_payload_has_the_problem_tasks_and_a_signed_code_path():
    store = make_store()
    runner_id, token = register(store)
    sid = store.submit(1, 'cpp', 'int main(){}')
    served = store.claim(runner_id, token).value
    assert served.payload == {
        'job_id':
        served.job_id,
        'submission_id':
        sid,
        'problem_id':
        1,
        'language':
        1,
        'checker':
        'diff',
        'tasks': [{
            'taskScore': 50,
            'memoryLimit': 65536,
            'timeLimit': 1000,
            'caseCount': 2
        }, {
            'taskScore': 50,
            'memoryLimit': 65536,
            'timeLimit': 1000,
            'caseCount': 1
        }],
    }
    path, _, query = served.code_path.partition('?')
    assert path == f'/code/{served.job_id}'
    signature = query.removeprefix('sig=')
    assert store.code(served.job_id, signature).outcome is Outcome.OK
    assert store.code(served.job_id, signature[:-1] + 'x').outcome is Outcome.FORBIDDEN
    assert store.code(served.job_id, None).outcome is Outcome.FORBIDDEN
    assert store.code(served.job_id, '\ud800').outcome is Outcome.FORBIDDEN


# ------------------------------------------------------------ attempts and JE


def test_a_poison_job_converges_to_je_after_three_attempts():
    store = make_store()
    runner_id, token = register(store)
    sid = store.submit(1, 'c', 'x')
    outcomes = []
    for _ in range(3):
        job_id = store.claim(runner_id, token).value.job_id
        outcomes.append(store.abort(runner_id, token, job_id, AbortReason.PREP_FAILED).outcome)
    assert outcomes == [Outcome.REQUEUED, Outcome.REQUEUED, Outcome.CONVERGED]
    result = store.wait_result(sid, 0)
    assert result.judge_error and result.statuses == ('JE', 'JE', 'JE')
    assert store.claim(runner_id, token).outcome is Outcome.NO_JOB
    assert store.complete(runner_id, token, job_id, AC).outcome is Outcome.NOT_FOUND
    assert store.events.count('judge_error', submission_id=sid) == 1


def test_rejected_aborts_count_attempts_too():
    store = make_store(max_attempts=2)
    runner_id, token = register(store)
    store.submit(1, 'c', 'x')
    job_id = store.claim(runner_id, token).value.job_id
    assert store.abort(runner_id, token, job_id, AbortReason.REJECTED).outcome is Outcome.REQUEUED
    store.claim(runner_id, token)
    assert store.abort(runner_id, token, job_id, AbortReason.REJECTED).outcome is Outcome.CONVERGED


def test_reclaims_count_attempts_and_converge_to_je():
    clock = ManualClock()
    store = make_store(clock)
    runner_id, token = register(store)
    sid = store.submit(1, 'c', 'x')
    for _ in range(3):
        assert store.claim(runner_id, token).outcome is Outcome.OK
        clock.advance(30)
    store.sweep()
    assert [e.outcome
            for e in store.events.list('reclaim')] == ['requeued', 'requeued', 'converged']
    assert store.wait_result(sid, 0).judge_error


def test_drain_refunds_the_claims_attempt():
    store = make_store()
    runner_id, token = register(store)
    sid = store.submit(1, 'c', 'x')
    for _ in range(10):
        job_id = store.claim(runner_id, token).value.job_id
        assert store.job_attempts(job_id) == 1
        assert store.abort(runner_id, token, job_id, AbortReason.DRAIN).outcome is Outcome.REQUEUED
        assert store.job_attempts(job_id) == 0
    # Drains spent nothing: the job still has all of its attempts.
    for expected in (Outcome.REQUEUED, Outcome.REQUEUED, Outcome.CONVERGED):
        store.claim(runner_id, token)
        assert store.abort(runner_id, token, job_id, AbortReason.PREP_FAILED).outcome is expected
    assert store.submission(sid).done


def test_drain_after_failed_attempts_does_not_converge():
    store = make_store()
    runner_id, token = register(store)
    store.submit(1, 'c', 'x')
    for _ in range(2):
        job_id = store.claim(runner_id, token).value.job_id
        store.abort(runner_id, token, job_id, AbortReason.PREP_FAILED)
    store.claim(runner_id, token)
    assert store.abort(runner_id, token, job_id, AbortReason.DRAIN).outcome is Outcome.REQUEUED
    assert store.job_attempts(job_id) == 2


# ------------------------------------------------------------- landing rules


def test_a_job_lands_once_and_a_retry_after_a_lost_answer_is_404():
    store = make_store()
    runner_id, token = register(store)
    sid, job_id = submit_and_claim(store, runner_id, token)
    assert store.complete(runner_id, token, job_id, AC).outcome is Outcome.LANDED
    assert store.complete(runner_id, token, job_id, AC).outcome is Outcome.NOT_FOUND
    assert store.abort(runner_id, token, job_id, AbortReason.DRAIN).outcome is Outcome.NOT_FOUND
    assert store.events.count('complete', outcome='landed', submission_id=sid) == 1
    assert store.wait_result(sid, 0).verdict == 'AC'
    assert store.wait_result(sid, 0).score == 100


def test_rejudge_makes_the_older_job_stale_and_its_result_is_dropped():
    store = make_store()
    runner_id, token = register(store)
    sid, old_job = submit_and_claim(store, runner_id, token)
    new_job = store.rejudge(sid)
    # Two jobs of one submission in flight on one runner at once.
    assert store.claim(runner_id, token).value.job_id == new_job
    assert store.complete(runner_id, token, old_job, AC).outcome is Outcome.STALE_DROPPED
    assert not store.submission(sid).done
    assert store.complete(runner_id, token, old_job, AC).outcome is Outcome.NOT_FOUND
    wa = report_for([2, 1], 'WA')
    assert store.complete(runner_id, token, new_job, wa).outcome is Outcome.LANDED
    result = store.wait_result(sid, 0)
    assert result.job_id == new_job and result.verdict == 'WA'


def test_a_stale_result_arriving_after_the_current_one_does_not_overwrite_it():
    store = make_store()
    runner_id, token = register(store)
    sid, old_job = submit_and_claim(store, runner_id, token)
    new_job = store.rejudge(sid)
    store.claim(runner_id, token)
    store.complete(runner_id, token, new_job, report_for([2, 1], 'WA'))
    assert store.complete(runner_id, token, old_job, AC).outcome is Outcome.STALE_DROPPED
    assert store.submission(sid).result.job_id == new_job
    assert store.submission(sid).result.verdict == 'WA'


def test_rejudge_cancels_a_queued_sibling_and_drops_a_stale_abort_or_reclaim():
    clock = ManualClock()
    store = make_store(clock)
    runner_id, token = register(store)
    sid = store.submit(1, 'c', 'x')
    first = store.submission(sid).current_job_id
    second = store.rejudge(sid)
    assert [e.job_id for e in store.events.list('cancel')] == [first]
    assert store.queued_job_ids() == [second]
    store.claim(runner_id, token)
    third = store.rejudge(sid)
    assert store.abort(runner_id, token, second, AbortReason.PREP_FAILED).outcome is Outcome.DROPPED
    store.claim(runner_id, token)
    store.rejudge(sid)
    clock.advance(30)
    store.sweep()
    assert [(e.job_id, e.outcome) for e in store.events.list('reclaim')] == [(third, 'dropped')]
    assert not store.submission(sid).done


def test_complete_precedence_401_404_409_400_stale_landed():
    clock = ManualClock()
    store = make_store(clock)
    a_id, a_token = register(store, 'a')
    b_id, b_token = register(store, 'b')
    bad = ReportError('body is not JSON')
    wrong_shape = report_for([1])
    sid, job_id = submit_and_claim(store, a_id, a_token)
    # Every failure at once: the identity wins.
    assert store.complete(a_id, 'x', 'jb_unknown', bad).outcome is Outcome.UNAUTHORIZED
    assert store.complete(a_id, a_token, 'jb_unknown', bad).outcome is Outcome.NOT_FOUND
    assert store.complete(b_id, b_token, job_id, bad).outcome is Outcome.CONFLICT
    assert store.complete(a_id, a_token, job_id, bad).outcome is Outcome.REJECTED
    assert store.complete(a_id, a_token, job_id, wrong_shape).outcome is Outcome.REJECTED
    store.rejudge(sid)
    assert store.complete(a_id, a_token, job_id, AC).outcome is Outcome.STALE_DROPPED
    # A stale job with a bad body is refused before it is dropped.
    store.claim(a_id, a_token)
    new = store.submission(sid).current_job_id
    store.rejudge(sid)
    assert store.complete(a_id, a_token, new, bad).outcome is Outcome.REJECTED
    assert store.complete(a_id, a_token, new, AC).outcome is Outcome.STALE_DROPPED


def test_a_rejected_complete_leaves_the_job_held_for_an_abort():
    store = make_store()
    runner_id, token = register(store)
    sid, job_id = submit_and_claim(store, runner_id, token)
    assert store.complete(runner_id, token, job_id, report_for([2, 2])).outcome is Outcome.REJECTED
    assert store.abort(runner_id, token, job_id, AbortReason.REJECTED).outcome is Outcome.REQUEUED


def test_abort_precedence_401_404_409_400():
    store = make_store()
    a_id, a_token = register(store, 'a')
    b_id, b_token = register(store, 'b')
    sid, job_id = submit_and_claim(store, a_id, a_token)
    assert store.abort(a_id, None, 'jb_unknown', None).outcome is Outcome.UNAUTHORIZED
    assert store.abort(a_id, a_token, 'jb_unknown', None).outcome is Outcome.NOT_FOUND
    assert store.abort(b_id, b_token, job_id, None).outcome is Outcome.CONFLICT
    assert store.abort(a_id, a_token, job_id, None).outcome is Outcome.REJECTED
    assert store.abort(a_id, a_token, job_id, AbortReason.DRAIN).outcome is Outcome.REQUEUED
    # Requeued: held by nobody, so a second abort is a conflict.
    assert store.abort(a_id, a_token, job_id, AbortReason.DRAIN).outcome is Outcome.CONFLICT


def test_complete_for_an_expired_lease_is_a_conflict_even_before_anyone_reclaims():
    clock = ManualClock()
    store = make_store(clock)
    runner_id, token = register(store)
    sid, job_id = submit_and_claim(store, runner_id, token)
    clock.advance(30)
    store.heartbeat(runner_id, token, [job_id])  # too late: the orphan scan runs first
    assert store.complete(runner_id, token, job_id, AC).outcome is Outcome.CONFLICT


def test_wait_result_returns_a_result_landed_from_another_thread():
    store = make_store()
    runner_id, token = register(store)
    sid, job_id = submit_and_claim(store, runner_id, token)
    results = []
    waiting = threading.Thread(target=lambda: results.append(store.wait_result(sid, 30)))
    waiting.start()
    store.complete(runner_id, token, job_id, AC)
    waiting.join(30)
    assert results and results[0].job_id == job_id


def test_wait_result_times_out_and_ignores_an_older_jobs_result():
    store = make_store()
    runner_id, token = register(store)
    sid, job_id = submit_and_claim(store, runner_id, token)
    store.complete(runner_id, token, job_id, AC)
    store.rejudge(sid)
    with pytest.raises(TimeoutError):
        store.wait_result(sid, 0)


# ----------------------------------------------------- testdata and injection


def test_sandbox_channel_checks_its_token_before_the_problem():
    store = make_store()
    assert store.checksum('1', SANDBOX).outcome is Outcome.OK
    assert store.checksum('01', SANDBOX).value == store.problem(1).checksum
    for token in (None, 'x', 5, '\ud800', ''):
        assert store.checksum('1', token).outcome is Outcome.UNAUTHORIZED
        assert store.testdata('404', token).outcome is Outcome.UNAUTHORIZED
    for pid in ('404', 'x', '-1', '١', ''):
        assert store.testdata(pid, SANDBOX).outcome is Outcome.NOT_FOUND


def test_set_testdata_changes_the_checksum_and_rejudge_takes_new_tasks():
    store = make_store()
    runner_id, token = register(store)
    before = store.checksum('1', SANDBOX).value
    after = store.set_testdata(1, {'0000.out': b'4\n'})
    assert after != before and store.checksum('1', SANDBOX).value == after
    assert store.set_testdata(1, {'0000.out': b'4\n'}) == after  # deterministic zip


def test_inject_job_keys_by_payload_job_id_when_usable():
    store = make_store()
    runner_id, token = register(store)
    payload = store.job_payload(1, 'c')
    payload['problem_id'] = '01'
    job_id = store.inject_job(payload)
    assert job_id == payload['job_id']
    served = store.claim(runner_id, token).value
    assert served.payload == payload and served.code_path is None
    assert store.complete(runner_id, token, job_id, AC).outcome is Outcome.LANDED
    assert store.wait_result(payload['submission_id'], 0).verdict == 'AC'


@pytest.mark.parametrize('payload', [b'not json{', '{"job_id": 5}', [1, 2], None, {'job_id': 7}])
def test_a_payload_without_a_usable_job_id_ends_by_lease_expiry_and_converges(payload):
    clock = ManualClock()
    store = make_store(clock)
    runner_id, token = register(store)
    job_id = store.inject_job(payload)
    for _ in range(3):
        served = store.claim(runner_id, token).value
        assert served.job_id == job_id
        clock.advance(30)
    store.sweep()
    assert store.events.count('judge_error', job_id=job_id) == 1


def test_inject_with_code_zip_serves_a_code_url_and_any_complete_to_a_taskless_job_is_400():
    store = make_store()
    runner_id, token = register(store)
    job_id = store.inject_job({'job_id': 'jb_x', 'tasks': 'nope'}, code_zip=b'PK-not-really')
    served = store.claim(runner_id, token).value
    assert served.code_path.startswith('/code/jb_x?sig=')
    signature = served.code_path.split('sig=')[1]
    assert store.code(job_id, signature).value == b'PK-not-really'
    assert store.complete(runner_id, token, job_id, AC).outcome is Outcome.REJECTED


def test_inject_refuses_non_json_values():
    store = make_store()
    with pytest.raises(ValueError):
        store.inject_job({'job_id': object()})


def test_reprs_hold_no_secrets():
    store = make_store()
    registration = store.register(REG, 'x').value
    texts = [repr(store), repr(store.settings), repr(registration), repr(store._runners)]
    for text in texts:
        assert REG not in text and SANDBOX not in text and registration.token not in text


def test_close_releases_result_waiters():
    store = make_store()
    sid = store.submit(1, 'c', 'x')
    errors = []

    def wait():
        try:
            store.wait_result(sid, 60)
        except TimeoutError as error:
            errors.append(error)

    waiter = threading.Thread(target=wait)
    waiter.start()
    store.close()
    waiter.join(10)
    assert not waiter.is_alive() and errors
