"""Building: a job's compile (or its checker's or interactor's) run once in a
sandbox, or served by the compile cache, into a folder the job's cases use."""
import dataclasses
import logging
import os
import pathlib
import shutil
from typing import Callable, Dict, Optional, Tuple

from sandbox.build_turns import BuildTurns
from sandbox.compile_cache import CompileCache, Entry, cache_key
from sandbox.container import SandboxContainer
from sandbox.engine import RunEngine, Want, stager
from sandbox.faults import disk_fault
from sandbox.languages import Language
from sandbox.protocol import RunResponse
from sandbox.results import CompileResult, Status
from sandbox.run_requests import COMPILE_SECONDS, compile_request
from sandbox.settings import SandboxSettings
from sandbox.static_memory import writable_bytes
from sandbox.verdict import report_text

log = logging.getLogger(__name__)

# A compile that timed out having used this share of its CPU bound used it
# up: most likely its source's doing, where one the host stalled has used
# little of it.
USED_UP_SHARE = 0.9

# What a run of a language's image that failed twice means
# (RunEngine.retried): raises HostFault when the host is at fault (a known
# program of that language fails too), else says how the judge failed.
Diagnose = Callable[[Language, Exception], str]


@dataclasses.dataclass(frozen=True)
class Build:
    """A build's outcome. `folder` holds its files and its program (or its
    source, for Python), which its containers are staged from; `static_bytes`
    is what the program's static data alone holds in memory;
    `over_cpu_bound`: a CE for a compile that used up its CPU time (most
    likely the source's doing, not a stall of the host's), not cached."""
    result: CompileResult
    folder: pathlib.Path
    language: Language
    static_bytes: int = 0
    over_cpu_bound: bool = False

    @property
    def ok(self) -> bool:
        return self.result.ok

    def want(self, job_key: str, images: Dict[str, str]) -> Want:
        """A container for this build's runs, serving `job_key`."""
        return Want(job_key, images[self.language.toolchain.image_kind], stager(self.folder))


class Builder:

    def __init__(self, engine: RunEngine, settings: SandboxSettings, cache: Optional[CompileCache]):
        self._engine = engine
        self._settings = settings
        self._cache = cache
        self._turns = BuildTurns()
        # The toolchain image last seen compiling, by image kind: the cache
        # keys by the exact image.
        self._image_ids: Dict[str, str] = {}

    def know_image(self, image_kind: str, image_id: str) -> None:
        self._image_ids[image_kind] = image_id

    def build(self,
              job_key: str,
              language: Language,
              source_dir: pathlib.Path,
              folder: pathlib.Path,
              diagnose: Diagnose,
              source_name: Optional[str] = None,
              flags: Tuple[str, ...] = (),
              submission: bool = True) -> Build:
        """The files of `source_dir` built into `folder` (made anew) in a
        container serving `job_key`. `source_name`: the source's name in
        `source_dir`, when it is not the toolchain's own (a checker's);
        `flags`: the problem type's, after the toolchain's; `submission`:
        False for a problem's own program, whose failed compile is the
        judge's failure, not a verdict to share."""
        toolchain = language.toolchain
        try:
            shutil.rmtree(folder, ignore_errors=True)
            _copy_tree(source_dir, folder)
            if source_name is not None:
                (folder / source_name).rename(folder / toolchain.source_name)
        except OSError as exc:
            raise disk_fault(exc, 'the sandbox folder') or exc
        key, cached = self._served(language, folder, flags)
        if cached is not None:
            return cached
        if key is None:
            return self._compile(job_key, language, folder, flags, key, diagnose)
        # The first job to want this build compiles it; the others wait for
        # that compile and take its entry, or compile for themselves when it
        # left none (a JE, a stall of the host's). A submission's compile
        # that used up its CPU time leaves them its CE instead: the same
        # source would use it up again in each of them. Looked up again
        # first: a compile may have ended since the first look, here or in
        # another process sharing the cache.
        with self._turns.turn(key, lambda: self._engine.is_cancelled(job_key)) as turn:
            key, cached = self._served(language, folder, flags)
            if cached is not None:
                return cached
            if submission and turn.left is not None:
                log.debug('compile over its CPU bound: taken from the compile waited for')
                return Build(turn.left, folder, language, over_cpu_bound=True)
            build = self._compile(job_key, language, folder, flags, key, diagnose)
            if turn.held and submission and build.over_cpu_bound:
                turn.leave(build.result)
            return build

    def wake(self) -> None:
        """Jobs waiting for another's compile of their build look at their
        own job again (it may have been cancelled)."""
        self._turns.wake()

    def _served(self, language: Language, folder: pathlib.Path,
                flags: Tuple[str, ...]) -> Tuple[Optional[str], Optional[Build]]:
        """The build's cache key (None without a cache or an image id) and
        its build from the cache, if it has one."""
        try:
            key = self._key(language, folder, flags)
            cached = self._cache.get(key) if key is not None else None
            return key, (self._from_cache(cached, language, folder) if cached is not None else None)
        except OSError as exc:
            raise disk_fault(exc, 'the sandbox folder') or exc

    def _compile(self, job_key: str, language: Language, folder: pathlib.Path,
                 flags: Tuple[str, ...], key: Optional[str], diagnose: Diagnose) -> Build:
        """The build compiled in a sandbox, and filed in the cache under `key`."""
        toolchain = language.toolchain
        want = Want(job_key, self._settings.images[toolchain.image_kind], stager(folder))

        def once() -> Build:
            return self._engine.run(
                want, compile_request(toolchain, self._settings, flags), None,
                lambda run, container: self.compiled(
                    run, language, folder, container,
                    self._key_for(language, folder, flags, container, key)))

        return self._engine.retried(
            once, lambda exc: Build(
                CompileResult(Status.JE, f'sandbox failure: {diagnose(language, exc)}'), folder,
                language))

    def compiled(self, run: RunResponse, language: Language, folder: pathlib.Path,
                 container: SandboxContainer, key: Optional[str]) -> Build:
        """The build a compile run made in `container` (which keeps its
        program for the job's cases), filed in the cache under `key`."""
        toolchain = language.toolchain
        message = report_text(run.stderr or run.stdout, self._settings.report_limit)

        def outcome(status: Status,
                    text: str,
                    static_bytes: int = 0,
                    over_cpu_bound: bool = False) -> Build:
            return Build(CompileResult(status, text), folder, language, static_bytes,
                         over_cpu_bound)

        if run.cpu_timeout or run.wall_timeout:
            # The wall bound is the CPU bound, and is looked at first: by then
            # a compile that had a core all along has used nearly all of its
            # CPU time, one the host stalled much less.
            used_up = run.cpu_us >= USED_UP_SHARE * COMPILE_SECONDS * 1_000_000
            return outcome(Status.CE,
                           f'compilation took longer than {COMPILE_SECONDS} s',
                           over_cpu_bound=used_up)
        if run.oom_kills:
            return outcome(Status.CE, 'compilation ran out of memory (1 GiB)')
        if run.signal or run.exit_code:
            if key is not None and not run.signal and run.exit_code == 1:
                # The compiler's own verdict on the source (exit 1), the same
                # every time; a timeout, a kill or an internal error (another
                # exit) may be a limit's or the host's, and is not kept.
                self._cache.put(key, Status.CE, message, None, 0)
            return outcome(Status.CE, message)
        static_bytes = 0
        if toolchain.artifact:
            if run.artifact_status != 'ok':
                return outcome(Status.CE, f'no program was produced ({run.artifact_status})')
            target = folder / toolchain.artifact
            target.write_bytes(run.artifact)
            target.chmod(0o755)
            static_bytes = writable_bytes(run.artifact) or 0
            # The compile container serves cases too: give it the program.
            container.add_job_file(target, toolchain.artifact)
        _one_time(folder)
        if key is not None:
            self._cache.put(key, Status.AC, message, run.artifact if toolchain.artifact else None,
                            static_bytes)
        return outcome(Status.AC, message, static_bytes)

    def _key(self,
             language: Language,
             folder: pathlib.Path,
             flags: Tuple[str, ...],
             image_id: Optional[str] = None) -> Optional[str]:
        """The build's cache key under the image last seen compiling (or
        `image_id`); None without a cache or an image id."""
        toolchain = language.toolchain
        image_id = image_id or self._image_ids.get(toolchain.image_kind)
        if self._cache is None or image_id is None:
            return None
        return cache_key(language.name, repr(compile_request(toolchain, self._settings, flags)),
                         image_id, folder)

    def _key_for(self, language: Language, folder: pathlib.Path, flags: Tuple[str, ...],
                 container: SandboxContainer, key: Optional[str]) -> Optional[str]:
        """The key a compile just made is filed under: the image that made it
        (the tag may have moved since the lookup), which lookups use from now on."""
        kind = language.toolchain.image_kind
        image_id = container.image_id
        if key is None or image_id is None or image_id == self._image_ids.get(kind):
            return key
        self._image_ids[kind] = image_id
        return self._key(language, folder, flags, image_id)

    def _from_cache(self, cached: Entry, language: Language, folder: pathlib.Path) -> Build:
        toolchain = language.toolchain
        if cached.program is not None:
            target = folder / toolchain.artifact
            target.write_bytes(cached.program)
            target.chmod(0o755)
        _one_time(folder)
        log.debug('compile cache hit: %s', cached.status.value)
        return Build(CompileResult(cached.status, cached.message), folder, language,
                     cached.static_bytes if cached.program is not None else 0)


def _one_time(folder: pathlib.Path) -> None:
    """Every file of a build given the same times, now, once its program is
    there: a program compiled for its job is written a compile's time after
    its source (and the compile read the source), one from the compile cache
    at once, and a run reading its files' times would tell a rejudge, or a
    classmate's identical file, from a first judging. (Their birth times
    still tell it, to a run that asks for them; README.)"""
    for path in folder.rglob('*'):
        if path.is_file() and not path.is_symlink():
            os.utime(path)


def _copy_tree(src: pathlib.Path, dst: pathlib.Path) -> None:
    """Copy regular files and folders; links are never followed."""
    dst.mkdir(mode=0o755, parents=True)
    for entry in os.scandir(src):
        target = dst / entry.name
        if entry.is_dir(follow_symlinks=False):
            _copy_tree(pathlib.Path(entry.path), target)
        elif entry.is_file(follow_symlinks=False):
            shutil.copyfile(entry.path, target, follow_symlinks=False)
            target.chmod(0o644)
