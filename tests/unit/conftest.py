"""Fixtures shared by the unit tests: dispatchers."""
import pytest

from dispatcher.dispatcher import Dispatcher
from tests.unit.fake_sandbox import GUARD_SEC, Completions


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
