"""An interactive case's two runs: one core for the pair, taken as a single
run's is, and a side that fails never leaves the other waiting for it."""
import pathlib
import threading

import pytest

from sandbox.container import SandboxBroken
from sandbox.docker_sandbox import DockerSandbox
from sandbox.job import SandboxJob
from sandbox.languages import Language
from sandbox.settings import SandboxSettings
from tests.unit.fakes import CASE_REQUEST, ended_run
from tests.unit.test_sandbox_cores import Cores

# A bound on a wait the code under test must end itself, not a pace.
NEVER_SEC = 30


class Container:

    def __init__(self, name):
        self.name = name
        self.broken = False
        self.aborted = threading.Event()


class Pool:
    """Hands out one container per job key; without engine work only the
    keys in `ready`."""

    def __init__(self, cores, ready):
        self.cores, self.ready = cores, set(ready)
        self.asked = []  # (job key, engine_work, cores held when asked)
        self.given_back = []

    def acquire(self, job_key, image, stage, engine_work=True):
        self.asked.append((job_key, engine_work, self.cores.held))
        return Container(job_key) if (engine_work or job_key in self.ready) else None

    def give_back(self, container, broken=False):
        self.given_back.append(container.name)


def sandbox_with(ready):
    sandbox = DockerSandbox(SandboxSettings(root=pathlib.Path('/nonexistent')), client=object())
    cores = sandbox._cpu_slots = Cores()
    pool = sandbox._pool = Pool(cores, ready)
    return sandbox, cores, pool


WANTS = [(SandboxJob(key=key,
                     language=Language.C, source_dir=pathlib.Path('/nonexistent')), 'image',
          pathlib.Path('/nonexistent')) for key in ('j', 'j/interactor')]


def test_a_pair_ready_without_the_engine_takes_one_core_then_both_containers():
    sandbox, cores, pool = sandbox_with(ready={'j', 'j/interactor'})
    containers = sandbox._containers_and_core(WANTS)
    assert [c.name for c in containers] == ['j', 'j/interactor']
    assert pool.asked == [('j', False, 1), ('j/interactor', False, 1)]
    assert cores.held == 1


def test_a_pair_that_needs_the_engine_gets_its_second_container_with_no_core_held():
    sandbox, cores, pool = sandbox_with(ready={'j'})
    containers = sandbox._containers_and_core(WANTS)
    assert [c.name for c in containers] == ['j', 'j/interactor']
    assert pool.asked == [('j', False, 1), ('j/interactor', False, 1), ('j/interactor', True, 0)]
    assert cores.held == 1 and pool.given_back == []


def test_a_failed_acquire_gives_back_what_the_pair_held_and_its_core():
    sandbox, cores, pool = sandbox_with(ready={'j'})

    def failing(job_key, image, stage, engine_work=True):
        if engine_work:
            raise SandboxBroken('no room')
        return Container(job_key) if job_key == 'j' else None

    pool.acquire = failing
    with pytest.raises(SandboxBroken):
        sandbox._containers_and_core(WANTS)
    assert pool.given_back == ['j'] and cores.held == 0


class Side(Container):
    """A run that fails at once, or ends only when aborted (a supervisor
    waiting for a peer that never opens its FIFO)."""

    def __init__(self, name, fails):
        super().__init__(name)
        self.fails = fails

    def run(self, request, stdin, files=None, fifos=None):
        if self.fails:
            raise SandboxBroken(f'{self.name} failed first')
        if not self.aborted.wait(NEVER_SEC):
            return ended_run()
        raise SandboxBroken(f'{self.name} aborted')

    def abort(self):
        self.aborted.set()


@pytest.mark.parametrize('failing', [0, 1])
def test_when_one_side_fails_the_other_is_aborted_and_the_first_failure_raised(failing):
    sandbox, _, _ = sandbox_with(ready=())
    sides = [Side('program', fails=failing == 0), Side('interactor', fails=failing == 1)]
    with pytest.raises(SandboxBroken, match=f'{sides[failing].name} failed first'):
        sandbox._both(sides, [CASE_REQUEST, CASE_REQUEST], [None, None], {})
    assert sides[1 - failing].aborted.is_set()


def test_two_sides_that_end_well_are_both_returned_and_neither_aborted():
    sandbox, _, _ = sandbox_with(ready=())

    class Ends(Container):

        def run(self, request, stdin, files=None, fifos=None):
            return ended_run(exit_code=len(self.name))

        def abort(self):
            self.aborted.set()

    sides = [Ends('p'), Ends('ia')]
    runs = sandbox._both(sides, [CASE_REQUEST, CASE_REQUEST], [None, None], {})
    assert [run.exit_code for run in runs] == [1, 2]
    assert not any(side.aborted.is_set() for side in sides)
