"""Shared helpers for the local backend's tests."""
import json
from typing import List, Optional

import requests

from localbackend import LocalBackend, ManualClock, Problem
from localbackend.reports import Report, parse_report
from localbackend.settings import Settings
from localbackend.store import Store

REG = 'reg-secret-7f3a'
SANDBOX = 'sandbox-secret-91bc'
TIMEOUT = 10


def a_plus_b() -> Problem:
    """Problem 1: two tasks, two cases and one case."""
    return Problem.from_cases(1, [[('1 2\n', '3\n'), ('2 2\n', '4\n')], [('5 5\n', '10\n')]],
                              name='a+b')


def case(status: str = 'AC', **overrides) -> dict:
    body = {
        'status': status,
        'exitCode': 0,
        'execTime': 12,
        'memoryUsage': 3000,
        'stdout': '',
        'stderr': ''
    }
    body.update(overrides)
    return body


def body_for(counts: List[int], status: str = 'AC') -> dict:
    return {'tasks': [[case(status) for _ in range(n)] for n in counts]}


def report_for(counts: List[int], status: str = 'AC') -> Report:
    return parse_report(body_for(counts, status))


def make_store(clock: Optional[ManualClock] = None, **settings) -> Store:
    store = Store(Settings(registration_token=REG, sandbox_token=SANDBOX, **settings), clock
                  or ManualClock())
    store.add_problem(a_plus_b())
    return store


def register(store: Store, name: str = 'runner'):
    registration = store.register(REG, name).value
    return registration.runner_id, registration.token


def start_backend(**kwargs) -> LocalBackend:
    kwargs.setdefault('clock', ManualClock())
    backend = LocalBackend(registration_token=REG, sandbox_token=SANDBOX, **kwargs).start()
    backend.add_problem(a_plus_b())
    return backend


class HttpRunner:
    """The runner's side of protocol §2, one call per method, answers returned raw."""

    def __init__(self, backend: LocalBackend, name: str = 'runner'):
        self.url = backend.url
        self.session = requests.Session()
        answer = self.session.post(f'{self.url}/runners/register',
                                   json={
                                       'registration_token': REG,
                                       'name': name
                                   },
                                   timeout=TIMEOUT)
        assert answer.status_code == 201, answer.text
        self.runner_id = answer.json()['runner_id']
        self.token = answer.json()['token']

    @property
    def headers(self) -> dict:
        return {'Authorization': f'Bearer {self.token}'}

    def heartbeat(self, job_ids) -> requests.Response:
        return self.session.post(f'{self.url}/runners/{self.runner_id}/heartbeat',
                                 json={'active_job_ids': list(job_ids)},
                                 headers=self.headers,
                                 timeout=TIMEOUT)

    def next_job(self, wait=None) -> requests.Response:
        params = {'wait': wait} if wait is not None else None
        return self.session.get(f'{self.url}/runners/{self.runner_id}/next-job',
                                params=params,
                                headers=self.headers,
                                timeout=TIMEOUT + (wait if isinstance(wait, (int, float)) else 0))

    def claim(self) -> dict:
        answer = self.next_job()
        assert answer.status_code == 200, answer.status_code
        return answer.json()

    def complete(self, job_id: str, body) -> requests.Response:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        return self.session.put(f'{self.url}/runners/{self.runner_id}/jobs/{job_id}/complete',
                                data=data,
                                headers={
                                    **self.headers, 'Content-Type': 'application/json'
                                },
                                timeout=TIMEOUT)

    def complete_ac(self, job: dict) -> requests.Response:
        return self.complete(job['job_id'], body_for([t['caseCount'] for t in job['tasks']]))

    def abort(self, job_id: str, reason) -> requests.Response:
        return self.session.put(f'{self.url}/runners/{self.runner_id}/jobs/{job_id}/abort',
                                json={'reason': reason},
                                headers=self.headers,
                                timeout=TIMEOUT)
