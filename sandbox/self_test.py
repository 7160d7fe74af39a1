"""The host's self-test: a known program compiled and judged in a fresh
container of its own, outside the pool. It tells a host whose sandboxes fail
(a HostFault) from a job the judge failed on (a JE), and probes the host's
health."""
import pathlib
import shutil
import threading
import time
import uuid
from typing import Callable, Dict, Optional, Tuple

import docker.errors

from sandbox.building import Builder
from sandbox.container import SandboxBroken, SandboxContainer
from sandbox.engine import RunEngine
from sandbox.faults import HostFault
from sandbox.languages import Language
from sandbox.protocol import SupervisorFailure
from sandbox.results import CaseResult, Status
from sandbox.run_requests import case_request, compile_request
from sandbox.settings import SandboxSettings
from sandbox.verdict import Limits, case_result

# A test's result serves every failure within this long (several workers
# failing at once run one test).
REUSE_SEC = 5.0
KNOWN_PROGRAMS = {
    Language.C: b'#include <stdio.h>\nint main(void){int a,b;scanf("%d %d",&a,&b);'
    b'printf("%d\\n",a+b);return 0;}\n',
    Language.CPP: b'#include <iostream>\nint main(){int a,b;std::cin>>a>>b;'
    b'std::cout<<a+b<<std::endl;}\n',
    Language.PYTHON: b'a, b = map(int, input().split())\nprint(a + b)\n',
}
KNOWN_INPUT, KNOWN_ANSWER = b'40 2\n', b'42\n'


class SelfTest:

    def __init__(self,
                 settings: SandboxSettings,
                 engine: RunEngine,
                 builder: Builder,
                 new_container: Callable[[str], SandboxContainer],
                 folder: pathlib.Path,
                 clock: Callable[[], float] = time.monotonic):
        """`new_container(image)`: a container outside the pool; `folder`: the
        tests' host folder."""
        self._settings = settings
        self._engine = engine
        self._builder = builder
        self._new_container = new_container
        self._folder = folder
        self._clock = clock
        self._lock = threading.Lock()
        self._results: Dict[Language, Tuple[float, Optional[str]]] = {}
        self._stopping = threading.Event()

    def stop(self) -> None:
        """No test from now on: it would make containers."""
        self._stopping.set()

    @property
    def stopping(self) -> bool:
        return self._stopping.is_set()

    def problem(self,
                language: Language = Language.C,
                since: Optional[float] = None) -> Optional[str]:
        """None when the known program of `language` is judged right, else
        what went wrong. `since`: a failure seen then; only a test started
        after it says anything about it (several workers failing at once
        share one)."""
        with self._lock:
            started, problem = self._results.get(language, (None, None))
            fresh = since is None and started is not None and (self._clock() - started < REUSE_SEC)
            if fresh or (since is not None and started is not None and started >= since):
                return problem
            started = self._clock()
            try:
                result = self.judge_known(language)
                problem = None if result.status is Status.AC else (
                    f'a known {language.name} program was judged {result.status.value}: '
                    f'{result.stderr[:200]}')
            except (SandboxBroken, SupervisorFailure, OSError, HostFault,
                    docker.errors.DockerException) as exc:
                problem = f'{type(exc).__name__}: {str(exc)[:300]}'
            self._results[language] = (started, problem)
            return problem

    def judge_known(self, language: Language) -> CaseResult:
        """The known program (a + b) compiled and judged in a fresh container
        of its own, outside the pool."""
        toolchain = language.toolchain
        folder = self._folder / uuid.uuid4().hex[:12]
        container = None
        if self._stopping.is_set():
            raise SandboxBroken('the sandbox is stopping')
        try:
            (folder / 'src').mkdir(parents=True)
            (folder / 'src' / toolchain.source_name).write_bytes(KNOWN_PROGRAMS[language])
            (folder / 'in').write_bytes(KNOWN_INPUT)
            container = self._new_container(self._settings.images[toolchain.image_kind])
            container.start()
            container.stage(folder / 'src')
            # Never from the compile cache: the test is that the compiler works.
            # A core each, as every run (its container is one over the pool's).
            with self._engine.core():
                compile_run = container.run(compile_request(toolchain, self._settings), None)
            built = self._builder.compiled(compile_run, language, folder / 'src', container, None)
            if not built.ok:
                return CaseResult(status=built.result.status, stderr=built.result.message)
            limits = Limits(time_ms=2000,
                            memory_kb=262144,
                            output_bytes=self._settings.output_limit)
            with self._engine.core():
                run = container.run(case_request(toolchain, limits, self._settings), folder / 'in')
            return case_result(run, limits, toolchain, KNOWN_ANSWER, self._settings.report_limit)
        finally:
            if container is not None:
                container.destroy()
            shutil.rmtree(folder, ignore_errors=True)
