"""Registering with the backend, retried until it works or the runner stops."""
import logging
import random
import threading
from typing import Optional

from runner.backend.noj.client import BackendClient, BackendError, Unauthorized
from runner.backend.noj.inbound import Registration
from runner.version import VERSION
from runner.waiting import Wait, backoff_delay, jittered, wait_on

log = logging.getLogger(__name__)

BACKOFF_SEC = (1, 2, 4, 8, 16, 30)  # then 30 s forever


class RegistrationRefused(Exception):
    """The backend answered 401: the registration token is wrong (exit 1)."""


def register(client: BackendClient,
             registration_token: str,
             name: str,
             stop: threading.Event,
             *,
             wait: Wait = wait_on,
             rng: Optional[random.Random] = None) -> Optional[Registration]:
    """The registration, or None when `stop` was set first.

    Network errors, 5xx and malformed answers are retried with backoff; the
    backoff wakes on `stop` so a SIGTERM during registration exits promptly.
    """
    rng = rng or random.Random()
    failures = 0
    while not stop.is_set():
        try:
            registration = client.register(registration_token, name, VERSION)
        except Unauthorized:
            raise RegistrationRefused(
                'the backend refused RUNNER_REGISTRATION_TOKEN (401)') from None
        except BackendError as exc:
            delay = jittered(backoff_delay(BACKOFF_SEC, failures), rng)
            failures += 1
            log.warning('registration failed (%s); retrying in %.1f s', exc, delay)
            if wait(stop, delay):
                break
            continue
        log.info('registered as %s', registration.identity.runner_id)
        return registration
    log.info('stopped during registration')
    return None
