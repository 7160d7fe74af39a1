"""Small fakes shared by the unit tests: time, jitter, zips, the supervisor's
requests and answers."""
import dataclasses
import io
import stat
import zipfile

from sandbox.protocol import Kind, RunRequest, RunResponse

CASE_REQUEST = RunRequest(kind=Kind.CASE,
                          argv=('./main', ),
                          workdir='/work/run',
                          cpu_ms=1000,
                          wall_ms=4000,
                          data_kb=1024,
                          stack_kb=1024,
                          fsize=100,
                          out_send=10,
                          err_send=10)
_ENDED = RunResponse(exit_code=0,
                     signal=0,
                     wall_timeout=False,
                     cpu_timeout=False,
                     mem_exceeded=False,
                     cpu_us=10_000,
                     wall_us=12_000,
                     maxrss_kb=2048,
                     oom_kills=0,
                     out_size=2,
                     err_size=0,
                     stdout=b'3\n',
                     stderr=b'',
                     stderr_tail=b'',
                     artifact_status='none',
                     artifact=None,
                     landlock_abi=7)


def ended_run(**changes) -> RunResponse:
    """A supervisor's answer for a run that exited 0 within every limit,
    printing "3"; `changes` replace its fields."""
    return dataclasses.replace(_ENDED, **changes)


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
