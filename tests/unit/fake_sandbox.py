"""A scriptable, recording Sandbox for dispatcher tests (no Docker).

Jobs are told apart by their folder: a test gives each job (each generation)
its own `job_dir`, named by a label, and the fake reads the label back from
`SandboxJob.source_dir` and the task/case from `CaseSpec.input_path`.
A call can be held until the test lets it go, so tests order events with
events, never with sleeps.
"""
import pathlib
import queue
import threading
from typing import Callable, Dict, List, Optional, Tuple, Union

from dispatcher.job import Job, TaskMeta
from sandbox.job import CaseSpec, SandboxJob
from sandbox.languages import Language
from sandbox.results import CaseResult, CompileResult, Status
from sandbox.sandbox import Sandbox

# Bounds every wait of a test, so a broken dispatcher fails the test instead of
# hanging it. Never reached when the code is right.
GUARD_SEC = 10.0

COMPILE = 'compile'
Stage = Union[str, Tuple[int, int]]  # COMPILE, or (task, case)
Answer = Union[CompileResult, CaseResult, Exception]


def make_job(label: str,
             cases: Tuple[int, ...] = (1, ),
             job_id: Optional[str] = None,
             language: Language = Language.C) -> Job:
    """A valid job whose folder is named `label`; `cases` is the case count of
    each task."""
    return Job(job_id=job_id or f'jb_{label}',
               submission_id=f'sub_{label}',
               problem_id=7,
               language=language,
               tasks=tuple(
                   TaskMeta(task_score=10, memory_limit_kb=65536, time_limit_ms=1000, case_count=n)
                   for n in cases),
               job_dir=pathlib.Path('/jobs') / label)


def ok_case(label: str, task: int, case: int) -> CaseResult:
    return CaseResult(status=Status.AC,
                      exec_time_ms=1,
                      memory_kb=2,
                      stdout=f'{label}:{task}:{case}')


class FakeSandbox(Sandbox):

    def __init__(self, hold_all_cases: bool = False):
        self._cond = threading.Condition()
        self._answers: Dict[Tuple[str, Stage], Answer] = {}
        self._holds: Dict[Tuple[str, Stage], threading.Event] = {}
        self._hold_all_cases = hold_all_cases
        self._held_now: List[threading.Event] = []
        self.release_error: Optional[Exception] = None
        # Guarded by _cond.
        self.calls: List[tuple] = []  # ('compile'|'run'|'return'|'release', label, stage, key)
        self.in_flight = 0
        self.max_in_flight = 0
        self.case_calls_entered = 0
        self.case_calls_returned = 0
        self.calling_threads = set()
        self.sandbox_jobs: List[SandboxJob] = []
        self.specs: List[CaseSpec] = []

    # Scripting.

    def answer(self, label: str, stage: Stage, answer: Answer) -> None:
        self._answers[(label, stage)] = answer

    def hold(self, label: str, stage: Stage) -> None:
        """The next call for (label, stage) blocks until `let_go`."""
        self._holds[(label, stage)] = threading.Event()

    def let_go(self, label: str, stage: Stage) -> None:
        self._holds[(label, stage)].set()

    def let_go_held(self) -> None:
        """With `hold_all_cases`: let every case call held right now go."""
        with self._cond:
            held, self._held_now = self._held_now, []
        for event in held:
            event.set()

    # Observation.

    def wait_for(self, predicate: Callable[['FakeSandbox'], bool]) -> None:
        with self._cond:
            assert self._cond.wait_for(lambda: predicate(self), GUARD_SEC), 'fake sandbox wait'

    def wait_entered(self, label: str, stage: Stage) -> None:
        kind = 'compile' if stage == COMPILE else 'run'
        self.wait_for(lambda f: any(c[:3] == (kind, label, stage) for c in f.calls))

    def key_of(self, label: str) -> str:
        with self._cond:
            return next(c[3] for c in self.calls if c[1] == label and c[0] in ('compile', 'run'))

    def calls_of(self, label: str, kind: str) -> List[tuple]:
        with self._cond:
            return [c for c in self.calls if c[1] == label and c[0] == kind]

    def released_keys(self) -> List[str]:
        with self._cond:
            return [c[3] for c in self.calls if c[0] == 'release']

    def labels_called(self) -> set:
        with self._cond:
            return {c[1] for c in self.calls if c[0] in ('compile', 'run')}

    # The Sandbox interface.

    def compile(self, job: SandboxJob) -> CompileResult:
        label = job.source_dir.parent.name
        with self._cond:
            self.sandbox_jobs.append(job)
        answer = self._call(label, COMPILE, job.key, is_case=False)
        return answer if answer is not None else CompileResult(Status.AC)

    def run_case(self, job: SandboxJob, case: CaseSpec) -> CaseResult:
        label = job.source_dir.parent.name
        stem = case.input_path.stem
        stage = (int(stem[:2]), int(stem[2:]))
        with self._cond:
            self.specs.append(case)
        answer = self._call(label, stage, job.key, is_case=True)
        return answer if answer is not None else ok_case(label, *stage)

    def cancel(self, job_key: str) -> None:
        with self._cond:
            self.calls.append(('cancel', None, None, job_key))
            self._cond.notify_all()

    def release(self, job_key: str) -> None:
        with self._cond:
            self.calls.append(('release', None, None, job_key))
            self._cond.notify_all()
        if self.release_error is not None:
            raise self.release_error

    def _call(self, label: str, stage: Stage, key: str, is_case: bool) -> Optional[Answer]:
        hold = self._holds.get((label, stage))
        with self._cond:
            self.calls.append(('run' if is_case else 'compile', label, stage, key))
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self.calling_threads.add(threading.get_ident())
            if is_case:
                self.case_calls_entered += 1
                if self._hold_all_cases:
                    hold = threading.Event()
                    self._held_now.append(hold)
            self._cond.notify_all()
        try:
            if hold is not None:
                assert hold.wait(GUARD_SEC), f'{label} {stage} held too long'
            answer = self._answers.get((label, stage))
            if isinstance(answer, Exception):
                raise answer
            return answer
        finally:
            with self._cond:
                self.in_flight -= 1
                if is_case:
                    self.case_calls_returned += 1
                self.calls.append(('return', label, stage, key))
                self._cond.notify_all()

    @property
    def held_count(self) -> int:
        return len(self._held_now)


class Completions:
    """The `on_complete` callback: a stand-in for the result queue."""

    def __init__(self):
        self.results: 'queue.Queue[Tuple[Job, List[List[dict]]]]' = queue.Queue()

    def __call__(self, job: Job, tasks: List[List[dict]]) -> None:
        self.results.put((job, tasks))

    def next(self) -> Tuple[Job, List[List[dict]]]:
        return self.results.get(timeout=GUARD_SEC)


def stop_and_join(dispatcher):
    """Every entry a worker has taken is processed before it exits, so after
    this the fake's record is final for everything dequeued so far."""
    dispatcher.stop()
    dispatcher.join(GUARD_SEC)
