"""Joining an AlgoJudge server (docs/algojudge.md §2): register (every
start does: that is how a restart is reported), wait for an administrator's
approval for as long as it takes, then make the handshake for a token.

Waiting for approval is not a fault and has no timeout; the server being
away (the network, 5xx, maintenance) is waited out too. A revoked runner
stops (`Revoked`): a new key and a new approval are a person's decision.
A refusal that means this runner broke the contract (a malformed key, a
fingerprint the server computes differently) is not retried: `Refused`
goes up as a configuration error.
"""
import logging
import os
import platform
import random
import threading
from typing import Any, Dict, Optional

from runner.backend.algojudge.client import UNKNOWN_KEY, AlgoJudgeClient, BadAnswer, Refused
from runner.backend.algojudge.wire import State
from runner.backend.http_session import BackendError
from runner.version import VERSION
from runner.waiting import Wait, jittered, wait_on

log = logging.getLogger(__name__)

BACKOFF_SEC = (1, 2, 4, 8, 15)  # then every 15 s, for as long as it takes
_RETRIED = ('runner.notApproved', 'runner.nonce.unknown', 'runner.nonce.expired',
            'runner.nonce.mismatch', 'runner.signature')


class Rejoin:
    """A request, from any thread, to join the server again (approval
    withdrawn, the key forgotten); the claimer carries it out, claiming
    nothing meanwhile."""

    def __init__(self):
        self._asked = threading.Event()

    def ask(self, why: str) -> None:
        if not self._asked.is_set():
            log.error('%s: asking the server where this runner stands', why)
        self._asked.set()

    def take(self) -> bool:
        """Whether it was asked (and from now on, not any more)."""
        asked = self._asked.is_set()
        self._asked.clear()
        return asked


class Revoked(Exception):
    """The server revoked this runner: exit, never retry."""


class EnrolmentRefused(Exception):
    """The server refused this runner for a reason retrying will not change."""


def enrol(client: AlgoJudgeClient,
          name: str,
          stop: threading.Event,
          *,
          wait: Wait = wait_on,
          rng: Optional[random.Random] = None) -> Optional[str]:
    """The runner's id, once approved and holding a token; None when a stop
    came first."""
    rng = rng or random.Random()
    registered = None
    told = False
    attempt = 0
    while not stop.is_set():
        try:
            if registered is None:
                registered = client.register(name, VERSION, machine())
                log.info('registered with the server as runner %s (%s), key %s',
                         registered.runner_id,
                         registered.state.value if registered.state else 'an unknown state',
                         client_key_fingerprint(client))
            if registered.state is State.REVOKED:
                raise Revoked('the server says this runner is revoked')
            client.handshake()
            log.info('approved: holding a token')
            return registered.runner_id
        except Refused as exc:
            retry_after = exc.problem.retry_after_sec or 0
            if exc.code == 'runner.revoked':
                raise Revoked('the server says this runner is revoked') from None
            if exc.code in ('runner.notApproved', UNKNOWN_KEY):
                if exc.code == 'runner.notApproved' and not told:
                    told = True
                    log.warning(
                        'waiting for an administrator to approve runner %s (key fingerprint '
                        '%s) on the server; this may take any time',
                        registered.runner_id if registered else '?', client_key_fingerprint(client))
                # Registered again next time: that is how a revocation while
                # waiting shows (409), or a server that forgot the key.
                registered = None
            elif exc.code in _RETRIED or exc.transient:
                log.info('joining the server: %s; trying again', exc)
            else:
                raise EnrolmentRefused(f'{exc} ({exc.problem.detail})') from None
        except BadAnswer as exc:
            raise EnrolmentRefused(str(exc)) from None
        except BackendError as exc:
            retry_after = 0
            log.warning('joining the server: %s; trying again', exc)
        delay = max(jittered(BACKOFF_SEC[min(attempt, len(BACKOFF_SEC) - 1)], rng), retry_after)
        attempt += 1
        if wait(stop, delay):
            break
    return None


def machine() -> Dict[str, Any]:
    """What the server's panel shows of this host."""
    facts: Dict[str, Any] = {'os': platform.platform()[:100], 'cores': os.cpu_count() or 1}
    cpu = platform.processor() or platform.machine()
    if cpu:
        facts['cpu'] = cpu[:100]
    try:
        facts['memoryBytes'] = os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES')
    except (ValueError, OSError):
        pass
    return facts


def client_key_fingerprint(client: AlgoJudgeClient) -> str:
    """What an administrator matches against the panel (a prefix is enough)."""
    return client.fingerprint[:16]
