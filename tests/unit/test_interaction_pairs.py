"""An interactive case's two runs: one core for the pair, taken as a single
run's is, and a side that fails never leaves the other waiting for it."""
import threading

import pytest

from sandbox.container import SandboxBroken
from sandbox.engine import RunEngine, Want
from tests.unit.fakes import CASE_REQUEST, ended_run
from tests.unit.test_sandbox_cores import Cores

# A bound on a wait the code under test must end itself, not a pace.
NEVER_SEC = 30


class Container:

    def __init__(self, name, cores):
        self.name = name
        self.cores = cores
        self.broken = False
        self.aborted = threading.Event()
        self.cores_in_run = None

    def run(self, request, stdin, files=None, fifos=None):
        self.cores_in_run = self.cores.held
        return ended_run(exit_code=len(self.name))

    def abort(self):
        self.aborted.set()


class Pool:
    """Hands out one container per job key; without engine work only the
    keys in `ready`."""

    def __init__(self, cores, ready, make=Container):
        self.cores, self.ready, self.make = cores, set(ready), make
        self.asked = []  # (job key, engine_work, cores held when asked)
        self.made = []
        self.given_back = []

    def acquire(self, job_key, image, stage, engine_work=True, keep=frozenset()):
        self.asked.append((job_key, engine_work, self.cores.held))
        if not (engine_work or job_key in self.ready):
            return None
        self.made.append(self.make(job_key, self.cores))
        return self.made[-1]

    def give_back(self, container, broken=False):
        self.given_back.append(container.name)


WANTS = tuple(Want(key, 'image', lambda container: None) for key in ('j', 'j/interactor'))


def engine_with(ready, make=Container):
    cores = Cores()
    pool = Pool(cores, ready, make)
    return RunEngine(pool, cores, max_pairs=1, core_count=1), cores, pool


def pair(engine):
    return engine.pair(WANTS, (CASE_REQUEST, CASE_REQUEST), (None, None), {})


def test_a_pair_ready_without_the_engine_takes_one_core_then_both_containers():
    engine, cores, pool = engine_with(ready={'j', 'j/interactor'})
    pair(engine)
    assert [c.name for c in pool.made] == ['j', 'j/interactor']
    assert pool.asked == [('j', False, 1), ('j/interactor', False, 1)]
    assert [c.cores_in_run for c in pool.made] == [1, 1]  # one core for both
    assert cores.held == 0 and pool.given_back == ['j', 'j/interactor']


def test_a_pair_that_needs_the_engine_gets_its_second_container_with_no_core_held():
    engine, cores, pool = engine_with(ready={'j'})
    pair(engine)
    assert pool.asked == [('j', False, 1), ('j/interactor', False, 1), ('j/interactor', True, 0)]
    assert [c.cores_in_run for c in pool.made] == [1, 1]
    assert cores.held == 0


def test_a_failed_acquire_gives_back_what_the_pair_held_and_its_core():
    engine, cores, pool = engine_with(ready={'j'})

    def failing(job_key, image, stage, engine_work=True, keep=frozenset()):
        if engine_work:
            raise SandboxBroken('no room')
        return Container(job_key, cores) if job_key == 'j' else None

    pool.acquire = failing
    with pytest.raises(SandboxBroken):
        pair(engine)
    assert pool.given_back == ['j'] and cores.held == 0


class Side(Container):
    """A run that fails at once (the program's, or the interactor's), or
    ends only when aborted (a supervisor waiting for a peer that never
    opens its FIFO)."""
    failing = 'j'

    def run(self, request, stdin, files=None, fifos=None):
        if self.name == self.failing:
            raise SandboxBroken(f'{self.name} failed first')
        if not self.aborted.wait(NEVER_SEC):
            return ended_run()
        raise SandboxBroken(f'{self.name} aborted')


@pytest.mark.parametrize('failing', ['j', 'j/interactor'])
def test_when_one_side_fails_the_other_is_aborted_and_the_first_failure_raised(failing):

    class Failing(Side):
        pass

    Failing.failing = failing
    engine, cores, pool = engine_with(ready={'j', 'j/interactor'}, make=Failing)
    with pytest.raises(SandboxBroken, match=f'{failing} failed first'):
        pair(engine)
    other, = [c for c in pool.made if c.name != failing]
    assert other.aborted.is_set() and cores.held == 0


def test_two_sides_that_end_well_are_both_returned_and_neither_aborted():
    engine, _, pool = engine_with(ready={'j', 'j/interactor'})
    runs = pair(engine)
    assert [run.exit_code for run in runs] == [1, 12]
    assert not any(side.aborted.is_set() for side in pool.made)
