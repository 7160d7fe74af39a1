"""The Python zygote (sandbox/images/python_zygote.c): a job's Python cases
are forked from an interpreter started once for the job. A case must see
what `python3 main.py` shows it, and nothing a case does may reach the
zygote, a later case or a rerun through it."""
import dataclasses
import json
import os
import signal
import uuid
from typing import Iterator

import pytest

from sandbox.container import SandboxContainer
from sandbox.job import CaseSpec, ProblemProgram, Role, SandboxJob
from sandbox.languages import Language
from sandbox.protocol import RunRequest, RunResponse
from sandbox.results import Status
from sandbox.run_requests import case_request
from sandbox.settings import ContainerLimits, SandboxSettings
from sandbox.verdict import Limits
from tests.sandbox.conftest import ZYGOTE_UID

pytestmark = pytest.mark.docker

LIMITS = ContainerLimits(memory_bytes=512 << 20,
                         pids=64,
                         work_tmpfs_bytes=16 << 20,
                         tmp_tmpfs_bytes=1 << 20,
                         cpus=1.0)
REQUEST = case_request(Language.PYTHON.toolchain,
                       Limits(time_ms=5000, memory_kb=262144, output_bytes=1 << 20, tle_margin=1.0),
                       SandboxSettings(root='/nonexistent'))
EXEC_D = dataclasses.replace(REQUEST, zygote=False)

# What a program can see of its interpreter, as JSON (nothing that differs
# from one process to the next: no pid, no hash).
PROBE = r'''
import json, os, sys
import helper
x: int = 1
def is_open(fd):
    try:
        os.fstat(fd)
        return True
    except OSError:
        return False
def stream(s):
    return [s.encoding, s.errors, s.line_buffering, s.write_through, s.isatty(), s.fileno(),
            type(s.buffer).__name__, getattr(s.buffer, "raw", s.buffer).__class__.__name__]
print(json.dumps({
    "argv": sys.argv, "file": __file__, "name": __name__, "path": sys.path,
    "executable": sys.executable, "orig_argv": sys.orig_argv, "flags": list(sys.flags),
    "prefix": [sys.prefix, sys.exec_prefix, sys.base_prefix], "cwd": os.getcwd(),
    "main": [(k, type(v).__name__) for k, v in globals().items() if k not in ("is_open", "stream")],
    "annotations": repr(__annotations__),
    "ppid": os.getppid(), "modules": sorted(sys.modules), "recursion": sys.getrecursionlimit(),
    "streams": [stream(sys.stdin), stream(sys.stdout), stream(sys.stderr)],
    "input": sys.stdin.read(), "helper": helper.VALUE, "umask": os.umask(0o22),
    "builtins": sorted(dir(__builtins__)), "env": dict(os.environ), "warnings": sys.warnoptions,
    "limits": [__import__("resource").getrlimit(r) for r in range(16)],
    "fds": [fd for fd in range(3, 256) if is_open(fd)],
}, sort_keys=True))
'''

ENDINGS = {
    'traceback':
    'def f():\n    return 1 / 0\nprint("before")\nf()\n',
    'exit code':
    'import sys\nprint("out", end="")\nsys.exit(3)\n',
    'exit message':
    'exit("bye")\n',
    'os exit':
    'import os\nprint("lost")\nos._exit(5)\n',
    'at exit': ('import atexit, threading, time\n'
                'class A:\n    def __del__(self):\n        print("del")\n'
                'a = A()\natexit.register(print, "atexit")\n'
                'threading.Thread(target=lambda: (time.sleep(0.05), print("thread"))).start()\n'
                'print("main")\n'),
    # What a collection finalizes at exit, and in which order, as python3
    # does: a global kept alive by its own module (every function holds its
    # globals), and a cycle of the program's own.
    'buffer written out at exit':
    ('import sys\n'
     'class Out:\n    def __init__(self):\n        self.parts = []\n'
     '    def __del__(self):\n        sys.stdout.write("".join(self.parts))\n'
     'out = Out()\nfor n in range(3):\n    out.parts.append(f"{n}\\n")\n'),
    'cycles at exit':
    ('class Node:\n    def __del__(self):\n        print("del", self.n)\n'
     'nodes = [Node() for _ in range(3)]\n'
     'for n, node in enumerate(nodes):\n    node.n, node.next = n, nodes[(n + 1) % 3]\n'
     'del node\n'),
    'input past the end':
    'print(input())\nprint(input())\n',
    'syntax error at run':
    'x = 1\neval("(")\n',
    'kill itself':
    'import os, signal\nprint("x", flush=True)\nos.kill(os.getpid(), signal.SIGKILL)\n',
    'recursion':
    'import sys\ndef f(n):\n    return f(n + 1)\nf(0)\n',
}


@pytest.fixture
def container(docker_client, tmp_path) -> Iterator[SandboxContainer]:
    made = SandboxContainer(docker_client, 'oj-sandbox:latest', tmp_path / 'boxes', LIMITS,
                            {'oj-runner.root': str(tmp_path)})
    try:
        made.start()
        yield made
    finally:
        made.destroy()


def staged(container: SandboxContainer, tmp_path, source: str, **files: str) -> None:
    src = tmp_path / 'src'
    src.mkdir(exist_ok=True)
    (src / 'main.py').write_text(source)
    for name, text in files.items():
        (src / name).write_text(text)
    container.stage(src)


def run(container: SandboxContainer, tmp_path, request: RunRequest, stdin: str = '') -> RunResponse:
    (tmp_path / 'in').write_text(stdin)
    return container.run(request, tmp_path / 'in')


def seen(answer: RunResponse):
    return answer.exit_code, answer.signal, answer.stdout, answer.stderr


def test_a_case_from_the_zygote_sees_what_python3_shows_it(container, tmp_path):
    staged(container, tmp_path, PROBE, **{'helper.py': 'VALUE = 42\n'})
    forked = [run(container, tmp_path, REQUEST, f'line {n}\n') for n in range(2)]
    exec_d = run(container, tmp_path, EXEC_D, 'line 1\n')
    assert [answer.from_zygote for answer in forked] == [True, True]
    assert not exec_d.from_zygote
    assert seen(forked[1]) == seen(exec_d), (forked[1].stderr, exec_d.stderr)
    assert json.loads(forked[0].stdout)['input'] == 'line 0\n'


@pytest.mark.parametrize('ending', sorted(ENDINGS))
def test_a_program_ends_from_the_zygote_as_under_python3(container, tmp_path, ending):
    staged(container, tmp_path, ENDINGS[ending])
    forked = run(container, tmp_path, REQUEST, 'only line\n')
    exec_d = run(container, tmp_path, EXEC_D, 'only line\n')
    assert forked.from_zygote and not exec_d.from_zygote
    assert seen(forked) == seen(exec_d)


# A case that tries every way to reach another process of its job (each
# kill's outcome, by pid), then leaves what it can in its interpreter; the
# next case says what it finds.
REACH = r'''
import builtins, json, os, signal, sys
print(json.dumps({"clean": not hasattr(builtins, "left"), "hash": hash("seed")}))
reached = []
for pid in range(1, 400):
    for sig in (signal.SIGSTOP, signal.SIGKILL):
        try:
            if pid != os.getpid():
                os.kill(pid, sig)
                reached.append(pid)
        except (ProcessLookupError, PermissionError):
            pass
print(json.dumps(sorted(set(reached))))
builtins.left = True
sys.modules["json"].dumps = None
'''


def test_nothing_a_case_does_reaches_the_zygote_or_the_next_case(container, tmp_path):
    staged(container, tmp_path, REACH)
    first = run(container, tmp_path, REQUEST)
    second = run(container, tmp_path, REQUEST)
    assert first.from_zygote and second.from_zygote, (first, second)
    for answer in (first, second):
        found, reached = answer.stdout.decode().splitlines()
        assert reached == '[]', answer  # every other process refused its signals
        assert json.loads(found)['clean'], answer
    assert json.loads(first.stdout.splitlines()[0])['hash'] == json.loads(
        second.stdout.splitlines()[0])['hash']  # the same zygote
    rerun = run(container, tmp_path, dataclasses.replace(REQUEST, fresh=True))
    assert rerun.from_zygote
    # A rerun's interpreter is new: its hash seed is its own.
    assert json.loads(rerun.stdout.splitlines()[0])['hash'] != json.loads(
        first.stdout.splitlines()[0])['hash']


def test_without_its_zygote_a_job_runs_exec_d(container, tmp_path):
    staged(container, tmp_path, 'print(sum(map(int, input().split())))\n')
    assert run(container, tmp_path, REQUEST, '1 2\n').from_zygote
    zygotes = [
        int(process[1]) for process in container._container.top()['Processes']
        if process[0] == ZYGOTE_UID
    ]
    assert len(zygotes) == 1
    os.kill(zygotes[0], signal.SIGKILL)
    after = [run(container, tmp_path, REQUEST, f'{n} 2\n') for n in range(2)]
    assert [(answer.from_zygote, answer.stdout, answer.exit_code)
            for answer in after] == [(False, b'2\n', 0), (False, b'3\n', 0)]


def test_a_case_of_another_environment_is_exec_d(container, tmp_path):
    staged(container, tmp_path, 'import os\nprint(os.environ.get("EXTRA"))\n')
    assert run(container, tmp_path, REQUEST).stdout == b'None\n'
    other = dataclasses.replace(REQUEST, env=REQUEST.env + (('EXTRA', 'x'), ))
    answer = run(container, tmp_path, other)
    assert (answer.from_zygote, answer.stdout) == (False, b'x\n')


def test_cases_sent_ahead_are_each_run_on_their_own_input_and_timed_from_their_own_start(
        container, tmp_path):
    # A job's lane (sandbox/engine.py): its cases are sent before the one
    # under way has ended; the supervisor runs each once it has answered the
    # one before.
    staged(container, tmp_path,
           'import time\nn = int(input())\nif n == 0:\n    time.sleep(0.5)\nprint(n * 2)\n')
    sent = []
    for n in range(4):
        (tmp_path / f'{n}.in').write_text(f'{n}\n')
        sent.append(container.send(REQUEST, tmp_path / f'{n}.in'))
    answers = [container.answer(one) for one in sent]
    assert [(answer.stdout, answer.exit_code, answer.from_zygote)
            for answer in answers] == [(f'{n * 2}\n'.encode(), 0, True) for n in range(4)]
    assert answers[0].wall_us >= 500_000
    # Each from its own start: the wait for the first is no later case's.
    assert all(answer.wall_us < 400_000 for answer in answers[1:]), answers
    assert not list(container.box.glob('stdin*'))


# A Python checker: its message says its interpreter's hash seed and
# whether an earlier case's checker left anything in it; then it leaves
# something, and accepts.
SEEDED_CHECKER = '''import builtins, sys
print(hash("seed"), hasattr(builtins, "left"), sys.argv[1:], file=sys.stderr)
builtins.left = True
'''


def test_a_python_checkers_runs_are_forked_from_its_zygote_each_clean(sandbox, tmp_path):
    (tmp_path / 'src').mkdir()
    (tmp_path / 'src' / 'main.c').write_text(
        '#include <stdio.h>\nint main(void) {\n'
        '    long long a, b;\n    scanf("%lld %lld", &a, &b);\n'
        '    printf("%lld\\n", a + b);\n    return 0;\n}\n')
    (tmp_path / 'checker').mkdir()
    (tmp_path / 'checker' / 'checker.py').write_text(SEEDED_CHECKER)
    cases = []
    for n in range(3):
        (tmp_path / f'{n}.in').write_text(f'{n} 1\n')
        (tmp_path / f'{n}.out').write_text(f'{n + 1}\n')
        cases.append(CaseSpec(tmp_path / f'{n}.in', tmp_path / f'{n}.out', 1000, 65536))
    job = SandboxJob(key=f'checked-{uuid.uuid4()}',
                     language=Language.C,
                     source_dir=tmp_path / 'src',
                     problem_program=ProblemProgram(Role.CHECKER, Language.PYTHON,
                                                    tmp_path / 'checker'))
    try:
        assert sandbox.compile(job).ok
        results = [sandbox.run_case(job, case) for case in cases]
    finally:
        sandbox.release(job.key)
    assert [result.status for result in results] == [Status.AC] * 3, results
    # One interpreter's seed (a new python3 has a seed of its own), nothing
    # left by the case before, and the case's files as its arguments.
    notes = {result.note for result in results}
    assert len(notes) == 1, notes
    seed, left, args = notes.pop().split(' ', 2)
    assert left == 'False' and args == "['case/input', 'case/output', 'case/answer']"
