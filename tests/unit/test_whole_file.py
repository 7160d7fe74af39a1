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
