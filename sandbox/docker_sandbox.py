"""The sandbox layer on Docker: compile a job once, judge its cases, release it."""
import contextlib
import dataclasses
import hashlib
import logging
import os
import pathlib
import queue
import shutil
import signal
import threading
import time
import uuid
from typing import Callable, Dict, Iterator, List, Optional, Sequence, Tuple, TypeVar

import docker
import docker.errors

from sandbox.checking import (ANSWER, CHECKER_OUTPUT_BYTES, INPUT, OUTPUT, CheckerLimits,
                              checked_result, checker_request, checker_verdict, stops_judging)
from sandbox.compile_cache import CompileCache, Entry, cache_key
from sandbox.container import (BOX, FIFO_FOLDER, LABEL, PROTOCOL_LABEL, SandboxBroken,
                               SandboxContainer, engine_uses_apparmor)
from sandbox.instance_folder import InstanceFolder, held
from sandbox.interaction import (FIFOS, interaction_result, interactive_limits, interactor_request,
                                 interactor_verdict, program_request)
from sandbox.job import CaseSpec, Role, SandboxJob
from sandbox.languages import Language, Toolchain
from sandbox.pool import SandboxPool
from sandbox.protocol import (PROTOCOL_VERSION, UNLIMITED, Kind, RunRequest, RunResponse,
                              SupervisorFailure)
from sandbox.results import CaseResult, CompileResult, Status
from sandbox.sandbox import FaultKind, HostFault, Sandbox, disk_fault
from sandbox.settings import ContainerLimits, MiB, SandboxSettings
from sandbox.static_memory import writable_bytes
from sandbox.verdict import Limits, case_result, report_text, worth_another_run

log = logging.getLogger(__name__)
T = TypeVar('T')

COMPILE_SECONDS = 20
COMPILE_MEMORY_KB = 1024 * 1024
MAX_ARTIFACT_BYTES = 64 * MiB
# The end of stderr, where a runtime reports that an allocation failed.
STDERR_TAIL_BYTES = 4096
ROOT_LABEL = 'oj-runner.root'
# Each process has a folder of its own below the root (several runners may
# share a DATA_DIR), alive while the process holds the lock on that folder.
INSTANCE_LABEL = 'oj-runner.instance'

_ENV = (
    ('PATH', '/usr/local/bin:/usr/bin:/bin'),
    ('HOME', '/tmp'),
    ('LANG', 'C.UTF-8'),
    ('PYTHONDONTWRITEBYTECODE', '1'),
    # Nothing in /tmp (HOME) is ever Python's to load: /tmp is emptied after
    # every run, and this holds even if it were not.
    ('PYTHONNOUSERSITE', '1'),
)
COMPILE_DIR = '/work/compile'
CASE_DIR = '/work/run'  # PID 1 makes it (read-only for the run) and keeps it between cases
# Descriptors a case may hold: each pipe's read end keeps at most 64 KiB out
# of its resident memory (its data stays readable once the write end is
# closed), so pipes hold at most 8 MiB.
CASE_DESCRIPTORS = 128
# The compiler's temporary files go beside its output, not into the small /tmp
# that cases share.
_COMPILE_ENV = _ENV + (('TMPDIR', COMPILE_DIR), )

# TLE reruns a job may take (see run_case).
MAX_RERUNS_PER_JOB = 5
# A self-test result serves every failure within this long (several workers
# failing at once run one test).
SELF_TEST_REUSE_SEC = 5.0
KNOWN_PROGRAMS = {
    Language.C: b'#include <stdio.h>\nint main(void){int a,b;scanf("%d %d",&a,&b);'
    b'printf("%d\\n",a+b);return 0;}\n',
    Language.CPP: b'#include <iostream>\nint main(){int a,b;std::cin>>a>>b;'
    b'std::cout<<a+b<<std::endl;}\n',
    Language.PYTHON: b'a, b = map(int, input().split())\nprint(a + b)\n',
}
KNOWN_INPUT, KNOWN_ANSWER = b'40 2\n', b'42\n'


class ImageMismatch(Exception):
    """A sandbox image was built for another supervisor protocol."""


class DockerSandbox(Sandbox):

    def __init__(self,
                 settings: SandboxSettings,
                 client: Optional[docker.DockerClient] = None,
                 on_start_failure: Callable[[], None] = lambda: None):
        """`on_start_failure()` is told of every sandbox container that did not
        start (a metric)."""
        self._settings = settings
        self._root = settings.root.resolve()
        self._instance = InstanceFolder(self._root)
        self._home = self._instance.path
        self._client = client or docker.DockerClient(base_url=settings.docker_url
                                                     or 'unix:///var/run/docker.sock',
                                                     timeout=settings.engine_timeout_sec)
        self._limits = ContainerLimits(memory_bytes=settings.container_memory_bytes,
                                       pids=settings.container_pids,
                                       work_tmpfs_bytes=settings.work_bytes,
                                       tmp_tmpfs_bytes=settings.tmp_bytes,
                                       cpus=settings.container_cpus)
        self._labels = labels = {ROOT_LABEL: str(self._root), INSTANCE_LABEL: str(self._home)}
        boxes = self._home / 'boxes'
        self._artifacts = self._home / 'artifacts'
        # Shared by every runner on this root: a hidden name, which the
        # removal of dead instances' folders passes over.
        self._cache = (CompileCache(self._root / '.compile-cache', settings.compile_cache_bytes)
                       if settings.compile_cache_bytes > 0 else None)
        self._image_ids: Dict[str, str] = {}
        self._cpu_slots = threading.BoundedSemaphore(settings.max_parallel_runs)
        self._lock = threading.Lock()
        self._running = 0  # runs holding a core (not those waiting for one)
        self._reruns: Dict[str, int] = {}  # TLE reruns taken, by job key
        # The build of the job's checker or interactor, by job key.
        self._judges: Dict[str, CompileResult] = {}
        self._judge_stopped: Dict[str, str] = {}  # why, by job key (stops_judging)
        # An interactive case holds two containers at once. At most half the
        # pool's containers are in pairs: then pairs holding one container
        # while they wait for their second never hold them all, and every
        # wait ends (the pool serves at most `max_containers` runs at once).
        self._pairs = threading.BoundedSemaphore(max(1, settings.max_containers // 2))
        self._static_bytes: Dict[pathlib.Path, int] = {}
        self._warned_landlock = False
        self._stopping = threading.Event()
        self._self_test_lock = threading.Lock()
        self._self_tests: Dict[Language, Tuple[float, Optional[str]]] = {}
        self._pool = SandboxPool(
            factory=lambda image: SandboxContainer(self._client, image, boxes, self._limits, labels
                                                   ),
            max_alive=settings.max_containers,
            spares={image: settings.spares_per_image
                    for image in settings.images.values()},
            cores=settings.max_parallel_runs,
            max_jobs=settings.jobs_per_container,
            max_age_sec=settings.container_max_age_sec,
            on_start_failure=on_start_failure)

    def start(self) -> None:
        self._limits = dataclasses.replace(self._limits,
                                           apparmor_unconfined=engine_uses_apparmor(self._client))
        for kind, image in self._settings.images.items():
            try:
                # The compile cache keys by the exact toolchain image.
                self._image_ids[kind] = self._client.images.get(image).id
            except Exception:
                log.warning('no compile cache for %s: its image id is unknown', image)
        self._claim_home()
        self._remove_dead_instances()
        self._artifacts.mkdir(parents=True, exist_ok=True)
        self._pool.start()

    def stop(self) -> None:
        self._stopping.set()  # no self-test from now on: it would make containers
        self._pool.stop()

    def join(self, timeout: Optional[float] = None) -> bool:
        return self._pool.join(timeout)

    def runs_in_progress(self) -> int:
        """Runs holding a core now; those waiting for one are not counted."""
        with self._lock:
            return self._running

    def containers_alive(self) -> int:
        """Sandbox containers alive now, spares included."""
        return self._pool.alive()

    @property
    def home(self) -> pathlib.Path:
        """This process's own folder below the root (and its containers' label)."""
        return self._home

    def check_image(self, image: str) -> None:
        check_image(self._client, image)

    def remove_exited(self) -> int:
        """This process's containers that have ended (their removal failed,
        e.g. while the engine was unreachable); the pool's are all running."""
        found = [
            c for c in self._list({INSTANCE_LABEL: str(self._home)})
            if c.status in ('exited', 'dead')
        ]
        for container in found:
            _remove(container)
        return len(found)

    def remove_leftovers(self) -> int:
        """Remove this process's containers and folder (at exit: runs cut short)."""
        removed = self._remove_containers({INSTANCE_LABEL: str(self._home)})
        shutil.rmtree(self._home, ignore_errors=True)
        self._instance.release()
        return removed

    def _claim_home(self) -> None:
        self._instance.claim()
        if not self._instance.locks_work:
            log.warning(
                'file locks do not work under %s: sandboxes left by a crashed runner '
                'there are not removed (remove them with: docker rm -f $(docker ps -aq '
                '--filter label=%s=%s))', self._root, ROOT_LABEL, self._root)

    def _remove_dead_instances(self) -> None:
        """Containers and folders of processes gone without cleaning up (a
        crash, a kill); those of live runners sharing the root are left alone.
        Each container is judged on its own, at removal time: a container only
        exists once its owner's folder is locked, so a runner starting right
        now is never taken for dead."""
        if not self._instance.locks_work:
            return
        dead = [
            container for container in self._list({ROOT_LABEL: str(self._root)})
            if self._owner_is_dead(container.labels.get(INSTANCE_LABEL))
        ]
        for container in dead:
            _remove(container)
        folders = self._instance.remove_dead_siblings()
        if dead or folders:
            log.info(
                'removed %d sandbox container(s) and %d folder(s) of runners that ended '
                'without cleaning up', len(dead), len(folders))

    def _owner_is_dead(self, owner: Optional[str]) -> bool:
        return owner != str(self._home) and (owner is None or not held(pathlib.Path(owner)))

    def _list(self, labels: Dict[str, str]):
        return self._client.containers.list(
            all=True,
            ignore_removed=True,
            filters={'label': [LABEL] + [f'{k}={v}' for k, v in labels.items()]})

    def _remove_containers(self, labels: Dict[str, str]) -> int:
        found = self._list(labels)
        for container in found:
            _remove(container)
        return len(found)

    def check_limits(self, memory_limit_kb: int) -> None:
        need = memory_limit_kb * 1024 + self._settings.headroom_bytes
        if need > self._settings.container_memory_bytes:
            raise HostFault(
                FaultKind.MEMORY,
                f'SANDBOX_MEMORY_MB={self._settings.container_memory_bytes // MiB} '
                f'cannot hold a memoryLimit of {memory_limit_kb} KB (a sandbox needs '
                f'{-(-need // MiB)} MiB for it): raise SANDBOX_MEMORY_MB')

    def compile(self, job: SandboxJob) -> CompileResult:
        compiled = self._build(job)
        if compiled.ok and job.judge is not None:
            judge = self._build_judge(job)
            if not judge.ok:
                log.warning('the problem\'s %s could not be built (%s): %s', job.judge.role.value,
                            judge.status.value, judge.message[:2000])
            with self._lock:
                self._judges[job.key] = judge
        return compiled

    def _build_judge(self, job: SandboxJob) -> CompileResult:
        """The problem's checker or interactor, built as a job of its own
        from its files (its source renamed the toolchain's `main.<ext>`); the
        compile cache serves every later job of the problem while its files
        stay the same."""
        return self._build(_judge_job(job),
                           source_name=job.judge.role.source_name(job.judge.language))

    def _build(self, job: SandboxJob, source_name: Optional[str] = None) -> CompileResult:
        """`source_name`: the source's name in `job.source_dir`, when it is
        not the toolchain's own."""
        toolchain = job.language.toolchain
        staging = self._staging(job.key)
        try:
            shutil.rmtree(staging, ignore_errors=True)
            _copy_tree(job.source_dir, staging)
            if source_name is not None:
                (staging / source_name).rename(staging / toolchain.source_name)
            key = self._compile_key(job, toolchain, staging)
            cached = self._cache.get(key) if key is not None else None
            if cached is not None:
                return self._from_cache(cached, toolchain, staging)
        except OSError as exc:
            raise disk_fault(exc, 'the sandbox folder') or exc
        return self._in_sandbox(
            job, toolchain, staging, _compile_request(toolchain, self._settings), None,
            lambda run, container: self._compiled(
                run, toolchain, staging, container,
                self._key_for(job, toolchain, staging, container, key)),
            lambda why: CompileResult(Status.JE, why))

    def _compile_key(self,
                     job: SandboxJob,
                     toolchain: Toolchain,
                     staging: pathlib.Path,
                     image_id: Optional[str] = None) -> Optional[str]:
        """The build's cache key under the image last seen compiling (or
        `image_id`); None without a cache or an image id."""
        image_id = image_id or self._image_ids.get(toolchain.image_kind)
        if self._cache is None or image_id is None:
            return None
        return cache_key(job.language.name, repr(_compile_request(toolchain, self._settings)),
                         image_id, staging)

    def _key_for(self, job: SandboxJob, toolchain: Toolchain, staging: pathlib.Path,
                 container: SandboxContainer, key: Optional[str]) -> Optional[str]:
        """The key a compile just made is filed under: the image that made it
        (the tag may have moved since the lookup), which lookups use from now on."""
        image_id = container.image_id
        if key is None or image_id is None or image_id == self._image_ids.get(toolchain.image_kind):
            return key
        self._image_ids[toolchain.image_kind] = image_id
        return self._compile_key(job, toolchain, staging, image_id)

    def _from_cache(self, cached: Entry, toolchain: Toolchain,
                    staging: pathlib.Path) -> CompileResult:
        if cached.program is not None:
            target = staging / toolchain.artifact
            target.write_bytes(cached.program)
            target.chmod(0o755)
            with self._lock:
                self._static_bytes[staging] = cached.static_bytes
        log.debug('compile cache hit: %s', cached.status.value)
        return CompileResult(cached.status, cached.message)

    def _compiled(self, run: RunResponse, toolchain: Toolchain, staging: pathlib.Path,
                  container: SandboxContainer, key: Optional[str]) -> CompileResult:
        message = report_text(run.stderr or run.stdout, self._settings.report_limit)
        if run.cpu_timeout or run.wall_timeout:
            return CompileResult(Status.CE, f'compilation took longer than {COMPILE_SECONDS} s')
        if run.oom_kills:
            return CompileResult(Status.CE, 'compilation ran out of memory (1 GiB)')
        if run.signal or run.exit_code:
            if key is not None and not run.signal and run.exit_code == 1:
                # The compiler's own verdict on the source (exit 1), the same
                # every time; a timeout, a kill or an internal error (another
                # exit) may be a limit's or the host's, and is not kept.
                self._cache.put(key, Status.CE, message, None, 0)
            return CompileResult(Status.CE, message)
        if toolchain.artifact:
            if run.artifact_status != 'ok':
                return CompileResult(Status.CE, f'no program was produced ({run.artifact_status})')
            target = staging / toolchain.artifact
            target.write_bytes(run.artifact)
            target.chmod(0o755)
            static_bytes = writable_bytes(run.artifact) or 0
            with self._lock:
                self._static_bytes[staging] = static_bytes
            # The compile container serves cases too: give it the program.
            container.add_job_file(target, toolchain.artifact)
        if key is not None:
            self._cache.put(key, Status.AC, message, run.artifact if toolchain.artifact else None,
                            static_bytes if toolchain.artifact else 0)
        return CompileResult(Status.AC, message)

    def run_case(self, job: SandboxJob, case: CaseSpec) -> CaseResult:
        if job.judge is None:
            return self._judge(job, case)[0]
        role = job.judge.role.value
        with self._lock:
            judge = self._judges.get(job.key)
        if judge is None or not judge.ok:
            # The compiler's words quote the judge's source, which is the
            # problem's: they go to the log, not into the student's report.
            return CaseResult.judge_error(f'the problem\'s {role} could not be built '
                                          '(the runner\'s log says why)')
        if job.judge.role is Role.INTERACTOR:
            return self._interact(job, case)
        result, run = self._judge(job, case)
        if run is None or result.status not in (Status.AC, Status.WA):
            return result  # the program's own failure wins over any checker
        return self._check(job, case, result, run)

    def _judge_limits(self, role: Role) -> CheckerLimits:
        """A checker's or interactor's own limits (settings), within what a
        sandbox holds beside its own needs."""
        room_kb = (self._settings.container_memory_bytes - self._settings.headroom_bytes) // 1024
        time_ms, memory_kb = ((self._settings.checker_time_ms,
                               self._settings.checker_memory_kb) if role is Role.CHECKER else
                              (self._settings.interactor_time_ms,
                               self._settings.interactor_memory_kb))
        return CheckerLimits(time_ms=time_ms,
                             memory_kb=min(memory_kb, room_kb),
                             output_bytes=self._settings.output_limit + CHECKER_OUTPUT_BYTES)

    def _stopped_judge(self, job: SandboxJob) -> Optional[CaseResult]:
        """JE for a checker or interactor that ran out of its limits on an
        earlier case of the job (stops_judging), else None."""
        with self._lock:
            stopped = self._judge_stopped.get(job.key)
        if stopped is None:
            return None
        return CaseResult.judge_error(
            f'{job.judge.role.value}: {stopped} (on an earlier case; not run again)')

    def _note_stop(self, job: SandboxJob, status: Status, message: str) -> None:
        if status is Status.JE and stops_judging(message):
            # It would cost its limits again on every later case of the job.
            with self._lock:
                self._judge_stopped.setdefault(job.key, message)

    def _check(self, job: SandboxJob, case: CaseSpec, program: CaseResult,
               run: RunResponse) -> CaseResult:
        """The checker's judgement of the program's output, in a sandbox of
        its own: it reads the input, the output and the answer, which never
        enter the submission's sandbox."""
        checker_job = _judge_job(job)
        toolchain = checker_job.language.toolchain
        stopped = self._stopped_judge(job)
        if stopped is not None:
            return stopped
        limits = self._judge_limits(Role.CHECKER)
        output = self._artifacts / f'output-{uuid.uuid4().hex}'
        try:
            output.write_bytes(run.stdout)  # bounded by the output limit
            output.chmod(0o444)
            verdict = self._in_sandbox(checker_job,
                                       toolchain,
                                       self._staging(checker_job.key),
                                       checker_request(toolchain, limits, CASE_DIR, _ENV),
                                       None,
                                       lambda checked, _: checker_verdict(checked, limits),
                                       lambda why: (Status.JE, why),
                                       files={
                                           INPUT: case.input_path,
                                           OUTPUT: output,
                                           ANSWER: case.answer_path
                                       })
        except OSError as exc:
            raise disk_fault(exc, 'the sandbox folder') or exc
        finally:
            output.unlink(missing_ok=True)
        status, message = verdict
        self._note_stop(job, status, message)
        return checked_result(program, status, message)

    def _interact(self, job: SandboxJob, case: CaseSpec) -> CaseResult:
        """The program and the interactor at once, each in a sandbox of its
        own (only the interactor's sees the answer), talking through two
        FIFOs; the verdict as sandbox/interaction.py decides it."""
        decided = self._stopped_judge(job) or self._without_a_run(job, case)
        if decided is not None:
            return decided
        if self._settings.max_containers < 2:
            return CaseResult.judge_error('an interactive case needs two sandboxes at once '
                                          '(MAX_CONTAINER_NUMBER is 1)')
        toolchain = job.language.toolchain
        limits, judge_limits = interactive_limits(
            Limits(time_ms=case.time_limit_ms,
                   memory_kb=case.memory_limit_kb,
                   output_bytes=self._settings.output_limit), self._judge_limits(Role.INTERACTOR))
        interactor = _judge_job(job)
        fifo_folder = f'{BOX}/{FIFO_FOLDER}'
        requests = (program_request(_case_request(toolchain, limits, self._settings), limits,
                                    fifo_folder),
                    interactor_request(interactor.language.toolchain, judge_limits, CASE_DIR, _ENV,
                                       fifo_folder))
        files = {INPUT: case.input_path, ANSWER: case.answer_path}

        def conversation() -> CaseResult:
            program, interactor_run = self._pair(job, interactor, requests, files)
            judged = interactor_verdict(interactor_run, judge_limits)
            self._note_stop(job, *judged)
            return interaction_result(program, limits, toolchain, judged,
                                      self._settings.report_limit)

        return self._retried(job, conversation, CaseResult.judge_error)

    def _pair(self, job: SandboxJob, interactor: SandboxJob, requests: Tuple[RunRequest,
                                                                             RunRequest],
              files: Dict[str, pathlib.Path]) -> Tuple[RunResponse, RunResponse]:
        """The program's run and the interactor's, at once, on one core: the
        two take turns (each waits while the other thinks), and a pair that
        took two cores one after the other could wait for the second while
        another pair holds it."""
        wants = [(j, self._settings.images[j.language.toolchain.image_kind], self._staging(j.key))
                 for j in (job, interactor)]
        with self._pairs:
            containers = self._containers_and_core(wants)
            folder = self._artifacts / f'fifos-{uuid.uuid4().hex}'
            fifos = {name: folder / name for name in FIFOS}
            try:
                with self._judging():
                    folder.mkdir()
                    for path in fifos.values():
                        os.mkfifo(path)
                        os.chmod(path, 0o666)  # the supervisors' uid opens them
                    runs = self._both(containers, requests, (None, files), fifos)
            finally:
                for container in containers:
                    self._pool.give_back(container, broken=container.broken)
                shutil.rmtree(folder, ignore_errors=True)
        for request, run, container in zip(requests, runs, containers):
            self._ran(request, run, container)
        return runs[0], runs[1]

    def _both(self, containers: Sequence[SandboxContainer], requests: Sequence[RunRequest],
              files: Sequence[Optional[Dict[str, pathlib.Path]]],
              fifos: Dict[str, pathlib.Path]) -> List[RunResponse]:
        """Each request in its container, at once, each on a daemon thread of
        its own (an exit must not wait for a run, as for the dispatcher's
        workers). When one fails, the other is aborted: its supervisor might
        otherwise wait out its wall bound for a peer that never opens the
        FIFOs. Every run is bounded (its connection's timeout), so every
        thread reports."""
        ended: 'queue.Queue[Tuple[int, object]]' = queue.Queue()

        def side(index: int, container: SandboxContainer, request: RunRequest,
                 run_files: Optional[Dict[str, pathlib.Path]]) -> None:
            try:
                ended.put((index, container.run(request, None, run_files, fifos)))
            except BaseException as exc:  # reported to the caller, raised there
                ended.put((index, exc))

        for index, (container, request, run_files) in enumerate(zip(containers, requests, files)):
            threading.Thread(target=side,
                             args=(index, container, request, run_files),
                             name=f'interaction-{index}',
                             daemon=True).start()
        runs: List[Optional[RunResponse]] = [None] * len(containers)
        failure: Optional[BaseException] = None
        for _ in containers:
            index, outcome = ended.get()
            if isinstance(outcome, BaseException):
                if failure is None:
                    failure = outcome
                    for other, container in enumerate(containers):
                        if runs[other] is None and other != index:
                            container.abort()
            else:
                runs[index] = outcome
        if failure is not None:
            raise failure
        return runs

    def _judge(self, job: SandboxJob, case: CaseSpec) -> Tuple[CaseResult, Optional[RunResponse]]:
        """The case judged on the program's run alone, and that run (None
        when there was none)."""
        toolchain = job.language.toolchain
        staging = self._staging(job.key)
        decided = self._without_a_run(job, case)
        if decided is not None:
            return decided, None
        try:
            expected = case.answer_path.read_bytes()
        except OSError as exc:
            fault = disk_fault(exc, 'the job folder')
            if fault is not None:
                raise fault from None
            return CaseResult.judge_error(f'cannot read the expected output: {exc.strerror}'), None
        limits = Limits(time_ms=case.time_limit_ms,
                        memory_kb=case.memory_limit_kb,
                        output_bytes=self._settings.output_limit,
                        tle_margin=self._settings.tle_margin)
        request = _case_request(toolchain, limits, self._settings)
        runs: List[RunResponse] = []

        def judged(run: RunResponse, _) -> CaseResult:
            runs.append(run)
            return case_result(run, limits, toolchain, expected, self._settings.report_limit)

        first = self._in_sandbox(job, toolchain, staging, request, case.input_path, judged,
                                 CaseResult.judge_error)
        if not runs or not worth_another_run(runs[-1], limits) or not self._take_rerun(job):
            return first, runs[-1] if runs else None
        # Once more, and the lower time counts: a loaded host only ever adds.
        log.info('TLE within %.1fx the limit (%d ms of %d ms): running the case once more',
                 limits.tle_margin, runs[-1].cpu_us // 1000, limits.time_ms)
        try:
            again = self._in_sandbox(job, toolchain, staging, request, case.input_path, judged,
                                     CaseResult.judge_error)
        except HostFault:
            return first, runs[0]  # the first run was judged; the host's fault comes again
        if len(runs) < 2 or again.status is Status.JE:
            return first, runs[0]
        before, after = runs[-2], runs[-1]
        if (after.stdout, after.exit_code, after.signal) != (before.stdout, before.exit_code,
                                                             before.signal):
            # Not the same run slower or faster: a program that behaves
            # differently when run again does not get to choose between them.
            return first, before
        return (first, before) if before.cpu_us <= after.cpu_us else (again, after)

    def _without_a_run(self, job: SandboxJob, case: CaseSpec) -> Optional[CaseResult]:
        """A case decided before any run: JE for a job that was not compiled,
        MLE for a program whose static data alone exceeds the limit."""
        toolchain = job.language.toolchain
        staging = self._staging(job.key)
        if not (staging / (toolchain.artifact or toolchain.source_name)).is_file():
            return CaseResult.judge_error('the job was not compiled')
        with self._lock:
            static_bytes = self._static_bytes.get(staging, 0)
        if static_bytes > case.memory_limit_kb * 1024:
            return CaseResult(status=Status.MLE,
                              exit_code=-signal.SIGSEGV,
                              memory_kb=static_bytes // 1024,
                              stderr='the program\'s static data exceeds the memory limit')
        return None

    def _take_rerun(self, job: SandboxJob) -> bool:
        """One of the job's few reruns: a job of many near-limit cases cannot
        make the host judge each of them twice."""
        with self._lock:
            used = self._reruns.get(job.key, 0)
            if used >= MAX_RERUNS_PER_JOB:
                return False
            self._reruns[job.key] = used + 1
            return True

    def _judge_failure(self, job: SandboxJob, exc: Exception) -> str:
        """A run that failed in two sandboxes: the host's fault (HostFault)
        when sandboxes do not start, or when a known program fails too; else
        the job's, and its message for the JE."""
        if isinstance(exc, SandboxBroken) and exc.fault is not None:
            raise HostFault(
                exc.fault, f'sandboxes cannot start (Docker engine, DOCKER_URL): '
                f'{str(exc)[:300]}')
        if not self._stopping.is_set():
            problem = self.self_test(job.language, since=time.monotonic())
            if problem is not None:
                raise HostFault(FaultKind.ENGINE, f'sandboxes fail on this host: {problem}')
        return str(exc)

    def self_test(self,
                  language: Language = Language.C,
                  since: Optional[float] = None) -> Optional[str]:
        """`since`: a failure seen then; only a test started after it says
        anything about it (several workers failing at once share one)."""
        with self._self_test_lock:
            started, problem = self._self_tests.get(language, (None, None))
            fresh = since is None and started is not None and (time.monotonic() - started
                                                               < SELF_TEST_REUSE_SEC)
            if fresh or (since is not None and started is not None and started >= since):
                return problem
            started = time.monotonic()
            try:
                result = self.judge_known(language)
                problem = None if result.status is Status.AC else (
                    f'a known {language.name} program was judged {result.status.value}: '
                    f'{result.stderr[:200]}')
            except (SandboxBroken, SupervisorFailure, OSError, HostFault,
                    docker.errors.DockerException) as exc:
                problem = f'{type(exc).__name__}: {str(exc)[:300]}'
            self._self_tests[language] = (started, problem)
            return problem

    def judge_known(self, language: Language) -> CaseResult:
        """A known program (a + b) compiled and judged in a fresh container
        of its own, outside the pool (the host's self-test)."""
        toolchain = language.toolchain
        folder = self._home / 'self-test' / uuid.uuid4().hex[:12]
        container = None
        if self._stopping.is_set():
            raise SandboxBroken('the sandbox is stopping')
        try:
            (folder / 'src').mkdir(parents=True)
            (folder / 'src' / toolchain.source_name).write_bytes(KNOWN_PROGRAMS[language])
            (folder / 'in').write_bytes(KNOWN_INPUT)
            container = SandboxContainer(self._client, self._settings.images[toolchain.image_kind],
                                         self._home / 'boxes', self._limits, self._labels)
            container.start()
            container.stage(folder / 'src')
            # Never from the compile cache: the test is that the compiler works.
            # A core each, as every run (its container is one over the pool's).
            with self._cpu_slots:
                compile_run = container.run(_compile_request(toolchain, self._settings), None)
            compiled = self._compiled(compile_run, toolchain, folder / 'src', container, None)
            if not compiled.ok:
                return CaseResult(status=compiled.status, stderr=compiled.message)
            limits = Limits(time_ms=2000,
                            memory_kb=262144,
                            output_bytes=self._settings.output_limit)
            with self._cpu_slots:
                run = container.run(_case_request(toolchain, limits, self._settings), folder / 'in')
            return case_result(run, limits, toolchain, KNOWN_ANSWER, self._settings.report_limit)
        finally:
            if container is not None:
                container.destroy()
            with self._lock:
                self._static_bytes.pop(folder / 'src', None)
            shutil.rmtree(folder, ignore_errors=True)

    def release(self, job_key: str) -> None:
        for key in (job_key, ) + tuple(_judge_key(job_key, role) for role in Role):
            self._pool.release(key)
            staging = self._staging(key)
            with self._lock:
                self._static_bytes.pop(staging, None)
                self._reruns.pop(key, None)
                self._judges.pop(key, None)
                self._judge_stopped.pop(key, None)
            shutil.rmtree(staging, ignore_errors=True)

    def _staging(self, job_key: str) -> pathlib.Path:
        return self._artifacts / hashlib.sha256(job_key.encode()).hexdigest()[:32]

    def _in_sandbox(self,
                    job: SandboxJob,
                    toolchain: Toolchain,
                    staging: pathlib.Path,
                    request: RunRequest,
                    stdin: Optional[pathlib.Path],
                    finish: Callable[[RunResponse, SandboxContainer], T],
                    judge_error: Callable[[str], T],
                    files: Optional[Dict[str, pathlib.Path]] = None) -> T:
        """Run `request` in one of the job's containers and `finish` with it there.

        A sandbox failure is the judge's, never the student's: the container is
        thrown away and the run tried once more in a fresh one; a second
        failure is the host's (HostFault) or, on a healthy host, `judge_error`.
        A failing host folder is the host's too.
        """
        return self._retried(
            job, lambda: self._attempt(job, toolchain, staging, request, stdin, finish, files),
            judge_error)

    def _retried(self, job: SandboxJob, once: Callable[[], T], judge_error: Callable[[str],
                                                                                     T]) -> T:
        """`once()` (runs in fresh containers each time it is called), tried
        once more after a sandbox failure; a second failure is the host's
        (HostFault) or, on a healthy host, `judge_error`. A failing host
        folder is the host's too."""
        try:
            for attempt in (1, 2):
                try:
                    return once()
                except (SandboxBroken, SupervisorFailure) as exc:
                    if attempt == 2:
                        raise
                    log.warning('sandbox failure, retrying in a fresh sandbox: %s', exc)
            raise AssertionError('unreachable')
        except (SandboxBroken, SupervisorFailure) as exc:
            return judge_error(f'sandbox failure: {self._judge_failure(job, exc)}')
        except OSError as exc:
            raise disk_fault(exc, 'the sandbox folder') or exc

    def _attempt(self,
                 job: SandboxJob,
                 toolchain: Toolchain,
                 staging: pathlib.Path,
                 request: RunRequest,
                 stdin: Optional[pathlib.Path],
                 finish: Callable[[RunResponse, SandboxContainer], T],
                 files: Optional[Dict[str, pathlib.Path]] = None) -> T:
        """One run of `request` in one of the job's containers, `finish`ed there."""
        image = self._settings.images[toolchain.image_kind]
        container, = self._containers_and_core([(job, image, staging)])
        try:
            with self._judging():
                run = container.run(request, stdin, files)
        except BaseException:
            self._pool.give_back(container, broken=container.broken)
            raise
        try:
            self._ran(request, run, container)
            return finish(run, container)
        finally:
            self._pool.give_back(container, broken=container.broken)

    @contextlib.contextmanager
    def _judging(self) -> Iterator[None]:
        """Around a run (or a pair's) holding the core `_containers_and_core`
        took: counted in `runs_in_progress` while it runs, the core released
        after."""
        try:
            with self._lock:
                self._running += 1
            try:
                yield
            finally:
                with self._lock:
                    self._running -= 1
        finally:
            self._cpu_slots.release()

    def _ran(self, request: RunRequest, run: RunResponse, container: SandboxContainer) -> None:
        log.debug('%s in %s: exit %d, signal %d, cpu %d us, wall %d us, peak %d kB',
                  request.kind.name.lower(), container.name, run.exit_code, run.signal, run.cpu_us,
                  run.wall_us, run.maxrss_kb)
        self._warn_without_landlock(run)

    def _containers_and_core(
            self, wants: Sequence[Tuple[SandboxJob, str, pathlib.Path]]) -> List[SandboxContainer]:
        """A container for each (job, image, staging folder) of `wants`, and
        one core held for their run (the caller releases it).

        Runs get a core each: on an oversubscribed host a program's wall time
        would grow and a fair program could hit the sleeper bound. The core
        comes first, so that a run waiting for one holds no container (those
        not running stay there for other jobs to take over), unless getting
        a container needs the engine (a new one) or a wait: that happens
        with no core held, so no core waits on the engine."""
        held: List[SandboxContainer] = []

        def give_back_held() -> None:
            for container in held:
                self._pool.give_back(container)

        self._cpu_slots.acquire()
        try:
            for job, image, staging in wants:
                container = self._pool.acquire(job.key, image, _stager(staging), engine_work=False)
                if container is None:
                    break
                held.append(container)
        except BaseException:
            give_back_held()
            self._cpu_slots.release()
            raise
        if len(held) == len(wants):
            return held
        self._cpu_slots.release()
        try:
            for job, image, staging in wants[len(held):]:
                held.append(self._pool.acquire(job.key, image, _stager(staging)))
            self._cpu_slots.acquire()
        except BaseException:
            give_back_held()
            raise
        return held

    def _warn_without_landlock(self, run: RunResponse) -> None:
        if run.landlock_abi == 0 and not self._warned_landlock:
            self._warned_landlock = True
            log.warning('this kernel has no Landlock: runs can read /proc and /sys and write '
                        'their working folder (see the README\'s known limits)')


def check_image(client: docker.DockerClient, image: str) -> None:
    """Raise docker.errors.ImageNotFound when `image` is not on this host,
    ImageMismatch when it was built for another supervisor protocol or
    declares volumes."""
    found_image = client.images.get(image)
    found = found_image.labels or {}
    if (found_image.attrs.get('Config') or {}).get('Volumes'):
        # A volume is a writable place below no run's own mounts, which no reset checks.
        raise ImageMismatch(f'{image} declares volumes (VOLUME in its Dockerfile or its base): '
                            'a sandbox image may have none')
    if found.get(PROTOCOL_LABEL) != str(PROTOCOL_VERSION):
        raise ImageMismatch(f'{image} was built for supervisor protocol '
                            f'{found.get(PROTOCOL_LABEL, "1")}, this runner speaks '
                            f'{PROTOCOL_VERSION}: rebuild it (FORCE=1 '
                            'sandbox/images/build-offline.sh)')


def _compile_request(toolchain: Toolchain, settings: SandboxSettings) -> RunRequest:
    return RunRequest(kind=Kind.COMPILE,
                      argv=toolchain.compile_argv,
                      workdir=COMPILE_DIR,
                      cpu_ms=COMPILE_SECONDS * 1000,
                      wall_ms=COMPILE_SECONDS * 1000,
                      data_kb=COMPILE_MEMORY_KB,
                      stack_kb=64 * 1024,
                      fsize=MAX_ARTIFACT_BYTES,
                      out_send=settings.report_limit,
                      err_send=settings.report_limit,
                      nofile=256,
                      artifact=toolchain.artifact,
                      artifact_max=MAX_ARTIFACT_BYTES if toolchain.artifact else 0,
                      env=_COMPILE_ENV)


def _case_request(toolchain: Toolchain, limits: Limits, settings: SandboxSettings) -> RunRequest:
    return RunRequest(kind=Kind.CASE,
                      argv=toolchain.run_argv,
                      workdir=CASE_DIR,
                      cpu_ms=limits.kill_ms,
                      wall_ms=limits.wall_ms,
                      mem_kb=limits.memory_kb,
                      data_kb=_memory_cap_kb(limits.memory_kb),
                      stack_kb=UNLIMITED,
                      fsize=limits.output_bytes + 1,
                      out_send=limits.output_bytes,
                      err_send=settings.report_limit,
                      tail_send=STDERR_TAIL_BYTES,
                      nofile=CASE_DESCRIPTORS,
                      env=_ENV)


def _judge_key(job_key: str, role: Role) -> str:
    return f'{job_key}/{role.value}'


def _judge_job(job: SandboxJob) -> SandboxJob:
    """The checker or interactor of `job`, as a job of its own: sandboxes, a
    build and a folder apart from the submission's."""
    return SandboxJob(key=_judge_key(job.key, job.judge.role),
                      language=job.judge.language,
                      source_dir=job.judge.source_dir)


def _stager(staging: pathlib.Path) -> Callable[[SandboxContainer], None]:
    """Stages a job's files (the folder `staging`) into a container."""
    return lambda container: container.stage(staging)


def _remove(container) -> None:
    try:
        container.remove(force=True)
    except docker.errors.NotFound:
        pass
    except docker.errors.APIError as exc:
        # e.g. 409, a removal already in progress: it goes anyway.
        log.warning('could not remove sandbox container %s: %s', container.name, exc)


def _memory_cap_kb(limit_kb: int) -> int:
    """The cap on a run's writable private memory (RLIMIT_DATA), far above its
    limit: MLE is judged on the peak resident memory, which the supervisor
    watches during the run, and the container's memory cgroup bounds the host.
    The cap only turns absurd allocations into a runtime's out-of-memory error
    (MLE too). Thread stacks count against it: with an unlimited stack limit
    (deep recursion in the main thread is bounded by the memory limit alone)
    glibc gives each thread 2 MiB, so 64 threads take 128 MiB of it."""
    return 8 * limit_kb + 64 * 1024


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
