"""Preparing a claimed job: its own folder with the source and the testdata."""
import concurrent.futures
import dataclasses
import logging
import threading
from typing import Callable

from dispatcher.job import Job
from runner.backend.noj.client import BackendClient, TokenRefused
from runner.backend.noj.inbound import JobPayload
from runner.prep.job_folders import JobFolders
from runner.backend.noj.testdata import TestdataCache
from runner.prep.zips import extract_source
from sandbox.faults import FaultKind, HostFault, disk_fault

log = logging.getLogger(__name__)

MAX_CODE_ZIP_BYTES = 8 * 1024 * 1024
MAX_SOURCE_BYTES = 8 * 1024 * 1024
CODE_DOWNLOAD_DEADLINE_SEC = 60


class Preparer:
    """Turns a claim's payload into a `Job` laid out on disk.

    One call is one attempt: it either returns a complete job folder or
    raises with nothing left behind (the poller retries and reports). A fault
    of the host (the disk, SANDBOX_TOKEN refused) raises HostFault: the job is
    not to blame.
    """

    def __init__(self,
                 client: BackendClient,
                 testdata: TestdataCache,
                 folders: JobFolders,
                 offer: Callable[[Callable[[], None]], bool] = lambda task: False):
        """`offer(task)`: hands the code's download to an idle thread (of the
        preparations' pool, each keeping its connections), which runs it
        while the testdata is asked for and installed: the two take one
        round trip to the backend, not two one after the other. When it
        does not take it (none idle; by default) the download runs here
        first, as ever."""
        self._client = client
        self._testdata = testdata
        self._folders = folders
        self._offer = offer

    def prepare(self, payload: JobPayload, stop: threading.Event) -> Job:
        try:
            return self._prepare(payload, stop)
        except TokenRefused as exc:
            raise HostFault(FaultKind.TOKEN, f'{exc} (SANDBOX_TOKEN)') from None
        except OSError as exc:
            raise disk_fault(exc, 'preparing a job') or exc

    def _prepare(self, payload: JobPayload, stop: threading.Event) -> Job:
        job_dir = self._folders.create(payload.job_id)
        try:
            job = Job(job_id=payload.job_id,
                      submission_id=payload.submission_id,
                      problem_id=payload.problem_id,
                      language=payload.language,
                      tasks=payload.tasks,
                      job_dir=job_dir)
            job.source_dir.mkdir()
            testdata_dir = job_dir / 'testdata'
            testdata_dir.mkdir()
            code: 'concurrent.futures.Future[bytes]' = concurrent.futures.Future()

            def download() -> None:
                try:
                    code.set_result(
                        self._client.download_code(payload.code_url,
                                                   max_bytes=MAX_CODE_ZIP_BYTES,
                                                   deadline_sec=CODE_DOWNLOAD_DEADLINE_SEC,
                                                   stop=stop))
                except BaseException as exc:  # raised in the preparation, below
                    code.set_exception(exc)

            if not self._offer(download):
                download()
                code.result()  # a code that cannot be had fails the attempt at once, as ever
            try:
                judge = self._testdata.install(payload.problem_id,
                                               payload.tasks,
                                               testdata_dir,
                                               job.source_dir,
                                               stop,
                                               program_root=job_dir)
            except BaseException:
                # The download never outlives its preparation (it is bounded
                # by its deadline and by the stop); its own failure is said
                # too, when the testdata's is the one raised.
                failed = code.exception()
                if failed is not None:
                    log.warning('job %s: its code could not be had either: %s: %s', payload.job_id,
                                type(failed).__name__, failed)
                raise
            # The chaos files are there already; none has the source's name.
            extract_source(code.result(), payload.language, job.source_dir, MAX_SOURCE_BYTES)
            return dataclasses.replace(job, problem_program=judge)
        except BaseException:
            try:
                self._folders.remove(job_dir)
            except OSError:
                log.exception('could not remove the failed job folder %s', job_dir)
            raise
