import io
import struct
import zipfile

import pytest

from runner.prep.zips import ZipRejected, extract_package, extract_source, extract_testdata
from standard_io import package as package_names
from sandbox.languages import Language
from tests.unit.fakes import make_zip, symlink

# Two of the hostile zips carry a name twice on purpose.
pytestmark = pytest.mark.filterwarnings("ignore:Duplicate name")


def tree(root):
    return sorted(str(path.relative_to(root)) for path in root.rglob('*'))


@pytest.fixture
def src(tmp_path):
    path = tmp_path / 'job' / 'src'
    path.mkdir(parents=True)
    return path


@pytest.mark.parametrize('language', list(Language))
def test_source_matching_the_language(src, language):
    data = make_zip([(language.source_name, b'int main() {}')])
    dest = extract_source(data, language, src, 1024)
    assert dest == src / language.source_name
    assert dest.read_bytes() == b'int main() {}'


def test_directory_entries_are_ignored(src):
    data = make_zip([('empty/', b''), ('main.py', b'print(1)')])
    extract_source(data, Language.PYTHON, src, 1024)
    assert tree(src) == ['main.py']


def test_a_dot_folder_is_the_archives_own(src):
    # As some archivers write them: `./` and `./main.py`.
    data = make_zip([('./', b''), ('./main.py', b'print(1)')])
    extract_source(data, Language.PYTHON, src, 1024)
    assert tree(src) == ['main.py']


@pytest.mark.parametrize('entries, message', [
    ([('main.cpp', b'x')], 'exactly one file main.c'),
    ([('Main.c', b'x')], 'exactly one file main.c'),
    ([('main.py', b'x')], 'exactly one file main.c'),
    ([], 'found nothing'),
    ([('dir/', b'')], 'found nothing'),
    ([('main.c', b'x'), ('notes.txt', b'y')], 'exactly one file'),
    ([('main.c', b'x'), ('main.c', b'y')], 'exactly one file'),
    ([('src/main.c', b'x')], 'exactly one file'),
    ([('../main.c', b'x')], 'unsafe path'),
    ([('/main.c', b'x')], 'unsafe path'),
    ([('..\\main.c', b'x')], 'unsafe path'),
    ([('./main.c', b'x'), ('main.c', b'y')], 'exactly one file'),
    ([('./../main.c', b'x')], 'unsafe path'),
    ([('C:/main.c', b'x')], 'unsafe path'),
    ([symlink('main.c', b'/etc/passwd')], 'symbolic link'),
])
def test_bad_code_zips(tmp_path, src, entries, message):
    with pytest.raises(ZipRejected, match=message):
        extract_source(make_zip(entries), Language.C, src, 1024)
    assert tree(tmp_path) == ['job', 'job/src']


def test_code_zip_bomb_stops_at_the_bound(tmp_path, src):
    data = make_zip([('main.c', b'\0' * (4 << 20))])
    assert len(data) < 64 * 1024
    with pytest.raises(ZipRejected, match='limit'):
        extract_source(data, Language.C, src, 1 << 20)


@pytest.mark.parametrize('data', [b'', b'not a zip', b'PK\x03\x04broken'])
def test_not_a_zip(src, data):
    with pytest.raises(ZipRejected, match='not a readable zip'):
        extract_source(data, Language.C, src, 1024)


def test_damaged_member(src):
    data = bytearray(make_zip([('main.c', b'int main() { return 0; }' * 20)]))
    start = data.index(b'main.c') + len('main.c')
    data[start + 5:start + 15] = b'\xff' * 10  # corrupt the compressed bytes
    with pytest.raises(ZipRejected):
        extract_source(bytes(data), Language.C, src, 1 << 20)


# -- testdata ---------------------------------------------------------------------


def write(tmp_path, entries):
    path = tmp_path / 'testdata.zip'
    path.write_bytes(make_zip(entries))
    return path


def test_testdata_cases_and_chaos(tmp_path):
    path = write(tmp_path, [('0000.in', b'1'), ('0000.out', b'2'), ('0100.in', b'3'),
                            ('chaos/', b''), ('chaos/lib.h', b'#define X'),
                            ('chaos/data/t.txt', b't'), ('README', b'ignored'),
                            ('0000.IN', b'ignored'), ('other/0001.in', b'ignored')])
    extract_testdata(path, tmp_path / 'data', 1024)
    assert tree(tmp_path / 'data') == [
        '0000.in', '0000.out', '0100.in', 'chaos', 'chaos/data', 'chaos/data/t.txt', 'chaos/lib.h'
    ]


@pytest.mark.parametrize('entries, message', [
    ([('0000.in', b'1'), ('../evil', b'x')], 'unsafe path'),
    ([('0000.in', b'1'), ('chaos/../../evil', b'x')], 'unsafe path'),
    ([('/tmp/evil', b'x')], 'unsafe path'),
    ([symlink('chaos/link', b'/etc')], 'symbolic link'),
    ([('0000.in', b'1'), ('0000.in', b'2')], 'duplicate entry'),
    ([('chaos/a', b'1'), ('chaos/a/b', b'2')], 'below a file'),
    ([('chaos/a/b', b'1'), ('chaos/a', b'2')], 'duplicate entry'),
    ([('chaos/' + 'n' * 300, b'1')], 'name too long'),
    ([('chaos/' + 'd' * 300 + '/f', b'1')], 'name too long'),
])
def test_bad_testdata_zips(tmp_path, entries, message):
    path = write(tmp_path, entries)
    with pytest.raises(ZipRejected, match=message):
        extract_testdata(path, tmp_path / 'data', 1024)
    assert not (tmp_path / 'evil').exists()
    assert not (tmp_path.parent / 'evil').exists()


def test_testdata_bomb_counts_all_files(tmp_path):
    path = write(tmp_path, [('0000.in', b'\0' * 600), ('0000.out', b'\0' * 600)])
    with pytest.raises(ZipRejected, match='limit'):
        extract_testdata(path, tmp_path / 'data', 1000)


def test_testdata_not_a_zip(tmp_path):
    path = tmp_path / 'testdata.zip'
    path.write_bytes(b'<html>error</html>')
    with pytest.raises(ZipRejected, match='not a readable zip'):
        extract_testdata(path, tmp_path / 'data', 1000)


# -- entry bombs: refused from the end record, before the directory is parsed --


def _end_record(entries, directory_bytes, offset=0):
    return struct.pack('<4s4H2LH', b'PK\x05\x06', 0, 0, entries, entries, directory_bytes, offset,
                       0)


def _zip64_end(entries, directory_bytes, at):
    record = struct.pack('<4sQ2H2L4Q', b'PK\x06\x06', 44, 45, 45, 0, 0, entries, entries,
                         directory_bytes, 0)
    locator = struct.pack('<4sLQL', b'PK\x06\x07', 0, at, 1)
    return record + locator + _end_record(0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF)


@pytest.mark.parametrize('tail, message', [
    (_end_record(50_000, 100), 'more than 10000 entries'),
    (_zip64_end(3_000_000, 100, 0), 'more than 10000 entries'),
    (_end_record(5, 200 * 1024 * 1024), 'central directory'),
    (_zip64_end(5, 2**40, 0), 'central directory'),
])
def test_entry_bombs_are_refused_before_parsing(tmp_path, monkeypatch, tail, message):
    parsed = []
    monkeypatch.setattr(zipfile.ZipFile, '_RealGetContents', lambda self: parsed.append(1))
    path = tmp_path / 'testdata.zip'
    path.write_bytes(tail)
    with pytest.raises(ZipRejected, match=message):
        extract_testdata(path, tmp_path / 'data', 1000)
    assert parsed == []


def test_a_zip_with_a_comment_is_read(tmp_path):
    data = io.BytesIO(make_zip([('0000.in', b'1')]))
    with zipfile.ZipFile(data, 'a') as archive:
        archive.comment = b'made by the problem setter' * 100
    path = tmp_path / 'testdata.zip'
    path.write_bytes(data.getvalue())
    extract_testdata(path, tmp_path / 'data', 1000)
    assert (tmp_path / 'data' / '0000.in').read_bytes() == b'1'


# A standard-io@1 package (AlgoJudge): every file kept, bounds of its own.


def _package(tmp_path, entries, **bounds):
    tmp_path = tmp_path / f'try-{len(list(tmp_path.iterdir()))}'
    tmp_path.mkdir()
    archive = tmp_path / 'package.zip'
    archive.write_bytes(make_zip(entries))
    limits = dict(name_ok=package_names.entry_name_ok,
                  max_entry_bytes=1 << 20,
                  max_total_bytes=1 << 22,
                  max_expansion=1000)
    limits.update(bounds)
    return extract_package(archive, tmp_path / 'files', **limits)


def test_a_package_keeps_every_file(tmp_path):
    names = _package(tmp_path, [('config.yml', b'type: standard-io@1'), ('tests/1a.in', b'1'),
                                ('tests/', b''), ('checker/check.py', b'print("OK")')])
    assert sorted(names) == ['checker/check.py', 'config.yml', 'tests/1a.in']
    assert (tmp_path / 'try-0' / 'files' / 'tests' / '1a.in').read_bytes() == b'1'


@pytest.mark.parametrize('entries, message', [
    ([('tests/1 a.in', b'')], 'character other than'),
    ([('tests/\u00e9.in', b'')], 'character other than'),
    ([('../escape', b'')], 'unsafe path'),
    ([('/etc/passwd', b'')], 'unsafe path'),
    ([symlink('tests/1a.in', '/etc/passwd')], 'symbolic link'),
    ([('tests', b'x'), ('tests/1a.in', b'')], 'below a file'),
    ([('a.in', b'1'), ('a.in', b'2')], 'duplicate entry'),
])
def test_a_bad_package_is_refused_whole(tmp_path, entries, message):
    with pytest.raises(ZipRejected, match=message):
        _package(tmp_path, entries)


def test_package_bounds_count_what_is_decompressed(tmp_path):
    with pytest.raises(ZipRejected, match='expands past'):
        _package(tmp_path, [('tests/1a.in', b'0' * (2 << 20))])  # one entry over its bound
    with pytest.raises(ZipRejected, match='expands past'):
        _package(tmp_path, [(f'tests/{n}a.in', b'0' * (900 << 10)) for n in range(1, 7)],
                 max_expansion=10**6)  # all of them over the total
    with pytest.raises(ZipRejected, match='expands past'):
        _package(tmp_path, [('tests/1a.in', b'0' * (1 << 20))],
                 max_entry_bytes=2 << 20,
                 max_expansion=100)  # a megabyte of zeros is a bomb at 100x
