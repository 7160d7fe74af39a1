"""A job the backend takes back is stopped at once: its run in progress is
killed (not waited out, not tried again in a fresh container) and nothing
more of it runs."""
import threading
import time
import uuid

import pytest

from sandbox.faults import Cancelled
from sandbox.job import CaseSpec, SandboxJob
from sandbox.languages import Language

SPINNER = b'int main(void) { for (;;) {} }\n'
TIME_LIMIT_MS = 10000  # its wall bound is 31 s: a cancel must not wait for it


def test_a_cancelled_run_is_killed_and_not_tried_again(sandbox, tmp_path):
    src = tmp_path / 'src'
    src.mkdir()
    (src / 'main.c').write_bytes(SPINNER)
    (tmp_path / 'in').write_bytes(b'')
    (tmp_path / 'out').write_bytes(b'')
    job = SandboxJob(key=f'cancel-{uuid.uuid4()}', language=Language.C, source_dir=src)
    assert sandbox.compile(job).ok
    ended = []

    def judge():
        try:
            ended.append(
                sandbox.run_case(job,
                                 CaseSpec(tmp_path / 'in', tmp_path / 'out', TIME_LIMIT_MS, 65536)))
        except Cancelled as exc:
            ended.append(exc)

    runs_before = sandbox.runs_in_progress()
    worker = threading.Thread(target=judge, daemon=True)
    worker.start()
    guard = time.monotonic() + 30
    while sandbox.runs_in_progress() <= runs_before and time.monotonic() < guard:
        threading.Event().wait(0.02)  # until its run holds a core
    assert sandbox.runs_in_progress() > runs_before
    cancelled_at = time.monotonic()
    sandbox.cancel(job.key)
    worker.join(20)
    try:
        assert not worker.is_alive(), 'the cancelled run was waited out'
        assert len(ended) == 1 and isinstance(ended[0], Cancelled)
        assert time.monotonic() - cancelled_at < 20
        with pytest.raises(Cancelled):  # nothing more of it runs
            sandbox.run_case(job, CaseSpec(tmp_path / 'in', tmp_path / 'out', 1000, 65536))
    finally:
        sandbox.release(job.key)
