"""A sandbox image is checked before use: its supervisor protocol, no volumes."""
import types

import pytest

from sandbox.docker_sandbox import ImageMismatch, check_image
from sandbox.protocol import PROTOCOL_VERSION


def client_with(labels, volumes=None):
    image = types.SimpleNamespace(labels=labels, attrs={'Config': {'Volumes': volumes}})
    return types.SimpleNamespace(images=types.SimpleNamespace(get=lambda name: image))


def test_an_image_of_this_protocol_without_volumes_passes():
    check_image(client_with({'oj-sandbox.protocol': str(PROTOCOL_VERSION)}), 'img')


def test_an_image_of_another_protocol_is_refused():
    with pytest.raises(ImageMismatch, match='rebuild'):
        check_image(client_with({'oj-sandbox.protocol': str(PROTOCOL_VERSION - 1)}), 'img')


def test_an_image_with_a_volume_is_refused():
    """A volume is writable and outside what the supervisor mounts anew for each run."""
    with pytest.raises(ImageMismatch, match='volumes'):
        check_image(client_with({'oj-sandbox.protocol': str(PROTOCOL_VERSION)}, {'/data': {}}),
                    'img')
