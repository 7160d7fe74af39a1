"""The image's copy in memory: made once, kept by a keeper, made again when
its keeper is gone, and given up (runs from the image itself, logged) when
it cannot be made. Fake engine: its keeper answers through the FIFO as the
real one's script does."""
import os

import docker.errors
import pytest

from sandbox.image_copy import KEEPER_LABEL, MOUNT, ImageCopies


class Keeper:

    def __init__(self, engine, name, options):
        self.engine, self.name, self.options = engine, name, options
        self.status = 'running'

    def reload(self):
        if self.engine.unreachable:
            raise docker.errors.APIError('the engine is busy')

    def remove(self, force=False):
        self.engine.removed.append(self.name)


class Engine:
    """`answer`: what each keeper writes to the host's FIFO (None: nothing,
    as a keeper that died before it could)."""

    def __init__(self, answer='ok'):
        self.images, self.volumes, self.containers = self, self, self
        self.answer = answer
        self.unreachable = False
        self.keepers, self.volume_names, self.removed = [], [], []

    # images
    def get(self, name):
        if name in self.volume_names:
            return Volume(self, name)
        if name != 'img':
            raise docker.errors.ImageNotFound(name)
        return Image()

    # volumes
    def create(self, name, driver, driver_opts, labels):
        assert driver_opts['type'] == 'tmpfs' and KEEPER_LABEL in labels
        self.volume_names.append(name)

    # containers
    def run(self, image, **options):
        keeper = Keeper(self, options['name'], options)
        self.keepers.append(keeper)
        copy, folder = options['mounts']
        assert copy['Target'] == MOUNT and not copy['ReadOnly']
        if self.answer is not None:
            fd = os.open(os.path.join(folder['Source'], 'ready'), os.O_WRONLY | os.O_NONBLOCK)
            os.write(fd, self.answer.encode() + b'\n')
            os.close(fd)
        return keeper


class Image:
    attrs = {'Size': 100 << 20}


class Volume:

    def __init__(self, engine, name):
        self.engine, self.name = engine, name

    def remove(self, force=False):
        self.engine.removed.append(self.name)


@pytest.fixture
def fast(monkeypatch):
    """A keeper that never answers is waited for this long."""
    monkeypatch.setattr('sandbox.image_copy.COPY_TIMEOUT_SEC', 0.05)


def test_a_copy_is_made_once_and_mounted_by_every_sandbox(tmp_path):
    engine = Engine()
    copies = ImageCopies(engine, tmp_path, {'owner': 'me'})
    assert copies.start(['img', 'img']) == {'img': True}
    [volume] = engine.volume_names
    assert copies.volume('img') == copies.volume('img') == volume
    assert len(engine.keepers) == 1
    copies.stop()
    assert engine.removed == [engine.keepers[0].name, volume]
    assert not (tmp_path / 'image-copies').exists()


def test_a_gone_keeper_is_replaced_before_the_next_sandbox(tmp_path):
    engine = Engine()
    copies = ImageCopies(engine, tmp_path, {})
    copies.start(['img'])
    first = engine.keepers[0]
    first.status = 'exited'
    volume = copies.volume('img')
    assert volume == engine.volume_names[0]
    assert len(engine.keepers) == 2 and engine.removed == [first.name]
    assert engine.keepers[1].options['mounts'][0]['Source'] == volume  # the same copy


def test_an_image_that_cannot_be_copied_runs_from_its_own_folders(tmp_path, caplog, fast):
    for engine in (Engine(answer='failed'), Engine(answer=None)):
        copies = ImageCopies(engine, tmp_path, {})
        assert copies.start(['img']) == {'img': False}
        assert copies.volume('img') is None
        # Nothing of the attempt stays on the engine.
        assert engine.removed == [engine.keepers[0].name, engine.volume_names[0]]
    assert 'no copy of img in memory' in caplog.text


def test_an_image_the_engine_does_not_have_has_no_copy(tmp_path, caplog):
    copies = ImageCopies(Engine(), tmp_path, {})
    assert copies.start(['missing']) == {'missing': False}
    assert copies.volume('missing') is None


def test_a_keeper_that_cannot_be_made_again_leaves_the_copy_to_the_sandboxes(tmp_path, caplog):
    """Sandboxes still mounting the copy keep it; one that finds it gone
    refuses to start (supervisor.c, main), and the next creation tries a
    keeper again."""
    engine = Engine()
    copies = ImageCopies(engine, tmp_path, {})
    copies.start(['img'])
    engine.unreachable = True
    assert copies.volume('img') == engine.volume_names[0]
    assert 'no new keeper' in caplog.text
    engine.unreachable = False
    assert copies.volume('img') == engine.volume_names[0]
    assert len(engine.keepers) == 2
