"""What a sandbox container is created with: the engine's options that the
supervisor's own confinement relies on."""
import dataclasses

import docker.errors
import pytest

from sandbox.container import SandboxBroken, SandboxContainer, engine_uses_apparmor
from tests.unit.test_container_reset import LIMITS


class Engine:
    """Records what a container is created with, then fails to start it."""

    def __init__(self, security_options=(), info_fails=False):
        self.containers = self
        self.api = self
        self.created = None
        self._options = list(security_options)
        self._info_fails = info_fails

    def info(self):
        if self._info_fails:
            raise docker.errors.APIError('the engine is busy')
        return {'SecurityOptions': self._options}

    def create(self, image, **options):
        self.created = options
        return self

    def start(self):
        raise docker.errors.APIError('not in a unit test')

    def remove_container(self, name, force):
        pass


@pytest.mark.parametrize('options, expected', [
    (['name=apparmor', 'name=seccomp,profile=default'], True),
    (['name=seccomp,profile=default'], False),
    ([], False),
])
def test_apparmor_is_seen_in_the_engines_security_options(options, expected):
    assert engine_uses_apparmor(Engine(options)) is expected


def test_an_engine_that_does_not_answer_is_not_taken_for_apparmor():
    assert engine_uses_apparmor(Engine(info_fails=True)) is False


@pytest.mark.parametrize('unconfined', [False, True])
def test_a_container_gets_what_its_supervisor_needs_and_no_more(tmp_path, unconfined):
    engine = Engine()
    limits = dataclasses.replace(LIMITS, apparmor_unconfined=unconfined)
    container = SandboxContainer(engine, 'img', tmp_path / 'boxes', limits, {})
    with pytest.raises(SandboxBroken):
        container.start()
    created = engine.created
    assert created['cap_drop'] == ['ALL']
    # SYS_ADMIN makes each run's namespaces and mounts, SYS_CHROOT its root;
    # runs get no capability.
    assert sorted(
        created['cap_add']) == ['KILL', 'SETGID', 'SETPCAP', 'SETUID', 'SYS_ADMIN', 'SYS_CHROOT']
    assert created['network_disabled'] is True and created['read_only'] is True
    assert 'no-new-privileges' in created['security_opt']
    assert ('apparmor=unconfined' in created['security_opt']) is unconfined
    assert created['mounts'] == [] and len(created['command']) == 3


def test_a_container_of_an_image_with_a_copy_mounts_it_read_only(tmp_path):
    engine = Engine()
    container = SandboxContainer(engine, 'img', tmp_path / 'boxes', LIMITS, {}, 'copy-volume')
    with pytest.raises(SandboxBroken):
        container.start()
    created = engine.created
    [mount] = created['mounts']
    assert (mount['Source'], mount['Target'], mount['Type'],
            mount['ReadOnly']) == ('copy-volume', '/image', 'volume', True)
    assert created['command'][-1] == '/image'


class Removals(Engine):
    """Fails the first `failures` removals as the engine does for a container
    that ended while it was being killed."""

    def __init__(self, failures):
        super().__init__()
        self.removals = 0
        self._failures = failures

    def remove_container(self, name, force):
        self.removals += 1
        if self.removals <= self._failures:
            raise docker.errors.APIError('Could not kill running container x, cannot remove - '
                                         'Container x is not running')


def test_a_container_that_ends_while_it_is_removed_is_removed_again(tmp_path):
    engine = Removals(failures=1)
    container = SandboxContainer(engine, 'img', tmp_path / 'boxes', LIMITS, {})
    container.destroy()
    assert engine.removals == 2
    container.destroy()  # idempotent: nothing more asked of the engine
    assert engine.removals == 2


def test_a_removal_that_keeps_failing_is_left_to_the_health_probe(tmp_path, caplog):
    engine = Removals(failures=5)
    container = SandboxContainer(engine, 'img', tmp_path / 'boxes', LIMITS, {})
    container.destroy()
    assert engine.removals == 2
    assert 'could not remove sandbox container' in caplog.text


def test_a_destroyed_containers_box_is_left_to_be_removed_off_its_path(tmp_path):
    """Its job folder may take seconds to remove (sandbox/trash.py), and a
    run or the pool's keeper waits for a container's destruction."""
    thrown = []
    container = SandboxContainer(
        Engine(),
        'img',
        tmp_path / 'boxes',
        LIMITS, {},
        discard=lambda folder: thrown.append(folder.rename(tmp_path / f'thrown-{len(thrown)}')))
    (container.box / 'job' / 'main.c').write_text('the last job')
    box = container.box
    container.destroy()
    assert thrown == [tmp_path / 'thrown-0'] and not box.exists()
    assert (tmp_path / 'thrown-0' / 'job' / 'main.c').read_text() == 'the last job'
