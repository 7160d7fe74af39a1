"""Entries of the dispatcher's task queue: one compile, then one per case."""
import dataclasses

from dispatcher.context import JobContext


# eq=False: entries compare by identity, like the context they carry.
@dataclasses.dataclass(frozen=True, eq=False)
class CompileTask:
    ctx: JobContext


@dataclasses.dataclass(frozen=True, eq=False)
class CaseTask:
    ctx: JobContext
    task: int
    case: int
