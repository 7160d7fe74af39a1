"""Fixtures shared by the unit tests: dispatchers, a running local backend."""
import pytest

from dispatcher.dispatcher import Dispatcher
from tests.unit.fake_sandbox import GUARD_SEC, Completions
from tests.unit.test_localbackend_helpers import TIMEOUT, start_backend


@pytest.fixture
def make_dispatcher():
    made = []

    def make(sandbox, max_workers=1, start=True, on_complete=None):
        completions = on_complete if on_complete is not None else Completions()
        dispatcher = Dispatcher(sandbox, completions, max_workers)
        made.append(dispatcher)
        if start:
            dispatcher.start()
        return dispatcher, completions

    yield make
    for dispatcher in made:
        dispatcher.stop()
    for dispatcher in made:
        dispatcher.join(GUARD_SEC)


@pytest.fixture
def backend():
    backend = start_backend()
    yield backend
    backend.stop()
    backend.join(TIMEOUT)
