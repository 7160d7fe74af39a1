"""Verdicts, and the result of a compile and of a case (protocol §4, §5)."""
import dataclasses
import enum


class Status(str, enum.Enum):
    CE = 'CE'
    TLE = 'TLE'
    MLE = 'MLE'
    OLE = 'OLE'
    RE = 'RE'
    WA = 'WA'
    AC = 'AC'
    JE = 'JE'


@dataclasses.dataclass(frozen=True)
class CompileResult:
    """`status` is AC when the job compiled, CE for the student's fault, JE for ours."""
    status: Status
    message: str = ''

    @property
    def ok(self) -> bool:
        return self.status is Status.AC


@dataclasses.dataclass(frozen=True)
class CaseResult:
    status: Status
    exit_code: int = 0
    exec_time_ms: int = 0
    memory_kb: int = 0
    stdout: str = ''
    stderr: str = ''
    # What a checker or the comparison said of the output, for a report
    # that shows it apart from the program's own stderr.
    note: str = ''
    # What an accepted output earns of its case (a checker's partial credit).
    percent: int = 100
    # The CPU time measured, in µs (0 without a run): `exec_time_ms` is
    # rounded as protocol §4 says, a report that rounds up reads this.
    cpu_us: int = 0

    @classmethod
    def from_failed_compile(cls, compiled: CompileResult) -> 'CaseResult':
        """The result every case of a job gets when its compile step did not succeed."""
        assert not compiled.ok
        return cls(status=compiled.status, exit_code=0, stderr=compiled.message)

    @classmethod
    def judge_error(cls, message: str) -> 'CaseResult':
        return cls(status=Status.JE, stderr=message)
