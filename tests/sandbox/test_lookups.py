"""A run leaves nothing in the directory cache that a later run could time.

Looking up a name that does not exist leaves an entry of it in the kernel's
directory cache of its folder, and a later lookup of the name is faster: a
run could leave a message there (a name per bit) for a TLE's rerun or a
later job. A tmpfs keeps no entry for a missing name: every folder a run may
look a name up in is one (its root is the image's copy in memory,
sandbox/image_copy.py), but the job's folder, which the host makes anew for
each run init (a job, a fresh run).
"""
import dataclasses
import json
import uuid

import pytest

from sandbox.container import SandboxContainer
from sandbox.job import CaseSpec, SandboxJob
from sandbox.languages import Language
from sandbox.protocol import Kind, RunRequest
from sandbox.results import Status
from sandbox.settings import ContainerLimits

# Every folder a run can list, walked from its root's (links not followed),
# with the file system of each that is not a tmpfs (nor /dev/pts, a devpts,
# which keeps no entry for a missing name either).
WALKER = r'''
import ctypes
import json
import os

TMPFS, DEVPTS = 0x01021994, 0x1CD1
# A run may not list its root (Landlock): every name a Debian root has.
TOP = ("bin", "boot", "box", "dev", "etc", "home", "lib", "lib64", "media", "mnt", "opt",
       "proc", "root", "run", "sbin", "srv", "sys", "tmp", "usr", "var", "work")
libc = ctypes.CDLL(None, use_errno=True)


class StatFs(ctypes.Structure):
    _fields_ = [("f_type", ctypes.c_long), ("rest", ctypes.c_long * 15)]


def kind(path):
    found = StatFs()
    return found.f_type if libc.statfs(path.encode(), ctypes.byref(found)) == 0 else None


folders, others = 0, {}
for name in TOP:
    for top, _, _ in os.walk("/" + name):
        folders += 1
        if kind(top) not in (TMPFS, DEVPTS):
            others[top] = kind(top)
print(json.dumps({"folders": folders, "others": others, "root": kind("/") == TMPFS}))
'''


@pytest.mark.docker
def test_every_folder_a_run_can_look_in_is_a_tmpfs_but_its_job_folder(sandbox, tmp_path):
    src = tmp_path / 'src'
    src.mkdir()
    (src / 'main.py').write_text(WALKER)
    job = SandboxJob(key=f'lookups-{uuid.uuid4()}', language=Language.PYTHON, source_dir=src)
    (tmp_path / 'in').write_text('')
    (tmp_path / 'out').write_text('')
    try:
        assert sandbox.compile(job).ok
        result = sandbox.run_case(job, CaseSpec(tmp_path / 'in', tmp_path / 'out', 10000, 262144))
    finally:
        sandbox.release(job.key)
    assert result.status is Status.WA and result.stderr == '', result
    seen = json.loads(result.stdout)
    assert seen['root'], 'the run is not rooted in the image copy'
    assert seen['folders'] > 1000, seen  # the image's folders, all walked
    # The job's folder is the host's (a disk, or a tmpfs where DATA_DIR is one).
    assert set(seen['others']) <= {'/box/job'}, seen['others']


# The job's folder as the run sees it: new for a fresh run, the same for the
# next run of a job.
JOB_FOLDER = r'''
import json, os
st = os.stat("/box/job")
print(json.dumps([st.st_ino, st.st_ctime_ns, sorted(os.listdir("/box/job"))]))
'''


@pytest.mark.docker
def test_a_fresh_run_sees_a_job_folder_made_for_it(docker_client, tmp_path):
    limits = ContainerLimits(memory_bytes=512 << 20,
                             pids=64,
                             work_tmpfs_bytes=16 << 20,
                             tmp_tmpfs_bytes=1 << 20,
                             cpus=1.0)
    container = SandboxContainer(docker_client, 'oj-sandbox:latest', tmp_path / 'boxes', limits,
                                 {'oj-runner.root': str(tmp_path)})
    src = tmp_path / 'src'
    src.mkdir()
    (src / 'main.py').write_text(JOB_FOLDER)
    request = RunRequest(kind=Kind.CASE,
                         argv=('python3', 'main.py'),
                         workdir='/work/run',
                         cpu_ms=5000,
                         wall_ms=10000,
                         data_kb=262144,
                         stack_kb=8192,
                         fsize=1 << 20,
                         out_send=4096,
                         err_send=4096)
    try:
        container.start()
        container.stage(src)
        seen = []
        for fresh in (False, False, True):
            answer = container.run(dataclasses.replace(request, fresh=fresh), stdin=None)
            assert answer.exit_code == 0, answer
            seen.append(json.loads(answer.stdout))
    finally:
        container.destroy()
    first, again, rerun = seen
    assert again == first  # a job's runs share its run init, and its folder
    assert rerun[:2] != first[:2] and rerun[2] == first[2] == ['main.py']
