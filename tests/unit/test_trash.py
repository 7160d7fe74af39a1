"""The sandbox's trash: a folder thrown is gone from its place at once, and
removed by a thread of its own."""
import shutil
import threading

import pytest

from sandbox import trash
from sandbox.trash import Trash

RMTREE = shutil.rmtree  # the real one: the gate below replaces it


def a_folder(path, files=3):
    (path / 'sub').mkdir(parents=True)
    for n in range(files):
        (path / 'sub' / f'f{n}').write_text('x')
    return path


class Gate:
    """Holds the remover's removals (the thread's alone) until opened."""

    def __init__(self):
        self.removing = threading.Event()
        self.open = threading.Event()

    def rmtree(self, path, ignore_errors=False):
        if threading.current_thread().name == 'sandbox-trash':
            self.removing.set()
            self.open.wait()  # however long the test needs
        RMTREE(path, ignore_errors=ignore_errors)


@pytest.fixture
def gate(monkeypatch):
    held = Gate()
    monkeypatch.setattr(trash.shutil, 'rmtree', held.rmtree)
    yield held
    held.open.set()


def holders(bin_):
    """What waits in the trash: the folders thrown, by their holder."""
    return {holder: [p.name for p in holder.iterdir()] for holder in bin_.folder.iterdir()}


def throw_folders(bin_, tmp_path, count):
    """`count` folders made and thrown: each is gone from its place."""
    folders = [a_folder(tmp_path / f'box-{n}') for n in range(count)]
    for folder in folders:
        bin_.throw(folder)
    assert not any(folder.exists() for folder in folders)


def test_a_folder_thrown_is_set_aside_at_once_and_removed_by_the_remover(tmp_path, gate):
    bin_ = Trash(tmp_path / 'trash', max_pending=10)
    bin_.start()
    throw_folders(bin_, tmp_path, 2)
    # Each in a folder of its own: removing a folder locks the folder it is
    # in (the kernel's lock of that directory) as long as that takes.
    waiting = holders(bin_)
    assert sorted(waiting.values()) == [['box-0'], ['box-1']]
    assert all(len(list(holder.rglob('*'))) == 5 for holder in waiting)
    gate.open.set()
    bin_.stop()  # what was thrown until now is removed first
    assert bin_.join(10)
    assert holders(bin_) == {}


def test_a_throw_does_not_wait_for_a_removal_under_way(tmp_path, gate):
    bin_ = Trash(tmp_path / 'trash', max_pending=10)
    bin_.start()
    second = a_folder(tmp_path / 'second')
    thrown = threading.Event()
    try:
        bin_.throw(a_folder(tmp_path / 'held'))
        assert gate.removing.wait(10)
        threading.Thread(target=lambda: (bin_.throw(second), thrown.set()), daemon=True).start()
        assert thrown.wait(10), 'a throw waited for the removal under way'
        assert not second.exists() and sorted(holders(bin_).values()) == [['held'], ['second']]
    finally:
        gate.open.set()
        bin_.stop()
    assert bin_.join(10)
    assert holders(bin_) == {}


def test_past_max_pending_a_throw_removes_at_once(tmp_path, gate):
    bin_ = Trash(tmp_path / 'trash', max_pending=2)
    bin_.start()
    throw_folders(bin_, tmp_path, 3)
    assert sorted(holders(bin_).values()) == [['box-0'], ['box-1']]  # the third: removed


def test_a_trash_not_started_removes_at_once(tmp_path):
    bin_ = Trash(tmp_path / 'trash', max_pending=10)
    folder = a_folder(tmp_path / 'box')
    bin_.throw(folder)
    assert not folder.exists() and not (tmp_path / 'trash').exists()


def test_what_is_thrown_once_the_remover_ended_stays_in_the_trash(tmp_path):
    """It goes with the runner's folder (Leftovers.remove_own)."""
    bin_ = Trash(tmp_path / 'trash', max_pending=10)
    bin_.start()
    bin_.stop()
    assert bin_.join(10)
    bin_.throw(a_folder(tmp_path / 'late'))
    assert list(holders(bin_).values()) == [['late']]


def test_a_throw_once_the_runners_folder_is_gone_leaves_nothing(tmp_path):
    """A container destroyed after the exit's cleanup: the trash's folder is
    not made again."""
    bin_ = Trash(tmp_path / 'home' / 'trash', max_pending=10)
    bin_.start()
    bin_.stop()
    assert bin_.join(10)
    shutil.rmtree(tmp_path / 'home')
    folder = a_folder(tmp_path / 'box')
    bin_.throw(folder)
    assert not folder.exists() and not (tmp_path / 'home').exists()


def test_a_folder_that_cannot_be_set_aside_is_removed_at_once(tmp_path, caplog):
    bin_ = Trash(tmp_path / 'trash', max_pending=10)
    bin_.start()
    bin_.stop()
    assert bin_.join(10)
    shutil.rmtree(tmp_path / 'trash')
    (tmp_path / 'trash').write_text('a file where the trash folder should be')
    folder = a_folder(tmp_path / 'box')
    bin_.throw(folder)
    assert not folder.exists()
    assert 'could not set box aside for removal (NotADirectoryError)' in caplog.text


def test_a_folder_already_gone_is_no_error(tmp_path, caplog):
    bin_ = Trash(tmp_path / 'trash', max_pending=10)
    bin_.start()
    try:
        bin_.throw(tmp_path / 'never-made')
        assert holders(bin_) == {} and caplog.text == ''
    finally:
        bin_.stop()
        assert bin_.join(10)


def test_a_trash_never_started_joins_at_once(tmp_path):
    bin_ = Trash(tmp_path / 'trash', max_pending=10)
    bin_.stop()
    assert bin_.join(0)
