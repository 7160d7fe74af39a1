"""One sandbox container: a long-lived container whose PID 1 is the supervisor.

The host side of each container is a folder of its own (the "box"), mounted
read-only at /box: it holds the supervisor's socket, the job's files
(`job/`) and the input of each case sent (`stdin-N`). Only the host writes there,
so no host-side file operation ever touches anything the submission made;
everything that comes back from the sandbox comes over the socket, bounded.
"""
import dataclasses
import logging
import os
import pathlib
import secrets
import shutil
import socket
import stat
import tempfile
import threading
import uuid
from typing import Callable, Dict, List, Optional, Tuple

import docker
import docker.errors
import docker.types
import requests.exceptions

from sandbox import image_copy
from sandbox.protocol import (PROTOCOL_VERSION, AnswerReader, ResetRequest, RunRequest, RunResponse,
                              SupervisorFailure, SupervisorProtocolError, WarmRequest,
                              read_reset_response, read_response, read_warm_response)
from sandbox.faults import FaultKind
from sandbox.settings import ContainerLimits

log = logging.getLogger(__name__)

SUPERVISOR = '/usr/local/bin/judge-supervisor'
BOX = '/box'
# An interactive run's FIFOs, linked into the box for that run only.
FIFO_FOLDER = 'fifo'
# The supervisor starts as root only to become a uid of its own (61001) with
# these capabilities and no other; every run is the container's run uid with
# none. A run then cannot act on PID 1 (its limits, priority, affinity) nor,
# through it, on any later run (supervisor.c says why each is needed).
# SYS_ADMIN gives every run a pid namespace and writable places of its own:
# nothing a run leaves, not even a counter, reaches a later run. With it
# the engine's seccomp profile lets the supervisor make namespaces and
# mounts, and with SYS_CHROOT move a run's root onto a tree of its own; its
# own filter refuses them, and much else, to every run.
SUPERVISOR_START_UID = '0:0'
SUPERVISOR_CAPS = ('KILL', 'SETGID', 'SETUID', 'SYS_ADMIN', 'SYS_CHROOT', 'SETPCAP')
# Each job's runs get a uid of their own, drawn from this range: the kernel
# counts pending signals, pipe buffers and inotify instances per uid across
# the host, and one job must not starve another of them. Two live containers
# share one with a chance of about n^2 / 2^25 for n containers.
RUN_UID_BASE = 100000
RUN_UID_SPAN = 2**24
LABEL = 'oj-runner.sandbox'
PROTOCOL_LABEL = 'oj-sandbox.protocol'
# Extra time granted over a run's own wall bound for the supervisor to clean
# up and stream the outputs back before the host gives up on it.
TRANSFER_GRACE_SEC = 15.0
# A reset has nothing left to wait for (every run already ended, its
# namespaces and mounts with it); a supervisor slower than this is not fit
# for another job.
RESET_TIMEOUT_SEC = 10.0
# Memory a container's cgroup may hold after a reset beyond what it held
# after its first job (caches of what jobs read, kernel memory such as
# directory entries): a later job would pay for reclaiming more, in time.
RESET_MEMORY_GROWTH_KB = 256 * 1024


class ImageMismatch(Exception):
    """A sandbox image was built for another supervisor protocol."""


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


class SandboxBroken(Exception):
    """The container cannot be used any more; it must be destroyed.

    `fault` is set when the container never started: the engine's or the
    host's doing (engine unreachable or failing, image missing, supervisor
    not connecting), never the job's."""

    def __init__(self, message: str, fault: Optional[FaultKind] = None):
        super().__init__(message)
        self.fault = fault


class AheadFailed(SandboxBroken):
    """A run sent behind another in the same container (SandboxContainer.send)
    did not get its answer: a run before it broke the conversation. Not this
    run's failure: it may not even have started."""


@dataclasses.dataclass(eq=False)
class SentRun:
    """A request sent to a container's supervisor, its answer not read yet."""
    request: RunRequest
    private: bool  # it has files, FIFOs or fresh state: nothing is sent behind it
    number: int
    turn: threading.Condition  # on the container's lock: its answer is next to be read
    placed: List[pathlib.Path] = dataclasses.field(default_factory=list)  # box files for it alone


class SandboxContainer:

    def __init__(self,
                 client: docker.DockerClient,
                 image: str,
                 box_root: pathlib.Path,
                 limits: ContainerLimits,
                 labels: dict,
                 image_copy: Optional[str] = None,
                 discard: Optional[Callable[[pathlib.Path], None]] = None):
        """`image_copy`: the volume of the image's copy in memory
        (image_copy.py), that runs are rooted in; None: their container's.
        `discard(folder)`: the box's folders let go of (the job's at a reset,
        the box at the end) are gone from their place when it returns, and
        removed in the background (Trash.throw: their removal may be slow,
        and runs wait for a reset); None: removed at once."""
        self.image = image
        self._image_copy = image_copy
        self._client = client
        self._limits = limits
        self._labels = {**labels, LABEL: '1'}
        box_root.mkdir(parents=True, exist_ok=True)
        self.box = pathlib.Path(tempfile.mkdtemp(prefix='box-', dir=box_root))
        self.box.chmod(0o755)
        (self.box / 'job').mkdir(mode=0o755)
        self.name = f'oj-sandbox-{uuid.uuid4().hex[:12]}'
        self._discard = discard or _remove_now
        self.run_uid = _new_run_uid()
        self._container = None
        self._destroyed = False
        self._aborted = False
        self._conn: Optional[socket.socket] = None
        self._answers: Optional[AnswerReader] = None
        self._lock = threading.Lock()
        # The runs sent and not answered yet, in the order sent (answered in
        # that order); each waits on its own `turn` for its answer to be
        # next, woken alone (waking every run behind it at each answer cost
        # a thread switch each).
        self._outstanding: List['SentRun'] = []
        self._next_run = 0
        self._ahead_failed = False
        self._memory_after_first_job_kb: Optional[int] = None

    def __repr__(self):
        return f'<SandboxContainer {self.name} {self.image}>'

    @property
    def image_id(self) -> Optional[str]:
        """The id of the image this container was made from (the tag may move)."""
        return (self._container.attrs or {}).get('Image') if self._container else None

    @property
    def broken(self) -> bool:
        return self._conn is None or self._aborted or self._ahead_failed

    def start(self) -> None:
        """Create and start the container, and take its supervisor's connection.

        The host listens and the supervisor connects, before any submission
        code exists in the container; the listener is closed after that single
        accept, so nothing the submission does can reach the host through it.
        """
        sock_path = self.box / 'sock'
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        box_fd = os.open(self.box, os.O_RDONLY | os.O_DIRECTORY)
        try:
            # Through the folder's descriptor: a unix socket's path is limited
            # to 107 bytes, and DATA_DIR may be deep.
            listener.bind(f'/proc/self/fd/{box_fd}/sock')
            os.close(box_fd)
            box_fd = -1
            sock_path.chmod(0o666)
            listener.listen(1)
            listener.settimeout(self._limits.connect_timeout_sec)
            lim = self._limits
            copy = self._image_copy
            self._container = self._client.containers.create(
                self.image,
                command=[SUPERVISOR, f'{BOX}/sock', str(self.run_uid)] +
                ([image_copy.MOUNT] if copy else []),
                name=self.name,
                user=SUPERVISOR_START_UID,
                working_dir='/work',
                environment={
                    'PATH': '/usr/local/bin:/usr/bin:/bin',
                    'HOME': '/tmp',
                    'LANG': 'C.UTF-8'
                },
                network_disabled=True,
                read_only=True,
                cap_drop=['ALL'],
                cap_add=list(SUPERVISOR_CAPS),
                security_opt=['no-new-privileges'] +
                (['apparmor=unconfined'] if lim.apparmor_unconfined else []),
                mem_limit=lim.memory_bytes,
                memswap_limit=lim.memory_bytes,
                pids_limit=lim.pids,
                nano_cpus=int(lim.cpus * 1e9),
                ipc_mode='none',
                tmpfs={
                    '/work': _tmpfs(lim.work_tmpfs_bytes, lim.work_inodes),
                    '/tmp': _tmpfs(lim.tmp_tmpfs_bytes, lim.tmp_inodes),
                    '/dev/shm': _tmpfs(lim.shm_bytes, lim.shm_inodes),
                },
                volumes={str(self.box): {
                             'bind': BOX,
                             'mode': 'ro'
                         }},
                mounts=[
                    docker.types.Mount(
                        image_copy.MOUNT, copy, type='volume', read_only=True, no_copy=True)
                ] if copy else [],
                log_config={'type': 'none'},
                labels=self._labels,
            )
            self._container.start()
            conn, _ = listener.accept()
        except (OSError, docker.errors.DockerException,
                requests.exceptions.RequestException) as exc:
            self.destroy()
            kind = FaultKind.IMAGE if isinstance(exc,
                                                 docker.errors.ImageNotFound) else FaultKind.ENGINE
            raise SandboxBroken(f'sandbox did not start: {type(exc).__name__}: {exc}',
                                fault=kind) from None
        finally:
            if box_fd >= 0:
                os.close(box_fd)
            listener.close()
            sock_path.unlink(missing_ok=True)
        self._use(conn)

    def _use(self, conn: socket.socket) -> None:
        """The supervisor's connection, from now on."""
        self._conn = conn
        self._answers = AnswerReader(conn)

    def stage(self, source: pathlib.Path) -> None:
        """Make `source`'s files the job files of this container (read-only inside)."""
        job = self.box / 'job'
        for entry in os.scandir(source):
            _link_or_copy(pathlib.Path(entry.path), job / entry.name)

    def add_job_file(self, path: pathlib.Path, name: str) -> None:
        _link_or_copy(path, self.box / 'job' / name)

    def run(self,
            request: RunRequest,
            stdin: Optional[pathlib.Path],
            files: Optional[Dict[str, pathlib.Path]] = None,
            fifos: Optional[Dict[str, pathlib.Path]] = None) -> RunResponse:
        """One run; raises SandboxBroken when the container is not usable any more.

        `files`: job files for this run only, by their name in the job's
        folder (a checker's case files), removed after it. `fifos`: FIFOs
        for this run only (an interactive case's), linked by name into
        `{BOX}/{FIFO_FOLDER}`, where the request names them."""
        return self.answer(self.send(request, stdin, files, fifos))

    def send(self,
             request: RunRequest,
             stdin: Optional[pathlib.Path],
             files: Optional[Dict[str, pathlib.Path]] = None,
             fifos: Optional[Dict[str, pathlib.Path]] = None) -> 'SentRun':
        """`run`'s first half: the request sent, its answer to be read with
        `answer`. A request may be sent while runs sent before it are under
        way (runs of one job following one another): the supervisor reads it
        once it has answered them, and runs it at once. Only a plain run may
        be sent so: one with `files`, `fifos` or fresh state is sent only
        when nothing is outstanding, and nothing is sent behind it (what it
        alone may see is in the box until it has ended)."""
        private = bool(request.fresh or files or fifos)
        with self._lock:
            if self._ahead_failed:
                raise AheadFailed('a run sent before it broke the sandbox')
            if self._conn is None:
                raise SandboxBroken('sandbox is closed')
            if self._outstanding and (private or self._outstanding[-1].private):
                raise RuntimeError('a run with files of its own shares its sandbox with no other')
            if request.fresh:
                self._renew_job_folder()
            sent = SentRun(request, private, self._next_run, threading.Condition(self._lock))
            self._next_run += 1
            try:
                if stdin is not None:
                    # A name of its own: the run before it may still read its
                    # own (a run never sees the box, the run init opens it).
                    stdin_box = self.box / f'stdin-{sent.number}'
                    sent.placed.append(stdin_box)
                    _link_or_copy(stdin, stdin_box)
                    request = dataclasses.replace(request, stdin_path=f'{BOX}/{stdin_box.name}')
                for name, path in (files or {}).items():
                    dest = self.box / 'job' / name
                    dest.parent.mkdir(mode=0o755, exist_ok=True)
                    dest.unlink(missing_ok=True)
                    sent.placed.append(dest)  # removed after, even if copied only in part
                    _link_or_copy(path, dest)
                if fifos:
                    (self.box / FIFO_FOLDER).mkdir(mode=0o755, exist_ok=True)
                for name, path in (fifos or {}).items():
                    dest = self.box / FIFO_FOLDER / name
                    dest.unlink(missing_ok=True)
                    sent.placed.append(dest)
                    os.link(path, dest, follow_symlinks=False)  # the same pipe on both sides
            except BaseException:
                _unlink_all(sent.placed)
                raise
            try:
                # Outstanding before it is sent: an answer read past its end
                # may be this one's start (read_response).
                self._outstanding.append(sent)
                self._conn.sendall(request.encode())
            except BaseException as exc:
                self._outstanding.remove(sent)
                _unlink_all(sent.placed)
                if not isinstance(exc, OSError):
                    raise
                self._fail()
                raise SandboxBroken(f'sandbox run failed: {type(exc).__name__}: {exc}') from None
            return sent

    def answer(self, sent: 'SentRun') -> RunResponse:
        """`run`'s second half: the answer to `sent`, read once those sent
        before it are. AheadFailed when one of them broke the sandbox first
        (this run may not have been made at all)."""
        try:
            with self._lock:
                while True:  # `sent` is outstanding until its answer is read
                    if self._conn is None or self._ahead_failed:
                        raise AheadFailed('a run sent before it broke the sandbox')
                    if self._outstanding[0] is sent:
                        break
                    try:
                        sent.turn.wait()
                    except BaseException:
                        # Its answer will come, and nobody will read it: the
                        # run behind would take it for its own.
                        self._fail()
                        raise
                conn = self._conn
            # Its own bound from now: the supervisor started it once it had
            # answered the one before.
            timeout = (sent.request.wall_ms +
                       sent.request.wall_credit_ms) / 1000 + TRANSFER_GRACE_SEC
            try:
                if conn.gettimeout() != timeout:  # a system call each time
                    conn.settimeout(timeout)
                response = read_response(self._answers, sent.request)
                with self._lock:
                    # Nothing asked after it: nothing else may come. Asked:
                    # what came past it is the next answer's start, which
                    # that answer's reading checks.
                    if len(self._outstanding) == 1:
                        self._answers.end()
            except SupervisorFailure:
                # The supervisor answered but could not run the request: what
                # it left behind is unknown, so this container serves no more.
                self._close_failed()
                raise
            except (OSError, ValueError, SupervisorProtocolError) as exc:
                # A timeout or a broken stream leaves the conversation in an
                # unknown state: never reuse this container.
                self._close_failed()
                raise SandboxBroken(f'sandbox run failed: {type(exc).__name__}: {exc}') from None
            except BaseException:
                # Whatever stopped the reading half-way, the next answer's
                # reader must not start in the middle of this one.
                self._close_failed()
                raise
            return response
        finally:
            with self._lock:
                if sent in self._outstanding:
                    self._outstanding.remove(sent)
                if self._outstanding:
                    self._outstanding[0].turn.notify()
            _unlink_all(sent.placed)

    def _fail(self) -> None:
        """Lock held: the conversation broke; the runs not answered yet end
        in AheadFailed (but the one whose reading failed). The socket is
        shut down, which wakes its reader, and closed only by that reader
        (`_close_failed`) or `destroy`: a descriptor closed under another
        thread's read could be reused meanwhile by another connection, whose
        bytes it would read."""
        self._ahead_failed = True
        if self._conn is not None:
            try:
                self._conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        for run in self._outstanding:
            run.turn.notify()

    def _close_failed(self) -> None:
        """The reader's failure: the conversation is over."""
        with self._lock:
            self._fail()
            self._close_conn()

    def _renew_job_folder(self) -> None:
        """Lock held: the job's files in a folder made now, for a run that
        must see nothing of an earlier one (a TLE's rerun). A run init binds
        the job's folder as it is at its first request, and the names an
        earlier run looked up in the old folder (entries of the directory
        cache, which a lookup could time) are not this one's
        (supervisor.c, bind_job)."""
        job = self.box / 'job'
        new = self.box / 'job.new'
        shutil.rmtree(new, ignore_errors=True)
        new.mkdir(mode=0o755)
        for entry in os.scandir(job):
            _link_or_copy(pathlib.Path(entry.path), new / entry.name)
        self._discard(job)
        os.rename(new, job)

    def abort(self) -> None:
        """Kill the container now, from any thread: a run in progress ends
        with SandboxBroken (its supervisor is gone), and the container is
        not used again. For a run whose peer failed (an interactive case),
        which would otherwise wait out its wall bound."""
        self._aborted = True
        try:
            self._client.api.kill(self.name)
        except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
            log.warning('could not kill sandbox container %s: %s', self.name, str(exc)[:200])

    def reset(self, set_aside: bool = False) -> None:
        """Make the container fit for another job, or raise SandboxBroken.

        The supervisor kills every process, empties every writable place and
        checks both; the next job's runs get a new uid; the job's files are
        replaced by an empty folder. Nothing of the last job stays but the
        supervisor itself, which no run can reach (supervisor.c), and what
        it left charged to the container's memory, which is bounded
        (RESET_MEMORY_GROWTH_KB).

        The last job's folder is removed here, unless `set_aside` (a caller
        holding a core: its removal may take seconds, sandbox/trash.py),
        when it goes to `discard`. What its removal frees (the directory
        cache's entries of names its runs looked up) is charged to this
        container until then: removed here, none of it is left for the next
        job to reclaim, nor counted at the next reset."""
        with self._lock:
            if self._conn is None:
                raise SandboxBroken('sandbox is closed')
            next_uid = _new_run_uid(other_than=self.run_uid)
            try:
                self._conn.settimeout(RESET_TIMEOUT_SEC)
                self._check_idle()
                self._conn.sendall(ResetRequest(next_uid).encode())
                memory_kb = read_reset_response(self._answers)
                # Only the host writes the box: no link in it to follow.
                job = self.box / 'job'
                (self._discard if set_aside else _remove_now)(job)
                job.mkdir(mode=0o755)
            except (OSError, ValueError, SupervisorFailure, SupervisorProtocolError) as exc:
                self._close_conn()
                raise SandboxBroken(f'sandbox reset failed: {type(exc).__name__}: {exc}') from None
            if self._memory_after_first_job_kb is None:
                self._memory_after_first_job_kb = memory_kb
            elif (min(memory_kb, self._memory_after_first_job_kb) >= 0
                  and memory_kb - self._memory_after_first_job_kb > RESET_MEMORY_GROWTH_KB):
                self._close_conn()
                raise SandboxBroken(f'the sandbox holds {memory_kb // 1024} MiB after its '
                                    f'reset, {self._memory_after_first_job_kb // 1024} MiB after '
                                    'its first job')
            self.run_uid = next_uid

    def warm(self, timeout_sec: float) -> Tuple[int, int]:
        """Have the supervisor read every file a run may read (WarmRequest):
        the files and bytes read. SandboxBroken when it could not."""
        with self._lock:
            if self._conn is None:
                raise SandboxBroken('sandbox is closed')
            try:
                self._conn.settimeout(timeout_sec)
                self._check_idle()
                self._conn.sendall(WarmRequest().encode())
                return read_warm_response(self._answers)
            except (OSError, ValueError, SupervisorFailure, SupervisorProtocolError) as exc:
                self._close_conn()
                raise SandboxBroken(
                    f'sandbox warm-up failed: {type(exc).__name__}: {exc}') from None

    def _check_idle(self) -> None:
        if self._outstanding:
            raise RuntimeError('a reset or a warm-up asked with runs outstanding')

    def destroy(self) -> None:
        """Kill and remove the container, and delete the box. Idempotent.

        By name, not by handle: a create call that timed out on our side may
        still have made the container on the engine's."""
        self._close_conn()
        # Twice: the supervisor exits when its connection closes, and a
        # container that ends while the engine kills it fails that removal
        # ("Could not kill running container ... is not running").
        for attempt in range(2):
            if self._destroyed:
                break
            try:
                self._client.api.remove_container(self.name, force=True)
                self._destroyed = True
            except docker.errors.NotFound:
                self._destroyed = True
            except docker.errors.APIError as exc:
                if attempt == 0:
                    continue
                self._removal_failed(exc)
            except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
                self._removal_failed(exc)
                break
        self._container = None
        self._discard(self.box)

    def _removal_failed(self, exc: Exception) -> None:
        # Removed later: by the health probe once the engine answers (exited
        # containers), or at the runner's exit.
        log.warning('could not remove sandbox container %s now: %s', self.name, str(exc)[:200])

    def _close_conn(self):
        if self._conn is not None:
            try:
                self._conn.close()
            except OSError:
                pass
            self._conn = None


def engine_uses_apparmor(client: docker.DockerClient) -> bool:
    """Whether the engine confines containers with AppArmor (then the
    sandboxes run unconfined by it: ContainerLimits.apparmor_unconfined)."""
    try:
        options = client.info().get('SecurityOptions') or []
    except (docker.errors.DockerException, requests.exceptions.RequestException):
        return False  # the host's health says why the engine does not answer
    return any('name=apparmor' in option for option in options)


def _new_run_uid(other_than: Optional[int] = None) -> int:
    while True:
        uid = RUN_UID_BASE + secrets.randbelow(RUN_UID_SPAN)
        if uid != other_than:
            return uid


def _remove_now(folder: pathlib.Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)


def _unlink_all(paths: List[pathlib.Path]) -> None:
    for path in paths:
        path.unlink(missing_ok=True)


def _tmpfs(size: int, inodes: int) -> str:
    return f'size={size},nr_inodes={inodes},mode=1777,noexec,nosuid,nodev'


def _link_or_copy(src: pathlib.Path, dst: pathlib.Path) -> None:
    """Hard link when possible (files staged here are never modified), else copy.

    Only regular files and folders are taken: a link in a job folder is never
    followed into the box.
    """
    st = os.lstat(src)  # one look, which sees a link as a link (a case's every input is linked)
    if stat.S_ISDIR(st.st_mode):
        dst.mkdir(mode=0o755)
        for entry in os.scandir(src):
            _link_or_copy(pathlib.Path(entry.path), dst / entry.name)
        return
    if not stat.S_ISREG(st.st_mode):
        return
    if st.st_mode & 0o444 == 0o444:
        try:
            os.link(src, dst, follow_symlinks=False)
            return
        except OSError:
            pass
    # The sandbox's uid must be able to read it; a link would share the mode.
    shutil.copyfile(src, dst, follow_symlinks=False)
    os.chmod(dst, st.st_mode | 0o444)
