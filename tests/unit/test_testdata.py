import io
import multiprocessing
import os
import shutil
import socket
import subprocess
import threading
import zipfile

import pytest

import runner.backend.noj.testdata
from dispatcher.job import TaskMeta
from runner.backend.http_session import Interrupted
from runner.prep.locks import FileLocks, RedisLocks
# Aliased: pytest would try to collect names starting with "Test".
from runner.backend.noj.testdata import LockTimeout
from runner.backend.noj.testdata import TestdataCache as Cache
from runner.backend.noj.testdata import TestdataError as CacheError
from runner.prep.zips import ZipRejected
from sandbox.job import Role
from sandbox.languages import Language

GUARD_SEC = 60  # only guards against a hang; nothing asserts on time
PROBLEM = 7
TASKS = (TaskMeta(50, 1024, 1000, 2), TaskMeta(50, 1024, 1000, 1))
FORK = multiprocessing.get_context('fork')


def make_testdata_zip(tag):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, 'w') as archive:
        for name in ('0000', '0001', '0100'):
            archive.writestr(f'{name}.in', f'{tag} in {name}')
            archive.writestr(f'{name}.out', f'{tag} out {name}')
        archive.writestr('0200.in', 'beyond the payload: ignored')
        archive.writestr('chaos/lib.h', f'// {tag}')
    return buffer.getvalue()


VERSIONS = {'v1': make_testdata_zip('v1'), 'v2': make_testdata_zip('v2')}


class FakeBackend:
    """The testdata channel. Downloads are counted in a file, so that forked
    processes count too; `during_download(dest)` runs inside each download."""

    def __init__(self, tmp_path, checksum='v1', during_download=None):
        self.checksum = checksum
        self.count_file = tmp_path / 'downloads'
        self.count_file.touch()
        self.during_download = during_download

    @property
    def downloads(self):
        return len(self.count_file.read_text().split())

    def testdata_checksum(self, problem_id):
        assert problem_id == PROBLEM
        return self.checksum

    def download_testdata(self, problem_id, dest, *, max_bytes, deadline_sec, stop):
        with open(self.count_file, 'a') as count:
            count.write(f'{os.getpid()}\n')
        if self.during_download:
            self.during_download(dest)
        dest.write_bytes(VERSIONS[self.checksum])
        return len(VERSIONS[self.checksum])


class Job:
    """A job folder's two destinations."""

    def __init__(self, root, name):
        self.testdata = root / name / 'testdata'
        self.src = root / name / 'src'
        self.testdata.mkdir(parents=True)
        self.src.mkdir()

    def read(self, name):
        return (self.testdata / name).read_text()


class SpyLocks:
    """Real locks that report when someone found the lock already held."""

    def __init__(self, inner, on_busy):
        self.inner = inner
        self.on_busy = on_busy

    def lock(self, problem_id):
        return SpyLock(self.inner.lock(problem_id), self.on_busy)


class SpyLock:

    def __init__(self, inner, on_busy):
        self.inner = inner
        self.on_busy = on_busy

    def acquire(self, timeout):
        acquired = self.inner.acquire(timeout)
        if not acquired and timeout == 0:
            self.on_busy()
        return acquired

    def release(self):
        self.inner.release()


# -- a real redis-server for the Redis lock --------------------------------------


def free_port():
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', 0))
        return probe.getsockname()[1]


@pytest.fixture(scope='module')
def redis_url():
    if shutil.which('redis-server') is None:
        pytest.skip('redis-server is not installed')
    port = free_port()
    server = subprocess.Popen([
        'redis-server', '--port',
        str(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'
    ],
                              stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT,
                              text=True)
    try:
        for line in server.stdout:  # ends at EOF if the server dies
            if 'Ready to accept connections' in line:
                break
        else:
            pytest.fail('redis-server did not start')
        yield f'redis://127.0.0.1:{port}/0'
    finally:
        server.terminate()
        server.wait(GUARD_SEC)


@pytest.fixture(params=['file', pytest.param('redis', marks=pytest.mark.redis)])
def make_locks(request, tmp_path):
    """A factory, so that each thread or process makes its own lock client."""
    if request.param == 'file':
        return lambda: FileLocks(tmp_path / 'locks')
    url = request.getfixturevalue('redis_url')
    prefix = request.node.name
    return lambda: PrefixedRedisLocks(RedisLocks.from_url(url), prefix)


class PrefixedRedisLocks:
    """Keeps each test's lock keys apart on the shared server."""

    def __init__(self, inner, prefix):
        self.inner = inner
        self.prefix = abs(hash(prefix)) % 10**6

    def lock(self, problem_id):
        return self.inner.lock(self.prefix * 1000 + problem_id)


def cache(tmp_path, backend, locks, **kwargs):
    return Cache(tmp_path / 'cache', backend, locks, **kwargs)


# -- behaviour --------------------------------------------------------------------


def test_install_copies_the_payload_cases_and_chaos(tmp_path):
    backend = FakeBackend(tmp_path)
    job = Job(tmp_path, 'job')
    cache(tmp_path, backend, FileLocks(tmp_path / 'locks')).install(PROBLEM, TASKS, job.testdata,
                                                                    job.src, threading.Event())
    assert sorted(os.listdir(
        job.testdata)) == ['0000.in', '0000.out', '0001.in', '0001.out', '0100.in', '0100.out']
    assert job.read('0001.out') == 'v1 out 0001'
    assert (job.src / 'lib.h').read_text() == '// v1'


def install_twice(tmp_path, backend):
    """Two jobs of the problem, one after the other."""
    testdata = cache(tmp_path, backend, FileLocks(tmp_path / 'locks'))
    for name in ('a', 'b'):
        job = Job(tmp_path, name)
        testdata.install(PROBLEM, TASKS, job.testdata, job.src, threading.Event())


def test_same_checksum_downloads_once(tmp_path):
    backend = FakeBackend(tmp_path)
    install_twice(tmp_path, backend)
    assert backend.downloads == 1


@pytest.mark.parametrize('checksum', ['v1\r', 'v1\ud800', 'v1\n\u2603'])
def test_any_checksum_string_reads_back_as_written(tmp_path, checksum):
    # A carriage return once read back as a newline (a download every job);
    # a lone surrogate could not be written (every job of the problem failed).
    class OddChecksum(FakeBackend):

        def testdata_checksum(self, problem_id):
            return checksum

    backend = OddChecksum(tmp_path)
    install_twice(tmp_path, backend)
    assert backend.downloads == 1


def test_a_checksum_change_refreshes_the_cache(tmp_path):
    backend = FakeBackend(tmp_path)
    testdata = cache(tmp_path, backend, FileLocks(tmp_path / 'locks'))
    first = Job(tmp_path, 'first')
    testdata.install(PROBLEM, TASKS, first.testdata, first.src, threading.Event())
    backend.checksum = 'v2'  # a testdata fix, then a rejudge
    second = Job(tmp_path, 'second')
    testdata.install(PROBLEM, TASKS, second.testdata, second.src, threading.Event())
    assert backend.downloads == 2
    assert second.read('0000.in') == 'v2 in 0000'
    assert (second.src / 'lib.h').read_text() == '// v2'
    assert first.read('0000.in') == 'v1 in 0000'  # an earlier job keeps its own copy


def test_a_case_missing_from_the_testdata_is_an_error(tmp_path):
    job = Job(tmp_path, 'job')
    tasks = TASKS + (TaskMeta(0, 1, 1, 1), )  # the zip has 0200.in but no 0200.out
    testdata = cache(tmp_path, FakeBackend(tmp_path), FileLocks(tmp_path / 'locks'))
    with pytest.raises(CacheError, match='no 0200.out'):
        testdata.install(PROBLEM, tasks, job.testdata, job.src, threading.Event())


def test_a_failed_download_leaves_no_usable_cache(tmp_path):
    """A refresh that dies half way: the next install must not use what it left."""
    backend = FakeBackend(tmp_path)
    testdata = cache(tmp_path, backend, FileLocks(tmp_path / 'locks'))
    job = Job(tmp_path, 'job')
    testdata.install(PROBLEM, TASKS, job.testdata, job.src, threading.Event())

    def die(dest):
        dest.write_bytes(VERSIONS['v2'][:100])
        raise ConnectionError('reset')

    backend.checksum, backend.during_download = 'v2', die
    broken = Job(tmp_path, 'broken')
    with pytest.raises(ConnectionError):
        testdata.install(PROBLEM, TASKS, broken.testdata, broken.src, threading.Event())
    backend.during_download = None
    fresh = Job(tmp_path, 'fresh')
    testdata.install(PROBLEM, TASKS, fresh.testdata, fresh.src, threading.Event())
    assert backend.downloads == 3
    assert fresh.read('0000.in') == 'v2 in 0000'


def test_a_bad_testdata_zip_leaves_no_usable_cache(tmp_path):
    backend = FakeBackend(tmp_path)
    testdata = cache(tmp_path, backend, FileLocks(tmp_path / 'locks'))
    job = Job(tmp_path, 'job')
    testdata.install(PROBLEM, TASKS, job.testdata, job.src, threading.Event())
    VERSIONS['broken'] = b'not a zip'
    backend.checksum = 'broken'
    try:
        with pytest.raises(ZipRejected):
            testdata.install(PROBLEM, TASKS, job.testdata, job.src, threading.Event())
    finally:
        del VERSIONS['broken']
    backend.checksum = 'v1'
    again = Job(tmp_path, 'again')
    testdata.install(PROBLEM, TASKS, again.testdata, again.src, threading.Event())
    assert backend.downloads == 3  # v1 was not trusted any more


def test_a_crash_mid_extraction_leaves_no_usable_half_cache(tmp_path, monkeypatch):
    """A process killed while unpacking, with some files written: the next
    process, asking for the same checksum, must not take what it left."""
    backend = FakeBackend(tmp_path, checksum='v2')
    real_extract = runner.backend.noj.testdata.extract_testdata

    def extract_then_crash(path, dest, limit):
        real_extract(path, dest, limit)
        for name in ('0100.in', '0100.out'):
            (dest / name).unlink()  # as if the crash came before these
        os._exit(17)

    doomed = Job(tmp_path, 'doomed')

    def crashing_install():
        monkeypatch.setattr(runner.backend.noj.testdata, 'extract_testdata', extract_then_crash)
        cache(tmp_path, backend,
              FileLocks(tmp_path / 'locks')).install(PROBLEM, TASKS, doomed.testdata, doomed.src,
                                                     threading.Event())

    child = FORK.Process(target=crashing_install)
    child.start()
    child.join(GUARD_SEC)
    assert child.exitcode == 17

    after = Job(tmp_path, 'after')
    cache(tmp_path, backend, FileLocks(tmp_path / 'locks')).install(PROBLEM, TASKS, after.testdata,
                                                                    after.src, threading.Event())
    assert backend.downloads == 2
    assert after.read('0100.out') == 'v2 out 0100'


def test_a_crash_mid_download_leaves_no_usable_half_cache(tmp_path):
    """A process killed during a refresh (v1 cached, v2 half downloaded):
    the next process downloads v2 again and never serves v1 or half of v2."""
    backend = FakeBackend(tmp_path)
    first = Job(tmp_path, 'first')
    cache(tmp_path, backend, FileLocks(tmp_path / 'locks')).install(PROBLEM, TASKS, first.testdata,
                                                                    first.src, threading.Event())

    def crash(dest):
        dest.write_bytes(VERSIONS['v2'][:100])
        os._exit(17)

    backend.checksum, backend.during_download = 'v2', crash
    doomed = Job(tmp_path, 'doomed')
    child = FORK.Process(target=lambda: cache(tmp_path, backend, FileLocks(tmp_path / 'locks')).
                         install(PROBLEM, TASKS, doomed.testdata, doomed.src, threading.Event()))
    child.start()
    child.join(GUARD_SEC)
    assert child.exitcode == 17

    backend.during_download = None
    after = Job(tmp_path, 'after')
    cache(tmp_path, backend, FileLocks(tmp_path / 'locks')).install(PROBLEM, TASKS, after.testdata,
                                                                    after.src, threading.Event())
    assert backend.downloads == 3
    assert after.read('0000.in') == 'v2 in 0000'
    assert after.read('0100.out') == 'v2 out 0100'


def test_two_threads_download_once(tmp_path, make_locks):
    """The first download is held open until the second preparation has either
    found the lock busy or entered a download of its own (the bug)."""
    other_arrived = threading.Event()
    entered = []

    def hold_until_the_other_arrives(dest):
        entered.append(dest)
        if len(entered) == 1:
            assert other_arrived.wait(GUARD_SEC)
        else:
            other_arrived.set()

    backend = FakeBackend(tmp_path, during_download=hold_until_the_other_arrives)
    jobs = [Job(tmp_path, 'a'), Job(tmp_path, 'b')]
    failures = []

    def prepare(job):
        testdata = cache(tmp_path, backend, SpyLocks(make_locks(), other_arrived.set))
        try:
            testdata.install(PROBLEM, TASKS, job.testdata, job.src, threading.Event())
        except Exception as exc:  # reported below, in the test's thread
            failures.append(exc)

    threads = [threading.Thread(target=prepare, args=(job, )) for job in jobs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(GUARD_SEC)
    assert failures == []
    assert backend.downloads == 1
    assert [job.read('0100.in') for job in jobs] == ['v1 in 0100'] * 2


def test_two_processes_download_once(tmp_path, make_locks):
    other_arrived = FORK.Event()
    first_entered = FORK.Event()

    def hold_until_the_other_arrives(dest):
        if not first_entered.is_set():
            first_entered.set()
            assert other_arrived.wait(GUARD_SEC)
        else:
            other_arrived.set()

    backend = FakeBackend(tmp_path, during_download=hold_until_the_other_arrives)
    jobs = [Job(tmp_path, 'a'), Job(tmp_path, 'b')]

    def prepare(job):
        testdata = cache(tmp_path, backend, SpyLocks(make_locks(), other_arrived.set))
        testdata.install(PROBLEM, TASKS, job.testdata, job.src, threading.Event())

    children = [FORK.Process(target=prepare, args=(job, )) for job in jobs]
    for child in children:
        child.start()
    for child in children:
        child.join(GUARD_SEC)
    assert [child.exitcode for child in children] == [0, 0]
    assert backend.downloads == 1
    assert [job.read('0000.out') for job in jobs] == ['v1 out 0000'] * 2


def test_lock_wait_is_bounded(tmp_path, make_locks):
    held = make_locks().lock(PROBLEM)
    assert held.acquire(0)
    now = [0.0]

    def clock():
        now[0] += 0.4
        # An unbounded wait would loop forever: fail it instead of hanging.
        assert now[0] < 100, 'the lock wait did not end at its bound'
        return now[0]

    try:
        job = Job(tmp_path, 'job')
        testdata = cache(tmp_path,
                         FakeBackend(tmp_path),
                         make_locks(),
                         lock_wait_sec=1,
                         clock=clock)
        with pytest.raises(LockTimeout, match='problem 7'):
            testdata.install(PROBLEM, TASKS, job.testdata, job.src, threading.Event())
    finally:
        held.release()


def test_lock_wait_wakes_on_stop(tmp_path, make_locks):
    held = make_locks().lock(PROBLEM)
    assert held.acquire(0)
    stop = threading.Event()
    try:
        job = Job(tmp_path, 'job')
        testdata = cache(tmp_path, FakeBackend(tmp_path), SpyLocks(make_locks(), stop.set))
        with pytest.raises(Interrupted):
            testdata.install(PROBLEM, TASKS, job.testdata, job.src, stop)
    finally:
        held.release()


@pytest.mark.parametrize('name', ['main', 'main.c', 'main.cpp', 'main.py', 'main/data.txt'])
def test_chaos_files_named_like_the_build_are_refused(tmp_path, name):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, 'w') as archive:
        for case in ('0000', '0001', '0100'):
            archive.writestr(f'{case}.in', '1')
            archive.writestr(f'{case}.out', '1')
        archive.writestr(f'chaos/{name}', 'collides')
    backend = FakeBackend(tmp_path)
    VERSIONS['collide'] = buffer.getvalue()
    backend.checksum = 'collide'
    job = Job(tmp_path, 'job')
    testdata = cache(tmp_path, backend, FileLocks(tmp_path / 'locks'))
    top = name.split('/')[0]
    with pytest.raises(CacheError, match=f'chaos/{top} has the name of a build file'):
        testdata.install(PROBLEM, TASKS, job.testdata, job.src, threading.Event())


def _install_with(tmp_path, tag, extra, answers=True):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, 'w') as archive:
        for case in ('0000', '0001', '0100'):
            archive.writestr(f'{case}.in', '1')
            if answers:
                archive.writestr(f'{case}.out', '1')
        for name, data in extra.items():
            archive.writestr(name, data)
    backend = FakeBackend(tmp_path)
    VERSIONS[tag] = buffer.getvalue()
    backend.checksum = tag
    job = Job(tmp_path, 'job')
    testdata = cache(tmp_path, backend, FileLocks(tmp_path / 'locks'))
    judge = testdata.install(PROBLEM,
                             TASKS,
                             job.testdata,
                             job.src,
                             threading.Event(),
                             program_root=tmp_path / 'job')
    return judge, job


def test_a_checker_folder_is_installed_with_its_language(tmp_path):
    judge, job = _install_with(tmp_path, 'checker', {
        'checker/checker.cpp': '// checks',
        'checker/testlib.h': '// the setter\'s'
    })
    assert (judge.role, judge.language) == (Role.CHECKER, Language.CPP)
    assert judge.source_dir == tmp_path / 'job' / 'checker'
    assert sorted(os.listdir(judge.source_dir)) == ['checker.cpp', 'testlib.h']
    assert not (job.src / 'checker.cpp').exists()  # never beside the submission


def test_an_interactor_folder_is_installed_with_its_language(tmp_path):
    judge, job = _install_with(tmp_path, 'interactor', {'interactor/interactor.py': '#'})
    assert (judge.role, judge.language) == (Role.INTERACTOR, Language.PYTHON)
    assert judge.source_dir == tmp_path / 'job' / 'interactor'
    assert os.listdir(judge.source_dir) == ['interactor.py']
    assert not (job.src / 'interactor.py').exists()


def test_no_checker_folder_means_no_checker(tmp_path):
    judge, _ = _install_with(tmp_path, 'plain', {})
    assert judge is None and not (tmp_path / 'job' / 'checker').exists()


def test_an_interactive_case_may_have_no_answer_file(tmp_path):
    """The interactor reads the answer when there is one: else an empty one."""
    judge, job = _install_with(tmp_path,
                               'no-answers', {'interactor/interactor.c': '//'},
                               answers=False)
    assert judge.role is Role.INTERACTOR
    assert all((job.testdata / f'{case}.out').read_bytes() == b'' for case in ('0000', '0001'))


def test_a_checked_case_needs_its_answer_file(tmp_path):
    with pytest.raises(CacheError, match='has no 0000.out'):
        _install_with(tmp_path, 'no-answers-checked', {'checker/checker.c': '//'}, answers=False)


@pytest.mark.parametrize('files, why', [
    ({
        'checker/testlib.h': '//'
    }, 'exactly one of'),
    ({
        'checker/checker.c': '//',
        'checker/checker.py': '#'
    }, 'exactly one of'),
    ({
        'checker/checker.c': '//',
        'checker/main.c': '//'
    }, 'checker/main.c has a name the runner'),
    ({
        'checker/checker.c': '//',
        'checker/case/input': '//'
    }, 'checker/case has a name the runner'),
    ({
        'interactor/interactor.c': '//',
        'interactor/main': '//'
    }, 'interactor/main has a name the runner'),
    ({
        'interactor/interactor.c': '//',
        'checker/checker.c': '//'
    }, 'both checker/ and interactor/'),
])
def test_a_checker_the_runner_cannot_build_is_refused(tmp_path, files, why):
    with pytest.raises(CacheError, match=why):
        _install_with(tmp_path, f'bad-{len(files)}-{why[:5]}', files)


def test_a_cache_of_an_older_layout_is_refreshed_whatever_its_checksum(tmp_path):
    """A cache written before checker/ was kept has no checker: used as it is,
    its problem would be judged without one."""
    judge, _ = _install_with(tmp_path, 'layout', {'checker/checker.py': '#'})
    assert judge.language is Language.PYTHON
    problem_dir = tmp_path / 'cache' / str(PROBLEM)
    shutil.rmtree(problem_dir / 'data' / 'checker')
    (problem_dir / 'checksum').write_text('layout')  # as an older runner wrote it
    backend = FakeBackend(tmp_path)
    backend.checksum = 'layout'
    before = backend.downloads
    job = Job(tmp_path, 'again')
    again = cache(tmp_path, backend,
                  FileLocks(tmp_path / 'locks')).install(PROBLEM,
                                                         TASKS,
                                                         job.testdata,
                                                         job.src,
                                                         threading.Event(),
                                                         program_root=tmp_path / 'c2')
    assert again.language is Language.PYTHON and backend.downloads == before + 1


def test_problem_files_over_their_bound_are_refused(tmp_path, monkeypatch):
    """chaos/ and checker/ are copied into every job: bounded, naming the folder."""
    monkeypatch.setattr(runner.backend.noj.testdata, 'MAX_PROBLEM_FILES_BYTES', 10)
    with pytest.raises(CacheError, match='checker/ holds 11 bytes'):
        _install_with(tmp_path, 'big', {'checker/checker.py': '# 11 bytes\n'})
