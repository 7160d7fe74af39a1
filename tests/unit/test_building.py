"""Building with the compile cache and turns, on a fake engine: a hit runs
nothing and waits for nothing; jobs that want one build at once compile it
once; a submission's compile that used up its CPU time gives its CE to the
jobs that waited for it, not to later ones; a compile that left neither
lets the waiter compile for itself."""
import threading

import pytest

from sandbox.building import Builder
from sandbox.compile_cache import CompileCache
from sandbox.container import SandboxBroken
from sandbox.languages import Language
from sandbox.results import Status
from sandbox.run_requests import COMPILE_SECONDS
from sandbox.settings import SandboxSettings
from tests.unit.fakes import ended_run

WAIT = 10
IMAGE_ID = 'sha256:toolchain'
SOURCE = 'int main(void) { return 0; }\n'
PROGRAM = b'\x7fELF a program'


class Container:
    image_id = IMAGE_ID

    def add_job_file(self, path, name):
        pass


class Engine:
    """Compiles when `go` is set, each compile's run ending as `answer`;
    `broken`: each compile's sandbox fails instead."""

    def __init__(self):
        self.compiles = 0
        self.started = threading.Event()
        self.go = threading.Event()
        self.broken = False
        self.answer = ended_run(artifact_status='ok', artifact=PROGRAM)

    def is_cancelled(self, job_key):
        return False

    def retried(self, once, failed):
        try:
            return once()
        except SandboxBroken as exc:
            return failed(exc)

    def run(self, want, request, stdin, finish):
        self.compiles += 1
        self.started.set()
        assert self.go.wait(WAIT)
        if self.broken:
            raise SandboxBroken('the sandbox failed')
        return finish(self.answer, Container())


def over_the_bound(cpu_sec=COMPILE_SECONDS):
    """A compile stopped at its wall bound, having used `cpu_sec` of CPU."""
    return ended_run(wall_timeout=True, signal=9, cpu_us=int(cpu_sec * 1_000_000))


@pytest.fixture
def rig(tmp_path):
    engine = Engine()
    settings = SandboxSettings(root=tmp_path / 'root')
    builder = Builder(engine, settings, CompileCache(tmp_path / 'cache', 1 << 20))
    builder.know_image(Language.C.toolchain.image_kind, IMAGE_ID)
    (tmp_path / 'src').mkdir()
    (tmp_path / 'src' / 'main.c').write_text(SOURCE)
    return engine, builder, tmp_path


def build(builder, tmp_path, name, submission=True):
    return builder.build(name,
                         Language.C,
                         tmp_path / 'src',
                         tmp_path / 'builds' / name,
                         lambda language, exc: str(exc),
                         submission=submission)


def in_thread(function, *args):
    done = []
    thread = threading.Thread(target=lambda: done.append(function(*args)), daemon=True)
    thread.start()
    return thread, done


def test_a_hit_runs_nothing_and_waits_for_no_turn(rig):
    engine, builder, tmp_path = rig
    engine.go.set()
    assert build(builder, tmp_path, 'first').ok and engine.compiles == 1
    # A turn of that very build held meanwhile (a compile of it in progress
    # elsewhere) does not hold up a job that finds its entry.
    key = builder._key(Language.C, tmp_path / 'src', ())  # a build folder before its compile
    with builder._turns.turn(key, lambda: False):
        thread, done = in_thread(build, builder, tmp_path, 'again')
        thread.join(WAIT)
        assert done and done[0].ok and engine.compiles == 1


def two_at_once(engine,
                builder,
                tmp_path,
                submission=True,
                meanwhile=lambda: None,
                second_submission=None):
    """The builds of two jobs of one source, the second asked while the
    first compiles (and `meanwhile` is called); `submission`: whether they
    are submissions' builds (else a problem's program)."""
    first, first_done = in_thread(build, builder, tmp_path, 'first', submission)
    assert engine.started.wait(WAIT)
    second, second_done = in_thread(build, builder, tmp_path, 'second',
                                    submission if second_submission is None else second_submission)
    assert builder._turns.wait_for(lambda held, waiting: waiting == 1, WAIT)
    meanwhile()
    engine.go.set()
    first.join(WAIT)
    second.join(WAIT)
    return first_done[0], second_done[0]


def test_jobs_that_want_one_build_at_once_compile_it_once(rig):
    engine, builder, tmp_path = rig
    first, second = two_at_once(engine, builder, tmp_path)
    assert first.ok and second.ok
    assert engine.compiles == 1
    assert (tmp_path / 'builds' / 'second' / 'main').read_bytes() == PROGRAM


def test_a_compile_that_left_no_entry_lets_the_waiter_compile(rig):
    engine, builder, tmp_path = rig
    engine.broken = True  # a judge failure: a JE, nothing cached
    first, second = two_at_once(engine, builder, tmp_path)
    assert first.result.status is second.result.status is Status.JE
    assert engine.compiles == 2


def test_a_compile_that_used_up_its_cpu_gives_its_ce_to_the_jobs_that_waited(rig):
    engine, builder, tmp_path = rig
    engine.answer = over_the_bound()
    first, second = two_at_once(engine, builder, tmp_path)
    assert first.result == second.result and first.result.status is Status.CE
    assert 'longer than' in second.result.message
    assert engine.compiles == 1
    # Not cached: a later job of the build compiles it again.
    assert build(builder, tmp_path, 'later').result.status is Status.CE
    assert engine.compiles == 2


@pytest.mark.parametrize('cpu_sec, compiles', [(18.0, 1), (17.9, 2), (0.3, 2)])
def test_a_compile_the_host_stalled_leaves_its_waiters_to_compile(rig, cpu_sec, compiles):
    # Over the wall bound with little CPU time: the host's doing.
    engine, builder, tmp_path = rig
    engine.answer = over_the_bound(cpu_sec)
    first, second = two_at_once(engine, builder, tmp_path)
    assert first.result.status is second.result.status is Status.CE
    assert engine.compiles == compiles


def test_a_compile_out_of_memory_is_not_shared(rig):
    # The kill may be the host's (a global OOM), not the sandbox limit's.
    engine, builder, tmp_path = rig
    engine.answer = ended_run(oom_kills=1, signal=9)
    first, second = two_at_once(engine, builder, tmp_path)
    assert first.result.status is second.result.status is Status.CE
    assert engine.compiles == 2


@pytest.mark.parametrize('holder, waiter', [(False, False), (True, False), (False, True)])
def test_a_problem_programs_compile_over_the_bound_is_not_shared(rig, holder, waiter):
    # The checker's failed compile is a JE of the judge's, and a checker of
    # the same source as a submission's is not the student's CE: each tries.
    engine, builder, tmp_path = rig
    engine.answer = over_the_bound()
    two_at_once(engine, builder, tmp_path, submission=holder, second_submission=waiter)
    assert engine.compiles == 2


def test_a_waiter_takes_an_entry_filed_meanwhile_over_what_was_left(rig):
    # Another process sharing the cache compiled the build in time.
    engine, builder, tmp_path = rig
    engine.answer = over_the_bound()
    key = builder._key(Language.C, tmp_path / 'src', ())

    def filed_elsewhere():
        builder._cache.put(key, Status.AC, '', PROGRAM, 0)

    first, second = two_at_once(engine, builder, tmp_path, meanwhile=filed_elsewhere)
    assert first.result.status is Status.CE and second.ok
    assert engine.compiles == 1


@pytest.mark.parametrize('first', [True, False])
def test_a_builds_files_have_the_same_times_compiled_or_from_the_cache(rig, first):
    # A run reading its files' times must not tell a first judging (the
    # program written a compile's time after its source, which the compile
    # read) from a rejudge served by the cache (written at once).
    import os
    engine, builder, tmp_path = rig
    engine.go.set()
    builds = tmp_path / 'builds'
    answer = engine.answer

    def compile_taking_a_while(want, request, stdin, finish):
        source = next(builds.rglob('main.c'))
        os.utime(source, (1, 1))  # written, and read, long before the program
        engine.compiles += 1
        return finish(answer, Container())

    engine.run = compile_taking_a_while
    build(builder, tmp_path, 'one')
    if not first:
        assert build(builder, tmp_path, 'two').result.status is Status.AC
        assert engine.compiles == 1  # from the cache
    folder = builds / ('one' if first else 'two')
    times = {(path.stat().st_atime_ns, path.stat().st_mtime_ns) for path in folder.iterdir()}
    assert len({t for pair in times for t in pair}) <= 2  # both files, written together
    assert min(t for pair in times for t in pair) > 10**18  # now, not a second after 1970
