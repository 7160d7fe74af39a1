"""`LocalBackend`: the whole backend in one object, for tests, demos and `python -m localbackend`.

    with LocalBackend(clock=ManualClock()) as backend:      # 127.0.0.1, a free port
        backend.add_problem(Problem.from_cases(1, [[('1 2\\n', '3\\n')]]))
        sid = backend.submit(1, 'python', 'print(sum(map(int, input().split())))')
        ...                                                   # run a runner at backend.url
        result = backend.wait_result(sid, timeout=30)
        assert backend.events.count('complete', outcome='landed', submission_id=sid) == 1
"""
import pathlib
import secrets
import time
from typing import Iterable, List, Mapping, Optional, Union

from localbackend import problems as problems_module
from localbackend.clock import Clock
from localbackend.events import EventLog
from localbackend.faults import FaultPlan
from localbackend.problems import Problem
from localbackend.results import format_submission, submission_document
from localbackend.server import BackendServer
from localbackend.settings import DEFAULT_RUNNER_CONFIG, Settings
from localbackend.store import Result, RunnerView, Store, SubmissionView


class LocalBackend:
    """A backend serving the runner API (protocol §2) on `host:port` (port 0 picks a free one) from a thread.

    Tokens default to fresh random ones; read them from `registration_token`
    and `sandbox_token` (they are never in the repr or the logs).
    """

    def __init__(self,
                 *,
                 host: str = '127.0.0.1',
                 port: int = 0,
                 registration_token: Optional[str] = None,
                 sandbox_token: Optional[str] = None,
                 lease_ttl_sec: float = 30.0,
                 identity_ttl_sec: float = 600.0,
                 max_attempts: int = 3,
                 runner_config: Mapping[str, object] = DEFAULT_RUNNER_CONFIG,
                 clock: Optional[Clock] = None,
                 admin_token: Optional[str] = None,
                 public_url: Optional[str] = None):
        self.settings = Settings(
            registration_token=(secrets.token_urlsafe(24)
                                if registration_token is None else registration_token),
            sandbox_token=secrets.token_urlsafe(24) if sandbox_token is None else sandbox_token,
            lease_ttl_sec=lease_ttl_sec,
            identity_ttl_sec=identity_ttl_sec,
            max_attempts=max_attempts,
            runner_config=runner_config,
        )
        self.store = Store(self.settings, clock)
        self.faults = FaultPlan()
        self._server = BackendServer(self.store,
                                     self.faults,
                                     host=host,
                                     port=port,
                                     public_url=public_url,
                                     admin_token=admin_token)

    # -------------------------------------------------------------- lifecycle

    def start(self) -> 'LocalBackend':
        self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop()

    def join(self, timeout: Optional[float] = None) -> None:
        self._server.join(timeout)

    def __enter__(self) -> 'LocalBackend':
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
        self.join(5)

    def __repr__(self) -> str:
        return f'LocalBackend(url={self.url!r}, store={self.store!r})'

    @property
    def port(self) -> int:
        return self._server.port

    @property
    def url(self) -> str:
        """The BACKEND_URL a runner should use."""
        return self._server.url

    @property
    def registration_token(self) -> str:
        return self.settings.registration_token

    @property
    def sandbox_token(self) -> str:
        return self.settings.sandbox_token

    @property
    def clock(self) -> Clock:
        return self.store.clock

    @property
    def events(self) -> EventLog:
        return self.store.events

    # --------------------------------------------------------------- problems

    def add_problem(self, problem: Problem, *, validate: bool = True) -> Problem:
        return self.store.add_problem(problem, validate=validate)

    def load_problems(self, folder: Union[str, pathlib.Path]) -> List[Problem]:
        """Add every problem folder under `folder`."""
        loaded = problems_module.load_problems(folder)
        for problem in loaded:
            self.store.add_problem(problem)
        return loaded

    def set_testdata(self, problem_id: int, changes: Mapping[str, Optional[Union[str,
                                                                                 bytes]]]) -> str:
        """Replace/add/remove (None) testdata entries; returns the new checksum."""
        encoded = {
            name: data.encode('utf-8') if isinstance(data, str) else data
            for name, data in changes.items()
        }
        return self.store.set_testdata(problem_id, encoded)

    # ------------------------------------------------------------ submissions

    def submit(self, problem_id: int, language: Union[int, str], source: Union[str, bytes]) -> str:
        """Queue a submission (language 0/1/2 or c/cpp/python); returns its id."""
        return self.store.submit(problem_id, language, source)

    def rejudge(self, submission_id: str) -> str:
        """Queue a new current job for the submission; returns its job id."""
        return self.store.rejudge(submission_id)

    def job_payload(self, problem_id: int, language: Union[int, str]) -> dict:
        """A realistic job payload to tweak for `inject_job`."""
        return self.store.job_payload(problem_id, language)

    def inject_job(self, payload: object, *, code_zip: Optional[bytes] = None) -> str:
        """Queue a job served exactly as given (any JSON, or bytes/str verbatim)."""
        return self.store.inject_job(payload, code_zip=code_zip)

    def submission(self, submission_id: str) -> SubmissionView:
        return self.store.submission(submission_id)

    def submissions(self) -> List[SubmissionView]:
        return self.store.submissions()

    def wait_result(self, submission_id: str, timeout: float) -> Result:
        """The current job's result; raises TimeoutError when it does not land in time."""
        return self.store.wait_result(submission_id, timeout)

    def wait_results(self, submission_ids: Iterable[str], timeout: float) -> List[Result]:
        """Results of several submissions, all within one shared deadline."""
        deadline = time.monotonic() + timeout
        return [
            self.store.wait_result(sid, max(0.0, deadline - time.monotonic()))
            for sid in submission_ids
        ]

    def format_result(self, submission_id: str) -> str:
        """The verdict table of a submission."""
        return format_submission(submission_document(self.store.submission(submission_id)))

    # ---------------------------------------------------------------- runners

    def runners(self) -> List[RunnerView]:
        return self.store.runners()

    def revoke(self, runner_id: str) -> None:
        """Revoke an identity: every later call of that runner answers 401."""
        self.store.revoke(runner_id)

    def sweep(self) -> None:
        """Reclaim expired leases now (any runner call does it too)."""
        self.store.sweep()
