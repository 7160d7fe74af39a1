import hashlib
import os
import stat
import threading

import pytest

from localbackend.algojudge.server import AlgoJudgeServer
from localbackend.algojudge.store import Store
from runner.backend.algojudge.client import AlgoJudgeClient, DigestMismatch, Refused
from runner.backend.algojudge.identity import KeyFileError, load_or_create
from runner.backend.algojudge.enrolment import Revoked, enrol
from runner.backend.algojudge.wire import State


@pytest.fixture
def store():
    return Store(min_lease_sec=1)


@pytest.fixture
def server(store):
    server = AlgoJudgeServer(store)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def key(tmp_path):
    return load_or_create(tmp_path / 'keys' / 'runner.key')


@pytest.fixture
def client(server, key):
    return AlgoJudgeClient(server.url, key)


def approved(client, store):
    runner = client.register('host-1', '1.0', {'cores': 2})
    store.approve(runner.runner_id)
    return runner


def test_the_key_file_is_made_once_private_and_kept(tmp_path):
    path = tmp_path / 'runner.key'
    first = load_or_create(path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert len(path.read_bytes()) == 32
    assert load_or_create(path).fingerprint == first.fingerprint
    assert first.fingerprint not in repr(first) or len(repr(first)) < 60
    assert path.read_bytes().hex() not in repr(first)


def test_a_malformed_key_file_is_a_configuration_error_and_left_alone(tmp_path):
    path = tmp_path / 'runner.key'
    path.write_bytes(b'-----BEGIN PRIVATE KEY-----\n')
    with pytest.raises(KeyFileError, match='not an Ed25519 key file'):
        load_or_create(path)
    assert path.read_bytes() == b'-----BEGIN PRIVATE KEY-----\n'


def test_two_starts_at_once_make_one_key(tmp_path):
    path = tmp_path / 'runner.key'
    barrier = threading.Barrier(4)
    found = []

    def start():
        barrier.wait()
        found.append(load_or_create(path).fingerprint)

    threads = [threading.Thread(target=start) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(found) == 4 and len(set(found)) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ['runner.key']


def test_register_wait_for_approval_then_a_token(client, store):
    runner = client.register('host-1', '1.0', {'cores': 2})
    assert runner.state is State.PENDING
    with pytest.raises(Refused) as refused:
        client.handshake()
    assert refused.value.code == 'runner.notApproved'
    store.approve(runner.runner_id)
    client.handshake()
    client.heartbeat()
    # Every start registers again, signed now that the key is known.
    again = client.register('host-1', '1.1', {'cores': 2})
    assert (again.runner_id, again.state) == (runner.runner_id, State.APPROVED)
    assert store.runners[runner.runner_id].registrations == 2
    assert store.violations == []


def test_a_revoked_runner_is_told_so_when_it_registers(client, store):
    runner = approved(client, store)
    store.revoke(runner.runner_id)
    with pytest.raises(Refused) as refused:
        client.register('host-1', '1.0', {})
    assert (refused.value.problem.status, refused.value.code) == (409, 'runner.revoked')


def test_a_401_makes_the_handshake_again_and_repeats_the_call(client, store):
    approved(client, store)
    client.heartbeat()
    store.forget_tokens()  # the server restarted
    client.heartbeat()
    assert store.heartbeats == 2


def test_claim_nothing_then_a_job_with_its_lease_read_off_the_servers_clock(client, store):
    approved(client, store)
    assert client.claim(lease_sec=60, wait_sec=0) == (None, None)
    job_id = store.add_job(b'zip', b'int main(){}', 'main.c', 'c11-gcc')
    claimed, granted = client.claim(lease_sec=60, wait_sec=0)
    assert claimed.job_id == job_id and claimed.defect is None
    assert claimed.language == 'c11-gcc' and claimed.source.file_name == 'main.c'
    assert 58 <= granted <= 61
    assert claimed.lease_token not in repr(claimed)


def test_the_lease_is_read_off_a_date_header_in_any_case(client, store, monkeypatch):
    # HTTP header names are case-insensitive; some servers write `date:`.
    from localbackend.algojudge import server as server_module
    send_header = server_module._Handler.send_header
    monkeypatch.setattr(server_module._Handler, 'send_header',
                        lambda self, name, value: send_header(self, name.lower(), value))
    approved(client, store)
    store.add_job(b'zip', b'int main(){}', 'main.c', 'c11-gcc')
    _, granted = client.claim(lease_sec=60, wait_sec=0)
    assert granted is not None and 58 <= granted <= 61


def test_a_held_claim_is_answered_when_work_comes(client, store):
    approved(client, store)
    got = []
    asking = threading.Thread(target=lambda: got.append(client.claim(60, wait_sec=20)))
    asking.start()
    assert store.wait(lambda: store.held_claims == 1, 10)
    job_id = store.add_job(b'zip', b'x', 'main.py', 'python3')
    asking.join(30)
    assert got and got[0][0].job_id == job_id


def test_a_job_without_a_package_is_held_and_defective(client, store):
    approved(client, store)
    store.add_job(None, b'x', 'main.py', 'python3')
    claimed, _ = client.claim(60, 0)
    assert claimed.defect == 'the problem version has no package'


def test_leases_renew_one_and_all_and_a_released_job_is_not_mine(client, store):
    approved(client, store)
    store.add_job(b'zip', b'x', 'main.py', 'python3')
    claimed, _ = client.claim(60, 0)
    assert client.renew(claimed.job_id, claimed.lease_token, 60).job_id == claimed.job_id
    (item, ) = client.renew_all([(claimed.job_id, claimed.lease_token)], 60)
    assert (item.job_id, item.code) == (claimed.job_id, None)
    client.release(claimed.job_id, claimed.lease_token)
    client.release(claimed.job_id, claimed.lease_token)  # stale: already back, fine
    with pytest.raises(Refused) as refused:
        client.renew(claimed.job_id, claimed.lease_token, 60)
    assert refused.value.not_mine
    (item, ) = client.renew_all([(claimed.job_id, claimed.lease_token)], 60)
    assert item.code == 'runner.lease.stale'


def test_a_cancelled_job_is_not_mine(client, store):
    approved(client, store)
    store.add_job(b'zip', b'x', 'main.py', 'python3')
    claimed, _ = client.claim(60, 0)
    store.cancel(claimed.job_id)
    with pytest.raises(Refused) as refused:
        client.renew(claimed.job_id, claimed.lease_token, 60)
    assert (refused.value.code, refused.value.not_mine) == ('job.state', True)


def test_downloads_are_hashed_while_they_stream(client, store, tmp_path):
    approved(client, store)
    store.add_job(b'the package', b'x', 'main.py', 'python3')
    claimed, _ = client.claim(60, 0)
    dest = tmp_path / 'package.zip'
    size = client.download(claimed.package_file_id,
                           claimed.package_sha256,
                           dest,
                           max_bytes=1000,
                           deadline_sec=10,
                           stop=None)
    assert (size, dest.read_bytes()) == (11, b'the package')
    with pytest.raises(DigestMismatch):
        client.download(claimed.package_file_id,
                        hashlib.sha256(b'other').hexdigest(),
                        dest,
                        max_bytes=1000,
                        deadline_sec=10,
                        stop=None)
    assert not dest.exists()
    with pytest.raises(Refused) as refused:
        client.download('no-such-file',
                        claimed.package_sha256,
                        dest,
                        max_bytes=1000,
                        deadline_sec=10,
                        stop=None)
    assert refused.value.problem.status == 404


def test_upload_attach_report_and_a_resend_is_a_duplicate(client, store):
    approved(client, store)
    store.add_job(b'zip', b'x', 'main.py', 'python3')
    claimed, _ = client.claim(60, 0)
    file_id = client.upload('details.json', 'application/json', b'{"type": "standard-io@1"}')
    client.attach(claimed.job_id, claimed.lease_token, file_id, 'details')
    client.attach(claimed.job_id, claimed.lease_token, file_id, 'details')  # already: fine
    body = {
        'leaseToken': claimed.lease_token,
        'infrastructureFailure': False,
        'score': 100,
        'maxScore': 100,
        'verdict': 'Accepted'
    }
    first = client.report(claimed.job_id, body)
    again = client.report(claimed.job_id, body)
    assert (first.state, first.duplicate, again.duplicate) == ('completed', False, True)
    assert store.result(claimed.job_id)['_attachments'] == {'details': file_id}
    assert store.violations == []


def test_maintenance_is_a_transient_refusal_with_its_delay(client, store):
    approved(client, store)
    store.maintenance = 'closed'
    assert client.health_level() == 'closed'
    with pytest.raises(Refused) as refused:
        client.heartbeat()
    assert refused.value.transient and refused.value.problem.retry_after_sec == 1
    store.maintenance = 'open'
    assert client.health_level() == 'open'


def test_no_token_in_messages_or_reprs(client, store):
    approved(client, store)
    client.heartbeat()
    token = client._token
    assert token and token not in repr(client)
    store.maintenance = 'closed'
    with pytest.raises(Refused) as refused:
        client.heartbeat()
    assert token not in str(refused.value)


def waits_approving_after(store, n):
    """A wait that approves the runner (an administrator) after `n` waits."""
    seen = []

    def wait(stop, seconds):
        seen.append(seconds)
        if len(seen) == n:
            store.approve(next(iter(store.runners)))
        return False

    return wait, seen


def test_waiting_for_approval_has_no_timeout(client, store):
    wait, seen = waits_approving_after(store, 40)  # ten minutes and more of asking
    runner_id = enrol(client, 'host-1', threading.Event(), wait=wait)
    assert runner_id == next(iter(store.runners))
    assert len(seen) == 40 and max(seen) <= 15 * 1.2  # capped, jittered
    client.heartbeat()  # it holds a token


def test_a_maintenance_window_is_waited_out_while_joining(client, store):
    store.maintenance = 'closed'
    seen = []

    def wait(stop, seconds):
        seen.append(seconds)
        store.maintenance = 'open'
        store.auto_approve = True
        return False

    assert enrol(client, 'host-1', threading.Event(), wait=wait) is not None
    assert len(seen) == 1


def test_joining_as_a_revoked_runner_stops(client, store):
    runner = approved(client, store)
    store.revoke(runner.runner_id)
    with pytest.raises(Revoked):
        enrol(client, 'host-1', threading.Event(), wait=lambda stop, s: False)


def test_a_stop_while_waiting_for_approval_ends_the_wait(client, store):
    stop = threading.Event()

    def wait(stop_event, seconds):
        stop.set()
        return True

    assert enrol(client, 'host-1', stop, wait=wait) is None


def test_a_claim_waits_longer_than_the_wait_it_asks(client, store):
    approved(client, store)
    seen = {}
    original = client._send

    def spy(method, path, what, **kw):
        seen[path] = kw.get('read_timeout')
        return original(method, path, what, **kw)

    client._send = spy
    client.claim(lease_sec=60, wait_sec=1)
    assert seen['/runner/jobs/claim'] >= 1 + 15
