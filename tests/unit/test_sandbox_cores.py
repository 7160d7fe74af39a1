"""A run holds a core, and waits for one holding no container that another
job could take over; getting a container that needs the engine holds no core."""
import threading

from sandbox.engine import RunEngine, Want
from tests.unit.fakes import CASE_REQUEST, ended_run

REQUEST = CASE_REQUEST


class Cores:
    """The core slots, counted."""

    def __init__(self):
        self.held = 0
        self._lock = threading.Lock()

    def acquire(self):
        with self._lock:
            self.held += 1

    def release(self):
        with self._lock:
            self.held -= 1

    def __enter__(self):
        self.acquire()

    def __exit__(self, *exc):
        self.release()


class Container:
    name = 'fake'
    broken = False

    def __init__(self, cores):
        self.cores = cores
        self.cores_in_run = None

    def send(self, request, stdin, files=None):
        self.cores_in_run = self.cores.held
        return request

    def answer(self, sent):
        return ended_run()


class Pool:
    """Hands out a container without engine work only when `ready`."""

    def __init__(self, cores, ready):
        self.cores, self.ready = cores, ready
        self.container = Container(cores)
        self.asked = []  # (engine_work, cores held when asked)
        self.given_back = []

    def acquire(self, job_key, image, stage, engine_work=True, keep=frozenset()):
        self.asked.append((engine_work, self.cores.held))
        return self.container if (engine_work or self.ready) else None

    def give_back(self, container, broken=False):
        self.given_back.append((container, self.cores.held))


def attempt(ready):
    cores = Cores()
    pool = Pool(cores, ready)
    engine = RunEngine(pool, cores, max_pairs=1, core_count=1)
    finished = []
    engine.run(Want('k', 'img', lambda container: None), REQUEST, None,
               lambda run, container: finished.append(cores.held))
    return cores, pool, finished


def test_a_container_ready_without_the_engine_is_taken_with_the_core_held():
    cores, pool, finished = attempt(ready=True)
    assert pool.asked == [(False, 1)]
    assert pool.container.cores_in_run == 1
    assert finished == [0] and pool.given_back == [(pool.container, 0)] and cores.held == 0


def test_a_container_that_needs_the_engine_is_got_with_no_core_held():
    cores, pool, finished = attempt(ready=False)
    assert pool.asked == [(False, 1), (True, 0)]
    assert pool.container.cores_in_run == 1
    assert finished == [0] and cores.held == 0
