"""The run engine: a request run in one of the pool's containers on a core of
the host, a pair of runs at once (an interactive case), and the retry in a
fresh container after a sandbox failure.

Runs get a core each: on an oversubscribed host a program's wall time would
grow and a fair program could hit the sleeper bound. The core comes first,
so that a run waiting for one holds no container (those not running stay in
the pool for other jobs to take over), unless getting a container needs the
engine (a new one) or a wait: that happens with no core held, so no core
waits on the engine.

Before its core, a run of a job that has a run already under way waits for
that run to end when the cores are spoken for (as many runs admitted as
there are cores, but for those getting a new container, which hold none):
its job's cases then follow one another in the job's container, which
holds the job's files and, for Python, the interpreter its cases are
forked from, rather than each take a container of its own (staged, later
reset, an interpreter started in it) while other jobs wait for the cores
anyway. With a core to spare, they run at once. For the same reason the
pool takes over another job's idle container before one of a job that is
about to run again.

A job's plain cases do better than wait: they follow the run under way in
its lane (`_Lane`), sent to its container before it has ended, so that the
supervisor starts each as soon as it has answered the one before, on the
same core, without waiting for the runner in between.

A run made `alone` (a TLE's rerun) holds every core: no other run is under
way beside it, so none slows it down (a neighbour's memory traffic made a
fair program's time two thirds longer, on the first run and on a rerun
beside it alike) and none is alive to pass it anything (a case of its own
job, still running, once relayed the answer to its rerun). The engine's own
work on containers (a spare started, one reset) may still go on beside it.
"""
import contextlib
import dataclasses
import logging
import pathlib
import queue
import threading
from typing import (Callable, Dict, FrozenSet, Iterator, List, Optional, Sequence, Set, Tuple,
                    TypeVar)

from sandbox.container import AheadFailed, SandboxBroken, SandboxContainer
from sandbox.faults import Cancelled, disk_fault
from sandbox.protocol import Kind, RunRequest, RunResponse, SupervisorFailure

log = logging.getLogger(__name__)
T = TypeVar('T')

# How a container gets a job's files (SandboxPool.acquire).
Stage = Callable[[SandboxContainer], None]
Files = Optional[Dict[str, pathlib.Path]]


@dataclasses.dataclass(frozen=True)
class Want:
    """A container to run in: of `image`, for `job_key` (whose containers it
    may reuse), holding what `stage` puts there."""
    job_key: str
    image: str
    stage: Stage


# Runs a lane takes in all: a job of many cases then lets the runs of other
# jobs, waiting for a core, in between.
MAX_LANE_RUNS = 8
# A run alone gathering the cores looks this often whether its job was
# cancelled (a semaphore's wait cannot be woken for it).
CANCEL_LOOK_SEC = 0.1


@dataclasses.dataclass(eq=False)
class _Lane:
    """A container in a run of one job, on the core and the turn that run
    took: the job's next plain case may be sent to it while a run is under
    way, so that its supervisor starts it as soon as it has answered the one
    before, without waiting for the runner in between (on a loaded host a
    thread of the runner may wait its turn for the interpreter lock for
    milliseconds). Only plain cases follow one another so: nothing of a run's
    own (a checker's files, FIFOs, a fresh run's folder) is in the box while
    another of the job is sent, and runs never see the box (supervisor.c).
    The runs of a lane share its core: they follow one another."""
    want: Want
    container: SandboxContainer
    runs: int = 1  # runs sent to it (or about to be) not answered yet: they hold its core
    users: int = 1  # runs of it not finished yet: they hold its container and turn
    taken: int = 1  # runs it took in all
    extra_cores: int = 0  # the other cores a run alone holds besides the lane's


@dataclasses.dataclass(eq=False)
class _Waiter:
    """A run waiting for its turn (RunEngine._take_turn)."""
    job_key: str
    turn: threading.Condition  # on the engine's lock
    follows: Optional[Want]  # it may follow in a lane of this want (a plain case)
    admitted: bool = False
    lane: Optional['_Lane'] = None  # the lane it was let follow in


def _count_down(counts: Dict[str, int], key: str) -> None:
    left = counts.pop(key) - 1
    if left:
        counts[key] = left


def stager(folder: pathlib.Path) -> Stage:
    """Stages the files of `folder` (a job's build) into a container."""
    return lambda container: container.stage(folder)


class RunEngine:

    def __init__(self, pool, cores, max_pairs: int, core_count: int):
        """`pool`: a SandboxPool; `cores`: a semaphore of the host's cores for
        runs (acquire, release), `core_count` of them; `max_pairs`:
        interactive pairs at once, at most half the pool, so that pairs
        holding one container while they wait for their second never hold
        them all (every wait ends)."""
        self._pool = pool
        self._cores = cores
        self._core_count = core_count
        self._pairs = threading.BoundedSemaphore(max(1, max_pairs))
        self._lock = threading.RLock()
        self._running = 0  # runs holding a core (not those waiting for one)
        self._admitted: Dict[str, int] = {}  # runs of a job past their turn, by job key
        # Runs waiting for their turn, first come first: each is let in
        # (admitted) by the change that gives it its turn, and only it is
        # woken. Waking every waiter at every run's end, to look again for
        # itself, cost the runner several thread switches a run under an
        # exam's load.
        self._turns: List[_Waiter] = []
        # Admitted runs getting a container with the engine's work, holding
        # no core (and asking for none meanwhile): they do not speak for one.
        self._working = 0
        # The open lane of each job that has one: its next plain run may
        # follow in it.
        self._lanes: Dict[str, _Lane] = {}
        self._warned_landlock = False
        self._cancelled: Set[str] = set()  # job keys whose runs are not made any more
        # One run alone at a time, and taken before any core: two that each
        # held a core while waiting for the other's would wait forever.
        self._alone = threading.Lock()

    def cancel(self, job_keys: Sequence[str]) -> None:
        """No run of these jobs starts from now on, and runs in progress are
        killed: each ends in Cancelled, which is never tried again."""
        with self._lock:
            self._cancelled.update(job_keys)
            self._let_in()  # its runs waiting for their turn end now
        for key in job_keys:
            self._pool.abort_runs(key)

    def is_cancelled(self, job_key: str) -> bool:
        with self._lock:
            return job_key in self._cancelled

    def forget(self, job_keys: Sequence[str]) -> None:
        """The jobs are released: their keys are never used again."""
        with self._lock:
            self._cancelled.difference_update(job_keys)

    def _unless_cancelled_meanwhile(self, wants: Sequence[Want],
                                    containers: Sequence[SandboxContainer]) -> None:
        """A cancel that came while the run waited for its core found no
        container in a run to kill: the run must not start now."""
        try:
            self._check_cancelled(wants)
        except Cancelled:
            self._cores.release()
            for container in containers:
                self._pool.give_back(container, broken=container.broken)
            raise

    def _check_cancelled(self, wants: Sequence[Want]) -> None:
        if any(self.is_cancelled(want.job_key) for want in wants):
            raise Cancelled('the job was cancelled')

    def runs_in_progress(self) -> int:
        """Runs holding a core now; those waiting for one are not counted."""
        with self._lock:
            return self._running

    @contextlib.contextmanager
    def core(self) -> Iterator[None]:
        """A core held around a run in a container of the caller's own (the
        host's self-test), as every run holds one."""
        self._cores.acquire()
        try:
            yield
        finally:
            self._cores.release()

    def run(self,
            want: Want,
            request: RunRequest,
            stdin: Optional[pathlib.Path],
            finish: Callable[[RunResponse, SandboxContainer], T],
            files: Files = None,
            alone: bool = False) -> T:
        """One run of `request` in a container of `want`, `finish`ed there (a
        compile leaves its program in the container it ran in); `alone`: with
        every core held (the module's docstring)."""
        if alone:
            with self._alone:
                return self._run(want, request, stdin, finish, files, alone=True)
        return self._run(want, request, stdin, finish, files)

    def _run(self,
             want: Want,
             request: RunRequest,
             stdin: Optional[pathlib.Path],
             finish: Callable[[RunResponse, SandboxContainer], T],
             files: Files,
             alone: bool = False) -> T:
        follows = None if alone else (
            want if request.kind is Kind.CASE and not request.fresh and not files else None)
        lane = self._take_turn(want.job_key, follows)
        if lane is not None:
            try:
                return self._in_lane(lane, request, stdin, None, finish)
            except AheadFailed:
                # Not this run's failure: it is made on its own (it opens a
                # lane, and nothing is sent before it there).
                self._take_turn(want.job_key, None)
        try:
            self._check_cancelled([want])
            container, = self._containers_and_core([want], admitted=True)
            self._unless_cancelled_meanwhile([want], [container])
        except BaseException:
            self._end_turn(want.job_key)
            raise
        with self._lock:
            self._running += 1
        lane = _Lane(want, container)
        try:
            if alone:
                self._gather_cores(lane)
            return self._in_lane(lane, request, stdin, files, finish, opens=follows is not None)
        except BaseException:
            if lane.runs:  # never made: its cores, container and turn go back
                self._answered(lane)
                self._finished(lane)
            raise

    def _gather_cores(self, lane: '_Lane') -> None:
        """Every other core for `lane`'s run alone, as the runs under way let
        go of them (each is bounded; none of them waits for this one), held
        until it is answered (`_answered`). A cancel of its job ends the wait:
        each wait for a core looks again every CANCEL_LOOK_SEC."""
        while lane.extra_cores < self._core_count - 1:
            if self._cores.acquire(timeout=CANCEL_LOOK_SEC):
                lane.extra_cores += 1
            else:
                self._check_cancelled([lane.want])

    def _may_follow(self, lane: Optional['_Lane'], want: Want) -> bool:
        """Lock held. Whether a run of `want` may follow in `lane`, only asked
        when it would otherwise wait for its turn (with a core to spare it
        runs beside the lane instead)."""
        return (lane is not None and lane.want.image == want.image and lane.taken < MAX_LANE_RUNS
                and not lane.container.broken and want.job_key not in self._cancelled)

    def _join(self, lane: '_Lane') -> '_Lane':
        """Lock held."""
        lane.runs += 1
        lane.users += 1
        lane.taken += 1
        return lane

    def _open(self, lane: '_Lane') -> None:
        """`lane`'s first run was sent: its job's next plain runs may follow
        in it, those waiting for their turn at once, in the order they came.
        Not before: a run sent ahead of it that broke the conversation would
        fail it for nothing of its own."""
        with self._lock:
            if lane.want.job_key in self._lanes:
                return  # the job's runs follow in the other one
            self._lanes[lane.want.job_key] = lane
            for waiter in list(self._turns):
                if waiter.follows is not None and waiter.job_key == lane.want.job_key and \
                        self._may_follow(lane, waiter.follows):
                    self._turns.remove(waiter)
                    waiter.lane = self._join(lane)
                    waiter.turn.notify()

    def _in_lane(self,
                 lane: '_Lane',
                 request: RunRequest,
                 stdin: Optional[pathlib.Path],
                 files: Files,
                 finish: Callable[[RunResponse, SandboxContainer], T],
                 opens: bool = False) -> T:
        """The run made in the lane's container, counted in it (`opens`: the
        lane's first, which takes followers once sent). The lane's last run
        to be answered lets go of its core; the last to be finished, of its
        container and its turn."""
        want, container = lane.want, lane.container
        try:
            try:
                self._check_cancelled([want])
                sent = container.send(request, stdin, files)
                if opens:
                    self._open(lane)
                run = container.answer(sent)
            finally:
                self._answered(lane)
            self._ran(request, run, container)
            finished = finish(run, container)
        except BaseException:
            self._finished(lane)
            self._check_cancelled([want])  # killed because it was: not tried again
            raise
        self._finished(lane)
        return finished

    def _answered(self, lane: '_Lane') -> None:
        """A run of `lane` has its answer, or none: the last lets go of the
        lane's core (and a run alone's other cores), and the lane takes no
        follower from then on."""
        with self._lock:
            lane.runs -= 1
            if lane.runs:
                return
            if self._lanes.get(lane.want.job_key) is lane:
                del self._lanes[lane.want.job_key]
            self._running -= 1
        for _ in range(1 + lane.extra_cores):
            self._cores.release()

    def _finished(self, lane: '_Lane') -> None:
        """A run of `lane` is finished with its container: the last gives it
        back, and ends the lane's turn."""
        with self._lock:
            lane.users -= 1
            if lane.users:
                return
        try:
            self._pool.give_back(lane.container, broken=lane.container.broken)
        finally:
            self._end_turn(lane.want.job_key)

    def _take_turn(self, job_key: str, follows: Optional[Want]) -> Optional['_Lane']:
        """Before a run of `job_key`: its turn (see the module's docstring),
        until `_end_turn` (None is returned), or, when it `follows` (a plain
        case of that want) and would otherwise wait, a lane of its job to
        follow in (returned, the run counted in it). Every admitted run ends
        (a run is bounded), and every change that may give a waiting run its
        turn lets it in (`_let_in`), so every wait ends."""
        waiter = None
        try:
            with self._lock:
                if self._may_go(job_key):
                    self._admit(job_key)
                    return None
                lane = self._lanes.get(job_key)
                if follows is not None and self._may_follow(lane, follows):
                    return self._join(lane)
                waiter = _Waiter(job_key, threading.Condition(self._lock), follows)
                return self._wait_for_turn(waiter)
        except BaseException:
            if waiter is not None and waiter.lane is not None:
                # Let into a lane, but this run will not be made: out of the
                # lock, as the lane's last run may give its container back.
                self._answered(waiter.lane)
                self._finished(waiter.lane)
            raise

    def _end_turn(self, job_key: str) -> None:
        with self._lock:
            _count_down(self._admitted, job_key)
            self._let_in()

    def _may_go(self, job_key: str) -> bool:
        """Lock held."""
        return (job_key in self._cancelled or not self._admitted.get(job_key)
                or sum(self._admitted.values()) - self._working < self._core_count)

    def _admit(self, job_key: str) -> None:
        """Lock held."""
        self._admitted[job_key] = self._admitted.get(job_key, 0) + 1

    def _wait_for_turn(self, waiter: _Waiter) -> Optional['_Lane']:
        """Lock held. Returns admitted, by `_let_in`, or with a lane to
        follow in, by `_open` (the caller leaves it if this raises)."""
        try:
            self._turns.append(waiter)
            while not waiter.admitted and waiter.lane is None:
                waiter.turn.wait()
            return waiter.lane
        except BaseException:
            if waiter.admitted:  # let in, but this run will not be made
                _count_down(self._admitted, waiter.job_key)
                self._let_in()
            elif waiter in self._turns:
                self._turns.remove(waiter)
            raise

    def _let_in(self) -> None:
        """Lock held, after a change that may give waiting runs their turn:
        each that has it now is admitted, in the order they came (each one
        admitted counts for the next), and woken."""
        for waiter in list(self._turns):
            if self._may_go(waiter.job_key):
                self._turns.remove(waiter)
                self._admit(waiter.job_key)
                waiter.admitted = True
                waiter.turn.notify()

    def _taking_turns(self) -> FrozenSet[str]:
        """The jobs with a run admitted or waiting for its turn: the pool
        takes over another job's idle container before one of theirs."""
        with self._lock:
            return frozenset(self._admitted) | {waiter.job_key for waiter in self._turns}

    def pair(self, wants: Tuple[Want, Want], requests: Tuple[RunRequest, RunRequest],
             files: Tuple[Files, Files],
             fifos: Dict[str, pathlib.Path]) -> Tuple[RunResponse, RunResponse]:
        """The two runs at once, each in a container of its want, joined by
        `fifos`, on one core: the two take turns (each waits while the other
        thinks), and a pair that took two cores one after the other could wait
        for the second while another pair holds it."""
        self._check_cancelled(wants)
        with self._pairs:
            containers = self._containers_and_core(list(wants))
            self._unless_cancelled_meanwhile(wants, containers)
            try:
                with self._on_a_core():
                    runs = self._both(containers, requests, files, fifos)
            except BaseException:
                for container in containers:
                    self._pool.give_back(container, broken=container.broken)
                self._check_cancelled(wants)
                raise
            for container in containers:
                self._pool.give_back(container, broken=container.broken)
        for request, run, container in zip(requests, runs, containers):
            self._ran(request, run, container)
        return runs[0], runs[1]

    def retried(self, once: Callable[[], T], failed: Callable[[Exception], T]) -> T:
        """`once()` (which runs in fresh containers each time it is called),
        tried once more after a sandbox failure, the judge's and never the
        student's: the failed container is thrown away. A second failure is
        `failed(exc)`, which decides whether the host is at fault (it raises
        HostFault) or the judge failed on that run (its JE). A failing host
        folder is the host's too."""
        try:
            for attempt in (1, 2):
                try:
                    return once()
                except (SandboxBroken, SupervisorFailure) as exc:
                    if attempt == 2:
                        raise
                    log.warning('sandbox failure, retrying in a fresh sandbox: %s', exc)
            raise AssertionError('unreachable')
        except (SandboxBroken, SupervisorFailure) as exc:
            return failed(exc)
        except OSError as exc:
            raise disk_fault(exc, 'the sandbox folder') or exc

    @contextlib.contextmanager
    def _on_a_core(self) -> Iterator[None]:
        """Around a run (or a pair's) holding the core `_containers_and_core`
        took: counted in `runs_in_progress` while it runs, the core released
        after."""
        try:
            with self._lock:
                self._running += 1
            try:
                yield
            finally:
                with self._lock:
                    self._running -= 1
        finally:
            self._cores.release()

    def _containers_and_core(self,
                             wants: Sequence[Want],
                             admitted: bool = False) -> List[SandboxContainer]:
        """A container for each of `wants`, and one core held for their run
        (the caller releases it): see the module's docstring for the order.
        `admitted`: a run past its turn (`_working` counts it while the
        engine works for it)."""
        held: List[SandboxContainer] = []
        keep = self._taking_turns()

        def give_back_held() -> None:
            for container in held:
                self._pool.give_back(container)

        self._cores.acquire()
        try:
            for want in wants:
                container = self._pool.acquire(want.job_key,
                                               want.image,
                                               want.stage,
                                               engine_work=False,
                                               keep=keep)
                if container is None:
                    break
                held.append(container)
        except BaseException:
            give_back_held()
            self._cores.release()
            raise
        if len(held) == len(wants):
            return held
        self._cores.release()
        try:
            with self._engine_working(admitted):
                for want in wants[len(held):]:
                    held.append(self._pool.acquire(want.job_key, want.image, want.stage, keep=keep))
            self._cores.acquire()
        except BaseException:
            give_back_held()
            raise
        return held

    @contextlib.contextmanager
    def _engine_working(self, admitted: bool) -> Iterator[None]:
        if not admitted:
            yield
            return
        with self._lock:
            self._working += 1
            self._let_in()
        try:
            yield
        finally:
            with self._lock:
                self._working -= 1

    def _both(self, containers: Sequence[SandboxContainer], requests: Sequence[RunRequest],
              files: Sequence[Files], fifos: Dict[str, pathlib.Path]) -> List[RunResponse]:
        """Each request in its container, at once, each on a daemon thread of
        its own (an exit must not wait for a run, as for the dispatcher's
        workers). When one fails, the other is aborted: its supervisor might
        otherwise wait out its wall bound for a peer that never opens the
        FIFOs. Every run is bounded (its connection's timeout), so every
        thread reports."""
        ended: 'queue.Queue[Tuple[int, object]]' = queue.Queue()

        def side(index: int, container: SandboxContainer, request: RunRequest,
                 run_files: Files) -> None:
            try:
                ended.put((index, container.run(request, None, run_files, fifos)))
            except BaseException as exc:  # reported to the caller, raised there
                ended.put((index, exc))

        for index, (container, request, run_files) in enumerate(zip(containers, requests, files)):
            threading.Thread(target=side,
                             args=(index, container, request, run_files),
                             name=f'interaction-{index}',
                             daemon=True).start()
        runs: List[Optional[RunResponse]] = [None] * len(containers)
        failure: Optional[BaseException] = None
        for _ in containers:
            index, outcome = ended.get()
            if isinstance(outcome, BaseException):
                if failure is None:
                    failure = outcome
                    for other, container in enumerate(containers):
                        if runs[other] is None and other != index:
                            container.abort()
            else:
                runs[index] = outcome
        if failure is not None:
            raise failure
        return runs

    def _ran(self, request: RunRequest, run: RunResponse, container: SandboxContainer) -> None:
        log.debug('%s in %s%s: exit %d, signal %d, cpu %d us, wall %d us, peak %d kB',
                  request.kind.name.lower(), container.name,
                  ' (forked from the Python zygote)' if run.from_zygote else '', run.exit_code,
                  run.signal, run.cpu_us, run.wall_us, run.maxrss_kb)
        if run.landlock_abi == 0 and not self._warned_landlock:
            self._warned_landlock = True
            log.warning('this kernel has no Landlock: runs can read /proc and /sys and write '
                        'their working folder (see the README\'s known limits)')
