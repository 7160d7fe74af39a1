"""Preparing jobs, and hostile payloads through the whole claim path:
real client (HTTP mocked with `responses`), real preparer, testdata cache and
job folders on disk; only the dispatcher and the sender are fakes."""
import threading

import pytest
import responses

from runner.active_jobs import ActiveJobs
from runner.backend.noj.client import BackendClient
from runner.backend.noj.inbound import RunnerIdentity, parse_claim
from runner.backend.noj.outbound import AbortReason
from runner.backend.noj.poller import Poller
from runner.prep.job_folders import JobFolders
from runner.prep.locks import FileLocks
from runner.backend.noj.prepare import MAX_SOURCE_BYTES, Preparer
from runner.backend.noj.testdata import TestdataCache as Cache
from runner.backend.noj.testdata import TestdataError as CacheError
from runner.backend.noj.reports import AbortReport
from sandbox.languages import Language
from tests.unit.fakes import make_zip, symlink

# Some hostile zips carry a name twice on purpose.
pytestmark = pytest.mark.filterwarnings('ignore:Duplicate name')

BASE = 'http://backend'
RN, JB = 'rn_1', 'jb_1'
CODE_URL = 'https://store.example/code.zip?sig=secret'

GOOD_CODE = make_zip([('main.c', b'int main(void) { return 0; }')])
GOOD_TESTDATA = make_zip([('0000.in', b'1 2'), ('0000.out', b'3'), ('0001.in', b'4 5'),
                          ('0001.out', b'9'), ('chaos/helper.h', b'#pragma once')])


def job_body(**changes):
    body = {
        'job_id': JB,
        'submission_id': 's1',
        'problem_id': '07',
        'language': 0,
        'code_url': CODE_URL,
        'checker': 'placeholder',
        'tasks': [{
            'taskScore': 100,
            'memoryLimit': 65536,
            'timeLimit': 1000,
            'caseCount': 2
        }],
    }
    body.update(changes)
    return {key: value for key, value in body.items() if value is not ...}


class World:
    """The runner's folders under one root, and the backend behind `responses`."""

    def __init__(self, root, mock):
        self.root = root
        self.mock = mock
        self.client = BackendClient(BASE,
                                    sandbox_token='sbx').with_identity(RunnerIdentity(RN, 'rk'))
        self.folders = JobFolders(root / 'submissions', root / 'backup')
        self.folders.start()
        self.cache = Cache(root / 'testdata', self.client, FileLocks(root / 'testdata' / '.locks'))
        self.preparer = Preparer(self.client, self.cache, self.folders)

    def serve(self, code=GOOD_CODE, testdata=GOOD_TESTDATA, checksum='c1'):
        self.mock.get(CODE_URL, body=code)
        self.mock.get(f'{BASE}/problem/7/checksum', json={'data': checksum})
        self.mock.get(f'{BASE}/problem/7/testdata', body=testdata)

    def job_folders(self):
        folder = self.folders.root
        return sorted(path.name for path in folder.iterdir()) if folder.exists() else []

    def everything(self):
        return sorted(str(path.relative_to(self.root)) for path in self.root.rglob('*'))


@pytest.fixture
def world(tmp_path):
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        yield World(tmp_path / 'data', mock)


def test_prepare_lays_out_the_job_folder(world):
    world.serve()
    job = world.preparer.prepare(parse_claim(job_body()), threading.Event())
    assert (job.job_id, job.submission_id, job.problem_id) == (JB, 's1', 7)
    assert job.language is Language.C
    assert job.job_dir.parent == world.folders.root
    assert world.folders.root.parent == world.root / 'submissions'
    assert sorted(p.name for p in job.source_dir.iterdir()) == ['helper.h', 'main.c']
    assert job.input_path(0, 1).read_bytes() == b'4 5'
    assert job.answer_path(0, 0).read_bytes() == b'3'
    assert sorted(p.name for p in (job.job_dir / 'testdata').iterdir()) == [
        '0000.in', '0000.out', '0001.in', '0001.out'
    ]


def test_each_claim_generation_gets_its_own_folder(world):
    world.serve()
    first = world.preparer.prepare(parse_claim(job_body()), threading.Event())
    marker = first.source_dir / 'compiled'
    marker.write_text('in use by the first generation')
    second = world.preparer.prepare(parse_claim(job_body()), threading.Event())
    assert first.job_dir != second.job_dir
    assert first.job_dir.name.startswith(JB) and second.job_dir.name.startswith(JB)
    assert marker.read_text() == 'in use by the first generation'
    assert not (second.source_dir / 'compiled').exists()


def test_a_chaos_file_named_like_the_source_is_refused(world):
    world.serve(testdata=make_zip([('0000.in',
                                    b''), ('0000.out',
                                           b''), ('0001.in',
                                                  b''), ('0001.out',
                                                         b''), ('chaos/main.c', b'not yours')]))
    with pytest.raises(CacheError, match='chaos/main.c has the name of a build file'):
        world.preparer.prepare(parse_claim(job_body()), threading.Event())
    assert world.job_folders() == []


# -- hostile payloads through the poller ------------------------------------------


class Recorder:

    def __init__(self):
        self.reports = []
        self.handled = []

    def submit(self, report):
        self.reports.append(report)

    def handle(self, job):
        self.handled.append(job)
        return False

    def check_limits(self, memory_limit_kb):
        pass


def claim_once(world, body):
    world.mock.get(f'{BASE}/runners/{RN}/next-job', json=body)
    recorder = Recorder()
    tracker = ActiveJobs()
    poller = Poller(world.client,
                    tracker,
                    world.preparer,
                    recorder,
                    recorder,
                    max_concurrent_jobs=4,
                    poll_interval_sec=3,
                    wait=lambda stop, seconds: stop.is_set())
    poller.poll_once()
    return recorder, tracker


def test_a_good_payload_is_dispatched(world):
    world.serve()
    recorder, tracker = claim_once(world, job_body())
    assert recorder.reports == []
    assert [job.job_id for job in recorder.handled] == [JB]
    assert tracker.snapshot() == [JB]


@pytest.mark.parametrize('changes', [
    {
        'submission_id': ...
    },
    {
        'problem_id': 'x7'
    },
    {
        'problem_id': None
    },
    {
        'language': 9
    },
    {
        'language': 'c'
    },
    {
        'code_url': 'ftp://store/code.zip'
    },
    {
        'tasks': 'all'
    },
    {
        'tasks': [{
            'taskScore': 100,
            'memoryLimit': -1,
            'timeLimit': 1000,
            'caseCount': 1
        }]
    },
])
def test_a_malformed_field_is_prep_failed_without_preparing(world, changes):
    recorder, tracker = claim_once(world, job_body(**changes))
    assert recorder.reports == [AbortReport(JB, AbortReason.PREP_FAILED, None)]
    assert recorder.handled == []
    assert tracker.snapshot() == [JB]  # released by the sender, before it sends
    assert world.job_folders() == []
    assert len(world.mock.calls) == 1  # nothing downloaded


HOSTILE = {
    'code zip traversal': dict(code=make_zip([('../../evil.c', b'x')])),
    'code zip absolute path': dict(code=make_zip([('/tmp/evil.c', b'x')])),
    'code zip symlink': dict(code=make_zip([symlink('main.c', b'/etc/passwd')])),
    'code zip bomb': dict(code=make_zip([('main.c', b'\0' * (MAX_SOURCE_BYTES + 1))])),
    'wrong extension': dict(code=make_zip([('main.py', b'print(1)')])),
    'missing main file': dict(code=make_zip([('src/', b''), ('solution.c', b'x')])),
    'two files': dict(code=make_zip([('main.c', b'x'), ('evil.c', b'y')])),
    'code not a zip': dict(code=b'<html>AccessDenied</html>'),
    'testdata traversal': dict(testdata=make_zip([('0000.in', b''), ('../../../evil', b'x')])),
    'testdata chaos traversal': dict(testdata=make_zip([('chaos/../../../../evil', b'x')])),
    'testdata not a zip': dict(testdata=b'nope'),
    'case count mismatch': dict(testdata=make_zip([('0000.in', b''), ('0000.out', b'')])),
}


@pytest.mark.parametrize('name', list(HOSTILE))
def test_hostile_zips_end_as_prep_failed_with_nothing_written_outside(world, name):
    world.serve(**HOSTILE[name])
    recorder, tracker = claim_once(world, job_body())
    assert recorder.reports == [AbortReport(JB, AbortReason.PREP_FAILED, None)]
    assert recorder.handled == []
    assert world.job_folders() == []  # each attempt's folder is gone
    assert not any('evil' in path for path in world.everything())
    assert not list(world.root.parent.glob('**/evil*'))
    assert not any('tmp-' in path for path in world.everything())  # no half refresh left
    assert tracker.snapshot() == [JB]


def on_a_thread(task):
    threading.Thread(target=task, daemon=True).start()
    return True


def test_the_code_downloads_while_the_testdata_is_asked_for(world):
    """One round trip to a far backend, not two: the code's download is on
    its way when the checksum is asked for (red when they go one after the
    other: the code's answer waits for the checksum's question)."""
    asked = threading.Event()

    def code_answer(request):
        return (200, {}, GOOD_CODE) if asked.wait(10) else (503, {}, b'asked one after the other')

    def checksum_answer(request):
        asked.set()
        return (200, {}, '{"data": "c1"}')

    world.mock.add_callback('GET', CODE_URL, callback=code_answer)
    world.mock.add_callback('GET', f'{BASE}/problem/7/checksum', callback=checksum_answer)
    world.mock.get(f'{BASE}/problem/7/testdata', body=GOOD_TESTDATA)
    preparer = Preparer(world.client, world.cache, world.folders, offer=on_a_thread)
    job = preparer.prepare(parse_claim(job_body()), threading.Event())
    assert sorted(p.name for p in job.source_dir.iterdir()) == ['helper.h', 'main.c']


def test_a_failed_download_on_its_thread_fails_the_preparation_with_nothing_left(world):
    world.mock.get(CODE_URL, status=404)
    world.mock.get(f'{BASE}/problem/7/checksum', json={'data': 'c1'})
    world.mock.get(f'{BASE}/problem/7/testdata', body=GOOD_TESTDATA)
    preparer = Preparer(world.client, world.cache, world.folders, offer=on_a_thread)
    with pytest.raises(Exception, match='404'):
        preparer.prepare(parse_claim(job_body()), threading.Event())
    assert world.job_folders() == []


def test_a_code_that_cannot_be_had_fails_the_attempt_before_the_testdata(world):
    """Downloaded in place (no thread idle), a failed download fails the
    attempt at once: no checksum asked, no lock waited for, no testdata
    refreshed for a job that cannot be judged (red when the download's
    failure waits for the testdata)."""
    world.mock.get(CODE_URL, status=404)
    world.mock.get(f'{BASE}/problem/7/checksum', json={'data': 'c1'})
    world.mock.get(f'{BASE}/problem/7/testdata', body=GOOD_TESTDATA)
    with pytest.raises(Exception, match='404'):
        world.preparer.prepare(parse_claim(job_body()), threading.Event())
    assert [call.request.url for call in world.mock.calls] == [CODE_URL]
    assert world.job_folders() == []
