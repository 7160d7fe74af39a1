"""What the sandbox holds for one job generation between its compile and its
release: its build, its problem's checker's or interactor's build, the TLE
reruns it has left, and why that checker or interactor is not run again.
Made by DockerSandbox.compile, dropped by release; its grader judges its
cases with it."""
import dataclasses
import threading
from typing import Optional

from sandbox.building import Build
from sandbox.job import Role, SandboxJob


def problem_key(job_key: str, role: Role) -> str:
    """The key of a job's checker's or interactor's build and containers: a
    job of its own, apart from the submission's."""
    return f'{job_key}/{role.value}'


# TLE reruns a job may take: a job of many near-limit cases cannot make the
# host judge each of them twice.
MAX_RERUNS_PER_JOB = 5


@dataclasses.dataclass
class JobState:
    job: SandboxJob
    build: Build
    problem_build: Optional[Build] = None
    reruns_left: int = MAX_RERUNS_PER_JOB
    # Why the problem's checker or interactor is not given the job's later
    # cases (it ran out of its limits, or was killed: it would again).
    stopped: Optional[str] = None
    _lock: threading.Lock = dataclasses.field(default_factory=threading.Lock,
                                              repr=False,
                                              compare=False)

    def take_rerun(self) -> bool:
        """One of the job's few reruns, when it has one left."""
        with self._lock:
            if self.reruns_left <= 0:
                return False
            self.reruns_left -= 1
            return True

    def stop_problem_program(self, why: str) -> None:
        with self._lock:
            if self.stopped is None:
                self.stopped = why
