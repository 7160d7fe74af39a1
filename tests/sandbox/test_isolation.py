"""Nothing one case does is seen by the next case, nor by the next job.

The cases of a job run one after another in one container, and a container
serves many jobs in turn. Each run of the program below prints everything it
can observe at its start (its own limits, priority, policy and affinity;
PID 1's; what lies in every writable place and in the job's files; the
counters that deleting files and ending processes do not turn back: its
pid, a new thread's, a new file's inode number in each writable place),
then changes everything it can, leaves its input (a secret) wherever it can
and moves every counter on. Every later case must observe what the first one
did but for the counters (a job's cases share its namespace, supervisor.c);
the first case of a later job in the same container exactly what the first
job's first case did, counters included, but for its own uid.
"""
import json
import pathlib
import uuid

import pytest

from sandbox.container import LABEL
from sandbox.docker_sandbox import INSTANCE_LABEL
from sandbox.job import CaseSpec, SandboxJob
from sandbox.languages import Language
from sandbox.results import Status
from tests.sandbox.conftest import sandbox_of_its_own

CASES = 4

OBSERVER = r'''
import _multiprocessing
import ctypes
import json
import os
import platform
import resource
import sys
import threading

secret = sys.stdin.read().strip()
libc = ctypes.CDLL(None, use_errno=True)
RLIMITS = sorted(name for name in dir(resource) if name.startswith("RLIMIT_"))
IOPRIO_GET, IOPRIO_SET = (252, 251) if platform.machine() == "x86_64" else (31, 30)
PLACES = (".", "/tmp", "/dev/shm", "/dev/mqueue", "/work", "/box/job")


def observe(call):
    try:
        return call()
    except OSError as exc:
        return f"error {exc.errno}"


def attempt(call):
    try:
        call()
    except (OSError, ValueError):
        pass


def new_inode(place):
    path = f"{place}/probe"
    with open(path, "w"):
        pass
    number = os.stat(path).st_ino
    os.unlink(path)
    return number


def new_thread_id():
    seen = []
    thread = threading.Thread(target=lambda: seen.append(threading.get_native_id()))
    thread.start()
    thread.join()
    return seen[0]


state = {
    "uid": os.getuid(),
    "cwd": os.getcwd(),
    "umask": os.umask(0o022),
    "nice": os.getpriority(os.PRIO_PROCESS, 0),
    "policy": os.sched_getscheduler(0),
    "affinity": sorted(os.sched_getaffinity(0)),
    "ioprio": libc.syscall(IOPRIO_GET, 1, 0),
    "rlimits": {n: resource.getrlimit(getattr(resource, n)) for n in RLIMITS},
    "pid1_nice": observe(lambda: os.getpriority(os.PRIO_PROCESS, 1)),
    "pid1_policy": observe(lambda: os.sched_getscheduler(1)),
    "pid1_affinity": observe(lambda: sorted(os.sched_getaffinity(1))),
    "pid1_rlimits": observe(lambda: {n: resource.prlimit(1, getattr(resource, n)) for n in RLIMITS}),
    "pid1_ioprio": libc.syscall(IOPRIO_GET, 1, 1),
    "env": dict(os.environ),
    "data": observe(lambda: open("data.txt").read()),
    "places": {p: observe(lambda: sorted(os.listdir(p))) for p in PLACES},
    "pid": os.getpid(),
    "thread_id": new_thread_id(),
    "inodes": {p: observe(lambda: new_inode(p)) for p in ("/tmp", "/dev/shm")},
}
print(json.dumps(state, sort_keys=True), flush=True)

for place in ("/tmp", "/dev/shm"):
    for _ in range(300):
        attempt(lambda: new_inode(place))
for _ in range(50):
    attempt(new_thread_id)

attempt(lambda: os.setpriority(os.PRIO_PROCESS, 1, 19))
attempt(lambda: os.setpriority(os.PRIO_USER, 0, 19))
attempt(lambda: os.sched_setaffinity(1, {0}))
attempt(lambda: os.sched_setscheduler(1, os.SCHED_IDLE, os.sched_param(0)))
for name in RLIMITS:
    attempt(lambda: resource.prlimit(1, getattr(resource, name), (1, 1)))
attempt(lambda: libc.syscall(IOPRIO_SET, 1, 1, 3 << 13))
attempt(lambda: libc.syscall(IOPRIO_SET, 1, 0, 3 << 13))
attempt(lambda: os.nice(19))
attempt(lambda: os.sched_setaffinity(0, {0}))
attempt(lambda: os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0)))
attempt(lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (16, 16)))
attempt(lambda: resource.setrlimit(resource.RLIMIT_CPU, (1, 1)))
for place in PLACES:
    attempt(lambda: open(f"{place}/{secret}", "w").write(secret))
attempt(lambda: os.mkdir(f"/tmp/{secret}-dir"))
attempt(lambda: os.symlink(secret, "/tmp/link"))
attempt(lambda: _multiprocessing.SemLock(1, 1, 1, f"/{secret}", False))
os.umask(0o777)
'''

# Plants names a wipe's renames would use (folders deeper than 64 levels
# were once moved up to /tmp/.wipe-N), then a chain deeper than that: a
# collision once made every wipe fail, so every case cost a fresh container.
# Each run's places are its own mounts now, gone with it, whatever it left.
WIPE_COLLIDER = r'''
import os

for n in range(8):
    os.makedirs(f"/tmp/.wipe-{n}/x")
d = os.open("/tmp", os.O_RDONLY)
for i in range(70):
    name = "deep" if i == 0 else "d"
    os.mkdir(name, dir_fd=d)
    d = os.open(name, os.O_RDONLY, dir_fd=d)
print("done")
'''


@pytest.fixture
def one_container_sandbox(docker_client, tmp_path):
    """A sandbox that can hold a single container: every case runs in it."""
    with sandbox_of_its_own(docker_client, tmp_path / 'root', max_containers=1) as sandbox:
        yield sandbox


def _containers(client, sandbox):
    found = client.containers.list(all=True,
                                   filters={'label': [LABEL, f'{INSTANCE_LABEL}={sandbox.home}']})
    return sorted(c.name for c in found)


@pytest.mark.docker
def test_no_case_sees_what_an_earlier_case_did(one_container_sandbox, docker_client, tmp_path):
    sandbox = one_container_sandbox
    src = tmp_path / 'src'
    src.mkdir()
    (src / 'main.py').write_text(OBSERVER)
    job = SandboxJob(key=f'isolation-{uuid.uuid4()}', language=Language.PYTHON, source_dir=src)
    assert sandbox.compile(job).ok
    container = _containers(docker_client, sandbox)
    assert len(container) == 1
    observed = []
    try:
        for n in range(CASES):
            case_input = tmp_path / f'{n}.in'
            case_input.write_text(f'secret{n}\n')
            answer = tmp_path / f'{n}.out'
            answer.write_text('')
            result = sandbox.run_case(job, CaseSpec(case_input, answer, 2000, 65536))
            assert result.status is Status.WA, result  # it prints its state, not an answer
            assert result.stderr == ''
            observed.append(json.loads(result.stdout.splitlines()[0]))
            assert _containers(docker_client, sandbox) == container, 'not one container'
    finally:
        sandbox.release(job.key)
    first = observed[0]
    assert first['uid'] >= 100000  # the container's run uid, not PID 1's (61001)
    places = first['places']
    assert places['/tmp'] == places['/dev/shm'] == [] and places['/work'] == ['run'], places
    assert first['pid1_rlimits'] == 'error 1'  # not the run's to read, let alone change

    def but_counters(state):
        # The cases of a job share its run init (supervisor.c): what an
        # earlier case wrote is wiped, but its places' counters stay (the
        # README's known limits); a rerun and a later job get new ones.
        return {**state, 'pid': None, 'thread_id': None, 'inodes': None}

    for n, state in enumerate(observed[1:], start=1):
        assert but_counters(state) == but_counters(first), f'case {n} saw what an earlier case did'
    assert 'secret' not in json.dumps(observed)


def _job(tmp_path, name, source, data=None):
    src = tmp_path / name
    src.mkdir()
    (src / 'main.py').write_text(source)
    if data is not None:
        (src / 'data.txt').write_text(data)
    return SandboxJob(key=f'{name}-{uuid.uuid4()}', language=Language.PYTHON, source_dir=src)


def _observe(sandbox, job, tmp_path, secret):
    (tmp_path / 'in').write_text(f'{secret}\n')
    (tmp_path / 'out').write_text('')
    result = sandbox.run_case(job, CaseSpec(tmp_path / 'in', tmp_path / 'out', 2000, 65536))
    assert result.status is Status.WA and result.stderr == '', result
    return json.loads(result.stdout.splitlines()[0])


@pytest.mark.docker
def test_no_job_sees_what_an_earlier_job_did(one_container_sandbox, docker_client, tmp_path):
    """The second job runs in the container the first one left (reset in
    between): it sees its own files only, and nothing the first one did."""
    sandbox = one_container_sandbox
    observed, containers = [], []
    for n in range(2):
        job = _job(tmp_path, f'job{n}', OBSERVER, data=f'data of job {n}\n')
        if n == 0:
            (job.source_dir / 'only-job0.txt').write_text('job 0\n')
        try:
            assert sandbox.compile(job).ok
            observed.append([_observe(sandbox, job, tmp_path, f'secret{n}{k}') for k in range(2)])
            containers.append(_containers(docker_client, sandbox))
        finally:
            sandbox.release(job.key)
    assert containers[0] == containers[1] and len(containers[0]) == 1, 'not one container'
    first, second = observed[0][0], observed[1][0]
    assert first['data'] == 'data of job 0\n' and second['data'] == 'data of job 1\n'
    assert first['places']['/box/job'] == ['data.txt', 'main.py', 'only-job0.txt']
    for state in observed[1]:
        assert state['places']['.'] == state['places']['/box/job'] == ['data.txt', 'main.py']
    assert first['uid'] != second['uid'] and second['uid'] >= 100000

    def but_own(state, counters=True):
        places = {**state['places'], '.': None, '/box/job': None}
        own = {**state, 'uid': None, 'data': None, 'places': places}
        # A job's later cases see its earlier cases' counters, never another job's.
        return own if counters else {**own, 'pid': None, 'thread_id': None, 'inodes': None}

    assert but_own(second) == but_own(first), 'a job saw what an earlier job did'
    for state in observed[1][1:]:
        assert but_own(state, False) == but_own(first, False), 'a job saw what an earlier job did'
    assert 'secret' not in json.dumps(observed[1])


def _case(tmp_path, text=''):
    (tmp_path / 'in').write_text(text)
    (tmp_path / 'out').write_text('done\n')
    return CaseSpec(tmp_path / 'in', tmp_path / 'out', 2000, 65536)


@pytest.mark.docker
def test_a_run_that_leaves_a_deep_tree_keeps_its_container(one_container_sandbox, docker_client,
                                                           tmp_path):
    sandbox = one_container_sandbox
    job = _job(tmp_path, 'collider', WIPE_COLLIDER)
    assert sandbox.compile(job).ok
    container = _containers(docker_client, sandbox)
    try:
        for _ in range(3):
            assert sandbox.run_case(job, _case(tmp_path)).status is Status.AC
            assert _containers(docker_client, sandbox) == container, 'the container was lost'
    finally:
        sandbox.release(job.key)


@pytest.mark.docker
def test_two_jobs_run_as_two_uids(sandbox, tmp_path):
    """The kernel counts pending signals, pipe buffers and inotify instances
    per uid across the host: two jobs' runs never share one."""
    seen = []
    jobs = [_job(tmp_path, f'uid{n}', 'import os\nprint(os.getuid())\n') for n in range(2)]
    try:
        for job in jobs:
            assert sandbox.compile(job).ok
            seen.append(int(sandbox.run_case(job, _case(tmp_path)).stdout))
    finally:
        for job in jobs:
            sandbox.release(job.key)
    assert seen[0] != seen[1] and all(uid >= 100000 for uid in seen), seen


def test_observer_is_valid_python():
    compile(OBSERVER, 'main.py', 'exec')
    assert pathlib.Path(__file__).name.startswith('test_')


@pytest.mark.docker
def test_a_job_whose_idle_container_is_taken_over_sees_nothing_of_the_other(
        one_container_sandbox, docker_client, tmp_path):
    """At capacity a job takes another job's idle container (reset in
    between), and the first job takes it back for its next case: each sees
    its own files and nothing the other did."""
    sandbox = one_container_sandbox
    jobs = [_job(tmp_path, f'over{n}', OBSERVER, data=f'data of job {n}\n') for n in range(2)]
    try:
        for job in jobs:
            assert sandbox.compile(job).ok
        first = _observe(sandbox, jobs[0], tmp_path, 'secretA')
        other = _observe(sandbox, jobs[1], tmp_path, 'secretB')
        again = _observe(sandbox, jobs[0], tmp_path, 'secretC')
        assert len(_containers(docker_client, sandbox)) == 1, 'not one container'
    finally:
        for job in jobs:
            sandbox.release(job.key)
    assert (first['data'], other['data'], again['data']) == ('data of job 0\n', 'data of job 1\n',
                                                             'data of job 0\n')
    assert len({first['uid'], other['uid'], again['uid']}) == 3
    for state in (other, again):
        assert state['places']['/tmp'] == state['places']['/dev/shm'] == []
        assert 'secret' not in json.dumps(state)
