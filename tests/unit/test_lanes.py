"""A job's plain cases follow one another in a lane (sandbox/engine.py): while
the cores are spoken for, the next is sent to the container of the run under
way, on its core, before that run has ended; the lane's last run lets go of
the core, the container and the turn."""
import dataclasses
import queue
import threading

import pytest

from sandbox.container import AheadFailed, SandboxBroken
from sandbox.engine import MAX_LANE_RUNS, RunEngine, Want
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

    def end(self, fails=None):
        self.fails = fails
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
        return ended_run()

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

    def start(self, name, request=CASE_REQUEST, files=None, alone=False):
        """A run of job `name[0]`, named `name`, on a thread of its own."""
        outcome: 'queue.Queue[object]' = queue.Queue()
        self.outcomes[name] = outcome

        def one():
            try:
                outcome.put(
                    self.engine.run(Want(name[0], 'image', lambda container: None),
                                    request,
                                    name,
                                    lambda run, container: container.name,
                                    files,
                                    alone=alone))
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


def test_with_a_core_to_spare_a_jobs_cases_run_beside_each_other():
    two = Rig(cores=2)
    first, second = two.sent_in_turn('a1', 'a2')
    assert second.container is not first.container
    first.end()
    second.end()
    assert {two.outcome('a1'), two.outcome('a2')} == {'c1', 'c2'}


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


def test_a_run_alone_waits_for_every_run_under_way_and_none_starts_beside_it():
    two = Rig(cores=2)
    two.start('a1')
    under_way = two.sent('a1')
    two.start('b1', request=dataclasses.replace(CASE_REQUEST, fresh=True), alone=True)
    two.nothing_sent()  # a core is free, but a1 still runs
    under_way.end()
    alone = two.sent('b1')
    two.start('c1')
    two.nothing_sent()  # a core of its own would be free, but b1 runs alone
    alone.end()
    assert two.outcome('b1') == alone.container.name
    two.sent('c1').end()
    assert two.outcome('c1') != alone.container.name


class SecondCoreGated(Cores):
    """Cores, but the named run's second core waits at a gate."""

    def __init__(self, count, name):
        super().__init__(count)
        self.name, self.gate, self.seen = name, threading.Event(), 0

    def acquire(self, timeout=None):
        if threading.current_thread().name == self.name:
            self.seen += 1
            if self.seen == 2:
                self.asked.put(self.name)
                assert self.gate.wait(WAIT_SEC)
                return self._slots.acquire(timeout=timeout)
        return super().acquire(timeout)


def test_a_second_run_alone_asks_for_no_core_while_the_first_gathers_them():
    # Their lock comes before any core: a second one that took a core while
    # the first gathered every core would wait for ever, and so would it.
    two = Rig(cores=2)
    two.cores = SecondCoreGated(2, 'a1')
    two.engine = RunEngine(two.pool, two.cores, max_pairs=1, core_count=2)
    fresh = dataclasses.replace(CASE_REQUEST, fresh=True)
    two.start('a1', request=fresh, alone=True)
    assert [two.cores.asked.get(timeout=WAIT_SEC) for _ in range(2)] == ['a1', 'a1']
    two.start('b1', request=fresh, alone=True)
    with pytest.raises(queue.Empty):
        pytest.fail(f'{two.cores.asked.get(timeout=QUIET_SEC)} asked for a core')
    two.cores.gate.set()
    two.sent('a1').end()
    two.sent('b1').end()
    assert [two.outcome('a1'), two.outcome('b1')] == ['c1', 'c2']


def test_a_run_alone_cancelled_while_it_gathers_the_cores_ends_at_once():
    two = Rig(cores=2)
    two.start('x1')
    under_way = two.sent('x1')  # another job's run, long
    two.start('a9', request=dataclasses.replace(CASE_REQUEST, fresh=True), alone=True)
    asked = [two.cores.asked.get(timeout=WAIT_SEC) for _ in range(3)]
    assert asked == ['x1', 'a9', 'a9']  # a9 holds the other core and waits for x1's
    two.engine.cancel(['a'])
    assert isinstance(two.outcome('a9'), Cancelled)  # x1 still runs
    under_way.end()
    assert two.outcome('x1') == under_way.container.name


def test_a_run_alone_lets_go_of_every_core_once_answered():
    # Its output's comparison (finish) needs no core: on 3 cores, two runs
    # start beside it meanwhile.
    three = Rig(cores=3)
    finishing, may_finish = threading.Event(), threading.Event()

    def finish(run, container):
        finishing.set()
        assert may_finish.wait(WAIT_SEC)
        return container.name

    outcome: 'queue.Queue[object]' = queue.Queue()
    threading.Thread(target=lambda: outcome.put(
        three.engine.run(Want('a', 'image', lambda container: None),
                         dataclasses.replace(CASE_REQUEST, fresh=True),
                         'a9',
                         finish,
                         alone=True)),
                     name='a9',
                     daemon=True).start()
    three.sent('a9').end()
    assert finishing.wait(WAIT_SEC)
    three.start('x1')
    three.start('y1')
    beside = [three.pool.sent.get(timeout=WAIT_SEC) for _ in range(2)]
    assert {run.name for run in beside} == {'x1', 'y1'}
    may_finish.set()
    assert outcome.get(timeout=WAIT_SEC) == 'c1'
    for run in beside:
        run.end()
