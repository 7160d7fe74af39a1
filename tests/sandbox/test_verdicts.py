"""Verdict cases as data: every folder of `cases/` is one submission and one test.

A folder holds `main.c`, `main.cpp` or `main.py`, `case.json` (`verdict`, and
optionally `time_limit_ms`, `memory_limit_kb`, `exit_code`, `stdout_contains`,
`stderr_contains`, and `also`: verdicts a loaded host may give instead, for a
hostile case that measures time and whose point is only that it is never AC), optionally `input`, `output` (the expected answer), a
`chaos/` folder placed beside the source, and a `checker/` folder (the
problem's checker: `checker.<ext>` and what it includes), which then judges
the output, or an `interactor/` folder (`interactor.<ext>`), which then
talks with the program and judges the conversation. Instead of its own
folder a case may name one of `judges/` in `case.json` (`"checker": NAME` or
`"interactor": NAME`): many cases meet the same checker or interactor.
Adding a case adds no code.

Each case is judged twice, as two jobs one after the other (a rejudge: the
second must not see anything the first left, in the containers the first
one left), with another job's files alive beside it and the answers of other
cases in its own testdata; afterwards nothing may be left running, the host
canary is intact and no link has appeared on the host side.
"""
import dataclasses
import json
import os
import pathlib
import shutil
import time
import uuid
from typing import Optional, Tuple

import pytest

from runner.backend.noj.outbound import case_object
from sandbox.job import CaseSpec, ProblemProgram, Role, SandboxJob
from sandbox.languages import Language
from sandbox.results import Status
from tests.sandbox.conftest import SECRET, assert_nothing_left_running

CASES_DIR = pathlib.Path(__file__).parent / 'cases'
JUDGES_DIR = pathlib.Path(__file__).parent / 'judges'
LANGUAGE_BY_SOURCE = {lang.source_name: lang for lang in Language}
# Generous: this checks that a run is bounded, not how fast it is.
BOUND_SLACK_SEC = 10


@dataclasses.dataclass(frozen=True)
class VerdictCase:
    folder: pathlib.Path
    language: Language
    verdict: Status
    time_limit_ms: int
    memory_limit_kb: int
    exit_code: Optional[int]
    stdout_contains: Optional[str]
    stderr_contains: Optional[str]
    judge: Optional[Tuple[Role, Language, pathlib.Path]]  # and the folder it is in
    also: Tuple[Status, ...] = ()

    @classmethod
    def load(cls, folder: pathlib.Path) -> 'VerdictCase':
        sources = [p.name for p in folder.iterdir() if p.name in LANGUAGE_BY_SOURCE]
        assert len(sources) == 1, f'{folder.name}: exactly one main.* expected'
        meta = json.loads((folder / 'case.json').read_text())
        judges = [(role, lang, where) for role in Role for where in
                  [JUDGES_DIR / meta[role.value] if role.value in meta else folder / role.value]
                  for lang in Language if (where / role.source_name(lang)).is_file()]
        assert len(judges) <= 1, f'{folder.name}: one checker or interactor at most'
        assert 'AC' not in meta.get('also', ()), f'{folder.name}: AC is never a noise verdict'
        return cls(folder=folder,
                   judge=judges[0] if judges else None,
                   language=LANGUAGE_BY_SOURCE[sources[0]],
                   verdict=Status(meta['verdict']),
                   time_limit_ms=meta.get('time_limit_ms', 1000),
                   memory_limit_kb=meta.get('memory_limit_kb', 65536),
                   exit_code=meta.get('exit_code'),
                   stdout_contains=meta.get('stdout_contains'),
                   stderr_contains=meta.get('stderr_contains'),
                   also=tuple(Status(v) for v in meta.get('also', ())))

    def lay_out(self, job_dir: pathlib.Path) -> CaseSpec:
        """The job folder as the runner prepares it, with secrets beside the case."""
        src, testdata = job_dir / 'src', job_dir / 'testdata'
        src.mkdir(parents=True)
        testdata.mkdir()
        shutil.copy(self.folder / self.language.source_name, src)
        if (self.folder / 'chaos').is_dir():
            shutil.copytree(self.folder / 'chaos', src, dirs_exist_ok=True)
        if self.judge is not None:
            role, _, where = self.judge
            shutil.copytree(where, job_dir / role.value)
        for name, default in (('input', b''), ('output', b'')):
            path = self.folder / name
            data = path.read_bytes() if path.exists() else default
            (testdata / f'0000.{name[:-3] if name == "output" else "in"}').write_bytes(data)
        for other in ('0001', '0100'):
            (testdata / f'{other}.in').write_bytes(SECRET + b'\n')
            (testdata / f'{other}.out').write_bytes(SECRET + b'\n')
        return CaseSpec(input_path=testdata / '0000.in',
                        answer_path=testdata / '0000.out',
                        time_limit_ms=self.time_limit_ms,
                        memory_limit_kb=self.memory_limit_kb)


ALL_CASES = sorted(p for p in CASES_DIR.iterdir() if p.is_dir())


def _links_under(root: pathlib.Path):
    return [
        os.path.join(d, n) for d, dirs, files in os.walk(root) for n in dirs + files
        if os.path.islink(os.path.join(d, n))
    ]


@pytest.mark.docker
@pytest.mark.parametrize('folder', ALL_CASES, ids=lambda p: p.name)
def test_verdict(folder, sandbox, sandbox_root, docker_client, other_job, canary, tmp_path):
    case = VerdictCase.load(folder)
    spec = case.lay_out(tmp_path / 'job')
    judge = None
    if case.judge is not None:
        role, language, _ = case.judge
        judge = ProblemProgram(role, language, tmp_path / 'job' / role.value)
    for attempt in range(2):
        job = SandboxJob(key=f'{folder.name}-{uuid.uuid4()}',
                         language=case.language,
                         source_dir=tmp_path / 'job' / 'src',
                         problem_program=judge)
        try:
            compiled = sandbox.compile(job)
            if case.verdict is Status.CE:
                assert compiled.status is Status.CE
                assert case.stderr_contains is None or case.stderr_contains in compiled.message
                continue
            assert compiled.ok, compiled.message
            started = time.monotonic()
            result = sandbox.run_case(job, spec)
            elapsed = time.monotonic() - started
            assert result.status is case.verdict or result.status in case.also, (attempt, result)
            judge_wall = (2 * sandbox._settings.checker_time_ms + 1000) / 1000 if judge else 0
            assert elapsed < (3 * case.time_limit_ms + 1000) / 1000 + judge_wall + BOUND_SLACK_SEC
            if case.exit_code is not None:
                assert result.exit_code == case.exit_code, result
            if case.stdout_contains is not None:
                assert case.stdout_contains in result.stdout, result
            if case.stderr_contains is not None:
                assert case.stderr_contains in result.stderr, result
            report = json.loads(json.dumps(case_object(result)))
            assert len(report['stdout'].encode()) <= 8192 * 3  # bytes, replaced chars widen
            assert isinstance(report['execTime'], int) and isinstance(report['memoryUsage'], int)
            if result.status is Status.TLE:
                assert result.exec_time_ms > case.time_limit_ms or elapsed * 1000 > 3 * case.time_limit_ms
            assert_nothing_left_running(docker_client, sandbox_root)
        finally:
            sandbox.release(job.key)
    assert canary.read_bytes() == b'canary\n'
    assert _links_under(sandbox_root) == []
