"""The sandbox image's copy in memory, that every run's root is made of.

Looking up a name that does not exist leaves an entry in the kernel's
directory cache of its folder, and a later lookup of that name is faster. On
the image's own folders (an overlay on the host's disk, shared by every
container of the image) a run could so leave a message that a later run
reads back by timing lookups: a TLE's rerun, another job, on another runner
(measured: 4.5 to 7.7 us a first lookup, about 1.5 us a second). A tmpfs
keeps no entry for a name that does not exist, and keeps every entry that
does: folders on tmpfs leave nothing a run could time. So the host copies
the image once into a tmpfs volume, every sandbox of the image mounts it
read-only, and each run's root is made of it (supervisor.c, fresh_places).

A tmpfs volume's content is gone when no container mounts it: the copy is
held by a container of its own (the keeper), which makes it and then only
waits. A sandbox whose copy is gone (the keeper died, and no sandbox held
the volume) refuses to start; a new keeper is made before the next sandbox.
Without a copy (an image without a shell, an engine without tmpfs volumes)
runs are rooted in their container's own image, as before, and the README's
known limits say what that leaves open.
"""
import logging
import os
import pathlib
import select
import shutil
import threading
import uuid
from typing import Dict, Iterable, Optional

import docker
import docker.errors
import docker.types
import requests.exceptions

log = logging.getLogger(__name__)

# Where a sandbox mounts the copy, read-only; the supervisor is told.
MOUNT = '/image'
KEEPER_LABEL = 'oj-runner.image-copy'
# A first read of the whole image from a cold disk.
COPY_TIMEOUT_SEC = 300.0
ENGINE_ERRORS = (docker.errors.DockerException, requests.exceptions.RequestException, OSError)

# Run by the keeper, in the image itself (sh and cp, as any Debian-like image
# has): the image's top-level folders copied as they are (owners, modes,
# links), the container's own mounts as empty folders for the runs' own.
# The stamp says the copy is whole; the keeper then tells the host and waits.
COPY_SCRIPT = r'''
cd /image || exit 1
if [ ! -e stamp ]; then
    (
        set -e
        rm -rf root
        mkdir -m 0755 root
        for entry in /*; do
            case "$entry" in
            /proc | /sys | /dev | /box | /work | /tmp | /image | /keeper) ;;
            *) cp -a "$entry" root/ ;;
            esac
        done
        for place in proc sys dev box work tmp; do mkdir -m 0755 "root/$place"; done
        echo "$1" >stamp
    ) 2>/keeper/error
fi
if [ -e stamp ]; then echo ok >/keeper/ready; else echo failed >/keeper/ready; exit 1; fi
exec sleep infinity
'''


class CopyFailed(Exception):
    """The image could not be copied; its sandboxes run from the image itself."""


class ImageCopies:
    """One copy of each sandbox image, for this process's sandboxes."""

    def __init__(self, client: docker.DockerClient, home: pathlib.Path, labels: Dict[str, str]):
        self._client = client
        self._home = home / 'image-copies'
        self._labels = {**labels, KEEPER_LABEL: '1'}
        self._lock = threading.Lock()
        self._volumes: Dict[str, str] = {}  # by image, for images that have a copy
        self._keepers: Dict[str, object] = {}

    def start(self, images: Iterable[str]) -> Dict[str, bool]:
        """A copy of each image made; whether each has one."""
        with self._lock:
            for image in sorted(set(images)):
                try:
                    volume = self._new_volume(image)
                    self._volumes[image] = volume
                    self._keep(image)
                except (CopyFailed, *ENGINE_ERRORS) as exc:
                    log.warning(
                        'no copy of %s in memory, its runs see its own folders (a run could '
                        'leave a later run names to time, README "Known limits"): %s', image,
                        str(exc)[:300])
                    self._drop(image)
            return {image: image in self._volumes for image in set(images)}

    def volume(self, image: str) -> Optional[str]:
        """The volume a new sandbox of `image` mounts at MOUNT, its keeper
        alive; None when the image has no copy."""
        with self._lock:
            if image not in self._volumes:
                return None
            keeper = self._keepers.get(image)
            try:
                if keeper is not None:
                    keeper.reload()
                if keeper is None or keeper.status != 'running':
                    log.warning('the keeper of the copy of %s is gone: a new one', image)
                    self._keep(image)
            except (CopyFailed, *ENGINE_ERRORS) as exc:
                log.warning('no new keeper of the copy of %s: %s', image, str(exc)[:300])
                self._keepers.pop(image, None)
            return self._volumes[image]

    def stop(self) -> None:
        """Every keeper and copy removed (after the sandboxes: a volume in
        use is not removed, and the leftovers' sweep takes it later)."""
        with self._lock:
            for image in list(self._volumes):
                self._drop(image)
            shutil.rmtree(self._home, ignore_errors=True)

    def _new_volume(self, image: str) -> str:
        size = int((self._client.images.get(image).attrs or {}).get('Size') or 0)
        name = f'oj-image-copy-{uuid.uuid4().hex[:12]}'
        # A cap, not a reservation: twice the image leaves room for a base
        # whose layers hide files.
        self._client.volumes.create(name=name,
                                    driver='local',
                                    driver_opts={
                                        'type': 'tmpfs',
                                        'device': 'tmpfs',
                                        'o': f'size={2 * size + 64 * 1024 * 1024},noatime'
                                    },
                                    labels=self._labels)
        return name

    def _keep(self, image: str) -> None:
        """Lock held: a new keeper of the image's copy, which it made (or
        found made: another keeper's, still mounted by sandboxes)."""
        old = self._keepers.pop(image, None)
        if old is not None:
            _remove(old)
        folder = self._home / uuid.uuid4().hex[:12]
        folder.mkdir(parents=True)
        ready = folder / 'ready'
        os.mkfifo(ready, 0o600)
        keeper = None
        # Opened before the keeper starts, not blocking: the wait below ends
        # at its answer, or at the timeout if it never comes.
        fd = os.open(ready, os.O_RDONLY | os.O_NONBLOCK)
        try:
            keeper = self._client.containers.run(
                image,
                command=['/bin/sh', '-c', COPY_SCRIPT, 'sh', image],
                detach=True,
                name=f'oj-image-copy-{uuid.uuid4().hex[:12]}',
                user='0:0',
                network_disabled=True,
                read_only=True,
                cap_drop=['ALL'],
                # Root's, to copy every file as it is: its owner, mode and times.
                cap_add=['CHOWN', 'DAC_OVERRIDE', 'DAC_READ_SEARCH', 'FOWNER', 'FSETID'],
                security_opt=['no-new-privileges'],
                pids_limit=32,
                mounts=[
                    docker.types.Mount(MOUNT, self._volumes[image], type='volume', no_copy=True),
                    docker.types.Mount('/keeper', str(folder), type='bind'),
                ],
                log_config={'type': 'none'},
                labels=self._labels)
            answer = _read_answer(fd, COPY_TIMEOUT_SEC)
        except BaseException:
            if keeper is not None:
                _remove(keeper)
            raise
        finally:
            os.close(fd)
        if answer != 'ok':
            error = (folder / 'error').read_text(
                errors='replace')[:300] if (folder / 'error').exists() else ''
            _remove(keeper)
            raise CopyFailed(f'the copy failed ({answer or "no answer"}): {error}')
        self._keepers[image] = keeper
        log.info('%s is copied into memory (volume %s)', image, self._volumes[image])

    def _drop(self, image: str) -> None:
        """Lock held: the image's keeper and copy removed."""
        keeper = self._keepers.pop(image, None)
        if keeper is not None:
            _remove(keeper)
        volume = self._volumes.pop(image, None)
        if volume is not None:
            remove_volume(self._client, volume)


def _read_answer(fd: int, timeout_sec: float) -> str:
    ready, _, _ = select.select([fd], [], [], timeout_sec)
    if not ready:
        return ''
    return os.read(fd, 64).decode(errors='replace').strip()


def _remove(container) -> None:
    try:
        container.remove(force=True)
    except docker.errors.NotFound:
        pass
    except ENGINE_ERRORS as exc:
        log.warning('could not remove %s: %s', getattr(container, 'name', container),
                    str(exc)[:200])


def remove_volume(client: docker.DockerClient, name: str) -> None:
    try:
        client.volumes.get(name).remove(force=True)
    except docker.errors.NotFound:
        pass
    except ENGINE_ERRORS as exc:
        log.warning('could not remove volume %s: %s', name, str(exc)[:200])
