"""The daemon's life: start the sandbox, register, run the threads, then
drain on a stop signal or exit at once when the backend forgets the runner."""
import dataclasses
import logging
import os
import threading
from typing import Callable, Optional, Tuple

import docker.errors
import requests.exceptions

from dispatcher.dispatcher import Dispatcher
from runner import metrics
from runner.active_jobs import ActiveJobs
from dispatcher.job import Job
from runner.backend.algojudge import identity
from runner.backend.algojudge import reports as algojudge_reports
from runner.backend.algojudge.claimer import Claimer
from runner.backend.algojudge.client import AlgoJudgeClient
from runner.backend.algojudge.enrolment import EnrolmentRefused, Rejoin, Revoked, enrol
from runner.backend.algojudge.held import Held, HeldJobs
from runner.backend.algojudge.lease_keeper import LeaseKeeper
from runner.backend.algojudge import preparation as algojudge_preparation
from runner.backend.algojudge.reporter import Release, Reporter
from runner.backend.noj.client import BackendClient
from runner.backend.noj.inbound import Registration
from runner.backend.noj.outbound import AbortReason
from runner.config import ConfigError, Settings, check_folders
from runner.drain import drain
from runner.exit_codes import ExitCode
from runner.backend.noj.heartbeat import Heartbeat
from runner.host_health import HostHealth
from runner.logs import about_job, set_runner_id
from runner.backend.noj.poller import Poller
from runner.prep.job_folders import JobFolders
from runner.prep.locks import make_locks
from runner.prep_workers import PrepWorkers
from runner.backend.noj.prepare import Preparer
from runner.backend.noj.testdata import TestdataCache
from runner.backend.noj.registration import RegistrationRefused, register
from runner.backend.noj.reports import AbortReport, CompleteReport
from runner.backend.noj.result_sender import ResultSender
from runner.status_server import StatusServer
from runner.waiting import interrupt_on
from runner.version import VERSION
from sandbox.docker_sandbox import COMPILE_MEMORY_KB, DockerSandbox, ImageMismatch, MiB
from sandbox.languages import Language

log = logging.getLogger(__name__)

SANDBOX_STOP_SEC = 30.0
# /healthz fails when no heartbeat was accepted for this many intervals.
HEARTBEAT_GRACE_INTERVALS = 4


class StartupError(Exception):
    """The host cannot judge (Docker engine unreachable, an image missing)."""


def start_sandbox(settings: Settings,
                  on_start_failure: Callable[[], None] = lambda: None,
                  on_created: Callable[[str], None] = lambda cause: None) -> DockerSandbox:
    config = settings.sandbox_settings()
    need = COMPILE_MEMORY_KB * 1024 + config.headroom_bytes
    if config.container_memory_bytes < need:
        # A compile could run out of memory: CE for the host's fault.
        raise StartupError(f'SANDBOX_MEMORY_MB: must be at least {-(-need // MiB)} (a compile '
                           f'takes up to {COMPILE_MEMORY_KB // 1024} MiB beside the sandbox\'s '
                           f'own {config.headroom_bytes // MiB} MiB), got '
                           f'{settings.sandbox_memory_mb}')
    try:
        sandbox = DockerSandbox(config, on_start_failure=on_start_failure, on_created=on_created)
        for image in config.images.values():
            sandbox.check_image(image)
        sandbox.start()
    except docker.errors.ImageNotFound as exc:
        raise StartupError(f'sandbox image missing ({exc.explanation}); build it with '
                           'sandbox/images/build-offline.sh') from None
    except ImageMismatch as exc:
        raise StartupError(str(exc)) from None
    except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
        raise StartupError(f'Docker engine unreachable at DOCKER_URL ({exc})') from None
    return sandbox


def host_problem(sandbox: DockerSandbox, settings: Settings) -> Optional[str]:
    """The host's health probe: None when a known program is judged right in
    each image and every data folder can be written, else what is wrong."""
    for language in (Language.C, Language.PYTHON):
        problem = sandbox.self_test(language)
        if problem is not None:
            return problem
    try:
        removed = sandbox.remove_exited()  # what an engine outage left behind
        if removed:
            log.info('removed %d sandbox container(s) left while the engine was away', removed)
    except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
        return f'the Docker engine: {type(exc).__name__}'
    try:
        check_folders(settings)
    except ConfigError as exc:
        return str(exc)
    return None


@dataclasses.dataclass
class _Parts:
    """The running runner: its claims and its thread-owning parts."""
    tracker: ActiveJobs
    folders: JobFolders
    dispatcher: Dispatcher
    sender: ResultSender
    poller: Poller
    heartbeat: Heartbeat
    health: HostHealth
    # An unstarted job going back to the backend (the drain's, a host
    # fault's), the protocol's own way; enqueue only.
    hand_back: Callable[[Job], None]
    # Started jobs still running at the drain's deadline: stopped and handed
    # back, when the protocol can (None: left to lease expiry).
    give_up_unfinished: Optional[Callable[[], int]] = None

    def start(self) -> None:
        for _, part in self.threads():
            part.start()

    def threads(self):
        """Every thread-owning part, by name, in start order."""
        return (('dispatcher', self.dispatcher), ('result sender', self.sender),
                ('poller', self.poller), ('heartbeat', self.heartbeat), ('host health',
                                                                         self.health))


class Daemon:

    def __init__(self, settings: Settings, stop: threading.Event):
        self._settings = settings
        self._stop = stop
        self._identity_lost = threading.Event()
        # Guards the moment a drain begins against an identity loss landing
        # at the same time: one of the two paths wins, cleanly.
        self._lock = threading.Lock()
        self._draining = False
        self._folders: Optional[JobFolders] = None
        self._parts: Optional[_Parts] = None
        self._status: Optional[StatusServer] = None

    def run(self) -> int:
        sandbox = start_sandbox(
            self._settings, metrics.SANDBOX_START_FAILURES.inc,
            lambda cause: metrics.SANDBOX_CONTAINERS_CREATED.labels(cause).inc())
        log.info('sandbox folder: %s', sandbox.home)
        try:
            self._serve_status()
            if self._settings.backend_protocol == 'algojudge':
                return self._run_algojudge(sandbox)
            try:
                registration = self._register()
            except RegistrationRefused:
                log.error('the backend refused the registration token (401)')
                return ExitCode.IDENTITY_REFUSED
            if registration is None:
                return ExitCode.OK  # stopped during registration
            parts = self._parts = self._build(sandbox, registration)
            parts.start()
            log.info('running: up to %d jobs at once, %d sandboxes',
                     registration.config.max_concurrent_jobs, self._settings.max_container_number)
            self._stop.wait()
            return self._drain(parts)
        finally:
            sandbox.stop()
            sandbox.join(SANDBOX_STOP_SEC)
            if not self._identity_lost.is_set() or self._settings.backend_protocol == 'algojudge':
                # Busy containers of runs a drain cut short are not left
                # running. After a Normal-OJ identity loss they are left
                # alone: killing them would turn their runs into JE reports on
                # the way out; they end with their run, and the next start
                # removes them (and the job folders with them). A revoked
                # AlgoJudge runner reports nothing more: everything goes.
                sandbox.remove_leftovers()
                if self._folders is not None:
                    self._folders.close()

    def _serve_status(self) -> None:
        port = self._settings.metrics_port
        if port is None:
            return
        try:
            self._status = StatusServer(port, metrics.REGISTRY, self._alive, self._ready)
        except OSError as exc:
            raise StartupError(f'METRICS_PORT {port}: cannot listen ({exc})') from None
        self._status.start()
        log.info('serving /metrics, /healthz and /readyz on port %d', port)

    def _alive(self) -> Tuple[bool, str]:
        """/healthz: the threads run and the backend takes heartbeats."""
        parts = self._parts
        if self._identity_lost.is_set():
            return False, 'the backend refused this runner\'s identity'
        if parts is None:
            return True, 'registering'
        if self._draining:
            return True, 'draining'  # its threads end one by one, on purpose
        for name, part in parts.threads():
            if not part.is_alive():
                return False, f'the {name} thread has ended'
        within = HEARTBEAT_GRACE_INTERVALS * parts.heartbeat.interval_sec
        if not parts.heartbeat.accepted_within(within):
            return False, f'no heartbeat accepted for over {within:.0f} s'
        return True, 'ok'

    def _ready(self) -> Tuple[bool, str]:
        """/readyz: the runner takes work now."""
        parts = self._parts
        if parts is None:
            return False, 'registering'
        if self._draining or self._stop.is_set():
            return False, 'draining'
        fault = parts.health.fault
        if fault is not None:
            return False, f'the host cannot judge now ({fault.kind.value})'
        alive, reason = self._alive()
        return (True, 'ok') if alive else (False, reason)

    def _run_algojudge(self, sandbox: DockerSandbox) -> int:
        s = self._settings
        try:
            key = identity.load_or_create(s.runner_key_file)
        except identity.KeyFileError as exc:
            raise StartupError(str(exc)) from None
        client = AlgoJudgeClient(s.backend_url, key)
        log.info('joining the AlgoJudge server at %s as %r', s.backend_url, s.runner_name)
        try:
            runner_id = enrol(client, s.runner_name, self._stop)
        except Revoked as exc:
            log.error('%s: a new key and a new approval are an administrator\'s decision', exc)
            return ExitCode.IDENTITY_REFUSED
        except EnrolmentRefused as exc:
            raise StartupError(f'the AlgoJudge server refused this runner: {exc}') from None
        if runner_id is None or self._stop.is_set():
            return ExitCode.OK  # stopped while joining
        parts = self._parts = self._build_algojudge(sandbox, client, runner_id)
        parts.start()
        log.info('running: up to %d jobs at once, %d sandboxes', s.max_container_number,
                 s.max_container_number)
        self._stop.wait()
        return self._drain(parts)

    def _build_algojudge(self, sandbox: DockerSandbox, client: AlgoJudgeClient,
                         runner_id: str) -> _Parts:
        s = self._settings
        held = HeldJobs()
        folders = self._running_as(sandbox, runner_id, lambda: len(held))

        def finalize(h: Held) -> None:
            job = h.job
            if job is not None:
                folders.remove(job.job_dir)

        rejoin = Rejoin()
        reporter = Reporter(client, held, finalize, rejoin=rejoin)

        def held_for(job: Job) -> Optional[Held]:
            return held.find(lambda h: h.job is job)

        def on_complete(job, results):
            # Under the dispatcher's lock: it only counts and enqueues.
            metrics.count_cases(job.language.name, results)
            h = held_for(job)
            if h is not None:  # else it was taken back meanwhile: nothing to say
                reporter.submit(
                    lambda: algojudge_reports.judged(h.job_id, h.token, h.prepared, results), h)

        def hand_back(job, fault=None):
            h = held_for(job)
            if h is not None:
                why = 'the runner is stopping' if fault is None else \
                    f'this host cannot judge: {fault.kind.value}'
                reporter.submit(Release(h, why))

        def on_lost(h: Held) -> None:
            # Not this runner's any more: no report, and its runs stop now,
            # off the lease keeper's thread (killing runs is the engine's
            # work, and every other lease waits on that thread).
            if held.remove(h):
                threading.Thread(target=stop_judging, args=(h, ), name='cancel',
                                 daemon=True).start()

        def stop_judging(h: Held) -> None:
            job = h.job
            if job is None or not dispatcher.cancel(job):
                finalize(h)

        dispatcher, health = self._judging(sandbox, folders, on_complete, hand_back)
        claim_client = client.sibling()
        packages = algojudge_preparation.PackageCache(s.testdata_root / 'algojudge', claim_client,
                                                      make_locks(s.redis_url, s.testdata_root))
        claimer = Claimer(claim_client,
                          held,
                          algojudge_preparation.Preparer(claim_client, packages, folders),
                          dispatcher,
                          reporter,
                          capacity=s.max_container_number,
                          lease_sec=s.lease_sec,
                          health=health,
                          finalize=finalize,
                          on_not_approved=lambda: self._enrol_again(client),
                          rejoin=rejoin)
        keeper = LeaseKeeper(client, held, lease_sec=s.lease_sec, on_lost=on_lost, rejoin=rejoin)

        def give_up_unfinished() -> int:
            # The drain's deadline came first: each is stopped and released,
            # never left running to its lease.
            given_up = 0
            for h in held.snapshot():
                job = h.job
                if job is not None and dispatcher.cancel(job):
                    reporter.submit(Release(h, 'the drain ran out of time'))
                    given_up += 1
            return given_up

        return _Parts(held, folders, dispatcher, reporter, claimer, keeper, health, hand_back,
                      give_up_unfinished)

    def _enrol_again(self, client: AlgoJudgeClient) -> bool:
        """From the claimer, which claims nothing meanwhile: approval was
        withdrawn, or the key forgotten. Register again to find out: False
        (claim no more) when revoked, which exits at once, or stopped."""
        while not self._stop.is_set():
            try:
                return enrol(client, self._settings.runner_name, self._stop) is not None
            except Revoked as exc:
                log.error('%s: exiting', exc)
                self._on_identity_lost()
                return False
            except EnrolmentRefused as exc:
                # Mid-run, a proxy's page or a WAF's refusal is no reason to
                # abandon every claim: loudly, and again.
                log.error('joining the server again was refused: %s; trying again', exc)
                self._stop.wait(30)
        return False

    def _register(self) -> Optional[Registration]:
        """None when a stop came first (even while the request was out)."""
        s = self._settings
        client = BackendClient(s.backend_url, sandbox_token=s.sandbox_token)
        interrupt_on(self._stop, client, 'registration-stop')
        log.info('registering with %s as %r', s.backend_url, s.runner_name)
        registration = register(client, s.registration_token, s.runner_name, self._stop)
        if registration is None or self._stop.is_set():
            return None
        return registration

    def _build(self, sandbox: DockerSandbox, registration: Registration) -> _Parts:
        s = self._settings
        config = registration.config
        client = BackendClient(s.backend_url,
                               sandbox_token=s.sandbox_token,
                               identity=registration.identity)
        # The poller's own connections: stopping it cuts its downloads and
        # claims short, and hangs up its long poll (read until answered),
        # without touching the heartbeat's or the sender's.
        poller_client = client.with_identity(registration.identity)
        tracker = ActiveJobs()
        folders = self._running_as(sandbox, registration.identity.runner_id, lambda: len(tracker))
        testdata = TestdataCache(s.testdata_root, poller_client,
                                 make_locks(s.redis_url, s.testdata_root))
        sender = ResultSender(client, tracker, folders, body_limit=s.report_body_limit)

        def on_complete(job, results):
            # Called under the dispatcher's lock: it only counts and enqueues.
            metrics.count_cases(job.language.name, results)
            sender.submit(CompleteReport.for_job(job, results))

        def hand_back(job, fault=None):
            # Also under the dispatcher's lock (a job the host could not judge).
            # Any other claim of it that this runner holds is a newer one (the
            # poller preparing a re-claim): then this generation only lets go.
            newer = tracker.claims_of(job.job_id) > 1
            sender.submit(AbortReport.for_job(job, AbortReason.DRAIN, release_only=newer))

        dispatcher, health = self._judging(sandbox, folders, on_complete, hand_back)
        # A thread for each claim's preparation and one for its code's
        # download, which runs beside the testdata's when a thread is idle
        # (Preparer).
        workers = PrepWorkers(2 * config.max_concurrent_jobs)
        poller = Poller(poller_client,
                        tracker,
                        Preparer(poller_client, testdata, folders, offer=workers.offer),
                        dispatcher,
                        sender,
                        max_concurrent_jobs=config.max_concurrent_jobs,
                        poll_interval_sec=config.poll_interval_sec,
                        long_poll_sec=s.long_poll_sec,
                        long_poll_client=client.with_identity(registration.identity),
                        health=health,
                        workers=workers)
        heartbeat = Heartbeat(client, tracker, config.heartbeat_interval_sec,
                              self._on_identity_lost)
        return _Parts(tracker, folders, dispatcher, sender, poller, heartbeat, health,
                      lambda job: sender.submit(AbortReport.for_job(job, AbortReason.DRAIN)))

    def _running_as(self, sandbox: DockerSandbox, runner_id: str,
                    claims: Callable[[], int]) -> JobFolders:
        """Whatever the protocol, once the backend knows the runner: its id in
        the logs and metrics, the gauges, and this runner's job folders."""
        s = self._settings
        set_runner_id(runner_id)
        metrics.RUNNER.info({'name': s.runner_name, 'version': VERSION, 'runner_id': runner_id})
        metrics.LIVE_CLAIMS.set_function(claims)
        metrics.SANDBOXES_MAX.set(s.max_container_number)
        metrics.SANDBOX_CONTAINERS.set_function(sandbox.containers_alive)
        metrics.SANDBOXES_BUSY.set_function(sandbox.runs_in_progress)
        folders = self._folders = JobFolders(s.submission_dir, s.submission_backup_dir,
                                             sandbox.home.name)
        folders.start()
        return folders

    def _judging(self, sandbox: DockerSandbox, folders: JobFolders, on_complete,
                 hand_back) -> Tuple[Dispatcher, HostHealth]:
        """The dispatcher over the sandbox, and the host's health, whatever
        the protocol: `on_complete(job, results)` and `hand_back(job, fault)`
        are the protocol's (called under the dispatcher's lock: enqueue only)."""
        s = self._settings

        def on_host_fault(fault):
            # Nothing more starts, and what has not started goes back at once
            # (queued before it leaves the dispatcher); started jobs finish
            # where their sandboxes still work, or come back one by one.
            dispatcher.pause()
            dispatcher.drain_unstarted(hand_back)

        health = HostHealth(lambda: host_problem(sandbox, s),
                            on_fault=on_host_fault,
                            on_recover=lambda: dispatcher.resume())
        dispatcher = Dispatcher(metrics.MeteredSandbox(sandbox),
                                on_complete=on_complete,
                                max_workers=s.max_container_number,
                                on_superseded=lambda job: folders.remove(job.job_dir),
                                on_abandon=hand_back,
                                on_host_fault=health.report,
                                job_scope=lambda job: about_job(job.job_id, job.submission_id))
        return dispatcher, health

    def _drain(self, parts: _Parts) -> int:
        """After the stop: drain, unless the identity was lost (then exit at once)."""
        with self._lock:
            if self._identity_lost.is_set():
                log.error(
                    'the backend refused this runner\'s identity twice: exiting without a '
                    'drain; %d claim(s) return to the queue at lease expiry', len(parts.tracker))
                return ExitCode.IDENTITY_REFUSED
            self._draining = True
        metrics.DRAINING.set(1)
        parts.health.stop()  # no more probing: the drain decides from here
        outcome = drain(dispatcher=parts.dispatcher,
                        poller=parts.poller,
                        sender=parts.sender,
                        heartbeat=parts.heartbeat,
                        claims=lambda: len(parts.tracker),
                        budget_sec=self._settings.drain_timeout_sec,
                        hand_back=parts.hand_back,
                        give_up_unfinished=parts.give_up_unfinished)
        return ExitCode.OK if outcome.clean else ExitCode.DRAIN_INCOMPLETE

    def _on_identity_lost(self) -> None:
        """From the heartbeat thread, after two 401s in a row."""
        with self._lock:
            self._identity_lost.set()
            self._stop.set()
            draining = self._draining
        if draining:
            # The drain's reports would all be refused: exit at once, as the
            # main thread would have had no drain started.
            log.error('the backend refused this runner\'s identity during the drain: exiting '
                      'at once; what is left returns to the queue at lease expiry')
            os._exit(ExitCode.IDENTITY_REFUSED)
