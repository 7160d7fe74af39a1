"""The host's cores as runs get them: one run more than the cores may share
one, never beside a run that may not, nor past one waiting
(sandbox/run_slots.py)."""
import queue
import threading

import pytest

from sandbox.run_slots import RunSlots

WAIT_SEC = 10


class Runs:
    """Runs taking slots on threads of their own, each saying when it has one."""

    def __init__(self, cores):
        self.slots = RunSlots(cores)
        self.let_in: 'queue.Queue[str]' = queue.Queue()

    def start(self, name, shares):

        def take():
            self.slots.acquire(shares=shares)
            self.let_in.put(name)

        threading.Thread(target=take, daemon=True).start()

    def next_in(self):
        return self.let_in.get(timeout=WAIT_SEC)

    def none_in(self):
        with pytest.raises(queue.Empty):
            self.let_in.get(timeout=0.3)


def test_on_two_cores_three_runs_that_may_share_run_and_a_fourth_waits():
    runs = Runs(cores=2)
    for name in ('a', 'b', 'c'):
        runs.start(name, shares=True)
        assert runs.next_in() == name
    runs.start('d', shares=True)
    runs.none_in()
    runs.slots.release(shares=True)
    assert runs.next_in() == 'd'


def test_a_run_that_may_not_share_waits_for_a_core_of_its_own_and_holds_back_the_one_beyond():
    runs = Runs(cores=2)
    runs.start('a', shares=True)
    runs.start('b', shares=True)
    assert {runs.next_in(), runs.next_in()} == {'a', 'b'}
    runs.start('compile', shares=False)
    runs.none_in()  # both cores are under way
    runs.start('c', shares=True)
    runs.none_in()  # the slot beyond the cores is not taken past the compile
    runs.slots.release(shares=True)
    assert runs.next_in() == 'compile'
    runs.none_in()  # beside it, no run shares a core
    runs.slots.release(shares=True)
    assert runs.next_in() == 'c'
    runs.start('d', shares=True)
    runs.none_in()
    runs.slots.release(shares=False)
    assert runs.next_in() == 'd'  # the compile is done: the slot beyond is free again


def test_on_one_core_no_run_shares_it():
    runs = Runs(cores=1)
    runs.start('a', shares=True)
    assert runs.next_in() == 'a'
    runs.start('b', shares=True)
    runs.none_in()
    runs.slots.release(shares=True)
    assert runs.next_in() == 'b'


def test_runs_are_let_in_first_come_first():
    runs = Runs(cores=2)
    for name in ('a', 'b', 'c'):
        runs.start(name, shares=True)
        assert runs.next_in() == name
    for name in ('d', 'e', 'f'):
        runs.start(name, shares=True)
        runs.none_in()
    for name in ('d', 'e', 'f'):
        runs.slots.release(shares=True)
        assert runs.next_in() == name


def test_a_slot_released_more_often_than_taken_is_a_bug_said_at_once():
    slots = RunSlots(2)
    slots.acquire(shares=True)
    with pytest.raises(RuntimeError):
        slots.release(shares=False)  # it was taken as a run that shares
    slots.release(shares=True)
    with pytest.raises(RuntimeError):
        slots.release(shares=True)


def test_only_a_cases_program_may_share_a_core_and_never_its_checker(tmp_path):
    import dataclasses

    from sandbox.graders.checker import CheckerGrader
    from sandbox.job import CaseSpec, Role
    from tests.unit.fakes import ScriptedEngine, grader_of
    from tests.unit.test_verdict import OK

    (tmp_path / 'in').write_bytes(b'1 2\n')
    (tmp_path / 'out').write_bytes(b'3\n')
    engine = ScriptedEngine(lambda want, request: dataclasses.replace(OK, stdout=b'OK\n'))
    grader_of(CheckerGrader, engine, tmp_path, problem_program=Role.CHECKER).grade(
        CaseSpec(tmp_path / 'in', tmp_path / 'out', 1000, 65536))
    assert engine.shared == {'j': True, 'j/checker': False}


def test_compiles_pairs_and_the_self_test_take_a_core_of_their_own():
    from sandbox.engine import RunEngine, Want
    from tests.unit.fakes import CASE_REQUEST
    from tests.unit.test_sandbox_cores import Cores, Pool

    cores = Cores()
    engine = RunEngine(Pool(cores, ready=True), cores, max_pairs=1, core_count=1)
    engine.run(Want('k', 'img', lambda container: None), CASE_REQUEST, None, lambda run, c: None)
    with engine.core():
        pass
    engine.run(Want('k', 'img', lambda container: None),
               CASE_REQUEST,
               None,
               lambda run, c: None,
               shares=True)
    assert cores.shared == [False, False, True]
