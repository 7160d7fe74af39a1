"""A TLE within the margin is run once more and the lower time counts; a run
the supervisor stopped at the margin, or a sleeper, is not."""
import dataclasses

import pytest

from sandbox.graders.standard import StandardGrader
from sandbox.job import CaseSpec
from sandbox.job_state import MAX_RERUNS_PER_JOB
from sandbox.results import Status
from sandbox.settings import SandboxSettings
from tests.unit.fakes import ScriptedEngine, grader_of
from tests.unit.test_verdict import OK

LIMIT_MS = 1000


def ran(cpu_ms, **changes):
    return dataclasses.replace(OK, cpu_us=int(cpu_ms * 1000), wall_us=int(cpu_ms * 1000), **changes)


@pytest.fixture
def judge(tmp_path):
    """Judges one C case whose runs measure as given, one per attempt."""

    def judge_case(*measured, tle_margin=1.5, fail_on=None):
        """`fail_on`: the attempt (1-based) that raises it instead of running."""
        runs = list(measured)

        def answer(want, request):
            if fail_on is not None and fail_on[0] == len(engine.asked):
                return fail_on[1]
            return runs.pop(0)

        engine = ScriptedEngine(answer)
        settings = SandboxSettings(root=tmp_path / 'root', tle_margin=tle_margin)
        (tmp_path / 'in').write_bytes(b'1 2\n')
        (tmp_path / 'out').write_bytes(b'3\n')
        result = grader_of(StandardGrader, engine, tmp_path, settings).grade(
            CaseSpec(tmp_path / 'in', tmp_path / 'out', LIMIT_MS, 65536))
        return result, [request for _, request in engine.asked]

    return judge_case


def test_a_run_is_stopped_at_the_margin_not_at_the_limit(judge):
    _, requests = judge(ran(10))
    assert [r.cpu_ms for r in requests] == [1500]


def test_a_tle_within_the_margin_that_runs_within_the_limit_again_is_accepted(judge):
    result, requests = judge(ran(1200), ran(900))
    assert len(requests) == 2
    assert (result.status, result.exec_time_ms) == (Status.AC, 900)


def test_the_rerun_asks_for_fresh_state_and_the_first_run_does_not(judge):
    # A rerun runs where nothing of the first run is left (supervisor.c):
    # the first one left the counters of its places moved on.
    _, requests = judge(ran(1200), ran(900))
    assert [request.fresh for request in requests] == [False, True]


def test_the_rerun_runs_alone_on_the_host_and_the_first_run_does_not(tmp_path):
    # Alone: no neighbour slows it, and no run under way (another case of the
    # same program) can pass it the answer (sandbox/engine.py).
    runs = [ran(1200), ran(900)]
    engine = ScriptedEngine(lambda want, request: runs.pop(0))
    (tmp_path / 'in').write_bytes(b'1 2\n')
    (tmp_path / 'out').write_bytes(b'3\n')
    grader_of(StandardGrader, engine,
              tmp_path).grade(CaseSpec(tmp_path / 'in', tmp_path / 'out', LIMIT_MS, 65536))
    assert len(engine.asked) == 2
    assert [request.fresh for request in engine.alone] == [True]


def test_the_rerun_starts_the_wall_bound_after_the_first_run_started_whenever_it_ended(tmp_path):
    # A first run that sleeps to choose the moment of its end told its rerun
    # the answer by it (the rerun reads the clock): the rerun starts at the
    # same moment whatever that end.
    for first_wall_ms in (1200, 2500):
        runs = [dataclasses.replace(ran(1200), wall_us=first_wall_ms * 1000), ran(900)]
        engine = ScriptedEngine(lambda want, request: runs.pop(0))
        (tmp_path / 'in').write_bytes(b'1 2\n')
        (tmp_path / 'out').write_bytes(b'3\n')
        grader_of(StandardGrader, engine,
                  tmp_path).grade(CaseSpec(tmp_path / 'in', tmp_path / 'out', LIMIT_MS, 65536))
        wall_bound_sec = (3 * LIMIT_MS + 1000) / 1000
        assert engine.pauses == [pytest.approx(wall_bound_sec - first_wall_ms / 1000)]


def test_two_tles_within_the_margin_report_the_lower_time(judge):
    result, requests = judge(ran(1300), ran(1200))
    assert len(requests) == 2
    assert (result.status, result.exec_time_ms) == (Status.TLE, 1200)


def test_a_run_stopped_at_the_margin_is_tle_at_once(judge):
    result, requests = judge(ran(1501, cpu_timeout=True, signal=9))
    assert len(requests) == 1
    assert result.status is Status.TLE and result.exec_time_ms > LIMIT_MS


def test_a_sleeper_is_not_run_again(judge):
    result, requests = judge(ran(5, wall_timeout=True, signal=9))
    assert len(requests) == 1
    assert (result.status, result.exec_time_ms) == (Status.TLE, LIMIT_MS + 1)


def test_without_a_margin_runs_stop_at_the_limit_and_are_not_run_again(judge):
    result, requests = judge(ran(1001, cpu_timeout=True, signal=9), tle_margin=1.0)
    assert [r.cpu_ms for r in requests] == [1000]
    assert result.status is Status.TLE


def test_a_tle_reports_a_time_above_its_limit(judge):
    # 1000.4 ms rounds to the limit itself; a TLE never reads as within it.
    result, _ = judge(ran(1000.4, cpu_timeout=True, signal=9))
    assert result.status is Status.TLE and result.exec_time_ms == LIMIT_MS + 1


def test_a_rerun_that_answers_differently_does_not_count(judge):
    # A randomized program that spins past the limit when it fails its own
    # check does not get a second draw: the runs must be the same run.
    result, requests = judge(ran(1100, stdout=b'wrong\n'), ran(500, stdout=b'3\n'))
    assert len(requests) == 2
    assert result.status is Status.TLE and result.exec_time_ms == 1100


def test_a_job_takes_only_a_few_reruns(tmp_path):
    state = grader_of(StandardGrader, ScriptedEngine(None), tmp_path).state
    assert [state.take_rerun()
            for _ in range(MAX_RERUNS_PER_JOB + 2)] == [True] * MAX_RERUNS_PER_JOB + [False, False]
    # A new generation (compiled again) has its own.
    assert grader_of(StandardGrader, ScriptedEngine(None), tmp_path).state.take_rerun()


def test_a_host_fault_in_the_rerun_keeps_the_first_judgement(judge):
    from sandbox.faults import FaultKind, HostFault
    result, requests = judge(ran(1200),
                             fail_on=(2, HostFault(FaultKind.ENGINE, 'the engine went away')))
    assert len(requests) == 2
    assert (result.status, result.exec_time_ms) == (Status.TLE, 1200)
