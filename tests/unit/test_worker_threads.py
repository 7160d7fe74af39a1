"""Worker threads: items handled in order, a stop is a flush, a failing item
neither stops its thread nor shows its repr in the log."""
import logging

from runner.threads import WorkerThreads

JOIN_SEC = 10


class Secret:

    def __repr__(self):
        return 'Secret(token=lt_hunter2)'


def test_a_stop_flushes_what_was_submitted_before_it():
    handled = []
    workers = WorkerThreads('w', 1, handled.append)
    for item in range(5):
        workers.submit(item)
    workers.stop()
    workers.start()  # started after the stop: the flush still covers every item
    assert workers.join(JOIN_SEC)
    assert handled == [0, 1, 2, 3, 4]


def test_a_failing_item_is_logged_without_its_repr_and_the_thread_goes_on(caplog):
    handled = []

    def handle(item):
        if isinstance(item, Secret):
            raise RuntimeError('a bug')
        handled.append(item)

    workers = WorkerThreads('w', 1, handle)
    workers.start()
    workers.submit(Secret())
    workers.submit('next')
    workers.stop()
    with caplog.at_level(logging.ERROR):
        assert workers.join(JOIN_SEC)
    assert handled == ['next']
    assert 'handling an item failed' in caplog.text and 'lt_hunter2' not in caplog.text


def test_threads_that_never_started_are_joined_at_once():
    assert WorkerThreads('w', 3, print).join(0)
