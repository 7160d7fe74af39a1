"""An AlgoJudge job prepared on disk: the package cached by checksum and
bounded, the layout the dispatcher takes, refusals before a build."""
import hashlib
import threading

import pytest

from localbackend.algojudge import samples
from runner.backend.algojudge import preparation
from runner.backend.algojudge.client import DigestMismatch
from runner.backend.algojudge.preparation import PackageCache, Preparer
from runner.backend.algojudge.wire import Claimed, SourceFile
from runner.prep.job_folders import JobFolders
from runner.prep.locks import FileLocks
from sandbox.job import CheckerConvention, Comparison, Role
from sandbox.languages import Language
from standard_io.errors import NotJudgeable
from tests.unit.fakes import make_zip


class Files:
    """The server's files, by id; downloads counted."""

    def __init__(self):
        self.data = {}
        self.downloads = []

    def add(self, file_id, data):
        self.data[file_id] = data
        return hashlib.sha256(data).hexdigest()

    def download(self, file_id, sha256, dest, *, max_bytes, deadline_sec, stop):
        self.downloads.append(file_id)
        data = self.data[file_id]
        if hashlib.sha256(data).hexdigest() != sha256:
            raise DigestMismatch('mismatch')
        dest.write_bytes(data)
        return len(data)


@pytest.fixture
def world(tmp_path):
    files = Files()
    folders = JobFolders(tmp_path / 'jobs', tmp_path / 'backup', 'test')
    folders.start()
    cache = PackageCache(tmp_path / 'packages', files, FileLocks(tmp_path / 'locks'))
    return files, folders, cache, Preparer(files, cache, folders)


def claim(files, package, source, file_name, language, config=None, n=1):
    sha = files.add(f'pkg-{hashlib.sha256(package).hexdigest()[:8]}', package)
    source_sha = files.add(f'src-{n}', source)
    return Claimed(f'job-{n}',
                   f'token-{n}',
                   submission_id=f'sub-{n}',
                   problem_type='standard-io@1',
                   package_file_id=f'pkg-{hashlib.sha256(package).hexdigest()[:8]}',
                   package_sha256=sha,
                   source=SourceFile(file_name, f'src-{n}', source_sha, len(source)),
                   language=language,
                   config=config)


def test_a_job_is_laid_out_as_the_dispatcher_takes_every_job(world):
    files, folders, cache, preparer = world
    prepared = preparer.prepare(
        claim(files, samples.package('sum'), b'print(sum(map(int, input().split())))\n', 'a.py',
              'python3'), threading.Event())
    job = prepared.job
    assert (job.language, job.problem_id) == (Language.PYTHON, 0)
    assert [(t.task_score, t.time_limit_ms, t.memory_limit_kb, t.case_count)
            for t in job.tasks] == [(0, 2000, 65536, 1), (40, 2000, 65536, 2), (60, 2000, 65536, 2)]
    assert (job.source_dir / 'main.py').read_bytes().startswith(b'print(')
    assert job.input_path(2, 1).read_bytes() == b'2000000000 2000000000\n'
    assert job.answer_path(2, 1).read_bytes() == b'4000000000\n'
    assert job.judging.comparison is Comparison.TOKENS
    assert job.judging.checker is CheckerConvention.SIO2


def test_a_checker_is_built_as_the_package_says_from_its_own_folder(world):
    files, folders, cache, preparer = world
    prepared = preparer.prepare(
        claim(files, samples.package('close-enough'), b'int main(void){return 0;}', 'main.c',
              'c99-gcc'), threading.Event())
    checker = prepared.job.problem_program
    assert (checker.role, checker.language) == (Role.CHECKER, Language.PYTHON)
    assert sorted(p.name for p in checker.source_dir.iterdir()) == ['checker.py']
    assert prepared.job.judging.compile_flags == ('-O2', '-std=c99', '-static')


def test_a_package_is_fetched_once_per_checksum(world):
    files, folders, cache, preparer = world
    package = samples.package('sum')
    for n in (1, 2):
        preparer.prepare(claim(files, package, b'x = 1\n', 'a.py', 'python3', n=n),
                         threading.Event())
    assert [d for d in files.downloads if d.startswith('pkg-')] == [files.downloads[0]]


def test_a_refusal_comes_before_any_folder_or_source(world):
    files, folders, cache, preparer = world
    prepared = preparer.prepare(
        claim(files, samples.package('sum'), b'x', 'main.c', 'c11-gcc', {'languages': ['python3']}),
        threading.Event())
    assert prepared.job is None and prepared.refusal.reason.value == 'policyViolation'
    assert prepared.toolchain.id == 'c11-gcc'
    assert not any(d.startswith('src-') for d in files.downloads)
    assert list(folders.root.iterdir()) == []


def test_a_bad_package_is_not_judgeable_and_leaves_nothing_behind(world, tmp_path):
    files, folders, cache, preparer = world
    bad = make_zip([('config.yml', b'type: standard-io@1'), ('../escape', b'')])
    with pytest.raises(NotJudgeable, match='unsafe path'):
        preparer.prepare(claim(files, bad, b'x', 'a.py', 'python3'), threading.Event())
    assert list((tmp_path / 'packages').iterdir()) == []
    long_name = make_zip([('config.yml', b''), ('tests/' + 'a' * 300, b'')])
    with pytest.raises(NotJudgeable, match='too long'):
        preparer.prepare(claim(files, long_name, b'x', 'a.py', 'python3', n=2), threading.Event())


def test_a_source_that_is_not_its_checksum_is_not_judgeable(world):
    files, folders, cache, preparer = world
    claimed = claim(files, samples.package('sum'), b'x = 1\n', 'a.py', 'python3')
    files.data['src-1'] = b'x = 2\n'
    with pytest.raises(NotJudgeable, match='SHA-256'):
        preparer.prepare(claimed, threading.Event())
    assert list(folders.root.iterdir()) == []  # its folder went with it


def fetch(files, cache, n, size=1):
    """Package `n` (`size` bytes of files) fetched into the cache; its checksum."""
    sha = files.add(f'p{n}', make_zip([('config.yml', b'#' * size + b' %d' % n)]))
    with cache.using(f'p{n}', sha, threading.Event()):
        pass
    return sha


def kept(tmp_path):
    return sorted(p.name for p in (tmp_path / 'packages').iterdir())


def test_the_cache_keeps_the_most_recently_used_packages(world, tmp_path, monkeypatch):
    files, folders, cache, preparer = world
    monkeypatch.setattr(preparation, 'MAX_PACKAGES', 2)
    shas = [fetch(files, cache, n) for n in range(3)]
    assert kept(tmp_path) == sorted(shas[1:])


def test_the_cache_keeps_packages_within_its_bytes(world, tmp_path, monkeypatch):
    # However few they are: a server handing out many large packages
    # fills no disk.
    files, folders, cache, preparer = world
    monkeypatch.setattr(preparation, 'MAX_CACHE_BYTES', 2500)
    shas = [fetch(files, cache, n, size=1000) for n in range(3)]
    assert kept(tmp_path) == sorted(shas[1:])


def test_the_bytes_freed_by_an_eviction_count(world, tmp_path, monkeypatch):
    # The newest kept, then what fits: only the large middle one goes.
    files, folders, cache, preparer = world
    monkeypatch.setattr(preparation, 'MAX_CACHE_BYTES', 2500)
    oldest, middle, newest = (fetch(files, cache, n, size)
                              for n, size in enumerate([100, 2000, 1000]))
    assert kept(tmp_path) == sorted([oldest, newest])


def test_a_package_kept_before_sizes_were_recorded_counts_its_files(world, tmp_path, monkeypatch):
    files, folders, cache, preparer = world
    monkeypatch.setattr(preparation, 'MAX_CACHE_BYTES', 2500)
    older = fetch(files, cache, 0, size=2000)
    (tmp_path / 'packages' / older / 'bytes').unlink()
    newer = fetch(files, cache, 1, size=1000)
    assert kept(tmp_path) == [newer]


def test_a_removal_cut_short_leaves_no_package_that_lacks_files(world, tmp_path, monkeypatch):
    files, folders, cache, preparer = world
    monkeypatch.setattr(preparation, 'MAX_PACKAGES', 1)
    monkeypatch.setattr(preparation.shutil, 'rmtree', lambda path, ignore_errors=False: None)
    first = fetch(files, cache, 0)
    fetch(files, cache, 1)  # evicts the first, whose removal "fails"
    assert preparation._read_names(tmp_path / 'packages' / first) is None  # fetched again


def test_the_package_is_read_under_its_lock_and_the_source_fetched_after(world, monkeypatch):
    # Eviction takes the lock: a preparation laying out its job holds it, a
    # slow source download does not.
    files, folders, cache, preparer = world
    claimed = claim(files, samples.package('sum'), b'x = 1\n', 'a.py', 'python3')
    locks = FileLocks(cache._root.parent / 'locks')
    seen = {}

    def free():
        lock = locks.lock(claimed.package_sha256)
        if lock.acquire(0):
            lock.release()
            return True
        return False

    lay_out = preparer._lay_out

    def laying_out(*args):
        seen['laying out'] = free()
        return lay_out(*args)

    monkeypatch.setattr(preparer, '_lay_out', laying_out)
    download = files.download

    def downloading(file_id, *args, **kw):
        if file_id.startswith('src'):
            seen['downloading the source'] = free()
        return download(file_id, *args, **kw)

    monkeypatch.setattr(files, 'download', downloading)
    assert preparer.prepare(claimed, threading.Event()).job is not None
    assert seen == {'laying out': False, 'downloading the source': True}


def test_a_package_in_use_is_not_evicted_until_a_later_eviction(world, tmp_path, monkeypatch):
    files, folders, cache, preparer = world
    monkeypatch.setattr(preparation, 'MAX_PACKAGES', 1)
    first = files.add('p0', make_zip([('config.yml', b'# 0')]))
    with cache.using('p0', first, threading.Event()) as (package_files, names):
        second = fetch(files, cache, 1)
        assert (package_files / 'config.yml').read_bytes() == b'# 0'  # still there to read
    assert kept(tmp_path) == sorted([first, second])
    third = fetch(files, cache, 2)
    assert kept(tmp_path) == [third]


def test_a_download_over_its_bound_is_not_judgeable_at_once(world):
    from runner.backend.http_session import TooLarge
    files, folders, cache, preparer = world
    claimed = claim(files, samples.package('sum'), b'x = 1\n', 'a.py', 'python3')

    def too_large(file_id, sha256, dest, **kw):
        raise TooLarge('over the limit')

    files.download = too_large
    with pytest.raises(NotJudgeable, match='over'):
        preparer.prepare(claimed, threading.Event())
