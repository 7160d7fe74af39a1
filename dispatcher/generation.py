"""One claim generation of a job, and the steps the dispatcher queues for it.

A generation is everything the dispatcher knows about one claim of a job; a
step (its compile, or one of its cases) is an entry of the dispatcher's queue.
"""
import dataclasses
import uuid
from typing import List, Optional, Tuple, Union

from dispatcher.job import Job
from sandbox.job import SandboxJob
from sandbox.results import CaseResult, CompileResult


class Generation:
    """The state of one generation, created by `Dispatcher.handle` and carried by
    every step of that generation.

    Identity is the generation token: the dispatcher compares generations with `is`,
    never by `job_id`, so a stale entry can never read or write a newer
    generation's state. Because the compile result, the case results and the
    started flag live here and nowhere else, a new generation starts clean.

    Every mutable field is guarded by the dispatcher's lock.
    """

    def __init__(self, job: Job):
        self.job = job
        # Unique per generation: the sandbox keys its containers and compiled
        # artifacts by it, so two generations of one job never share them.
        self.sandbox_job = SandboxJob(key=uuid.uuid4().hex,
                                      language=job.language,
                                      source_dir=job.source_dir,
                                      problem_program=job.problem_program,
                                      judging=job.judging)
        self.started = False
        self.compile_result: Optional[CompileResult] = None
        self.case_results: List[List[Optional[CaseResult]]] = [[None] * meta.case_count
                                                               for meta in job.tasks]
        self._unresolved = sum(meta.case_count for meta in job.tasks)
        # Case entries dequeued before the compile result existed; they go back
        # on the queue when it succeeds, so no worker blocks while waiting.
        self.parked: List['CaseStep'] = []
        self.running = 0
        self.retired = False
        # Retired because a newer generation of the same job_id took its place.
        self.superseded = False
        self._sandbox_released = False

    @property
    def job_id(self) -> str:
        return self.job.job_id

    @property
    def submission_id(self) -> str:
        return self.job.submission_id

    @property
    def key(self) -> str:
        return self.sandbox_job.key

    @property
    def complete(self) -> bool:
        return self._unresolved == 0

    def resolve_case(self, task: int, case: int, result: CaseResult) -> None:
        if self.case_results[task][case] is None:
            self._unresolved -= 1
        self.case_results[task][case] = result

    def resolve_all_cases(self, result_of: CompileResult) -> None:
        """A compile that did not succeed decides every case (CE or JE fan-out)."""
        failed = CaseResult.from_failed_compile(result_of)
        for task, cases in enumerate(self.case_results):
            for case in range(len(cases)):
                self.resolve_case(task, case, failed)
        self.parked.clear()

    def results(self) -> Tuple[Tuple[CaseResult, ...], ...]:
        """Every case's result, in index order (the generation is complete)."""
        assert self.complete
        return tuple(tuple(cases) for cases in self.case_results)

    def retire(self) -> None:
        """The generation is done with (completed, superseded or drained)."""
        self.retired = True
        self.parked.clear()

    def take_sandbox_release(self) -> Optional[str]:
        """The key to release, exactly once, when the generation is retired and no
        sandbox call of it is still running (releasing under a running compile
        could let it leave artifacts behind after the release)."""
        if self.retired and self.running == 0 and not self._sandbox_released:
            self._sandbox_released = True
            return self.key
        return None

    def __repr__(self) -> str:
        return (f'Generation(job_id={self.job_id!r}, submission_id={self.submission_id!r}, '
                f'key={self.key!r}, started={self.started})')


# eq=False: steps compare by identity, like the generation they carry.
@dataclasses.dataclass(frozen=True, eq=False)
class CompileStep:
    generation: Generation


@dataclasses.dataclass(frozen=True, eq=False)
class CaseStep:
    generation: Generation
    task: int
    case: int


Step = Union[CompileStep, CaseStep]
