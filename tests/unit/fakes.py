"""Small fakes shared by the unit tests: time, jitter, zips."""
import io
import stat
import zipfile


class FakeTime:
    """An injected clock and wait: each wait is recorded, and moves the clock
    on by what it asked when `advance` is set."""

    def __init__(self, now=0.0, advance=False):
        self.now = now
        self.advance = advance
        self.waits = []
        self.on_wait = None

    def clock(self):
        return self.now

    def wait(self, stop, seconds):
        self.waits.append(seconds)
        if self.advance:
            self.now += max(0.0, seconds)
        if self.on_wait:
            self.on_wait(len(self.waits))
        return stop.is_set()


class NoJitter:
    """An rng whose jitter is always zero."""

    def random(self):
        return 0.0


def make_zip(entries, compression=zipfile.ZIP_DEFLATED):
    """`entries`: (name or ZipInfo, bytes); a name ending in '/' is a directory."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, 'w', compression) as archive:
        for name, data in entries:
            archive.writestr(name, data)
    return buffer.getvalue()


def symlink(name, target):
    """A zip entry that is a symbolic link to `target`."""
    info = zipfile.ZipInfo(name)
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info, target
