"""What sandboxes leave on the engine and the disk: this process's own folder
below the shared root and its containers, and those of runners that ended
without cleaning up (a crash, a kill). Several runners may share a root;
each container carries the root's and its owner's labels."""
import logging
import pathlib
import shutil
from typing import Callable, Dict, Optional

import docker
import docker.errors

from sandbox.container import LABEL
from sandbox.image_copy import ENGINE_ERRORS, KEEPER_LABEL, remove_volume
from sandbox.instance_folder import InstanceFolder, held

log = logging.getLogger(__name__)

ROOT_LABEL = 'oj-runner.root'
# Each process has a folder of its own below the root (several runners may
# share a DATA_DIR), alive while the process holds the lock on that folder.
INSTANCE_LABEL = 'oj-runner.instance'


class Leftovers:

    def __init__(self, client: docker.DockerClient, root: pathlib.Path):
        self._client = client
        self._root = root
        self._instance = InstanceFolder(root)

    @property
    def home(self) -> pathlib.Path:
        """This process's own folder below the root."""
        return self._instance.path

    @property
    def labels(self) -> Dict[str, str]:
        """What this process's containers are labelled with."""
        return {ROOT_LABEL: str(self._root), INSTANCE_LABEL: str(self.home)}

    def claim_home(self) -> None:
        self._instance.claim()
        if not self._instance.locks_work:
            log.warning(
                'file locks do not work under %s: sandboxes left by a crashed runner '
                'there are not removed (remove them with: docker rm -f $(docker ps -aq '
                '--filter label=%s=%s))', self._root, ROOT_LABEL, self._root)

    def remove_dead_instances(self) -> None:
        """Containers and folders of processes gone without cleaning up;
        those of live runners sharing the root are left alone. Each container
        is judged on its own, at removal time: a container only exists once
        its owner's folder is locked, so a runner starting right now is never
        taken for dead."""
        if not self._instance.locks_work:
            return
        dead = [
            container for kind in (LABEL, KEEPER_LABEL)
            for container in self._list({ROOT_LABEL: str(self._root)}, kind)
            if self._owner_is_dead(container.labels.get(INSTANCE_LABEL))
        ]
        for container in dead:
            _remove(container)
        self._remove_volumes(self._owner_is_dead)
        folders = self._instance.remove_dead_siblings()
        if dead or folders:
            log.info(
                'removed %d sandbox container(s) and %d folder(s) of runners that ended '
                'without cleaning up', len(dead), len(folders))

    def remove_exited(self) -> int:
        """This process's containers that have ended (their removal failed,
        e.g. while the engine was unreachable); the pool's are all running."""
        found = [
            c for c in self._list({INSTANCE_LABEL: str(self.home)})
            if c.status in ('exited', 'dead')
        ]
        for container in found:
            _remove(container)
        return len(found)

    def remove_own(self) -> int:
        """This process's containers and folder (at exit: runs cut short)."""
        found = self._list({INSTANCE_LABEL: str(self.home)})
        for container in found + self._list({INSTANCE_LABEL: str(self.home)}, KEEPER_LABEL):
            _remove(container)
        self._remove_volumes(lambda owner: owner == str(self.home))
        shutil.rmtree(self.home, ignore_errors=True)
        self._instance.release()
        return len(found)

    def _owner_is_dead(self, owner: Optional[str]) -> bool:
        return owner != str(self.home) and (owner is None or not held(pathlib.Path(owner)))

    def _list(self, labels: Dict[str, str], kind: str = LABEL):
        """Sandboxes (`kind` LABEL) or keepers of image copies (KEEPER_LABEL)."""
        return self._client.containers.list(
            all=True,
            ignore_removed=True,
            filters={'label': [kind] + [f'{k}={v}' for k, v in labels.items()]})

    def _remove_volumes(self, owned: Callable[[Optional[str]], bool]) -> None:
        """The image copies (image_copy.py) below this root whose owner is `owned`."""
        try:
            volumes = self._client.volumes.list(
                filters={'label': [KEEPER_LABEL, f'{ROOT_LABEL}={self._root}']})
        except ENGINE_ERRORS as exc:
            log.warning('could not list image copies: %s', str(exc)[:200])
            return
        for volume in volumes:
            if owned((volume.attrs.get('Labels') or {}).get(INSTANCE_LABEL)):
                remove_volume(self._client, volume.name)


def _remove(container) -> None:
    try:
        container.remove(force=True)
    except docker.errors.NotFound:
        pass
    except docker.errors.APIError as exc:
        # e.g. 409, a removal already in progress: it goes anyway.
        log.warning('could not remove sandbox container %s: %s', container.name, exc)
