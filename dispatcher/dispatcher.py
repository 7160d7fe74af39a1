"""The job queue between the poller and the sandbox layer (protocol §7): each
handled job is a generation whose compile and cases are steps on one queue."""
import contextlib
import logging
import queue
import threading
import time
from typing import Callable, ContextManager, Dict, List, Optional, Tuple

from dispatcher.generation import CaseStep, CompileStep, Generation, Step
from dispatcher.job import Job, check_job
from sandbox.job import CaseSpec
from sandbox.results import CaseResult, CompileResult, Status
from sandbox.faults import Cancelled, HostFault
from sandbox.sandbox import Sandbox

log = logging.getLogger(__name__)

OnComplete = Callable[[Job, Tuple[Tuple[CaseResult, ...], ...]], None]
OnAbandon = Callable[[Job, HostFault], None]

# Wakes a worker blocked on an empty queue when the dispatcher stops.
_STOP = object()

_COMPILE_STATUSES = (Status.AC, Status.CE, Status.JE)


class Dispatcher:
    """Runs each handled job's compile, then its cases, on at most `max_workers`
    sandbox calls at once, and hands every finished job to `on_complete`.

    `on_complete(job, results)` is called (a result per task per case, in
    index order, never in the order the cases happened to finish) with the dispatcher's lock held, so it
    must only enqueue (and must not call back into the dispatcher).
    `on_abandon(job, fault)` likewise, for a job the host could not judge (a
    HostFault): it goes back to the queue unjudged, never with a verdict.
    """

    def __init__(self,
                 sandbox: Sandbox,
                 on_complete: OnComplete,
                 max_workers: int,
                 on_superseded: Optional[Callable[[Job], None]] = None,
                 on_abandon: Optional[OnAbandon] = None,
                 on_host_fault: Optional[Callable[[HostFault], None]] = None,
                 job_scope: Callable[[Job], ContextManager] = lambda job: contextlib.nullcontext()):
        """`on_superseded(job)` is told when a superseded generation has no
        sandbox call running any more: its job folder may go (it was never
        reported, so nothing else removes it). `on_host_fault(fault)` is told,
        outside the lock, of every fault that abandoned a job. A worker makes
        each step of a job inside `job_scope(job)` (the runner's log context)."""
        if type(max_workers) is not int or max_workers < 1:
            raise ValueError(f'max_workers must be a positive int, got {max_workers!r}')
        self._sandbox = sandbox
        self._on_complete = on_complete
        self._on_superseded = on_superseded
        self._on_abandon = on_abandon
        self._on_host_fault = on_host_fault
        self._job_scope = job_scope
        self._max_workers = max_workers
        # Unbounded: handle() can never fail halfway through enqueueing a job.
        self._queue: 'queue.SimpleQueue[object]' = queue.SimpleQueue()
        self._stopping = threading.Event()
        self._threads: List[threading.Thread] = []
        # Guards _current, _accepting and every Generation's mutable fields.
        self._lock = threading.Condition(threading.Lock())
        # The live generation of each job_id; a generation leaves it when it
        # completes, is superseded or is drained.
        self._current: Dict[str, Generation] = {}
        self._accepting = True
        self._paused = False
        # Steps of unstarted jobs dequeued during a pause: queued again on
        # resume (a drained or superseded job's are dropped then, as stale).
        self._held_back: List[Step] = []

    # Thread lifecycle.

    def start(self) -> None:
        if self._threads:
            raise RuntimeError('dispatcher already started')
        # A fixed pool of max_workers threads, each making one sandbox call at a
        # time, is what bounds the concurrency: there is no other caller.
        # Daemon threads: a fatal exit must not wait on a running sandbox call.
        self._threads = [
            threading.Thread(target=self._work, name=f'dispatcher-worker-{index}', daemon=True)
            for index in range(self._max_workers)
        ]
        for thread in self._threads:
            thread.start()

    def stop(self) -> None:
        """Each worker finishes at most the step it holds, then exits; queued
        steps are left alone."""
        self._stopping.set()
        for _ in self._threads:
            self._queue.put(_STOP)

    def join(self, timeout: Optional[float] = None) -> bool:
        """True when every worker has ended (or none started); one deadline for all."""
        deadline = None if timeout is None else time.monotonic() + timeout
        for thread in self._threads:
            thread.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
        return not any(thread.is_alive() for thread in self._threads)

    def is_alive(self) -> bool:
        """Every worker runs."""
        return bool(self._threads) and all(thread.is_alive() for thread in self._threads)

    # What the poller and the drain call.

    def handle(self, job: Job) -> bool:
        """Publish `job` as the live generation of its `job_id`, with its compile
        and all its cases. Return True when it superseded a live older
        generation. Raise ValueError, having changed nothing, on an invalid job."""
        check_job(job)
        # A limit the host cannot give is the host's fault (HostFault), found
        # before anything is published.
        self._sandbox.check_limits(max(meta.memory_limit_kb for meta in job.tasks))
        gen = Generation(job)
        steps: List[Step] = [CompileStep(gen)]
        steps += [
            CaseStep(gen, task, case) for task, meta in enumerate(job.tasks)
            for case in range(meta.case_count)
        ]
        with self._lock:
            # Context and tasks appear together, so a drain holding the lock
            # never sees half a job.
            # Popped first so the new generation takes its place at the end:
            # drain_unstarted() returns jobs in the order they were handled.
            older = self._current.pop(job.job_id, None)
            self._current[job.job_id] = gen
            for step in steps:
                self._queue.put(step)
            release_key = None
            if older is not None:
                older.retire()
                older.superseded = True
                release_key = older.take_sandbox_release()
                self._lock.notify_all()
        if older is not None:
            log.info('job %s: new generation supersedes %r', job.job_id, older)
            self._release(older, release_key)
        return older is not None

    def cancel(self, job: Job) -> bool:
        """Stop judging `job` at once (the backend took it back): its
        unstarted steps are dropped, its runs in progress killed, and it is
        never reported. False when it is not the live generation of its job
        id (done already, or a newer claim of the same job took its place,
        which is left alone)."""
        job_id = job.job_id
        with self._lock:
            gen = self._current.get(job_id)
            if gen is None or gen.job is not job:
                return False
            del self._current[job_id]
            gen.retire()
            # Its folder goes as a superseded generation's does: nothing
            # reports it, so nothing else would remove it.
            gen.superseded = True
            release_key = gen.take_sandbox_release()
            self._lock.notify_all()
        log.info('job %s: cancelled; its runs are stopped', job_id)
        try:
            self._sandbox.cancel(gen.key)
        except Exception:
            log.exception('job %s: stopping its runs failed', job_id)
        self._release(gen, release_key)
        return True

    def stop_accepting(self) -> None:
        """Latch: from now on no job that has not started will start; started jobs
        keep running their remaining cases."""
        with self._lock:
            self._accepting = False

    def pause(self) -> None:
        """Like stop_accepting, until resume(): a host fault (unstarted jobs
        must not start on a host that cannot judge them)."""
        with self._lock:
            self._paused = True

    def resume(self) -> None:
        with self._lock:
            self._paused = False
            held, self._held_back = self._held_back, []
            for step in held:
                self._queue.put(step)

    def check_limits(self, memory_limit_kb: int) -> None:
        """HostFault(MEMORY) when this host's sandboxes cannot give a case that much."""
        self._sandbox.check_limits(memory_limit_kb)

    def drain_unstarted(self, hand_back: Optional[Callable[[Job], None]] = None) -> List[Job]:
        """Remove and return the jobs that never started, in the order handled.
        `hand_back(job)`, when given, is called for each under the lock, as a
        result is: the job's report is queued before it leaves (enqueue only)."""
        with self._lock:
            drained = [gen for gen in self._current.values() if not gen.started]
            release_keys = []
            for gen in drained:
                if hand_back is not None:
                    try:
                        hand_back(gen.job)
                    except Exception:
                        log.exception('job %s: handing it back failed', gen.job_id)
                del self._current[gen.job_id]
                gen.retire()
                release_keys.append(gen.take_sandbox_release())
        for gen, key in zip(drained, release_keys):
            self._release(gen, key)
        return [gen.job for gen in drained]

    def wait_in_flight(self, timeout: float) -> bool:
        """Block until no started job remains; True if none remain. The timeout
        bounds the whole call, waiting for the lock included."""
        timeout = min(max(0.0, timeout), threading.TIMEOUT_MAX)
        deadline = time.monotonic() + timeout
        if not self._lock.acquire(timeout=timeout):
            return False
        try:
            return self._lock.wait_for(self._nothing_started, max(0.0, deadline - time.monotonic()))
        finally:
            self._lock.release()

    def jobs_started(self) -> int:
        """Jobs started and not yet finished (the drain's progress line)."""
        with self._lock:
            return sum(1 for gen in self._current.values() if gen.started)

    def _nothing_started(self) -> bool:
        return not any(gen.started for gen in self._current.values())

    # The workers.

    def _work(self) -> None:
        # Checked before taking a step, so a step once taken is always
        # processed to the end: a generation never loses a taken step.
        while not self._stopping.is_set():
            step = self._queue.get()
            if step is _STOP:
                break
            try:
                with self._job_scope(step.generation.job):
                    self._process(step)
            except Exception:
                log.exception('dispatcher: unexpected error processing a step of %r',
                              step.generation)

    def _process(self, step: Step) -> None:
        gen = step.generation
        with self._lock:
            if not self._admit(step):
                return
        fault = None
        try:
            if isinstance(step, CompileStep):
                outcome = self._compile(gen)
            else:
                outcome = self._run_case(gen, step.task, step.case)
        except HostFault as exc:
            fault = exc
        with self._lock:
            gen.running -= 1
            if self._is_current(gen):
                if fault is not None:
                    self._abandon(gen, fault)
                elif isinstance(step, CompileStep):
                    self._record_compile(gen, outcome)
                else:
                    gen.resolve_case(step.task, step.case, outcome)
                    if gen.complete:
                        self._complete(gen)
            release_key = gen.take_sandbox_release()
        if fault is not None and self._on_host_fault is not None:
            # Before the release, which may wait on a failing engine: the
            # host stops taking work at once.
            try:
                self._on_host_fault(fault)
            except Exception:
                log.exception('reporting a host fault failed')
        self._release(gen, release_key)

    def _is_current(self, gen: Generation) -> bool:
        return self._current.get(gen.job_id) is gen

    def _admit(self, step: Step) -> bool:
        """Lock held. Whether this worker may make the step's sandbox call now."""
        gen = step.generation
        if not self._is_current(gen):
            return False  # a stale generation: superseded, drained or completed
        if not gen.started:
            if not self._accepting:
                return False  # latched: stays unstarted until drain_unstarted()
            if self._paused:
                self._held_back.append(step)
                return False
            # Marked under the same lock as the latch and the drain scan, so a
            # job is never started after the latch nor seen half-started.
            gen.started = True
            log.info('job %s (submission %s): judging started', gen.job_id, gen.job.submission_id)
        if isinstance(step, CaseStep):
            if gen.compile_result is None:
                gen.parked.append(step)
                return False
            if not gen.compile_result.ok:
                return False  # already resolved by the fan-out
        gen.running += 1
        return True

    def _record_compile(self, gen: Generation, compiled: CompileResult) -> None:
        """Lock held, gen current."""
        gen.compile_result = compiled
        if compiled.ok:
            for step in gen.parked:
                self._queue.put(step)
            gen.parked.clear()
        else:
            gen.resolve_all_cases(compiled)
            self._complete(gen)

    def _complete(self, gen: Generation) -> None:
        """Lock held, gen current and complete. The result is handed over before
        the job leaves the dispatcher, in this one critical section: a drain that
        sees no job in flight can rely on every result being queued."""
        try:
            self._on_complete(gen.job, gen.results())
        except Exception:
            log.exception('job %s: on_complete failed; its result is lost', gen.job_id)
        del self._current[gen.job_id]
        gen.retire()
        self._lock.notify_all()

    def _abandon(self, gen: Generation, fault: HostFault) -> None:
        """Lock held, gen current. The job goes back unjudged; like a result,
        its abort is handed over before the job leaves the dispatcher."""
        log.warning('job %s: the host could not judge it (%s); handing it back', gen.job_id,
                    fault.cause)
        if self._on_abandon is not None:
            try:
                self._on_abandon(gen.job, fault)
            except Exception:
                log.exception('job %s: on_abandon failed', gen.job_id)
        del self._current[gen.job_id]
        gen.retire()
        self._lock.notify_all()

    # The sandbox boundary: whatever goes wrong there is a JE, never a stuck job,
    # but for a fault of the host (HostFault), which is nobody's verdict.

    def _compile(self, gen: Generation) -> CompileResult:
        try:
            compiled = self._sandbox.compile(gen.sandbox_job)
            if not isinstance(compiled, CompileResult) or compiled.status not in _COMPILE_STATUSES:
                raise TypeError(f'compile returned {compiled!r}')
            return compiled
        except HostFault:
            raise
        except Cancelled:
            return CompileResult(Status.JE, 'cancelled')  # nobody's: the generation is retired
        except Exception as exc:
            log.exception('job %s: compile failed in the judge', gen.job_id)
            return CompileResult(Status.JE, f'judge error during compile ({type(exc).__name__})')

    def _run_case(self, gen: Generation, task: int, case: int) -> CaseResult:
        try:
            meta = gen.job.tasks[task]
            spec = CaseSpec(input_path=gen.job.input_path(task, case),
                            answer_path=gen.job.answer_path(task, case),
                            time_limit_ms=meta.time_limit_ms,
                            memory_limit_kb=meta.memory_limit_kb)
            result = self._sandbox.run_case(gen.sandbox_job, spec)
            if not isinstance(result, CaseResult) or not isinstance(result.status, Status):
                raise TypeError(f'run_case returned {result!r}')
            return result
        except HostFault:
            raise
        except Cancelled:
            return CaseResult.judge_error('cancelled')  # nobody's: the generation is retired
        except Exception as exc:
            log.exception('job %s: task %d case %d failed in the judge', gen.job_id, task, case)
            return CaseResult.judge_error(f'judge error ({type(exc).__name__})')

    def _release(self, gen: Generation, key: Optional[str]) -> None:
        """Free a retired generation's sandbox (when `key` says it is time) and,
        for a superseded one, its job folder."""
        if key is None:
            return
        try:
            self._sandbox.release(key)
        except Exception:
            log.exception('sandbox release of %s failed', key)
        if gen.superseded and self._on_superseded is not None:
            try:
                self._on_superseded(gen.job)
            except Exception:
                log.exception('cleaning up the superseded %r failed', gen)
