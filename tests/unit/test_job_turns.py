"""A run of a job with a run under way waits for it while the cores are
spoken for, so that a job's cases follow one another in its container; with
a core to spare it runs at once (sandbox/engine.py). The runs here follow
no other in its container (a TLE's rerun, made fresh): a job's plain cases
follow one another in a lane instead (test_lanes.py)."""
import dataclasses
import queue
import threading

import pytest

from sandbox.engine import RunEngine, Want
from sandbox.faults import Cancelled
from tests.unit.fakes import CASE_REQUEST, ended_run

WAIT_SEC = 10
ALONE = dataclasses.replace(CASE_REQUEST, fresh=True)


class Container:
    name = 'fake'
    broken = False

    def __init__(self, key, started, proceed):
        self.key, self._started, self._proceed = key, started, proceed

    def send(self, request, stdin, files=None):
        self._started.put(self.key)
        return request

    def answer(self, sent):
        assert self._proceed[self.key].wait(WAIT_SEC)
        return ended_run()


class Pool:
    """A container for every acquire: its runs report their start, then wait
    for their job's event. A job in `making` gets none without engine work,
    and its acquire with engine work (a new container) waits for its event
    there."""

    def __init__(self):
        self.started: 'queue.Queue[str]' = queue.Queue()
        self.proceed = {}
        self.making = {}
        self.aborted = []

    def acquire(self, job_key, image, stage, engine_work=True, keep=frozenset()):
        if job_key in self.making:
            if not engine_work:
                return None
            assert self.making[job_key].wait(WAIT_SEC)
        self.proceed.setdefault(job_key, threading.Event())
        return Container(job_key, self.started, self.proceed)

    def give_back(self, container, broken=False):
        pass

    def abort_runs(self, job_key):
        self.aborted.append(job_key)  # its runs go on: the cancel alone must end the wait


class Cores:
    """The host's cores, telling which job's run asks for one (each run's
    thread is named after its job)."""

    def __init__(self, count):
        self._slots = threading.BoundedSemaphore(count)
        self.asked: 'queue.Queue[str]' = queue.Queue()

    def acquire(self, timeout=None):
        self.asked.put(threading.current_thread().name)
        return self._slots.acquire(timeout=timeout)

    def release(self):
        self._slots.release()


class GatedCores(Cores):
    """Cores, but a run of a job in `gated` waits at its gate after asking."""

    def __init__(self, count):
        super().__init__(count)
        self.gated = {}

    def acquire(self, timeout=None):
        self.asked.put(threading.current_thread().name)
        gate = self.gated.get(threading.current_thread().name)
        if gate is not None:
            assert gate.wait(WAIT_SEC)
        return self._slots.acquire(timeout=timeout)


class Engine:

    def __init__(self, cores, cores_class=Cores):
        self.pool = Pool()
        self.cores = cores_class(cores)
        self.engine = RunEngine(self.pool, self.cores, max_pairs=1, core_count=cores)
        self.outcomes: 'queue.Queue[object]' = queue.Queue()

    def run(self, key):
        """A run of `key` on a thread of its own; its outcome is queued."""

        def one():
            try:
                self.outcomes.put(
                    self.engine.run(Want(key, 'image', lambda container: None), ALONE, None,
                                    lambda run, container: key))
            except Cancelled as exc:
                self.outcomes.put(exc)

        threading.Thread(target=one, name=key, daemon=True).start()

    def take_both_cores(self, *keys):
        """A run of each of `keys` asks for a core and starts, one after another."""
        for key in keys:
            self.run(key)
            assert self.asked_for_a_core() == key and self.started() == key

    def asked_for_a_core(self):
        return self.cores.asked.get(timeout=WAIT_SEC)

    def asks_for_no_core(self):
        with pytest.raises(queue.Empty):
            self.cores.asked.get(timeout=0.3)

    def started(self, timeout=WAIT_SEC):
        return self.pool.started.get(timeout=timeout)

    def nothing_started(self):
        with pytest.raises(queue.Empty):
            self.pool.started.get(timeout=0.3)

    def end(self, key):
        self.pool.proceed[key].set()
        self.pool.proceed[key] = threading.Event()  # the job's next run waits again
        assert self.outcomes.get(timeout=WAIT_SEC) == key


def test_a_jobs_run_waits_for_its_run_under_way_while_the_cores_are_spoken_for():
    two = Engine(cores=2)
    two.take_both_cores('a', 'b')
    two.run('a')
    # Both cores spoken for and a's first run under way: a's second waits
    # for it, asking for no core, while another job's run gets one.
    two.asks_for_no_core()
    two.run('c')
    assert two.asked_for_a_core() == 'c'
    two.end('b')
    assert two.started() == 'c'
    two.asks_for_no_core()
    two.end('a')  # its turn
    assert two.asked_for_a_core() == 'a' and two.started() == 'a'
    two.end('c')
    two.end('a')


def test_with_a_core_to_spare_a_jobs_runs_run_at_once():
    two = Engine(cores=2)
    two.run('a')
    assert two.started() == 'a'
    two.run('a')
    assert two.started() == 'a'
    two.end('a')
    two.end('a')


def test_a_cancel_ends_a_run_waiting_for_its_turn_at_once():
    one = Engine(cores=1)
    one.run('a')
    assert one.asked_for_a_core() == 'a' and one.started() == 'a'
    one.run('a')
    one.asks_for_no_core()
    one.engine.cancel(['a'])
    assert isinstance(one.outcomes.get(timeout=WAIT_SEC), Cancelled)  # the first still runs
    one.nothing_started()
    one.end('a')


def test_a_run_getting_a_new_container_does_not_speak_for_a_core():
    two = Engine(cores=2)
    made = two.pool.making['k'] = threading.Event()
    two.run('k')  # no container without the engine's work: it waits for a new one
    assert two.asked_for_a_core() == 'k'
    two.run('j')
    assert two.started() == 'j'
    two.run('j')  # one core runs j, none is asked for by k meanwhile: a core to spare
    assert two.started() == 'j'
    made.set()  # k waits for a core now
    two.end('j')
    two.end('j')
    assert two.started() == 'k'
    two.end('k')


def test_the_runs_waiting_for_their_turn_go_one_at_a_time_in_the_order_they_came():
    two = Engine(cores=2)
    two.take_both_cores('a', 'b')
    two.run('a')
    two.asks_for_no_core()
    two.run('a')
    two.asks_for_no_core()
    two.end('a')  # one of the two has its turn; the other waits for it
    assert two.asked_for_a_core() == 'a' and two.started() == 'a'
    two.asks_for_no_core()
    two.end('a')
    assert two.asked_for_a_core() == 'a' and two.started() == 'a'
    two.end('a')
    two.end('b')


def test_a_run_waiting_for_its_turn_goes_when_its_jobs_run_under_way_starts_getting_a_new_container(
):
    one = Engine(cores=1, cores_class=GatedCores)
    one.run('a')
    assert one.asked_for_a_core() == 'a' and one.started() == 'a'
    made = one.pool.making['k'] = threading.Event()
    gate = one.cores.gated['k'] = threading.Event()
    one.run('k')  # its turn (no run of k under way), then its core, at the gate
    assert one.asked_for_a_core() == 'k'
    one.run('k')  # k's first run is admitted and the core spoken for: it waits
    one.asks_for_no_core()
    one.end('a')
    one.asks_for_no_core()
    # k's first run gets the core, finds no container without the engine's
    # work and gives the core back for it: the core is no longer spoken for.
    gate.set()
    assert one.asked_for_a_core() == 'k'
    made.set()
    assert one.asked_for_a_core() == 'k' and one.asked_for_a_core() == 'k'
    assert one.started() == 'k'
    one.end('k')
    assert one.started() == 'k'
    one.end('k')
