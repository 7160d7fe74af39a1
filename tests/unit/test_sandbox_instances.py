"""Several runners on one DATA_DIR: a starting runner removes the sandboxes of
dead ones (a crash, a kill) and never those of live ones. Fake engine."""
import fcntl
import os
import shutil
import threading

import docker.errors
import pytest

from sandbox import trash
from sandbox.container import LABEL
from sandbox.docker_sandbox import INSTANCE_LABEL, ROOT_LABEL, DockerSandbox, SandboxSettings


class FakeContainer:

    def __init__(self, engine, name, labels):
        self.engine, self.name, self.labels = engine, name, labels

    def remove(self, force=False):
        self.engine.removed.append(self.name)


class FakeEngine:

    def __init__(self):
        self.containers = self
        self.images = NoImages()
        self.volumes = NoVolumes()
        self.all = []
        self.removed = []

    def add(self, name, **labels):
        self.all.append(FakeContainer(self, name, {LABEL: '1', **labels}))

    def info(self):
        return {'SecurityOptions': ['name=seccomp,profile=default']}

    def create(self, image, **options):
        # The page cache's warm-up at start: no container here (logged, and
        # the sandbox starts all the same).
        raise docker.errors.APIError('no containers in this test')

    @property
    def api(self):
        return self

    def remove_container(self, name, force=False):
        pass

    def list(self, filters=None, **ignored):
        wanted = dict(f.split('=', 1) if '=' in f else (f, None) for f in filters['label'])
        return [
            c for c in self.all
            if c.name not in self.removed and all(k in c.labels and v in (None, c.labels[k])
                                                  for k, v in wanted.items())
        ]


class NoImages:
    """The image is not on this engine: no copy of it is made (logged)."""

    def get(self, name):
        raise docker.errors.ImageNotFound(name)


class NoVolumes:

    def list(self, filters=None):
        return []


@pytest.fixture
def root(tmp_path):
    return (tmp_path / 'sandbox').resolve()


def start(root, engine):
    sandbox = DockerSandbox(SandboxSettings(root=root, spares_per_image=0), client=engine)
    sandbox.start()
    return sandbox


def live_instance(root, name):
    """Another process's folder, locked as a live runner holds it."""
    folder = root / name
    folder.mkdir(parents=True)
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return folder, fd


def test_dead_instances_go_and_live_ones_stay(root):
    engine = FakeEngine()
    live, fd = live_instance(root, 'live')
    (live / 'artifacts').mkdir()
    dead = root / 'dead'
    (dead / 'boxes').mkdir(parents=True)
    engine.add('live-1', **{ROOT_LABEL: str(root), INSTANCE_LABEL: str(live)})
    engine.add('dead-1', **{ROOT_LABEL: str(root), INSTANCE_LABEL: str(dead)})
    engine.add('gone-1', **{ROOT_LABEL: str(root), INSTANCE_LABEL: str(root / 'gone')})
    engine.add('old-format', **{ROOT_LABEL: str(root)})
    sandbox = start(root, engine)
    try:
        assert sorted(engine.removed) == ['dead-1', 'gone-1', 'old-format']
        assert live.is_dir() and (live / 'artifacts').is_dir() and not dead.exists()
    finally:
        sandbox.stop()
        sandbox.remove_leftovers()
        os.close(fd)


def test_a_live_runner_whose_files_were_deleted_stays_alive(root):
    engine = FakeEngine()
    live, fd = live_instance(root, 'live')
    engine.add('live-1', **{ROOT_LABEL: str(root), INSTANCE_LABEL: str(live)})
    sandbox = start(root, engine)
    try:
        assert engine.removed == []
    finally:
        sandbox.stop()
        sandbox.remove_leftovers()
        os.close(fd)


def test_two_sandboxes_on_one_root_see_each_other_alive(root):
    engine = FakeEngine()
    first = start(root, engine)
    engine.add('first-1', **{ROOT_LABEL: str(root), INSTANCE_LABEL: str(first.home)})
    second = start(root, engine)
    try:
        assert engine.removed == [] and first.home.is_dir()
    finally:
        second.stop()
        second.remove_leftovers()
        first.stop()
        assert first.remove_leftovers() == 1
    assert engine.removed == ['first-1'] and not first.home.exists()


def test_where_locks_are_not_enforced_nothing_of_others_is_removed(root, monkeypatch):
    engine = FakeEngine()
    dead = root / 'dead'
    dead.mkdir(parents=True)
    engine.add('dead-1', **{ROOT_LABEL: str(root), INSTANCE_LABEL: str(dead)})
    monkeypatch.setattr(fcntl, 'flock', lambda fd, op: None)  # a no-op flock
    sandbox = start(root, engine)
    try:
        assert engine.removed == [] and dead.is_dir()
    finally:
        sandbox.stop()
        sandbox.remove_leftovers()


def test_a_warm_up_containers_box_goes_through_the_sandboxs_trash(root, monkeypatch):
    """A box is set aside and removed by the trash's thread (its removal may
    take seconds: sandbox/trash.py), here a warm-up container's, which the
    engine did not make."""
    sandbox = DockerSandbox(SandboxSettings(root=root, spares_per_image=0), client=FakeEngine())
    thrown = []
    monkeypatch.setattr(sandbox._trash, 'throw', thrown.append)
    sandbox.start()
    try:
        assert thrown and all(box.parent == sandbox.home / 'boxes' for box in thrown)
    finally:
        sandbox.stop()
        sandbox.remove_leftovers()


def test_a_pool_containers_box_goes_through_the_sandboxs_trash(root, monkeypatch):
    sandbox = DockerSandbox(SandboxSettings(root=root, spares_per_image=0), client=FakeEngine())
    thrown = []
    monkeypatch.setattr(sandbox._trash, 'throw', thrown.append)
    try:
        container = sandbox._new_container('oj-sandbox:latest')
        container.destroy()
        assert thrown == [container.box]
    finally:
        sandbox.remove_leftovers()


def test_the_sandboxs_join_waits_for_its_trash(root, monkeypatch):
    """At exit, what the trash holds is removed before the runner's folder
    (or with it, once the join's time is out)."""
    held = threading.Event()
    rmtree = shutil.rmtree

    def held_in_the_trash(path, ignore_errors=False):
        if threading.current_thread().name == 'sandbox-trash':
            held.wait()
        rmtree(path, ignore_errors=ignore_errors)

    sandbox = start(root, FakeEngine())
    monkeypatch.setattr(trash.shutil, 'rmtree', held_in_the_trash)
    try:
        sandbox._new_container('oj-sandbox:latest').destroy()
        sandbox.stop()
        assert sandbox._pool.join(10)
        assert not sandbox.join(0)  # the trash still removing
        held.set()
        assert sandbox.join(10)
        assert list((sandbox.home / 'trash').iterdir()) == []
    finally:
        held.set()
        sandbox.remove_leftovers()


def test_a_container_destroyed_after_the_exits_cleanup_leaves_nothing(root):
    """A run cut short at exit, given back broken once the runner's folder
    is gone."""
    sandbox = start(root, FakeEngine())
    container = sandbox._new_container('oj-sandbox:latest')
    sandbox.stop()
    assert sandbox.join(10)
    sandbox.remove_leftovers()
    container.destroy()
    assert not sandbox.home.exists()
