"""The standard grader reads a case's answer in one read (sandbox/graders/standard.py)."""
import pytest

from sandbox.graders.standard import _whole_file


@pytest.mark.parametrize('data', [b'', b'4\n', bytes(range(256)) * 8192])
def test_a_file_is_read_whole(tmp_path, data):
    (tmp_path / 'answer').write_bytes(data)
    assert _whole_file(tmp_path / 'answer') == data


def test_a_folder_or_no_file_is_an_os_error(tmp_path):
    with pytest.raises(OSError):
        _whole_file(tmp_path)
    with pytest.raises(OSError):
        _whole_file(tmp_path / 'missing')


def test_a_read_cut_short_is_read_on_to_the_end(tmp_path, monkeypatch):
    import os
    data = bytes(range(256)) * 64
    (tmp_path / 'answer').write_bytes(data)
    real_read = os.read
    monkeypatch.setattr(os, 'read', lambda fd, n: real_read(fd, min(n, 1000)))
    assert _whole_file(tmp_path / 'answer') == data
