"""Fixtures of the local backend's tests: a running local backend."""
import pytest

from tests.localbackend.helpers import TIMEOUT, start_backend


@pytest.fixture
def backend():
    backend = start_backend()
    yield backend
    backend.stop()
    backend.join(TIMEOUT)
