"""The sandbox layer on Docker: compile a job once, judge its cases, release it.

A facade over the parts (README, "Life of a job"): the pool of containers
(pool.py), the run engine that runs requests in them on the host's cores
(engine.py), building (building.py, with the compile cache), a job's state
(job_state.py) and the grader of its mode (graders/), the host's self-test
(self_test.py) and what sandboxes leave behind (leftovers.py).
"""
import dataclasses
import hashlib
import logging
import pathlib
import shutil
import threading
import time
from typing import Dict, Optional, Tuple

import docker
import docker.errors

from sandbox import page_cache
from sandbox.building import Builder
from sandbox.compile_cache import CompileCache
from sandbox.container import (ImageMismatch, SandboxBroken, SandboxContainer, check_image,
                               engine_uses_apparmor)
from sandbox.engine import RunEngine
from sandbox.faults import FaultKind, HostFault
from sandbox.graders import Context, Grader, grader_for
from sandbox.image_copy import ImageCopies
from sandbox.job import CaseSpec, Role, SandboxJob
from sandbox.job_state import JobState, problem_key
from sandbox.languages import Language
from sandbox.leftovers import INSTANCE_LABEL, ROOT_LABEL, Leftovers
from sandbox.pool import SandboxPool
from sandbox.results import CaseResult, CompileResult, Status
from sandbox.run_requests import COMPILE_MEMORY_KB
from sandbox.self_test import SelfTest
from sandbox.settings import ContainerLimits, MiB, SandboxSettings
from sandbox.trash import Trash

log = logging.getLogger(__name__)

__all__ = [
    'COMPILE_MEMORY_KB', 'INSTANCE_LABEL', 'ROOT_LABEL', 'DockerSandbox', 'ImageMismatch', 'MiB',
    'SandboxSettings', 'check_image'
]


class DockerSandbox:
    """The Sandbox interface (sandbox/sandbox.py) on Docker, and what the
    runner's process needs of it besides: start and stop, figures for the
    metrics, the host's checks and the engine's housekeeping."""

    def __init__(self,
                 settings: SandboxSettings,
                 client: Optional[docker.DockerClient] = None,
                 on_start_failure=lambda: None,
                 on_created=lambda cause: None):
        """`on_start_failure()` is told of every sandbox container that did not
        start, `on_created(cause)` of every one made (metrics: the pool's
        CREATION_CAUSES, and `self_test`)."""
        self._on_created = on_created
        self._settings = settings
        self._root = settings.root.resolve()
        self._client = client or docker.DockerClient(base_url=settings.docker_url
                                                     or 'unix:///var/run/docker.sock',
                                                     timeout=settings.engine_timeout_sec)
        self._leftovers = Leftovers(self._client, self._root)
        home = self._leftovers.home
        self._copies = ImageCopies(self._client, home, self._leftovers.labels)
        self._limits = ContainerLimits(memory_bytes=settings.container_memory_bytes,
                                       pids=settings.container_pids,
                                       work_tmpfs_bytes=settings.work_bytes,
                                       tmp_tmpfs_bytes=settings.tmp_bytes,
                                       cpus=settings.container_cpus)
        self._artifacts = home / 'artifacts'
        # As many folders waiting as two of every container's: a run's job
        # folder and its box.
        self._trash = Trash(home / 'trash', max_pending=2 * settings.max_containers)
        self._pool = SandboxPool(
            factory=self._new_container,
            max_alive=settings.max_containers,
            spares={image: settings.spares_per_image
                    for image in settings.images.values()},
            cores=settings.max_parallel_runs,
            max_jobs=settings.jobs_per_container,
            max_age_sec=settings.container_max_age_sec,
            on_start_failure=on_start_failure,
            on_created=on_created)
        self._engine = RunEngine(self._pool,
                                 threading.BoundedSemaphore(settings.max_parallel_runs),
                                 max_pairs=settings.max_containers // 2,
                                 core_count=settings.max_parallel_runs)
        # Shared by every runner on this root: a hidden name, which the
        # removal of dead instances' folders passes over.
        cache = (CompileCache(self._root / '.compile-cache', settings.compile_cache_bytes)
                 if settings.compile_cache_bytes > 0 else None)
        self._builder = Builder(self._engine, settings, cache)
        self._self_test = SelfTest(settings, self._engine, self._builder, self._self_test_container,
                                   home / 'self-test')
        self._context = Context(self._engine, settings, self._artifacts, self._diagnose)
        self._lock = threading.Lock()
        self._graders: Dict[str, Grader] = {}  # by job key, from compile to release

    def start(self) -> None:
        self._limits = dataclasses.replace(self._limits,
                                           apparmor_unconfined=engine_uses_apparmor(self._client))
        for kind, image in self._settings.images.items():
            try:
                # The compile cache keys by the exact toolchain image.
                self._builder.know_image(kind, self._client.images.get(image).id)
            except Exception:
                log.warning('no compile cache for %s: its image id is unknown', image)
        self._leftovers.claim_home()
        self._trash.start()
        self._leftovers.remove_dead_instances()
        self._artifacts.mkdir(parents=True, exist_ok=True)
        images = set(self._settings.images.values())
        copied = (self._copies.start(images) if self._settings.image_copy else dict.fromkeys(
            images, False))
        # A copy in memory is all cached (image_copy.py): only an image
        # without one needs the page cache's warm-up.
        page_cache.warm(self._warm_up_container, [i for i, done in copied.items() if not done])
        self._pool.start()

    def stop(self) -> None:
        self._self_test.stop()  # no self-test from now on: it would make containers
        self._pool.stop()
        self._trash.stop()

    def join(self, timeout: Optional[float] = None) -> bool:
        deadline = None if timeout is None else time.monotonic() + timeout
        pool_ended = self._pool.join(timeout)
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        return self._trash.join(left) and pool_ended

    def runs_in_progress(self) -> int:
        """Runs holding a core now; those waiting for one are not counted."""
        return self._engine.runs_in_progress()

    def containers_alive(self) -> int:
        """Sandbox containers alive now, spares included."""
        return self._pool.alive()

    @property
    def home(self) -> pathlib.Path:
        """This process's own folder below the root (and its containers' label)."""
        return self._leftovers.home

    def check_image(self, image: str) -> None:
        check_image(self._client, image)

    def remove_exited(self) -> int:
        """This process's containers that have ended (their removal failed,
        e.g. while the engine was unreachable); the pool's are all running."""
        return self._leftovers.remove_exited()

    def remove_leftovers(self) -> int:
        """Remove this process's containers, image copies and folder (at
        exit: runs cut short)."""
        count = self._leftovers.remove_own()
        self._copies.stop()
        return count

    def check_limits(self, memory_limit_kb: int) -> None:
        need = memory_limit_kb * 1024 + self._settings.headroom_bytes
        if need > self._settings.container_memory_bytes:
            raise HostFault(
                FaultKind.MEMORY,
                f'SANDBOX_MEMORY_MB={self._settings.container_memory_bytes // MiB} '
                f'cannot hold a memoryLimit of {memory_limit_kb} KB (a sandbox needs '
                f'{-(-need // MiB)} MiB for it): raise SANDBOX_MEMORY_MB')

    def compile(self, job: SandboxJob) -> CompileResult:
        build = self._builder.build(job.key,
                                    job.language,
                                    job.source_dir,
                                    self._folder(job.key),
                                    self._diagnose,
                                    flags=job.judging.compile_flags)
        state = JobState(job, build)
        program = job.problem_program
        if build.ok and program is not None:
            # A job of its own (sandboxes and a build apart from the
            # submission's), its source renamed the toolchain's `main.<ext>`;
            # the compile cache serves every later job of the problem while
            # its files stay the same.
            key = problem_key(job.key, program.role)
            state.problem_build = self._builder.build(key,
                                                      program.language,
                                                      program.source_dir,
                                                      self._folder(key),
                                                      self._diagnose,
                                                      source_name=program.role.source_name(
                                                          program.language),
                                                      flags=program.compile_flags,
                                                      submission=False)
            if not state.problem_build.ok:
                built = state.problem_build.result
                log.warning('the problem\'s %s could not be built (%s): %s', program.role.value,
                            built.status.value, built.message[:2000])
        with self._lock:
            self._graders[job.key] = grader_for(self._context, state)
        return build.result

    def run_case(self, job: SandboxJob, case: CaseSpec) -> CaseResult:
        with self._lock:
            grader = self._graders.get(job.key)
        if grader is None:
            return CaseResult.judge_error('the job was not compiled')
        return grader.grade(case)

    def cancel(self, job_key: str) -> None:
        try:
            self._engine.cancel(_keys_of(job_key))
        finally:
            # After the cancel is recorded (before its runs are killed, which
            # may fail): a waiter that wakes sees it.
            self._builder.wake()

    def release(self, job_key: str) -> None:
        with self._lock:
            self._graders.pop(job_key, None)
        for key in _keys_of(job_key):
            self._pool.release(key)
            shutil.rmtree(self._folder(key), ignore_errors=True)
        self._engine.forget(_keys_of(job_key))

    def self_test(self,
                  language: Language = Language.C,
                  since: Optional[float] = None) -> Optional[str]:
        return self._self_test.problem(language, since)

    def judge_known(self, language: Language) -> CaseResult:
        """A known program (a + b) compiled and judged in a fresh container
        of its own, outside the pool (the host's self-test)."""
        return self._self_test.judge_known(language)

    def _new_container(self, image: str) -> SandboxContainer:
        return SandboxContainer(self._client,
                                image,
                                self.home / 'boxes',
                                self._limits,
                                self._leftovers.labels,
                                self._copies.volume(image),
                                discard=self._trash.throw)

    def _self_test_container(self, image: str) -> SandboxContainer:
        self._on_created('self_test')
        return self._new_container(image)

    def _warm_up_container(self, image: str) -> SandboxContainer:
        self._on_created('warm_up')
        return SandboxContainer(self._client,
                                image,
                                self.home / 'boxes',
                                self._limits,
                                self._leftovers.labels,
                                discard=self._trash.throw)

    def _folder(self, job_key: str) -> pathlib.Path:
        """Where a build of the job lives on the host (its containers' files)."""
        return self._artifacts / hashlib.sha256(job_key.encode()).hexdigest()[:32]

    def _diagnose(self, language: Language, exc: Exception) -> str:
        """A run of `language` that failed in two sandboxes: the host's fault
        (HostFault) when sandboxes do not start, or when a known program of
        the language fails too; else the job's, and its message for the JE."""
        if isinstance(exc, SandboxBroken) and exc.fault is not None:
            raise HostFault(
                exc.fault, f'sandboxes cannot start (Docker engine, DOCKER_URL): '
                f'{str(exc)[:300]}')
        if not self._self_test.stopping:
            problem = self._self_test.problem(language, since=time.monotonic())
            if problem is not None:
                raise HostFault(FaultKind.ENGINE, f'sandboxes fail on this host: {problem}')
        return str(exc)


def _keys_of(job_key: str) -> Tuple[str, ...]:
    """The job's own key and its checker's and interactor's."""
    return (job_key, ) + tuple(problem_key(job_key, role) for role in Role)
