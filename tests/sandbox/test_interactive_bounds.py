"""An interactive case's wall bound: the program's own (3 T + 1 s) while the
pair is silent; what the interactor thinks (its CPU time) is added, up to its
time limit, and only that. A generous interactor budget makes the two plain:
a program that says nothing and sleeps must not hold its core and two
containers for the interactor's budget on top of its own."""
import pathlib
import shutil
import time
import uuid

import pytest

from sandbox.job import CaseSpec, ProblemProgram, Role, SandboxJob
from sandbox.languages import Language
from sandbox.results import Status
from tests.sandbox.conftest import sandbox_of_its_own

JUDGES = pathlib.Path(__file__).parent / 'judges'
CASES = pathlib.Path(__file__).parent / 'cases'
INTERACTOR_BUDGET_MS = 30000

SILENT_SLEEPER = b'''#include <stdio.h>
#include <unistd.h>
int main(void) {
    long n;
    if (scanf("%ld", &n) != 1) return 0;
    for (;;) pause();
}
'''


@pytest.fixture
def generous_sandbox(docker_client, tmp_path):
    with sandbox_of_its_own(docker_client,
                            tmp_path / 'root',
                            max_containers=2,
                            interactor_time_ms=INTERACTOR_BUDGET_MS) as sandbox:
        yield sandbox


def _judge(sandbox, tmp_path, source: bytes, interactor: pathlib.Path, time_limit_ms: int,
           case: pathlib.Path):
    src = tmp_path / 'src'
    src.mkdir()
    (src / 'main.c').write_bytes(source)
    shutil.copytree(interactor, tmp_path / 'interactor')
    (tmp_path / 'in').write_bytes((case / 'input').read_bytes())
    (tmp_path / 'out').write_bytes((case / 'output').read_bytes())
    job = SandboxJob(key=f'bounds-{uuid.uuid4()}',
                     language=Language.C,
                     source_dir=src,
                     problem_program=ProblemProgram(Role.INTERACTOR, Language.C,
                                                    tmp_path / 'interactor'))
    try:
        assert sandbox.compile(job).ok
        started = time.monotonic()
        result = sandbox.run_case(job,
                                  CaseSpec(tmp_path / 'in', tmp_path / 'out', time_limit_ms, 65536))
        return result, time.monotonic() - started
    finally:
        sandbox.release(job.key)


@pytest.mark.docker
def test_a_silent_program_costs_its_own_wall_bound(generous_sandbox, tmp_path):
    result, elapsed = _judge(generous_sandbox, tmp_path, SILENT_SLEEPER, JUDGES / 'guess-c', 500,
                             CASES / 'interactor_tle_program_sleeps_past_the_interactors_bound')
    assert result.status is Status.TLE, result
    # Its own bound is 2.5 s; with the interactor's budget on top it was 32.5 s.
    assert elapsed < 2.5 + INTERACTOR_BUDGET_MS / 1000 / 3, elapsed


@pytest.mark.docker
def test_a_program_waits_out_an_interactor_that_thinks(generous_sandbox, tmp_path):
    """The interactor thinks 2 s of CPU in all, longer than the program's own
    wall bound (1.9 s at 300 ms): the program waited, it did not stall."""
    case = CASES / 'interactor_ac_slow_interactor'
    result, _ = _judge(generous_sandbox, tmp_path, (case / 'main.c').read_bytes(),
                       case / 'interactor', 300, case)
    assert result.status is Status.AC, result
