"""Which failures are the host's: an OSError on our own folders when the disk
or DATA_DIR is at fault, a refused SANDBOX_TOKEN, a memory limit the
sandboxes cannot give. Everything else stays the job's."""
import errno
import pathlib
import threading

import pytest

from dispatcher.job import TaskMeta
from runner.backend.noj.client import TokenRefused
from runner.backend.noj.inbound import JobPayload
from runner.backend.noj.prepare import Preparer
from sandbox.docker_sandbox import DockerSandbox, SandboxSettings
from sandbox.languages import Language
from sandbox.faults import FaultKind, HostFault, disk_fault

MiB = 1024 * 1024


@pytest.mark.parametrize(
    'code', [errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.EIO])
def test_disk_errors_are_the_hosts(code):
    fault = disk_fault(OSError(code, 'no', '/data/x'), 'preparing a job')
    assert fault.kind is FaultKind.DISK and 'DATA_DIR' in fault.cause and '/data/x' in fault.cause


@pytest.mark.parametrize('code', [errno.ENAMETOOLONG, errno.EEXIST, errno.ENOENT, errno.EISDIR])
def test_other_file_errors_are_the_jobs(code):
    assert disk_fault(OSError(code, 'no'), 'preparing a job') is None


class Failing:
    """A preparer's collaborators that fail with `error` at the first step."""

    def __init__(self, error):
        self.error = error

    def create(self, job_id):
        raise self.error


PAYLOAD = JobPayload('jb_1', 's', 7, Language.C, (TaskMeta(100, 1024, 1000, 1), ), 'http://x/c')


@pytest.mark.parametrize('error, kind', [
    (OSError(errno.ENOSPC, 'No space left on device'), FaultKind.DISK),
    (TokenRefused('GET /problem/7/checksum: HTTP 401'), FaultKind.TOKEN),
])
def test_the_preparer_says_a_host_fault(error, kind):
    with pytest.raises(HostFault) as caught:
        Preparer(None, None, Failing(error)).prepare(PAYLOAD, threading.Event())
    assert caught.value.kind is kind


def test_a_job_error_in_prep_is_not_a_host_fault():
    with pytest.raises(OSError):
        Preparer(None, None, Failing(OSError(errno.ENAMETOOLONG,
                                             'too long'))).prepare(PAYLOAD, threading.Event())


def test_a_memory_limit_the_sandboxes_cannot_give_is_a_host_fault():
    settings = SandboxSettings(root=pathlib.Path('/nonexistent'), container_memory_bytes=1536 * MiB)
    sandbox = DockerSandbox(settings, client=object())
    largest = (settings.container_memory_bytes - settings.headroom_bytes) // 1024
    sandbox.check_limits(largest)
    with pytest.raises(HostFault) as caught:
        sandbox.check_limits(largest + 1)
    assert caught.value.kind is FaultKind.MEMORY and 'SANDBOX_MEMORY_MB=1536' in caught.value.cause


def test_the_metered_sandbox_passes_the_memory_check_on():
    from runner.metrics import MeteredSandbox
    settings = SandboxSettings(root=pathlib.Path('/nonexistent'))
    metered = MeteredSandbox(DockerSandbox(settings, client=object()))
    with pytest.raises(HostFault):
        metered.check_limits(4 * 1024 * 1024)


def test_a_self_test_serves_only_failures_it_began_after(monkeypatch):
    from sandbox.results import CaseResult, Status
    from sandbox.self_test import SelfTest
    from tests.unit.fakes import FakeTime
    time = FakeTime(now=100.0)
    self_test = SelfTest(SandboxSettings(root=pathlib.Path('/nonexistent')),
                         None,
                         None,
                         None,
                         pathlib.Path('/nonexistent'),
                         clock=time.clock)
    judged = []
    monkeypatch.setattr(self_test, 'judge_known',
                        lambda language: judged.append(language) or CaseResult(Status.AC))
    failed_at = time.now
    assert self_test.problem(Language.C, since=failed_at) is None
    assert self_test.problem(Language.C, since=failed_at) is None  # the same failure: shared
    assert len(judged) == 1
    time.now += 1
    assert self_test.problem(Language.C, since=time.now) is None  # a later failure
    assert len(judged) == 2


def test_the_token_check_asks_about_a_problem_that_need_not_exist():
    from runner.backend.noj.client import TOKEN_PROBE_PROBLEM, BackendClient, UnexpectedStatus

    class Channel(BackendClient):
        answer = UnexpectedStatus('GET /problem/0/checksum', 404)
        asked = []

        def testdata_checksum(self, problem_id):
            self.asked.append(problem_id)
            raise self.answer

    channel = Channel('http://backend')
    assert channel.sandbox_token_refusal() is None and channel.asked == [TOKEN_PROBE_PROBLEM]
    channel.answer = TokenRefused('GET /problem/0/checksum: HTTP 401')
    assert 'HTTP 401' in channel.sandbox_token_refusal()
    channel.answer = UnexpectedStatus('GET /problem/0/checksum', 500)
    assert 'HTTP 500' in channel.sandbox_token_refusal()
