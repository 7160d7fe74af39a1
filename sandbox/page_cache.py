"""The host's page cache of the sandbox image: all of it cached before any run.

Every container of an image shares the image's files on the host, and so
their pages in the host's page cache. A run that reads a page nobody had read
leaves it cached; a later run (a TLE's rerun, another job, in any container)
could tell by timing a read which pages are (64 bits, every time). With every
file a run may read already cached, a run's reads change nothing there. The
host has them read once at start, in a container of its own that is then
destroyed, so that they are charged to no sandbox whose own memory pressure
could evict them (supervisor.c, warm). What remains is eviction under the
whole host's memory pressure (README, known limits).
"""
import logging
import time
from typing import Callable, Iterable

from sandbox.container import SandboxBroken, SandboxContainer

log = logging.getLogger(__name__)

# A first read of the whole image from a cold disk.
WARM_TIMEOUT_SEC = 300.0


def warm(new_container: Callable[[str], SandboxContainer], images: Iterable[str]) -> None:
    """Every file a run may read in each of `images`, read once. A failure is
    logged (the host's health says the rest): the runner judges as before,
    the page cache less guarded."""
    for image in sorted(set(images)):
        started = time.monotonic()
        container = None
        try:
            container = new_container(image)
            container.start()
            files, read = container.warm(WARM_TIMEOUT_SEC)
        except SandboxBroken as exc:
            log.warning('could not read %s into the page cache: %s', image, exc)
            continue
        finally:
            if container is not None:
                container.destroy()
        log.info('the page cache holds %s: %d files, %d MiB read in %.1f s', image, files,
                 read >> 20,
                 time.monotonic() - started)
