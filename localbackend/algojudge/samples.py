"""The bundled AlgoJudge samples: problem packages as folders (zipped when
a job needs them) and submissions, each a folder with its source and a
`manifest.json` saying what it is and what it must be judged (the demo and
the end-to-end tests read the same data: adding a case adds no code)."""
import dataclasses
import io
import json
import pathlib
import zipfile
from typing import Any, Dict, List, Optional

SAMPLES = pathlib.Path(__file__).parent / 'samples'


@dataclasses.dataclass(frozen=True)
class Submission:
    name: str
    problem: str
    language: str
    file_name: str
    source: bytes
    config: Optional[Dict[str, Any]]
    expect: Dict[str, Any]


def package(problem: str, root: pathlib.Path = SAMPLES) -> bytes:
    """The problem's folder as a standard-io@1 package (a zip)."""
    folder = root / 'problems' / problem
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, 'w', zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob('*')):
            if path.is_file():
                archive.write(path, path.relative_to(folder).as_posix())
    return buffer.getvalue()


def submissions(root: pathlib.Path = SAMPLES) -> List[Submission]:
    found = []
    for folder in sorted((root / 'submissions').iterdir()):
        manifest = json.loads((folder / 'manifest.json').read_text())
        found.append(
            Submission(folder.name, manifest['problem'], manifest['language'],
                       manifest['file'], (folder / manifest['file']).read_bytes(),
                       manifest.get('config'), manifest['expect']))
    return found


def meets(report: Dict[str, Any], expect: Dict[str, Any]) -> Optional[str]:
    """None when the stored report is what the manifest expects, else how it differs."""
    if expect.get('infrastructureFailure'):
        if not report.get('infrastructureFailure'):
            return f'judged {report.get("verdict")!r}, expected an infrastructure failure'
        if expect.get('reason', '') not in report.get('failureReason', ''):
            return f'failure reason {report.get("failureReason")!r}'
        return None
    got = {k: report.get(k) for k in ('verdict', 'score', 'maxScore')}
    want = {k: expect[k] for k in ('verdict', 'score', 'maxScore')}
    return None if got == want else f'got {got}, expected {want}'
