"""A job's plain cases follow one another in a lane (sandbox/engine.py): while
the cores are spoken for, or the job is quick, the next is sent to the
container of the run under way, on its core, before that run has ended; the
lane's last run lets go of the core, the container and the turn. A case
whose wait in the lane looks long takes a core to spare beside it."""
import dataclasses
import queue
import threading

import pytest

from sandbox.container import AheadFailed, SandboxBroken
from sandbox.engine import LANE_WAIT_MS, MAX_LANE_RUNS, RunEngine, Want
from sandbox.faults import Cancelled
from sandbox.protocol import Kind
from tests.unit.fakes import CASE_REQUEST, ended_run
from tests.unit.test_job_turns import Cores

WAIT_SEC = 10
QUIET_SEC = 0.3


@dataclasses.dataclass(eq=False)
class Run:
    """A run sent to a container: it waits at its gate, then ends (or fails)."""
    name: str
    container: 'Container'
    gate: threading.Event = dataclasses.field(default_factory=threading.Event)
    fails: object = None
    wall_ms: int = 12

    def end(self, fails=None, wall_ms=12):
        self.fails, self.wall_ms = fails, wall_ms
        self.gate.set()


class Container:

    def __init__(self, name, sent, send_gates):
        self.name, self._sent, self._send_gates, self.aborted = name, sent, send_gates, False
        self.broken = False
        self.runs = []

    def send(self, request, stdin, files=None):
        gate = self._send_gates.get(stdin)
        if gate is not None:
            assert gate.wait(WAIT_SEC)
        run = Run(stdin, self)
        self.runs.append(run)
        self._sent.put(run)
        return run

    def answer(self, run):
        assert run.gate.wait(WAIT_SEC)
        if self.aborted:
            raise SandboxBroken('killed')
        if run.fails is not None:
            self.broken = True
            raise run.fails
        return ended_run(wall_us=run.wall_ms * 1000)

    def abort(self):
        self.aborted = self.broken = True
        for run in self.runs:
            run.gate.set()


class Pool:

    def __init__(self):
        self.sent: 'queue.Queue[Run]' = queue.Queue()
        self.given_back: 'queue.Queue[tuple]' = queue.Queue()
        self.made = 0
        self.in_runs = {}
        self.send_gates = {}  # a run named here is sent once its event is set

    def acquire(self, job_key, image, stage, engine_work=True, keep=frozenset()):
        self.made += 1
        container = Container(f'c{self.made}', self.sent, self.send_gates)
        self.in_runs[container] = job_key
        return container

    def give_back(self, container, broken=False):
        del self.in_runs[container]
        self.given_back.put((container.name, broken))

    def abort_runs(self, job_key):
        for container, key in list(self.in_runs.items()):
            if key == job_key:
                container.abort()


class Rig:

    def __init__(self, cores):
        self.pool = Pool()
        self.cores = Cores(cores)
        self.engine = RunEngine(self.pool, self.cores, max_pairs=1, core_count=cores)
        self.outcomes = {}
        self.finish_gates = {}  # a run named here is finished once its event is set

    def start(self, name, request=CASE_REQUEST, files=None):
        """A run of job `name[0]`, named `name`, on a thread of its own."""
        outcome: 'queue.Queue[object]' = queue.Queue()
        self.outcomes[name] = outcome

        def finish(run, container):
            gate = self.finish_gates.get(name)
            if gate is not None:
                assert gate.wait(WAIT_SEC)
            return container.name

        def one():
            try:
                outcome.put(
                    self.engine.run(Want(name[0], 'image', lambda container: None), request, name,
                                    finish, files))
            except Exception as exc:
                outcome.put(exc)

        threading.Thread(target=one, name=name, daemon=True).start()

    def sent_in_turn(self, *names):
        """Each run started, and seen sent, before the next is started."""
        runs = []
        for name in names:
            self.start(name)
            runs.append(self.sent(name))
        return runs

    def sent(self, name) -> Run:
        run = self.pool.sent.get(timeout=WAIT_SEC)
        assert run.name == name
        return run

    def nothing_sent(self):
        with pytest.raises(queue.Empty):
            run = self.pool.sent.get(timeout=QUIET_SEC)
            pytest.fail(f'{run.name} was sent')

    def outcome(self, name):
        return self.outcomes[name].get(timeout=WAIT_SEC)

    def cores_asked(self):
        asked = []
        while not self.cores.asked.empty():
            asked.append(self.cores.asked.get())
        return asked


def test_with_the_cores_spoken_for_a_jobs_next_case_follows_in_its_container_on_its_core():
    one = Rig(cores=1)
    one.start('a1')
    first = one.sent('a1')
    one.start('a2')
    second = one.sent('a2')  # before the first has ended
    assert second.container is first.container
    assert one.cores_asked() == ['a1']
    first.end()
    assert one.outcome('a1') == first.container.name
    assert one.pool.given_back.empty()  # its follower has it
    second.end()
    assert one.outcome('a2') == first.container.name
    assert one.pool.given_back.get(timeout=WAIT_SEC) == (first.container.name, False)


def test_the_lanes_core_is_let_go_by_its_last_run_only():
    one = Rig(cores=1)
    first, second = one.sent_in_turn('a1', 'a2')
    one.start('b1')  # its job's first run: its turn, then it waits for the core
    first.end()
    assert one.outcome('a1') == 'c1'
    one.nothing_sent()  # a2 runs on the core
    second.end()
    one.sent('b1').end()
    assert one.outcome('b1') == 'c2'


def test_a_run_waiting_for_its_turn_follows_once_its_jobs_lane_opens():
    one = Rig(cores=1)
    one.start('x1')
    other = one.sent('x1')
    one.start('a1')  # its turn, then it waits for the core
    assert one.cores.asked.get(timeout=WAIT_SEC) == 'x1'
    assert one.cores.asked.get(timeout=WAIT_SEC) == 'a1'
    one.start('a2')  # a1 is admitted and the core spoken for: a2 waits
    one.nothing_sent()
    other.end()
    first = one.sent('a1')
    second = one.sent('a2')  # a1 opened its lane: a2 follows in it at once
    assert second.container is first.container
    first.end()
    second.end()
    assert [one.outcome('a1'), one.outcome('a2')] == ['c2', 'c2']


def test_nothing_is_sent_to_a_lane_before_its_first_run():
    # A run sent ahead of the lane's first that broke the conversation
    # would fail it for nothing of its own.
    one = Rig(cores=1)
    one.start('x1')
    other = one.sent('x1')
    sending = one.pool.send_gates['a1'] = threading.Event()
    one.start('a1')
    assert one.cores.asked.get(timeout=WAIT_SEC) == 'x1'
    assert one.cores.asked.get(timeout=WAIT_SEC) == 'a1'
    one.start('a2')  # it waits for its turn
    other.end()  # a1 has the core, and is being sent
    one.nothing_sent()
    one.start('a3')
    one.nothing_sent()
    sending.set()
    first = one.sent('a1')
    followers = [one.pool.sent.get(timeout=WAIT_SEC) for _ in range(2)]  # in either order
    assert sorted(run.name for run in followers) == ['a2', 'a3']
    assert {run.container for run in followers} == {first.container}


def test_a_broken_lane_takes_no_follower():
    one = Rig(cores=1)
    one.start('a1')
    first = one.sent('a1')
    first.container.broken = True  # its run is killed, say
    one.start('a2')
    one.nothing_sent()  # it waits for its turn
    first.end()
    again = one.sent('a2')
    assert again.container is not first.container
    again.end()


def test_with_a_core_to_spare_a_quick_jobs_next_case_follows_in_its_lane():
    # A container of its own would cost more than the case: a take-over's
    # reset, its staging, for Python an interpreter started.
    two = Rig(cores=2)
    first, second = two.sent_in_turn('a1', 'a2')
    assert second.container is first.container
    assert two.cores_asked() == ['a1']
    first.end(wall_ms=LANE_WAIT_MS - 1)
    assert two.outcome('a1') == 'c1'
    two.start('a3')  # its wait: one run ahead of it, of LANE_WAIT_MS - 1 at most
    assert two.sent('a3').container is first.container
    assert two.cores_asked() == []


def test_a_case_whose_wait_in_its_lane_looks_long_takes_a_core_to_spare():
    two = Rig(cores=2)
    first, second = two.sent_in_turn('a1', 'a2')
    first.end(wall_ms=LANE_WAIT_MS // 2)
    assert two.outcome('a1') == 'c1'  # its time is known
    third = two.sent_in_turn('a3')[0]  # one run ahead of it: it follows
    assert third.container is first.container
    two.start('a4')  # two runs ahead of it, of LANE_WAIT_MS / 2 each
    beside = two.sent('a4')
    assert beside.container is not first.container
    assert two.cores_asked() == ['a1', 'a4']
    for run in (second, third, beside):
        run.end()
    assert two.outcome('a4') == beside.container.name


def test_with_its_lane_full_a_case_takes_a_core_to_spare():
    two = Rig(cores=2)
    names = [f'a{n}' for n in range(MAX_LANE_RUNS + 1)]
    runs = two.sent_in_turn(*names[:-1])
    two.start(names[-1])
    beside = two.sent(names[-1])
    assert beside.container is not runs[0].container
    for run in runs + [beside]:
        run.end()
    assert two.outcome(names[-1]) == beside.container.name


def test_the_cases_a_lane_takes_no_more_of_as_it_opens_take_a_core_to_spare():
    two = Rig(cores=2)
    sending = two.pool.send_gates['a0'] = threading.Event()
    names = [f'a{n}' for n in range(MAX_LANE_RUNS + 1)]
    for name in names:
        two.start(name)  # a0 is being sent: the others wait for its lane
    two.nothing_sent()
    sending.set()
    sent = [two.pool.sent.get(timeout=WAIT_SEC) for _ in names]
    lane = {run for run in sent if run.container is sent[0].container}
    assert len(lane) == MAX_LANE_RUNS and len(sent) - len(lane) == 1
    for run in sent:
        run.end()


def test_a_compile_makes_no_wait_in_its_jobs_lane():
    two = Rig(cores=2)
    two.start('a0', dataclasses.replace(CASE_REQUEST, kind=Kind.COMPILE))
    two.sent('a0').end(wall_ms=10 * LANE_WAIT_MS)
    assert two.outcome('a0') == 'c1'
    first, second = two.sent_in_turn('a1', 'a2')
    assert second.container is first.container
    first.end()
    second.end()


def test_a_case_waiting_for_its_jobs_lane_takes_a_core_to_spare_once_a_case_of_its_job_was_long():
    three = Rig(cores=3)
    finishing = three.finish_gates['a0'] = threading.Event()
    three.start('a0', dataclasses.replace(CASE_REQUEST, fresh=True))  # a run of its own
    alone = three.sent('a0')
    three.start('a1')  # no lane to follow, and no case of its job has ended
    three.nothing_sent()
    alone.end(wall_ms=LANE_WAIT_MS)  # a0 holds its turn until its finish
    beside = three.sent('a1')
    assert beside.container is not alone.container
    finishing.set()
    beside.end()
    assert three.outcome('a1') == beside.container.name


def test_a_job_forgotten_has_no_wait_in_its_lane():
    two = Rig(cores=2)
    first, second = two.sent_in_turn('a1', 'a2')
    first.end(wall_ms=10 * LANE_WAIT_MS)
    second.end()
    assert [two.outcome('a1'), two.outcome('a2')] == ['c1', 'c1']
    two.engine.forget(['a'])
    again = two.sent_in_turn('a3')[0]
    two.start('a4')
    assert two.sent('a4').container is again.container
    again.end()
    two.outcome('a3')


@pytest.mark.parametrize('request_, files', [
    (dataclasses.replace(CASE_REQUEST, fresh=True), None),
    (CASE_REQUEST, {
        'output': 'a checker\'s copy of the output'
    }),
    (dataclasses.replace(CASE_REQUEST, kind=Kind.COMPILE), None),
])
def test_a_run_of_its_own_follows_none_and_none_follows_it(request_, files):
    one = Rig(cores=1)
    one.start('a1')
    first = one.sent('a1')
    one.start('a2', request_, files)
    one.nothing_sent()  # it waits for its turn
    first.end()
    alone = one.sent('a2')
    assert alone.container is not first.container
    one.start('a3')
    one.nothing_sent()  # it does not follow a run of its own
    alone.end()
    one.sent('a3').end()
    assert [one.outcome(name) for name in ('a1', 'a2', 'a3')] == ['c1', 'c2', 'c3']


def test_a_follower_whose_run_ahead_broke_the_sandbox_is_made_on_its_own():
    one = Rig(cores=1)
    first, second = one.sent_in_turn('a1', 'a2')
    first.end(SandboxBroken('the supervisor is gone'))
    assert isinstance(one.outcome('a1'), SandboxBroken)
    second.end(AheadFailed('a run sent before it broke the sandbox'))
    assert one.pool.given_back.get(timeout=WAIT_SEC) == ('c1', True)
    again = one.sent('a2')  # in a container of its own
    assert again.container is not first.container
    again.end()
    assert one.outcome('a2') == again.container.name


def test_a_cancel_ends_a_lane_and_its_followers():
    one = Rig(cores=1)
    one.sent_in_turn('a1', 'a2')
    one.engine.cancel(['a'])
    assert isinstance(one.outcome('a1'), Cancelled)
    assert isinstance(one.outcome('a2'), Cancelled)
    one.nothing_sent()
    assert one.pool.given_back.get(timeout=WAIT_SEC) == ('c1', True)
    one.start('b1')
    one.sent('b1').end()  # the lane's core was let go
    assert one.outcome('b1') == 'c2'


def test_a_lane_takes_at_most_its_share_of_runs():
    one = Rig(cores=1)
    names = [f'a{n}' for n in range(MAX_LANE_RUNS + 1)]
    runs = one.sent_in_turn(*names[:-1])
    assert {run.container for run in runs} == {runs[0].container}
    one.start(names[-1])
    one.nothing_sent()  # it waits for its turn: other jobs' runs get the core in between
    for run in runs:
        run.end()
    one.sent(names[-1]).end()
    assert one.outcome(names[-1]) == 'c2'
