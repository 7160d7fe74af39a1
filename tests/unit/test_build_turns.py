"""Builds of one key compile once at a time: a job waits for the one compile
it found in progress, never for a chain of them, and takes what it left; a
waiter whose job is cancelled stops waiting."""
import threading

import pytest

from sandbox.build_turns import BuildTurns
from sandbox.faults import Cancelled

WAIT = 10


def never():
    return False


class Job:
    """A thread that asks for `key`'s turn and stays in its block until told."""

    def __init__(self, turns, key, cancelled=never, leaves=None):
        self.entered, self.leave = threading.Event(), threading.Event()
        self.first = None
        self.found = None  # what the holder it waited for left
        self._leaves = leaves
        self.ended = []
        self._thread = threading.Thread(target=self._body,
                                        args=(turns, key, cancelled),
                                        daemon=True)
        self._thread.start()

    def _body(self, turns, key, cancelled):
        try:
            with turns.turn(key, cancelled) as turn:
                self.first, self.found = turn.held, turn.left
                if turn.held and self._leaves is not None:
                    turn.leave(self._leaves)
                self.entered.set()
                self.leave.wait(WAIT)
            self.ended.append('done')
        except Cancelled:
            self.ended.append('cancelled')

    def finish(self):
        self.leave.set()
        self._thread.join(WAIT)
        assert not self._thread.is_alive()


def test_a_job_of_a_build_in_progress_waits_for_its_compile():
    turns = BuildTurns()
    holder = Job(turns, 'k')
    assert holder.entered.wait(WAIT) and holder.first is True
    waiter = Job(turns, 'k')
    assert turns.wait_for(lambda held, waiting: waiting == 1, WAIT)
    assert not waiter.entered.is_set()
    holder.finish()
    assert waiter.entered.wait(WAIT) and waiter.first is False and waiter.found is None
    waiter.finish()
    assert waiter.ended == ['done']


def test_waiters_take_what_the_compile_they_waited_for_left():
    # A compile over the bound: its waiters take that CE, the next job
    # (which did not wait for it) compiles anew.
    turns = BuildTurns()
    holder = Job(turns, 'k', leaves='over the bound')
    assert holder.entered.wait(WAIT)
    waiters = [Job(turns, 'k') for _ in range(2)]
    assert turns.wait_for(lambda held, waiting: waiting == 2, WAIT)
    holder.finish()
    for waiter in waiters:
        waiter.finish()
        assert waiter.first is False and waiter.found == 'over the bound'
    later = Job(turns, 'k')
    assert later.entered.wait(WAIT) and later.first is True and later.found is None
    later.finish()


def test_waiters_wait_for_one_compile_never_for_each_other():
    # The holder's compile left no entry (a timeout): each waiter compiles
    # for itself, at once, not after one another.
    turns = BuildTurns()
    holder = Job(turns, 'k')
    assert holder.entered.wait(WAIT)
    waiters = [Job(turns, 'k') for _ in range(3)]
    assert turns.wait_for(lambda held, waiting: waiting == 3, WAIT)
    holder.finish()
    for waiter in waiters:
        assert waiter.entered.wait(WAIT)  # while the others are still in their blocks
    assert turns.wait_for(lambda held, waiting: held == 0, WAIT)
    later = Job(turns, 'k')  # came after: the build's turn is free again
    assert later.entered.wait(WAIT) and later.first is True
    for job in waiters + [later]:
        job.finish()


def test_other_builds_do_not_wait():
    turns = BuildTurns()
    holder = Job(turns, 'k')
    assert holder.entered.wait(WAIT)
    other = Job(turns, 'other')
    assert other.entered.wait(WAIT) and other.first is True
    holder.finish()
    other.finish()


def test_a_cancel_wakes_a_waiter_whose_job_it_is():
    turns = BuildTurns()
    holder = Job(turns, 'k')
    assert holder.entered.wait(WAIT)
    cancelled = threading.Event()
    waiter = Job(turns, 'k', cancelled.is_set)
    assert turns.wait_for(lambda held, waiting: waiting == 1, WAIT)
    cancelled.set()
    turns.wake()
    waiter.finish()
    assert waiter.ended == ['cancelled'] and not waiter.entered.is_set()
    assert turns.wait_for(lambda held, waiting: held == 1 and waiting == 0, WAIT)
    holder.finish()


def test_a_turn_whose_compile_fails_is_given_up():
    turns = BuildTurns()
    with pytest.raises(RuntimeError):
        with turns.turn('k', never):
            raise RuntimeError('the compile failed')
    job = Job(turns, 'k')
    assert job.entered.wait(WAIT) and job.first is True
    job.finish()


def test_a_job_cancelled_before_it_would_wait_does_not_wait():
    turns = BuildTurns()
    holder = Job(turns, 'k')
    assert holder.entered.wait(WAIT)
    waiter = Job(turns, 'k', lambda: True)
    waiter.finish()
    assert waiter.ended == ['cancelled']
    holder.finish()


def test_a_turn_left_by_any_exception_is_given_up():
    turns = BuildTurns()
    with pytest.raises(KeyboardInterrupt):
        with turns.turn('k', never):
            raise KeyboardInterrupt
    assert turns.wait_for(lambda held, waiting: held == 0, 0)
