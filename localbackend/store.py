"""The backend's state and rules: runners, problems, submissions and jobs, in memory.

Everything here is HTTP-free: each runner call returns an `Answer` whose
`Outcome` the server maps to a status. One condition variable guards all
state, so every rule below is applied atomically.

Rules (protocol §2 and §6, and the landing semantics a backend implementer must get right):
- An identity is stored as the SHA-256 of its token only; every check is
  constant-time and fails closed (a non-str or unencodable token is refused).
  Only a heartbeat renews an identity, and an expired one is never revived.
- A lease lasts `lease_ttl_sec` from the claim or from the last heartbeat that
  listed the job. Expired leases are reclaimed lazily at the start of every
  runner call (the orphan scan), so an injected clock needs no sweeper thread.
- Every claim counts one attempt. `abort(drain)` refunds the claim's attempt;
  a `prep_failed`/`rejected` abort or a reclaim that finds the attempts
  exhausted converges the job to JE instead of requeueing it.
- A submission points at its current job. A rejudge moves the pointer; a
  result of any other job is answered 204 and dropped (stale).
- A job lands at most once: the first complete deletes it, so a retry after a
  lost 204 answers 404.
- Complete precedence: 401, 404, 409, 400, stale-drop 204, landed 204.
"""
import dataclasses
import enum
import itertools
import json
import logging
import secrets
import threading
import time
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from localbackend import auth, languages, zips
from localbackend.clock import Clock, MonotonicClock
from localbackend.events import EventLog
from localbackend.problems import Problem
from localbackend.reports import CaseReport, Report, ReportError, shape_error
from localbackend.settings import Settings

log = logging.getLogger('localbackend.store')

# How often a held long poll looks whether its caller is still there: a
# runner that stops hangs up and reads the answer until the wait is over.
CALLER_LOOK_SEC = 0.2


class Outcome(enum.Enum):
    OK = 'ok'
    NO_JOB = 'no_job'
    LANDED = 'landed'
    STALE_DROPPED = 'stale_dropped'
    REQUEUED = 'requeued'
    CONVERGED = 'converged'
    DROPPED = 'dropped'
    UNAUTHORIZED = 'unauthorized'
    FORBIDDEN = 'forbidden'
    NOT_FOUND = 'not_found'
    CONFLICT = 'conflict'
    REJECTED = 'rejected'


class AbortReason(str, enum.Enum):
    DRAIN = 'drain'
    PREP_FAILED = 'prep_failed'
    REJECTED = 'rejected'


@dataclasses.dataclass(frozen=True)
class Answer:
    outcome: Outcome
    value: Any = dataclasses.field(default=None, repr=False)
    error: str = ''


@dataclasses.dataclass(frozen=True)
class Registration:
    runner_id: str
    token: str = dataclasses.field(repr=False)
    config: Mapping[str, object] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class ServedJob:
    """A claimed job as `next-job` serves it.

    `payload` is a JSON value, or bytes served verbatim (an injected raw
    payload). `code_path` is the signed path of the code zip, to be made
    absolute by the server, when the payload needs a `code_url`.
    """
    job_id: str
    payload: Union[dict, list, str, int, float, bool, None, bytes] = dataclasses.field(repr=False)
    code_path: Optional[str] = dataclasses.field(default=None, repr=False)


@dataclasses.dataclass(frozen=True)
class Result:
    """What landed for a submission: a runner's report, or JE after the last attempt."""
    job_id: str
    report: Report
    judge_error: bool = False
    task_scores: Optional[Tuple[int, ...]] = None

    @property
    def score(self) -> Optional[int]:
        """The sum of the scores of the tasks whose cases are all AC (None: scores unknown)."""
        if self.task_scores is None or len(self.task_scores) != len(self.report.tasks):
            return None
        return sum(score for score, cases in zip(self.task_scores, self.report.tasks)
                   if all(case.status == 'AC' for case in cases))

    @property
    def statuses(self) -> Tuple[str, ...]:
        return self.report.statuses

    @property
    def verdict(self) -> str:
        """AC when every case is AC, else the first case that is not."""
        return next((s for s in self.statuses if s != 'AC'), 'AC')


@dataclasses.dataclass(frozen=True)
class SubmissionView:
    submission_id: str
    problem_id: object
    language: object
    current_job_id: Optional[str]
    result: Optional[Result]
    injected: bool = False

    @property
    def done(self) -> bool:
        """Whether the current job's result has landed (an older job's does not count)."""
        return self.result is not None and self.result.job_id == self.current_job_id


@dataclasses.dataclass(frozen=True)
class RunnerView:
    runner_id: str
    name: str
    alive: bool
    revoked: bool
    held_job_ids: Tuple[str, ...]


@dataclasses.dataclass(eq=False)
class _Runner:
    runner_id: str
    name: str
    token_hash: bytes = dataclasses.field(repr=False)
    expires_at: float = 0.0
    revoked: bool = False


@dataclasses.dataclass(eq=False)
class _Job:
    job_id: str
    seq: int
    submission_id: str
    payload: Any = dataclasses.field(repr=False)
    case_counts: Optional[Tuple[int, ...]]
    task_scores: Optional[Tuple[int, ...]]
    has_code: bool
    leased: bool = False
    holder: Optional[str] = None
    lease_expires_at: float = 0.0
    attempts: int = 0


@dataclasses.dataclass(eq=False)
class _Submission:
    submission_id: str
    problem_id: object
    language: object
    code_zip: Optional[bytes] = dataclasses.field(repr=False)
    current_job_id: Optional[str] = None
    result: Optional[Result] = None
    injected: bool = False


def _short(value: object, limit: int = 64) -> str:
    """A value safe and short enough for a log line (never called with a token)."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + '…'


def _task_ints(payload: object, key: str) -> Optional[Tuple[int, ...]]:
    """One integer per task of a (possibly hostile) payload, or None when it has none."""
    if not isinstance(payload, dict) or not isinstance(payload.get('tasks'), list):
        return None
    values = []
    for task in payload['tasks']:
        value = task.get(key) if isinstance(task, dict) else None
        if type(value) is not int or value < 0:
            return None
        values.append(value)
    return tuple(values)


class Store:

    def __init__(self, settings: Settings, clock: Optional[Clock] = None):
        self._settings = settings
        self._clock = clock or MonotonicClock()
        self.events = EventLog(self._clock)
        self._cond = threading.Condition()
        self._closed = False
        self._runners: Dict[str, _Runner] = {}
        self._problems: Dict[int, Problem] = {}
        self._submissions: Dict[str, _Submission] = {}
        self._jobs: Dict[str, _Job] = {}
        # Kept after a job ends: a late download of code is harmless, and the
        # zip of an injected job may be all there is.
        self._code: Dict[str, bytes] = {}
        self._code_key = secrets.token_bytes(32)
        self._seq = itertools.count(1)

    def __repr__(self) -> str:
        with self._cond:
            return (f'Store(runners={len(self._runners)}, problems={len(self._problems)}, '
                    f'submissions={len(self._submissions)}, jobs={len(self._jobs)})')

    @property
    def settings(self) -> Settings:
        return self._settings

    @property
    def clock(self) -> Clock:
        return self._clock

    # ----------------------------------------------------------------- runner API

    def register(self, registration_token: object, name: object) -> Answer:
        with self._cond:
            if not auth.matches_secret(self._settings.registration_token, registration_token):
                self.events.append('register', outcome='unauthorized')
                log.warning('register refused: wrong registration token')
                return Answer(Outcome.UNAUTHORIZED, error='wrong registration token')
            if not isinstance(name, str) or auth.utf8(name) is None or not 0 < len(name) <= 128:
                self.events.append('register', outcome='rejected')
                return Answer(Outcome.REJECTED, error='name must be a string of 1..128 characters')
            runner_id = 'rn_' + secrets.token_hex(8)
            token = auth.mint('rk_')
            self._runners[runner_id] = _Runner(runner_id,
                                               name,
                                               auth.token_hash(token),
                                               expires_at=self._clock.now() +
                                               self._settings.identity_ttl_sec)
            self.events.append('register', outcome='ok', runner_id=runner_id, data={'name': name})
            log.info('registered %s (%s)', runner_id, _short(name))
            return Answer(Outcome.OK,
                          Registration(runner_id, token, dict(self._settings.runner_config)))

    def heartbeat(self, runner_id: object, token: object,
                  active_job_ids: Optional[Sequence[str]]) -> Answer:
        """Renew the identity and the leases of the listed jobs this runner holds.

        `active_job_ids` is None when the body was malformed (answered 400 after auth).
        """
        with self._cond:
            runner = self._authenticate('heartbeat', runner_id, token)
            if runner is None:
                return Answer(Outcome.UNAUTHORIZED, error='identity unknown, revoked or expired')
            self._reclaim_expired()
            if active_job_ids is None:
                self.events.append('heartbeat', outcome='rejected', runner_id=runner.runner_id)
                return Answer(Outcome.REJECTED, error='body must be {"active_job_ids": [str, …]}')
            now = self._clock.now()
            runner.expires_at = now + self._settings.identity_ttl_sec
            renewed, ignored = [], []
            for job_id in dict.fromkeys(active_job_ids):
                job = self._jobs.get(job_id)
                if job is not None and job.leased and job.holder == runner.runner_id:
                    job.lease_expires_at = now + self._settings.lease_ttl_sec
                    renewed.append(job_id)
                else:
                    ignored.append(job_id)
            self.events.append('heartbeat',
                               outcome='ok',
                               runner_id=runner.runner_id,
                               data={
                                   'renewed': tuple(renewed),
                                   'ignored': tuple(ignored)
                               })
            return Answer(Outcome.OK)

    def claim(self,
              runner_id: object,
              token: object,
              wait_sec: float = 0.0,
              caller_present: Callable[[], bool] = lambda: True) -> Answer:
        """Lease the oldest queued job, holding the call up to `wait_sec` real seconds for one.

        `caller_present()` is asked before a job is leased: a runner that
        stopped while its long poll was held would never report the job, which
        would then wait for lease expiry and lose an attempt.
        """
        wait_sec = max(0.0, min(float(wait_sec), self._settings.long_poll_max_sec))
        deadline = time.monotonic() + wait_sec
        with self._cond:
            waiting = False
            while True:
                runner = self._authenticate('claim', runner_id, token)
                if runner is None:
                    return Answer(Outcome.UNAUTHORIZED,
                                  error='identity unknown, revoked or expired')
                self._reclaim_expired()
                job = self._oldest_queued()
                remaining = deadline - time.monotonic()
                if (job is not None or waiting) and not caller_present():
                    self.events.append('claim', outcome='abandoned', runner_id=runner.runner_id)
                    log.info('%s went away while its claim was held; nothing leased',
                             runner.runner_id)
                    return Answer(Outcome.NO_JOB)
                if job is not None or self._closed or remaining <= 0:
                    break
                if not waiting:
                    waiting = True
                    self.events.append('long_poll',
                                       outcome='waiting',
                                       runner_id=runner.runner_id,
                                       data={'wait': wait_sec})
                # Wake for a lease that expires meanwhile too: its job becomes
                # claimable; and look whether the caller is still there: a
                # stopping runner hangs up and waits for the answer.
                self._cond.wait(min(remaining, self._next_expiry_in(), CALLER_LOOK_SEC))
            if job is None:
                self.events.append('claim', outcome='no_job', runner_id=runner.runner_id)
                return Answer(Outcome.NO_JOB)
            job.leased = True
            job.holder = runner.runner_id
            job.attempts += 1
            job.lease_expires_at = self._clock.now() + self._settings.lease_ttl_sec
            held = self._held_count(runner.runner_id)
            self.events.append('claim',
                               outcome='ok',
                               runner_id=runner.runner_id,
                               job_id=job.job_id,
                               submission_id=job.submission_id,
                               attempts=job.attempts,
                               data={'held': held})
            log.info('%s claimed %s (attempt %d)', runner.runner_id, job.job_id, job.attempts)
            code_path = None
            if job.has_code and isinstance(job.payload, dict) and 'code_url' not in job.payload:
                code_path = self.code_path(job.job_id)
            return Answer(Outcome.OK, ServedJob(job.job_id, job.payload, code_path))

    def _held_job(self, kind: str, runner_id: object, token: object, job_id: object):
        """Lock held. For a report (`kind`: complete or abort): the job this
        runner holds and the event fields, or the refusal in protocol §2's order
        of precedence: 401, then 404, then 409."""
        runner = self._authenticate(kind, runner_id, token, job_id=job_id)
        if runner is None:
            return None, {}, Answer(Outcome.UNAUTHORIZED,
                                    error='identity unknown, revoked or expired')
        self._reclaim_expired()
        job = self._job(job_id)
        fields = dict(runner_id=runner.runner_id, job_id=job_id if job is None else job.job_id)
        if job is None:
            self.events.append(kind, outcome='not_found', **fields)
            return None, fields, Answer(Outcome.NOT_FOUND,
                                        error='job unknown (finished, dropped or never issued)')
        fields['submission_id'] = job.submission_id
        if not job.leased or job.holder != runner.runner_id:
            self.events.append(kind, outcome='conflict', **fields)
            return None, fields, Answer(Outcome.CONFLICT,
                                        error='job is not held by this runner (reclaimed)')
        return job, fields, None

    def complete(self, runner_id: object, token: object, job_id: object,
                 report: Union[Report, ReportError]) -> Answer:
        """Land a result. `report` is the parsed body, or why it could not be parsed."""
        with self._cond:
            job, fields, refusal = self._held_job('complete', runner_id, token, job_id)
            if refusal is not None:
                return refusal
            problem = str(report) if isinstance(report, ReportError) else shape_error(
                report, job.case_counts)
            if problem is not None:
                self.events.append('complete',
                                   outcome='rejected',
                                   data={'error': problem},
                                   **fields)
                log.warning('complete of %s rejected: %s', job.job_id, problem)
                return Answer(Outcome.REJECTED, error=problem)
            del self._jobs[job.job_id]
            submission = self._submissions[job.submission_id]
            if submission.current_job_id != job.job_id:
                self.events.append('complete', outcome='stale_dropped', **fields)
                log.info('dropped stale result of %s (submission %s is now judged by %s)',
                         job.job_id, submission.submission_id, submission.current_job_id)
                return Answer(Outcome.STALE_DROPPED)
            self._land(submission, Result(job.job_id, report, task_scores=job.task_scores))
            self.events.append('complete',
                               outcome='landed',
                               data={'statuses': report.statuses},
                               **fields)
            log.info('%s landed for submission %s', job.job_id, submission.submission_id)
            return Answer(Outcome.LANDED)

    def abort(self, runner_id: object, token: object, job_id: object,
              reason: Optional[AbortReason]) -> Answer:
        """Give a claim back. `reason` is None when the body had no valid reason (400)."""
        with self._cond:
            job, fields, refusal = self._held_job('abort', runner_id, token, job_id)
            if refusal is not None:
                return refusal
            if reason is None:
                self.events.append('abort', outcome='rejected', **fields)
                return Answer(Outcome.REJECTED,
                              error='reason must be one of drain, prep_failed, rejected')
            if reason is AbortReason.DRAIN:
                # The claim counted an attempt; a shutdown is the operator's
                # doing, so a claim+drain round trip must net zero.
                job.attempts = max(0, job.attempts - 1)
            outcome = self._release(job, exhausting=reason is not AbortReason.DRAIN)
            self.events.append('abort',
                               outcome=outcome.value,
                               reason=reason.value,
                               attempts=job.attempts,
                               **fields)
            log.info('%s aborted %s (%s): %s', fields['runner_id'], job.job_id, reason.value,
                     outcome.value)
            return Answer(outcome)

    # ----------------------------------------------------- testdata channel, code

    def checksum(self, problem_id: object, token: object) -> Answer:
        with self._cond:
            problem = self._sandbox_problem('checksum', problem_id, token)
            if isinstance(problem, Answer):
                return problem
            return Answer(Outcome.OK, problem.checksum)

    def testdata(self, problem_id: object, token: object) -> Answer:
        with self._cond:
            problem = self._sandbox_problem('testdata', problem_id, token)
            if isinstance(problem, Answer):
                return problem
            return Answer(Outcome.OK, problem.testdata_zip)

    def code_path(self, job_id: str) -> str:
        """The presigned path of a job's code zip: whoever has it may download, nobody else."""
        return f'/code/{job_id}?sig={auth.sign(self._code_key, "code:" + job_id)}'

    def code(self, job_id: object, signature: object) -> Answer:
        with self._cond:
            if not isinstance(job_id, str) or not auth.signature_valid(
                    self._code_key, 'code:' + job_id, signature):
                self.events.append('code', outcome='forbidden')
                return Answer(Outcome.FORBIDDEN, error='bad signature')
            data = self._code.get(job_id)
            if data is None:
                self.events.append('code', outcome='not_found', job_id=job_id)
                return Answer(Outcome.NOT_FOUND, error='no code for this job')
            self.events.append('code', outcome='ok', job_id=job_id)
            return Answer(Outcome.OK, data)

    # ------------------------------------------------------------------ admin API

    def add_problem(self, problem: Problem, *, validate: bool = True) -> Problem:
        if validate:
            problem.validate()
        with self._cond:
            self._problems[problem.problem_id] = problem
        return problem

    def problem(self, problem_id: int) -> Problem:
        with self._cond:
            if problem_id not in self._problems:
                raise KeyError(f'unknown problem {problem_id!r}')
            return self._problems[problem_id]

    def problems(self) -> List[Problem]:
        with self._cond:
            return [self._problems[pid] for pid in sorted(self._problems)]

    def set_testdata(self, problem_id: int, changes: Mapping[str, Optional[bytes]]) -> str:
        """Replace, add or remove (None) testdata entries; returns the new checksum.

        Not validated, so a test can break a problem on purpose. Jobs already
        queued keep the tasks they were created with; a rejudge takes the new ones.
        """
        with self._cond:
            problem = self.problem(problem_id).with_files(changes)
            self._problems[problem_id] = problem
            self.events.append('testdata_changed', data={'problem_id': problem_id})
            return problem.checksum

    def submit(self, problem_id: int, language: Union[int, str], source: Union[str, bytes]) -> str:
        """Create a submission and queue its first job; returns the submission id."""
        lang = languages.parse_language(language)
        data = source.encode('utf-8') if isinstance(source, str) else bytes(source)
        with self._cond:
            self.problem(problem_id)
            submission = _Submission(secrets.token_hex(12), problem_id, lang,
                                     zips.build_zip({languages.SOURCE_NAMES[lang]: data}))
            self._submissions[submission.submission_id] = submission
            job = self._new_job(submission)
            self.events.append('submit',
                               job_id=job.job_id,
                               submission_id=submission.submission_id,
                               data={
                                   'problem_id': problem_id,
                                   'language': lang
                               })
            return submission.submission_id

    def rejudge(self, submission_id: str) -> str:
        """Queue a new job for the submission and make it current; returns its job id.

        A queued sibling nobody holds is cancelled; a held one runs on and its
        result will be dropped as stale.
        """
        with self._cond:
            submission = self._submission(submission_id)
            if submission.injected:
                raise ValueError('an injected job cannot be rejudged; inject another')
            for job in [j for j in self._jobs.values() if j.submission_id == submission_id]:
                if not job.leased:
                    del self._jobs[job.job_id]
                    self.events.append('cancel', job_id=job.job_id, submission_id=submission_id)
            job = self._new_job(submission)
            self.events.append('rejudge', job_id=job.job_id, submission_id=submission_id)
            return job.job_id

    def job_payload(self, problem_id: int, language: Union[int, str]) -> dict:
        """A realistic payload (no job, no code_url) to tweak into a hostile one."""
        lang = languages.parse_language(language)
        with self._cond:
            return self._payload('jb_' + secrets.token_hex(8), secrets.token_hex(12),
                                 self.problem(problem_id), lang)

    def inject_job(self, payload: object, *, code_zip: Optional[bytes] = None) -> str:
        """Queue a job whose payload is served as is; returns the job id it is keyed by.

        `payload` is a JSON value, or bytes/str served verbatim (not JSON, say).
        The job is keyed by the payload's `job_id` when that is a fresh str,
        else by a new id the runner never sees (so only lease expiry ends it).
        When `code_zip` is given and the payload is an object without
        `code_url`, a signed `code_url` serving it is added at claim time.
        """
        if isinstance(payload, str):
            payload = payload.encode('utf-8', 'surrogatepass')
        if not isinstance(payload, bytes):
            try:
                payload = json.loads(json.dumps(payload))
            except (TypeError, ValueError) as error:
                raise ValueError(f'payload is not JSON-serialisable: {error}') from None
        with self._cond:
            job_id = payload.get('job_id') if isinstance(payload, dict) else None
            if not isinstance(job_id, str) or not job_id or job_id in self._jobs \
                    or job_id in self._code:
                job_id = 'jb_' + secrets.token_hex(8)
            submission_id = payload.get('submission_id') if isinstance(payload, dict) else None
            if not isinstance(submission_id, str) or submission_id in self._submissions:
                submission_id = secrets.token_hex(12)
            submission = _Submission(
                submission_id,
                payload.get('problem_id') if isinstance(payload, dict) else None,
                payload.get('language') if isinstance(payload, dict) else None,
                code_zip,
                injected=True)
            self._submissions[submission_id] = submission
            job = self._new_job(submission, job_id=job_id, payload=payload)
            self.events.append('inject', job_id=job.job_id, submission_id=submission_id)
            return job.job_id

    def submission(self, submission_id: str) -> SubmissionView:
        with self._cond:
            return self._view(self._submission(submission_id))

    def submissions(self) -> List[SubmissionView]:
        with self._cond:
            return [self._view(s) for s in self._submissions.values()]

    def wait_result(self, submission_id: str, timeout: float) -> Result:
        """The current job's result, waiting up to `timeout` s; TimeoutError if it does not land."""
        with self._cond:
            submission = self._submission(submission_id)

            def done() -> bool:
                return self._view(submission).done

            # A stopped backend lands nothing more: do not hold a waiter until its timeout.
            if not self._cond.wait_for(lambda: done() or self._closed, timeout) or not done():
                raise TimeoutError(f'submission {submission_id} has no result after {timeout} s')
            return submission.result

    def revoke(self, runner_id: str) -> None:
        """Revoke an identity: its next call answers 401; its leases are left to expire."""
        with self._cond:
            if runner_id not in self._runners:
                raise KeyError(f'unknown runner {runner_id!r}')
            self._runners[runner_id].revoked = True
            self.events.append('revoke', runner_id=runner_id)
            self._cond.notify_all()

    def runners(self) -> List[RunnerView]:
        with self._cond:
            now = self._clock.now()
            return [
                RunnerView(
                    r.runner_id, r.name, not r.revoked and now < r.expires_at, r.revoked,
                    tuple(j.job_id for j in self._jobs.values()
                          if j.leased and j.holder == r.runner_id)) for r in self._runners.values()
            ]

    def queued_job_ids(self) -> List[str]:
        with self._cond:
            return [
                j.job_id for j in sorted(self._jobs.values(), key=lambda j: j.seq) if not j.leased
            ]

    def job_attempts(self, job_id: str) -> int:
        with self._cond:
            if job_id not in self._jobs:
                raise KeyError(f'unknown job {job_id!r}')
            return self._jobs[job_id].attempts

    def sweep(self) -> None:
        """Reclaim expired leases now (runner calls do this on their own)."""
        with self._cond:
            self._reclaim_expired()

    def close(self) -> None:
        """Release long-polls: a stopping server must not wait for them."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    # ------------------------------------------------------------------ internals

    def _authenticate(self, kind: str, runner_id: object, token: object,
                      **fields) -> Optional[_Runner]:
        runner = self._runners.get(runner_id) if isinstance(runner_id, str) else None
        ok = auth.matches_hash(runner.token_hash if runner else None, token)
        if ok and not runner.revoked and self._clock.now() < runner.expires_at:
            return runner
        job_id = fields.get('job_id')
        self.events.append(kind,
                           outcome='unauthorized',
                           runner_id=runner_id if runner is not None else None,
                           job_id=job_id if isinstance(job_id, str) else None)
        log.warning('%s refused: identity %s unknown, revoked, expired or wrong token', kind,
                    _short(runner_id) if auth.utf8(runner_id) is not None else '(unprintable)')
        return None

    def _job(self, job_id: object) -> Optional[_Job]:
        return self._jobs.get(job_id) if isinstance(job_id, str) else None

    def _submission(self, submission_id: str) -> _Submission:
        if submission_id not in self._submissions:
            raise KeyError(f'unknown submission {submission_id!r}')
        return self._submissions[submission_id]

    def _sandbox_problem(self, kind: str, problem_id: object,
                         token: object) -> Union[Problem, Answer]:
        if not auth.matches_secret(self._settings.sandbox_token, token):
            self.events.append(kind, outcome='unauthorized')
            return Answer(Outcome.UNAUTHORIZED, error='wrong sandbox token')
        pid = None
        if isinstance(problem_id, int) and not isinstance(problem_id, bool):
            pid = problem_id
        elif isinstance(problem_id, str) and problem_id.isascii() and problem_id.isdigit():
            pid = int(problem_id)
        problem = self._problems.get(pid)
        if problem is None:
            self.events.append(kind, outcome='not_found')
            return Answer(Outcome.NOT_FOUND, error='unknown problem')
        self.events.append(kind, outcome='ok', data={'problem_id': pid})
        return problem

    def _payload(self, job_id: str, submission_id: str, problem: Problem, language: int) -> dict:
        return {
            'job_id': job_id,
            'submission_id': submission_id,
            'problem_id': problem.problem_id,
            'language': language,
            'checker': self._settings.checker,
            'tasks': [task.to_wire() for task in problem.tasks],
        }

    def _new_job(self,
                 submission: _Submission,
                 *,
                 job_id: Optional[str] = None,
                 payload: object = None) -> _Job:
        if job_id is None:
            job_id = 'jb_' + secrets.token_hex(8)
            payload = self._payload(job_id, submission.submission_id,
                                    self._problems[submission.problem_id], submission.language)
        job = _Job(job_id, next(self._seq), submission.submission_id, payload,
                   _task_ints(payload, 'caseCount'), _task_ints(payload, 'taskScore'),
                   submission.code_zip is not None)
        self._jobs[job_id] = job
        if submission.code_zip is not None:
            self._code[job_id] = submission.code_zip
        submission.current_job_id = job_id
        self._cond.notify_all()
        return job

    def _oldest_queued(self) -> Optional[_Job]:
        queued = [job for job in self._jobs.values() if not job.leased]
        return min(queued, key=lambda job: job.seq) if queued else None

    def _held_count(self, runner_id: str) -> int:
        return sum(1 for j in self._jobs.values() if j.leased and j.holder == runner_id)

    def _next_expiry_in(self) -> float:
        expiries = [j.lease_expires_at for j in self._jobs.values() if j.leased]
        if not expiries:
            return float('inf')
        return max(0.0, min(expiries) - self._clock.now()) + 0.01

    def _reclaim_expired(self) -> None:
        now = self._clock.now()
        for job in sorted(self._jobs.values(), key=lambda j: j.seq):
            if job.leased and now >= job.lease_expires_at:
                holder = job.holder
                outcome = self._release(job, exhausting=True)
                self.events.append('reclaim',
                                   outcome=outcome.value,
                                   runner_id=holder,
                                   job_id=job.job_id,
                                   submission_id=job.submission_id,
                                   attempts=job.attempts)
                log.info('lease of %s held by %s expired: %s', job.job_id, holder, outcome.value)

    def _release(self, job: _Job, *, exhausting: bool) -> Outcome:
        """End a claim without a result: requeue, drop (stale) or converge to JE."""
        job.leased = False
        job.holder = None
        submission = self._submissions[job.submission_id]
        if submission.current_job_id != job.job_id:
            del self._jobs[job.job_id]
            return Outcome.DROPPED
        if exhausting and job.attempts >= self._settings.max_attempts:
            del self._jobs[job.job_id]
            message = f'judge error: no runner could judge this job in {job.attempts} attempts'
            report = Report(
                tuple(
                    tuple(CaseReport.judge_error(message) for _ in range(count))
                    for count in (job.case_counts or ())))
            self._land(submission,
                       Result(job.job_id, report, judge_error=True, task_scores=job.task_scores))
            self.events.append('judge_error',
                               job_id=job.job_id,
                               submission_id=job.submission_id,
                               attempts=job.attempts)
            log.warning('%s converged to JE after %d attempts', job.job_id, job.attempts)
            return Outcome.CONVERGED
        self._cond.notify_all()
        return Outcome.REQUEUED

    def _land(self, submission: _Submission, result: Result) -> None:
        submission.result = result
        self._cond.notify_all()

    @staticmethod
    def _view(submission: _Submission) -> SubmissionView:
        return SubmissionView(submission.submission_id, submission.problem_id, submission.language,
                              submission.current_job_id, submission.result, submission.injected)
