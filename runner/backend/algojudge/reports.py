"""What the runner reports of an AlgoJudge job (docs/algojudge.md §6, §7,
§10.7 to §10.9): a judged result with its `details` and `log` attachments,
or an infrastructure failure naming its reason, never both.

A JE on any case means the judge failed (a broken checker, a sandbox that
would not run): the job is an infrastructure failure, so another attempt
judges it, never a score. A compile that failed is the submission's
`Compilation error`, every test listed as failed.
"""
import dataclasses
import json
from typing import Any, Dict, Optional, Sequence, Tuple

from runner.backend.algojudge.preparation import Prepared
from runner.version import VERSION
from sandbox.results import CaseResult, Status
from standard_io.admission import Refusal
from standard_io.config import TYPE
from standard_io.scoring import Reason, TestOutcome, Verdict, details, score

MAX_REASON_CHARS = 1000
MAX_LOG_BYTES = 256 * 1024

_REASONS = {
    Status.WA: Reason.WRONG_ANSWER,
    Status.TLE: Reason.TIME_LIMIT,
    Status.MLE: Reason.MEMORY_LIMIT,
    Status.OLE: Reason.OUTPUT_LIMIT,
    Status.RE: Reason.RUNTIME_ERROR,
}


@dataclasses.dataclass(frozen=True)
class Attachment:
    name: str  # the role: `log` or `details`
    file_name: str
    content_type: str
    data: bytes = dataclasses.field(repr=False)


@dataclasses.dataclass(frozen=True)
class JobReport:
    """One report, resent as it is until it lands (the body never changes)."""
    job_id: str
    body: Dict[str, Any] = dataclasses.field(repr=False)  # carries the lease token
    attachments: Tuple[Attachment, ...] = ()

    @property
    def infrastructure_failure(self) -> bool:
        return bool(self.body['infrastructureFailure'])


def failure(job_id: str, lease_token: str, reason: str) -> JobReport:
    return JobReport(
        job_id, {
            'leaseToken': lease_token,
            'infrastructureFailure': True,
            'failureReason': reason[:MAX_REASON_CHARS] or 'the judge failed',
            'runnerVersion': VERSION,
        })


def judged(job_id: str, lease_token: str, prepared: Prepared,
           results: Sequence[Sequence[CaseResult]]) -> JobReport:
    """The report of a job the dispatcher judged (a result per group per test)."""
    flat = [result for group in results for result in group]
    broken = next((r for r in flat if r.status is Status.JE), None)
    if broken is not None:
        return failure(job_id, lease_token, broken.stderr or 'the judge failed')
    if flat and all(r.status is Status.CE for r in flat):
        return refused(job_id, lease_token, prepared,
                       Refusal(Verdict.COMPILATION_ERROR, Reason.COMPILATION_ERROR, flat[0].stderr))
    outcomes = [_outcome(test, result) for test, result in zip(prepared.tests, flat)]
    log_lines = [f'{o.test.no}: {_word(r)} {r.exec_time_ms} ms' for o, r in zip(outcomes, flat)]
    return _report(job_id, lease_token, prepared, outcomes, '', '\n'.join(log_lines))


def refused(job_id: str, lease_token: str, prepared: Prepared, refusal: Refusal) -> JobReport:
    """Every test failed with the refusal's reason, none run."""
    outcomes = [TestOutcome.refused(t, refusal.reason) for t in prepared.tests]
    return _report(job_id, lease_token, prepared, outcomes, refusal.log, refusal.log)


def _report(job_id: str, lease_token: str, prepared: Prepared, outcomes: Sequence[TestOutcome],
            compile_log: str, log_text: str) -> JobReport:
    result = score(prepared.config, outcomes)
    chosen = prepared.toolchain
    limits = prepared.config.language_limits(chosen) if chosen else prepared.config.limits
    document = details(result, limits, compile_log)
    body = {
        'leaseToken': lease_token,
        'infrastructureFailure': False,
        'score': document['score'],
        'maxScore': result.max_score,
        'verdict': result.verdict.value,
        'runnerVersion': VERSION,
    }
    if chosen is not None:
        body['props'] = {'type': TYPE, 'toolchain': chosen.id}
    attachments = (Attachment('details', 'details.json', 'application/json',
                              json.dumps(document).encode()),
                   Attachment('log', 'log.txt', 'text/plain',
                              log_text.encode('utf-8', 'replace')[-MAX_LOG_BYTES:]))
    return JobReport(job_id, body, attachments)


def _outcome(test, result: CaseResult) -> TestOutcome:
    reason: Optional[Reason] = _REASONS.get(result.status)
    note = result.note
    if result.status is Status.RE and not note:
        note = f'exit code {result.exit_code}'
    cpu_us = result.cpu_us or result.exec_time_ms * 1000
    return TestOutcome(test, reason, result.percent if reason is None else 0, cpu_us,
                       result.memory_kb * 1024 or None, note[:1000])


def _word(result: CaseResult) -> str:
    return 'OK' if result.status is Status.AC else result.status.value
