"""Builds of one key compile one at a time; a waiter whose job is cancelled
stops waiting."""
import threading

import pytest

from sandbox.build_turns import BuildTurns
from sandbox.faults import Cancelled

WAIT = 10


def never():
    return False


def waiter(turns, key, cancelled=never):
    """A thread that takes `key`'s turn and holds it until told: its
    events say when it got the turn and how it ended."""
    got, leave, ended = threading.Event(), threading.Event(), []

    def body():
        try:
            with turns.turn(key, cancelled):
                got.set()
                leave.wait(WAIT)
            ended.append('done')
        except Cancelled:
            ended.append('cancelled')

    thread = threading.Thread(target=body, daemon=True)
    thread.start()
    return got, leave, ended, thread


def test_a_second_job_of_the_same_build_waits_for_the_first():
    turns = BuildTurns()
    first_got, first_leaves, _, first = waiter(turns, 'k')
    assert first_got.wait(WAIT)
    second_got, second_leaves, ended, second = waiter(turns, 'k')
    assert turns.wait_for(lambda held, waiting: waiting == 1, WAIT)
    assert not second_got.is_set()
    first_leaves.set()
    assert second_got.wait(WAIT)
    second_leaves.set()
    second.join(WAIT)
    first.join(WAIT)
    assert ended == ['done']


def test_other_builds_do_not_wait():
    turns = BuildTurns()
    first_got, first_leaves, _, first = waiter(turns, 'k')
    assert first_got.wait(WAIT)
    other_got, other_leaves, _, other = waiter(turns, 'other')
    assert other_got.wait(WAIT)
    first_leaves.set()
    other_leaves.set()
    first.join(WAIT)
    other.join(WAIT)


def test_a_cancel_wakes_a_waiter_whose_job_it_is():
    turns = BuildTurns()
    first_got, first_leaves, _, first = waiter(turns, 'k')
    assert first_got.wait(WAIT)
    cancelled = threading.Event()
    second_got, _, ended, second = waiter(turns, 'k', cancelled.is_set)
    assert turns.wait_for(lambda held, waiting: waiting == 1, WAIT)
    cancelled.set()
    turns.wake()
    second.join(WAIT)
    assert ended == ['cancelled'] and not second_got.is_set()
    assert turns.wait_for(lambda held, waiting: waiting == 0, WAIT)
    first_leaves.set()
    first.join(WAIT)


def test_a_turn_that_fails_is_given_up():
    turns = BuildTurns()
    with pytest.raises(RuntimeError):
        with turns.turn('k', never):
            raise RuntimeError('the compile failed')
    got, leaves, _, thread = waiter(turns, 'k')
    assert got.wait(WAIT)
    leaves.set()
    thread.join(WAIT)
