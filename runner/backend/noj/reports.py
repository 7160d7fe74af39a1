"""The reports the result sender delivers: one per claim, complete or abort."""
import dataclasses
import pathlib
from typing import Optional

from dispatcher.job import Job
from runner.backend.noj.outbound import AbortReason, Results


@dataclasses.dataclass(frozen=True)
class CompleteReport:
    job_id: str
    job_dir: pathlib.Path
    # A result per task per case, in index order. Kept out of the repr: it
    # carries the submission's output.
    results: Results = dataclasses.field(repr=False)
    submission_id: str = dataclasses.field(default='', compare=False)  # for the logs

    @classmethod
    def for_job(cls, job: Job, results: Results) -> 'CompleteReport':
        return cls(job_id=job.job_id,
                   job_dir=job.job_dir,
                   results=results,
                   submission_id=job.submission_id)


@dataclasses.dataclass(frozen=True)
class AbortReport:
    job_id: str
    reason: AbortReason
    # None when the claim never got a job folder (prep failed or bad payload).
    job_dir: Optional[pathlib.Path]
    # For the logs; unknown for a payload that did not parse.
    submission_id: str = dataclasses.field(default='', compare=False)
    # Finalize only, send nothing: the backend leased the job again and this
    # runner holds that newer claim, whose lease an abort would end.
    release_only: bool = False

    @classmethod
    def for_job(cls, job: Job, reason: AbortReason, release_only: bool = False) -> 'AbortReport':
        return cls(job_id=job.job_id,
                   reason=reason,
                   job_dir=job.job_dir,
                   submission_id=job.submission_id,
                   release_only=release_only)


Report = CompleteReport | AbortReport
