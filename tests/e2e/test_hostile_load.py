"""Hostile load from submissions and from a broken backend: the report is always
deliverable, comparing outputs never starves the heartbeat, hostile testdata
and payloads end in one clear abort."""
import dataclasses
import json
import struct

import pytest

from localbackend import build_zip
from localbackend.problems import Problem
from tests.e2e import programs
from tests.e2e.harness import TIMEOUT

pytestmark = [pytest.mark.e2e, pytest.mark.docker]

CONTROL_BYTES = b'''#include <stdio.h>
#include <string.h>
int main(void) {
    static char noise[8192];
    memset(noise, 1, sizeof noise);
    fwrite(noise, 1, sizeof noise, stdout);
    fwrite(noise, 1, sizeof noise, stderr);
    return 0;
}
'''
BLANK_LINES = b'''#include <stdio.h>
int main(void) {
    static char lines[1 << 20];
    for (int i = 0; i < (int)sizeof lines; i += 2) { lines[i] = ' '; lines[i + 1] = '\\n'; }
    for (int i = 0; i < 32; i++) fwrite(lines, 1, sizeof lines, stdout);
    return 0;
}
'''


def test_a_report_of_720_cases_of_control_bytes_lands_under_the_body_bound(e2e):
    backend = e2e.backend()
    backend.add_problem(Problem.from_cases(50, [[('', 'x')] * 90] * 8))
    runner = e2e.runner(backend)
    sid = backend.submit(50, 'c', CONTROL_BYTES)

    result = backend.wait_result(sid, TIMEOUT * 2)
    cases = [case for task in result.report.tasks for case in task]
    assert len(cases) == 720 and {c.status for c in cases} == {'WA'}
    body = {'tasks': [[dataclasses.asdict(c) for c in task] for task in result.report.tasks]}
    assert len(json.dumps(body)) <= 512 * 1024
    assert all(0 < len(c.stdout) < 8192 and c.stdout == '\x01' * len(c.stdout) for c in cases)
    assert backend.events.count('complete', outcome='landed') == 1
    assert backend.events.count('claim', outcome='ok') == 1  # judged once, never again
    assert not any((runner.data_dir / 'backup').glob('*'))
    assert e2e.stop(runner) == 0


def test_hostile_blank_lines_on_every_case_never_let_a_lease_lapse(e2e):
    backend = e2e.backend(lease_ttl_sec=3)
    backend.add_problem(Problem.from_cases(51, [[('', '42\n')] * 20]))
    runner = e2e.runner(backend)
    sid = backend.submit(51, 'c', BLANK_LINES)

    result = backend.wait_result(sid, TIMEOUT * 2)
    assert {c.status for task in result.report.tasks for c in task} == {'WA'}
    assert backend.events.count('reclaim') == 0  # every heartbeat came in time
    beats = [e.at for e in backend.events.list('heartbeat', runner_id=runner.runner_id(backend))]
    gaps = [b - a for a, b in zip(beats, beats[1:])]
    print(f'largest heartbeat gap while comparing: {max(gaps):.2f} s (interval 0.5 s)')
    assert e2e.stop(runner) == 0


def test_an_entry_bomb_testdata_zip_is_refused_as_prep_failed(e2e):
    backend = e2e.backend(max_attempts=1)
    bomb = Problem.from_cases(52, [[('1 2\n', '3\n')]])
    end64 = struct.pack('<4sQ2H2L4Q', b'PK\x06\x06', 44, 45, 45, 0, 0, 3_000_000, 3_000_000,
                        160_000_000, 0)
    locator = struct.pack('<4sLQL', b'PK\x06\x07', 0, 0, 1)
    end = struct.pack('<4s4H2LH', b'PK\x05\x06', 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    bomb.__dict__['testdata_zip'] = end64 + locator + end  # served as it is
    backend.add_problem(bomb)
    runner = e2e.runner(backend)
    sid = backend.submit(52, 'python', programs.AC_PYTHON)

    abort = backend.events.wait_for('abort', timeout=TIMEOUT)
    assert abort.reason == 'prep_failed'
    assert backend.wait_result(sid, TIMEOUT).verdict == 'JE'  # broken problem data
    assert runner.wait_for_line(r'more than 10000 entries'), runner.log()
    assert e2e.stop(runner) == 0


def test_a_chaos_file_named_like_the_build_is_refused_naming_it(e2e):
    backend = e2e.backend(max_attempts=1)
    backend.add_problem(Problem.from_cases(53, [[('1 2\n', '3\n')]], chaos={'main': b'#!/bin/sh'}))
    runner = e2e.runner(backend)
    backend.submit(53, 'c', programs.SLOW_AC_C)

    abort = backend.events.wait_for('abort', timeout=TIMEOUT)
    assert abort.reason == 'prep_failed'
    assert runner.wait_for_line(r'chaos/main has the name of a build file'), runner.log()
    assert e2e.stop(runner) == 0


def test_an_oversized_payload_with_a_readable_job_id_is_aborted_at_once(e2e):
    backend = e2e.backend(max_attempts=1)
    payload = {**backend.job_payload(1, 'python'), 'checker': 'x' * (2 << 20)}
    poison = backend.inject_job(payload, code_zip=build_zip({'main.py': programs.AC_PYTHON}))
    runner = e2e.runner(backend)

    abort = backend.events.wait_for('abort', timeout=TIMEOUT, job_id=poison)
    assert abort.reason == 'prep_failed'
    assert backend.events.count('reclaim') == 0  # not left to lease expiry
    assert runner.wait_for_line(r'over the 1048576 byte limit'), runner.log()
    assert e2e.stop(runner) == 0
