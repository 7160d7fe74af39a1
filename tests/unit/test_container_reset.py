"""SandboxContainer.reset against a fake supervisor: what the host does around
the supervisor's verified reset."""
import dataclasses
import os
import socket
import struct
import threading

import pytest

from sandbox.container import RESET_MEMORY_GROWTH_KB, SandboxBroken, SandboxContainer
from sandbox.protocol import PROTOCOL_VERSION
from sandbox.settings import ContainerLimits
from tests.unit.fakes import CASE_REQUEST

LIMITS = ContainerLimits(memory_bytes=1 << 30,
                         pids=64,
                         work_tmpfs_bytes=1 << 20,
                         tmp_tmpfs_bytes=1 << 20,
                         cpus=1.0)


class Thrown:
    """A discard that sets folders aside, as the sandbox's trash does
    (sandbox/trash.py), and keeps them there."""

    def __init__(self, folder):
        self.folder = folder
        self.folders = []

    def __call__(self, path):
        self.folder.mkdir(exist_ok=True)
        aside = self.folder / str(len(self.folders))
        os.rename(path, aside)
        self.folders.append(aside)


def supervisor(sock, answers, asked):
    """Answers each reset request with the next of `answers` (ok, mem_kb)."""
    for ok, mem_kb in answers:
        (length, ) = struct.unpack('<I', sock.recv(4))
        asked.append(sock.recv(length))
        header = f'ok={int(ok)}\nerror=not clean\nmem_kb={mem_kb}\nprotocol={PROTOCOL_VERSION}\n'
        sock.sendall(struct.pack('<I', len(header)) + header.encode())


@pytest.fixture
def container_with(tmp_path):

    def make(answers, discard=None):
        container = SandboxContainer(None, 'img', tmp_path / 'boxes', LIMITS, {}, discard=discard)
        host, inside = socket.socketpair()
        container._use(host)
        asked = []
        threading.Thread(target=supervisor, args=(inside, answers, asked), daemon=True).start()
        return container, asked

    return make


def test_a_reset_gives_a_new_uid_and_an_empty_job_folder(container_with):
    container, asked = container_with([(True, 1000)])
    (container.box / 'job' / 'main.c').write_text('the last job')
    before = container.run_uid
    container.reset()
    assert container.run_uid != before
    assert asked == [b'kind=reset\0next_uid=%d\0\0' % container.run_uid]
    assert list((container.box / 'job').iterdir()) == []


@pytest.mark.parametrize('set_aside', [False, True])
def test_a_reset_removes_the_last_jobs_folder_or_sets_it_aside(container_with, tmp_path, set_aside):
    """Removing a folder a run looked many missing names up in takes seconds
    (sandbox/trash.py): a reset for a caller holding a core only sets it
    aside. Any other removes it: what that frees is charged to the
    container, and the next job in it must not reclaim it."""
    thrown = Thrown(tmp_path / 'thrown')
    container, _ = container_with([(True, 1000)], discard=thrown)
    (container.box / 'job' / 'main.c').write_text('the last job')
    container.reset(set_aside=set_aside) if set_aside else container.reset()
    if set_aside:
        [folder] = thrown.folders
        assert (folder / 'main.c').read_text() == 'the last job'
    else:
        assert thrown.folders == []
    assert list((container.box / 'job').iterdir()) == []


def test_a_reset_the_supervisor_could_not_verify_breaks_the_container(container_with):
    container, _ = container_with([(False, 1000)])
    before = container.run_uid
    with pytest.raises(SandboxBroken, match='not clean'):
        container.reset()
    assert container.broken and container.run_uid == before


def test_a_container_that_keeps_growing_memory_is_retired(container_with):
    first = 100 * 1024
    container, _ = container_with([(True, first), (True, first + RESET_MEMORY_GROWTH_KB),
                                   (True, first + RESET_MEMORY_GROWTH_KB + 1)])
    container.reset()  # after its first job: the baseline
    container.reset()  # grown by the bound: still fit
    with pytest.raises(SandboxBroken, match='MiB after its reset'):
        container.reset()
    assert container.broken


@pytest.mark.parametrize('fresh', [False, True])
def test_a_fresh_run_gets_a_job_folder_made_for_it(tmp_path, fresh):
    """The supervisor binds the job's folder as it is at a run init's first
    request: a fresh run's (a TLE's rerun) is made for it, with the same
    files, so names its first run looked up there are not in it. The old
    one is set aside, to be removed off the run's path."""
    thrown = Thrown(tmp_path / 'thrown')
    container = SandboxContainer(None, 'img', tmp_path / 'boxes', LIMITS, {}, discard=thrown)
    src = tmp_path / 'src'
    (src / 'chaos').mkdir(parents=True)
    (src / 'main').write_text('the program')
    (src / 'chaos' / 'data.txt').write_text('data')
    container.stage(src)
    job = container.box / 'job'
    old = os.open(job, os.O_RDONLY | os.O_DIRECTORY)
    sent = []

    class Supervisor:

        def sendall(self, request):
            # What the supervisor would bind now.
            sent.append(
                (os.stat(job).st_ino, sorted(str(p.relative_to(job)) for p in job.rglob('*')),
                 os.stat(job / 'main').st_ino))

    container._use(Supervisor())
    container.answer = lambda run: 'answered'
    try:
        assert container.run(dataclasses.replace(CASE_REQUEST, fresh=fresh),
                             stdin=None) == 'answered'
        old_inode = os.fstat(old).st_ino
    finally:
        os.close(old)
    [(bound, files, program)] = sent
    assert files == ['chaos', 'chaos/data.txt', 'main']
    assert program == os.stat(src / 'main').st_ino  # linked, not copied
    assert (bound != old_inode) is fresh  # a new folder for a fresh run only
    assert [os.stat(folder).st_ino for folder in thrown.folders] == ([old_inode] if fresh else [])
