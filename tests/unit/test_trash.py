"""The sandbox's trash: a folder thrown is gone from its place at once, and
removed by a thread of its own."""
import threading

from sandbox import trash
from sandbox.trash import Trash


def a_folder(path, files=3):
    (path / 'sub').mkdir(parents=True)
    for n in range(files):
        (path / 'sub' / f'f{n}').write_text('x')
    return path


def test_a_folder_thrown_is_set_aside_at_once_and_removed_by_the_remover(tmp_path):
    bin_ = Trash(tmp_path / 'trash')
    thrown = [a_folder(tmp_path / f'box-{n}') for n in range(2)]
    for folder in thrown:
        bin_.throw(folder)
    # Not started: nothing was removed on the thrower's path, only set aside.
    assert not any(folder.exists() for folder in thrown)
    # Each in a folder of its own: removing a folder locks the folder it is
    # in (the kernel's lock of that directory) as long as that takes.
    holders = list((tmp_path / 'trash').iterdir())
    assert sorted(thrown.name for holder in holders
                  for thrown in holder.iterdir()) == ['box-0', 'box-1'] and len(holders) == 2
    assert all(len(list(holder.rglob('*'))) == 5 for holder in holders)
    bin_.start()
    bin_.stop()  # what was thrown until now is removed first
    assert bin_.join(10)
    assert list((tmp_path / 'trash').iterdir()) == []


def test_a_throw_does_not_wait_for_a_removal_under_way(tmp_path, monkeypatch):
    removing, go_on = threading.Event(), threading.Event()
    rmtree = trash.shutil.rmtree

    def held_rmtree(path, ignore_errors=False):
        removing.set()
        go_on.wait()  # until the second throw has returned, however long
        rmtree(path, ignore_errors=ignore_errors)

    monkeypatch.setattr(trash.shutil, 'rmtree', held_rmtree)
    bin_ = Trash(tmp_path / 'trash')
    bin_.start()
    second = a_folder(tmp_path / 'second')
    thrown = threading.Event()
    try:
        bin_.throw(a_folder(tmp_path / 'held'))
        assert removing.wait(10)
        threading.Thread(target=lambda: (bin_.throw(second), thrown.set()), daemon=True).start()
        assert thrown.wait(10), 'a throw waited for the removal under way'
        assert not second.exists() and len(list((tmp_path / 'trash').iterdir())) == 2
    finally:
        go_on.set()
        bin_.stop()
    assert bin_.join(10)
    assert list((tmp_path / 'trash').iterdir()) == []


def test_a_folder_that_cannot_be_set_aside_is_removed_at_once(tmp_path):
    (tmp_path / 'trash').write_text('a file where the trash folder should be')
    bin_ = Trash(tmp_path / 'trash')
    folder = a_folder(tmp_path / 'box')
    bin_.throw(folder)
    assert not folder.exists()


def test_a_folder_already_gone_is_no_error(tmp_path):
    bin_ = Trash(tmp_path / 'trash')
    bin_.throw(tmp_path / 'never-made')
    assert not (tmp_path / 'trash').exists() or list((tmp_path / 'trash').iterdir()) == []


def test_a_trash_never_started_joins_at_once(tmp_path):
    bin_ = Trash(tmp_path / 'trash')
    bin_.stop()
    assert bin_.join(0)
