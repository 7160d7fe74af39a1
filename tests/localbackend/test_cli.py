"""The command line: submit, results, rejudge, demo, and `python -m localbackend` serving."""
import io
import os
import pathlib
import signal
import subprocess
import sys
import threading
import zipfile

import requests

from localbackend import cli
from localbackend.submission_files import load_submissions
from tests.localbackend.helpers import TIMEOUT, HttpRunner, case, start_backend

ROOT = pathlib.Path(__file__).resolve().parents[2]
SAMPLES = ROOT / 'localbackend' / 'samples'


class SampleJudge:
    """A fake runner that reports, for each sample's source, the verdict its manifest expects."""

    def __init__(self, backend, lie: bool = False):
        self.runner = HttpRunner(backend, 'judge')
        self.expected = {s.source: s for s in load_submissions(SAMPLES / 'submissions')}
        self.lie = lie
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self):
        while not self.stop.is_set():
            answer = self.runner.next_job(wait=1)
            if answer.status_code != 200:
                continue
            job = answer.json()
            code = requests.get(job['code_url'], timeout=TIMEOUT).content
            with zipfile.ZipFile(io.BytesIO(code)) as archive:
                source = archive.read(archive.namelist()[0])
            sample = self.expected[source]
            tasks = []
            for t, task in enumerate(job['tasks']):
                status = sample.expected
                if self.lie:
                    status = 'AC'
                elif sample.expected == 'WA' and sample.expected_score == 40 and t == 0:
                    status = 'AC'
                tasks.append([case(status) for _ in range(task['caseCount'])])
            self.runner.complete(job['job_id'], {'tasks': tasks})

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join(TIMEOUT)


def test_demo_submits_every_sample_and_checks_verdicts(capsys):
    backend = start_backend()
    try:
        backend.load_problems(SAMPLES / 'problems')
        with SampleJudge(backend):
            code = cli.main(['demo', '--url', backend.url, '--timeout', '60'])
        out = capsys.readouterr().out
        assert code == 0, out
        assert '24/24 as expected' in out
        assert 'OLE' in out and 'score 40' in out
    finally:
        backend.stop()


def test_demo_fails_when_a_verdict_is_not_the_expected_one(capsys):
    backend = start_backend()
    try:
        backend.load_problems(SAMPLES / 'problems')
        with SampleJudge(backend, lie=True):
            code = cli.main(['demo', '--url', backend.url, '--timeout', '60'])
        out = capsys.readouterr().out
        assert code == 1
        assert '08-cpp-mle: expected MLE, got AC' in out
    finally:
        backend.stop()


def test_submit_a_file_and_wait_for_its_table(backend, capsys, tmp_path):
    source = tmp_path / 'sol.py'
    source.write_text('print(3)\n')
    runner = HttpRunner(backend)
    judged = threading.Thread(target=lambda: runner.complete_ac(runner.next_job(wait=30).json()))
    judged.start()
    code = cli.main(['submit', '--url', backend.url, '--problem', '1', str(source), '--wait', '30'])
    judged.join(TIMEOUT)
    out = capsys.readouterr().out
    assert code == 0
    sid = out.splitlines()[0]
    assert backend.submission(sid).language == 2
    assert 'AC  score 100' in out


def test_submit_needs_a_problem_and_a_language(backend, capsys, tmp_path):
    source = tmp_path / 'sol.txt'
    source.write_text('x')
    assert cli.main(['submit', '--url', backend.url, '--problem', '1', str(source)]) == 2
    assert cli.main(
        ['submit', '--url', backend.url, '--problem', '9', '--language', 'c',
         str(source)]) == 1
    assert 'unknown problem' in capsys.readouterr().err


def test_results_and_rejudge(backend, capsys):
    sid = backend.submit(1, 'c', 'int main(){}')
    assert cli.main(['results', '--url', backend.url]) == 0
    assert sid in capsys.readouterr().out
    assert cli.main(['results', '--url', backend.url, sid]) == 0
    assert 'pending' in capsys.readouterr().out
    assert cli.main(['rejudge', '--url', backend.url, sid]) == 0
    assert capsys.readouterr().out.strip() == backend.submission(sid).current_job_id
    assert cli.main(['results', '--url', backend.url, 'nope']) == 1


def test_serve_refuses_to_start_without_tokens(capsys, monkeypatch):
    monkeypatch.delenv('RUNNER_REGISTRATION_TOKEN', raising=False)
    monkeypatch.delenv('SANDBOX_TOKEN', raising=False)
    assert cli.main(['--port', '0']) == 2
    assert 'RUNNER_REGISTRATION_TOKEN' in capsys.readouterr().err
    assert cli.main(['--port', '0', '--registration-token', 'r']) == 2
    assert 'SANDBOX_TOKEN' in capsys.readouterr().err


def test_python_m_localbackend_serves_and_stops_on_sigterm(tmp_path):
    env = dict(os.environ,
               RUNNER_REGISTRATION_TOKEN='reg-from-env-5521',
               SANDBOX_TOKEN='sbx-from-env-8830',
               PYTHONPATH=str(ROOT))
    process = subprocess.Popen(
        [sys.executable, '-m', 'localbackend', '--port', '0', '--samples', '--lease-ttl', '5'],
        cwd=tmp_path,
        env=env,
        stderr=subprocess.PIPE,
        text=True)
    try:
        lines = []
        for line in process.stderr:
            lines.append(line)
            if 'serving on ' in line:
                break
        url = lines[-1].split('serving on ')[1].strip()
        registered = requests.post(url + '/runners/register',
                                   json={
                                       'registration_token': 'reg-from-env-5521',
                                       'name': 'x'
                                   },
                                   timeout=TIMEOUT)
        assert registered.status_code == 201
        checksum = requests.get(url + '/problem/2/checksum',
                                params={'token': 'sbx-from-env-8830'},
                                timeout=TIMEOUT)
        assert checksum.status_code == 200
        process.send_signal(signal.SIGTERM)
        rest = process.stderr.read()
        assert process.wait(TIMEOUT) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(TIMEOUT)
    logged = ''.join(lines) + rest
    assert 'reg-from-env-5521' not in logged and 'sbx-from-env-8830' not in logged
    assert registered.json()['token'] not in logged
