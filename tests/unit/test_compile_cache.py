"""The compile cache: keyed by all that makes a build, whole entries or none,
a tampered entry dropped, bounded on disk."""
import os
import pathlib

import pytest

from sandbox.compile_cache import RECOUNT_SEC, CompileCache, cache_key
from sandbox.results import Status
from tests.unit.fakes import FakeTime

ARGV = ('gcc', '-O2', '-o', 'main', 'main.c')


@pytest.fixture
def build(tmp_path):
    folder = tmp_path / 'build'
    (folder / 'chaos').mkdir(parents=True)
    (folder / 'main.c').write_text('int main(void){return 0;}\n')
    (folder / 'chaos' / 'magic.h').write_text('#define MAGIC 7\n')
    return folder


def key_of(build, language='C', argv=ARGV, image='sha256:aa'):
    return cache_key(language, repr(argv), image, build)


def test_the_key_covers_language_flags_image_and_every_file(build):
    first = key_of(build)
    assert key_of(build) == first
    assert key_of(build, language='CPP') != first
    assert key_of(build, argv=ARGV + ('-lm', )) != first
    assert key_of(build, image='sha256:bb') != first
    (build / 'chaos' / 'magic.h').write_text('#define MAGIC 8\n')
    assert key_of(build) != first
    (build / 'chaos' / 'magic.h').write_text('#define MAGIC 7\n')
    assert key_of(build) == first
    (build / 'chaos' / 'extra.txt').write_text('')
    assert key_of(build) != first


def test_an_entry_round_trips(tmp_path):
    cache = CompileCache(tmp_path / 'cache', 1 << 20)
    cache.put('k1', Status.AC, 'warning: x', b'\x7fELF program', 4096)
    entry = cache.get('k1')
    assert (entry.status, entry.message, entry.static_bytes) == (Status.AC, 'warning: x', 4096)
    assert entry.program == b'\x7fELF program'
    cache.put('k2', Status.CE, 'main.c:1: error', None, 0)
    assert cache.get('k2').program is None and cache.get('k2').status is Status.CE
    assert cache.get('missing') is None


def test_a_tampered_program_is_dropped_not_served(tmp_path):
    cache = CompileCache(tmp_path / 'cache', 1 << 20)
    cache.put('k', Status.AC, '', b'the real program', 0)
    (tmp_path / 'cache' / 'k' / 'program').write_bytes(b'a poisoned program')
    assert cache.get('k') is None
    assert not (tmp_path / 'cache' / 'k').exists()


def test_a_broken_entry_is_dropped(tmp_path):
    cache = CompileCache(tmp_path / 'cache', 1 << 20)
    (tmp_path / 'cache' / 'k').mkdir(parents=True)
    (tmp_path / 'cache' / 'k' / 'result.json').write_text('{"status": "JE"}')
    assert cache.get('k') is None


def test_a_second_put_of_the_same_key_keeps_the_first(tmp_path):
    cache = CompileCache(tmp_path / 'cache', 1 << 20)
    cache.put('k', Status.AC, 'first', b'one', 0)
    cache.put('k', Status.AC, 'second', b'two', 0)
    assert cache.get('k').message == 'first'
    assert [p.name for p in (tmp_path / 'cache').iterdir()] == ['k']  # no temporary left


def test_the_least_recently_used_entries_go_past_the_bound(tmp_path):
    from sandbox.compile_cache import _size
    probe = CompileCache(tmp_path / 'probe', 1 << 30)
    probe.put('k', Status.AC, '', b'x' * 1000, 0)
    one = _size(tmp_path / 'probe' / 'k')  # on disk: blocks, not bytes
    cache = CompileCache(tmp_path / 'cache', int(2.5 * one))
    for n, age in ((1, 300), (2, 200)):
        cache.put(f'k{n}', Status.AC, '', b'x' * 1000, 0)
        os.utime(tmp_path / 'cache' / f'k{n}', (1e9 - age, 1e9 - age))
    assert cache.get('k1') is not None  # used now: k2 is the oldest
    cache.put('k3', Status.AC, '', b'x' * 1000, 0)
    assert cache.get('k2') is None
    assert cache.get('k1') is not None and cache.get('k3') is not None


def test_a_put_under_the_bound_counts_nothing_until_it_is_time(tmp_path):
    time = FakeTime(now=1000.0)
    cache = CompileCache(tmp_path / 'cache', 1 << 30, clock=time.clock)
    for n in range(20):
        cache.put(f'k{n}', Status.AC, '', b'x' * 1000, 0)
    assert cache.counts == 1  # the first put counts the folder once
    time.now += RECOUNT_SEC  # another runner may have added meanwhile
    cache.put('later', Status.AC, '', b'x' * 1000, 0)
    assert cache.counts == 2


def test_the_running_total_finds_the_bound(tmp_path):
    from sandbox.compile_cache import _size
    probe = CompileCache(tmp_path / 'probe', 1 << 30)
    probe.put('k', Status.AC, '', b'x' * 1000, 0)
    one = _size(tmp_path / 'probe' / 'k')
    cache = CompileCache(tmp_path / 'cache', int(3.5 * one), clock=FakeTime().clock)
    for n in range(6):
        cache.put(f'k{n}', Status.AC, '', b'x' * 1000, 0)
    assert len(list((tmp_path / 'cache').iterdir())) <= 3
    assert cache.counts < 6


def test_an_unwritable_cache_costs_only_the_compile(tmp_path):
    blocker = tmp_path / 'cache'
    blocker.write_text('a file where the cache folder should be')
    cache = CompileCache(pathlib.Path(blocker), 1 << 20)
    cache.put('k', Status.AC, '', b'program', 0)  # says why, raises nothing
    assert cache.get('k') is None
