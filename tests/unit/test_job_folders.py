"""Job folders live in a folder of this runner's own: what a killed runner
left is removed by the next start on the same DATA_DIR, a live runner's never."""
import fcntl
import logging
import os

import pytest

from runner.prep.job_folders import JobFolders


@pytest.fixture
def dirs(tmp_path):
    return tmp_path / 'submissions', tmp_path / 'backup'


def test_job_folders_are_made_in_the_runners_own_folder(dirs):
    folders = JobFolders(*dirs, instance='abc')
    folders.start()
    job_dir = folders.create('jb_1')
    assert job_dir.parent == dirs[0] / 'abc' == folders.root
    folders.remove(job_dir)
    assert not job_dir.exists()


def test_a_dead_runners_job_folders_are_removed_and_logged(dirs, caplog):
    dead = dirs[0] / 'dead-runner' / 'jb_1.0123'
    dead.mkdir(parents=True)
    legacy = dirs[0] / 'jb_2.4567'  # the layout before runner folders
    legacy.mkdir()
    with caplog.at_level(logging.INFO, logger='runner.prep.job_folders'):
        JobFolders(*dirs, instance='new').start()
    assert not dead.parent.exists() and not legacy.exists()
    said = ' '.join(r.getMessage() for r in caplog.records)
    assert 'dead-runner' in said and 'jb_2.4567' in said


def test_a_live_runners_job_folders_are_left_alone(dirs):
    live = JobFolders(*dirs, instance='live')
    live.start()
    job_dir = live.create('jb_1')
    JobFolders(*dirs, instance='second').start()
    assert job_dir.exists()


def test_a_folder_locked_by_another_process_is_alive(dirs):
    other = dirs[0] / 'other'
    other.mkdir(parents=True)
    fd = os.open(other, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        JobFolders(*dirs, instance='mine').start()
        assert other.exists()
    finally:
        os.close(fd)


def test_close_removes_the_folder_and_its_lock(dirs):
    folders = JobFolders(*dirs, instance='done')
    folders.start()
    folders.create('jb_1')
    folders.close()
    assert not (dirs[0] / 'done').exists()


def test_only_own_job_folders_are_removed(dirs, tmp_path):
    folders = JobFolders(*dirs, instance='mine')
    folders.start()
    with pytest.raises(ValueError):
        folders.remove(tmp_path)
