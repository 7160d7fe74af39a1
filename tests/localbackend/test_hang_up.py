"""A runner that stops hangs up its long poll and reads its answer (protocol
§2): the bundled backend ends a hung-up poll at once, leasing it nothing,
and the runner's client sends nothing more once hung up."""
import threading

import pytest

from runner.backend.http_session import BackendError
from runner.backend.noj.client import BackendClient
from runner.backend.noj.inbound import RunnerIdentity
from tests.localbackend.helpers import TIMEOUT, HttpRunner

# Far below the poll's own wait (25 s) and its read timeout (35 s).
PROMPT_SEC = 10


def client_of(backend):
    runner = HttpRunner(backend, 'r')
    return BackendClient(backend.url, identity=RunnerIdentity(runner.runner_id,
                                                              runner.token)), runner


def test_a_held_long_poll_hung_up_is_ended_by_the_backend_leasing_nothing(backend):
    client, runner = client_of(backend)
    answers = []
    polling = threading.Thread(target=lambda: answers.append(client.next_job(25)), daemon=True)
    polling.start()
    backend.events.wait_for('long_poll', timeout=TIMEOUT, runner_id=runner.runner_id)
    client.hang_up()
    polling.join(PROMPT_SEC)
    assert not polling.is_alive() and answers == [None]
    assert backend.events.count('claim', outcome='abandoned') == 1


def test_a_hung_up_client_asks_nothing_more(backend):
    client, runner = client_of(backend)
    backend.submit(1, 'c', 'int main(){}')
    assert client.next_job(0) is not None  # its connection stays in the pool
    claims = backend.events.count('claim')
    client.hang_up()
    with pytest.raises(BackendError):
        client.next_job(25)
    assert backend.events.count('claim') == claims
    assert backend.events.count('long_poll') == 0
