"""Small fakes shared by the unit tests: time, jitter, zips, the supervisor's
requests and answers, a run engine and a job's grader."""
import dataclasses
import io
import stat
import threading
import zipfile

from sandbox.building import Build
from sandbox.engine import RunEngine
from sandbox.graders import Context
from sandbox.job import ProblemProgram, SandboxJob
from sandbox.job_state import JobState
from sandbox.languages import Language
from sandbox.protocol import Kind, RunRequest, RunResponse
from sandbox.results import CompileResult, Status
from sandbox.settings import SandboxSettings

CASE_REQUEST = RunRequest(kind=Kind.CASE,
                          argv=('./main', ),
                          workdir='/work/run',
                          cpu_ms=1000,
                          wall_ms=4000,
                          data_kb=1024,
                          stack_kb=1024,
                          fsize=100,
                          out_send=10,
                          err_send=10)
_ENDED = RunResponse(exit_code=0,
                     signal=0,
                     wall_timeout=False,
                     cpu_timeout=False,
                     mem_exceeded=False,
                     cpu_us=10_000,
                     wall_us=12_000,
                     maxrss_kb=2048,
                     oom_kills=0,
                     out_size=2,
                     err_size=0,
                     stdout=b'3\n',
                     stderr=b'',
                     stderr_tail=b'',
                     artifact_status='none',
                     artifact=None,
                     landlock_abi=7)


def ended_run(**changes) -> RunResponse:
    """A supervisor's answer for a run that exited 0 within every limit,
    printing "3"; `changes` replace its fields."""
    return dataclasses.replace(_ENDED, **changes)


class FakeTime:
    """An injected clock and wait: each wait is recorded, and moves the clock
    on by what it asked when `advance` is set."""

    def __init__(self, now=0.0, advance=False):
        self.now = now
        self.advance = advance
        self.waits = []
        self.on_wait = None

    def clock(self):
        return self.now

    def wait(self, stop, seconds):
        self.waits.append(seconds)
        if self.advance:
            self.now += max(0.0, seconds)
        if self.on_wait:
            self.on_wait(len(self.waits))
        return stop.is_set()


class NoJitter:
    """An rng whose jitter is always zero."""

    def random(self):
        return 0.0


def make_zip(entries, compression=zipfile.ZIP_DEFLATED):
    """`entries`: (name or ZipInfo, bytes); a name ending in '/' is a directory."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, 'w', compression) as archive:
        for name, data in entries:
            archive.writestr(name, data)
    return buffer.getvalue()


def symlink(name, target):
    """A zip entry that is a symbolic link to `target`."""
    info = zipfile.ZipInfo(name)
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info, target


class ScriptedEngine(RunEngine):
    """A run engine whose runs measure as `answer(want, request)` says
    (RunResponse), or raise what it returns; its retry is the real one."""

    def __init__(self, answer):
        super().__init__(pool=None, cores=threading.BoundedSemaphore(1), max_pairs=1, core_count=1)
        self.answer = answer
        self.asked = []  # (job key, request)
        self.alone = []  # the requests run alone
        self.pauses = []  # the judging's waits, in seconds

    def run(self, want, request, stdin, finish, files=None, alone=False):
        self.asked.append((want.job_key, request))
        if alone:
            self.alone.append(request)
        measured = self.answer(want, request)
        if isinstance(measured, BaseException):
            raise measured
        return finish(measured, None)


def grader_of(mode, engine, tmp_path, settings=None, problem_program=None):
    """A grader of `mode` (a Grader class) for a C job built in `tmp_path`,
    on `engine`; its checker or interactor (`problem_program`, a Role)
    built there too."""
    built = tmp_path / 'build'
    built.mkdir(exist_ok=True)
    (built / Language.C.toolchain.artifact).write_bytes(b'')
    program = None
    if problem_program is not None:
        program = ProblemProgram(problem_program, Language.C, tmp_path / 'problem')
    job = SandboxJob(key='j', language=Language.C, source_dir=tmp_path, problem_program=program)
    state = JobState(job, Build(CompileResult(Status.AC), built, Language.C))
    if program is not None:
        state.problem_build = Build(CompileResult(Status.AC), built, Language.C)
    settings = settings or SandboxSettings(root=tmp_path / 'root')
    # The judging's waits (a TLE's rerun) are counted, never slept.
    pauses = getattr(engine, 'pauses', [])
    context = Context(engine, settings, tmp_path, lambda language, exc: str(exc), pauses.append)
    return mode(context, state)
