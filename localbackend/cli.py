"""Command line: serve the backend, submit, see results, run the sample demo.

    python -m localbackend [serve] --port 8080 --problems DIR --samples
    python -m localbackend submit --url URL --problem 1 --language c main.c --wait 60
    python -m localbackend results --url URL [SUBMISSION_ID …]
    python -m localbackend rejudge --url URL SUBMISSION_ID
    python -m localbackend demo --url URL [--timeout 300]

Secrets come from flags or, better (flags show in `ps`), from the environment:
RUNNER_REGISTRATION_TOKEN, SANDBOX_TOKEN, LOCALBACKEND_ADMIN_TOKEN.
"""
import argparse
import logging
import os
import pathlib
import signal
import sys
import threading
import time
from typing import List, Optional

from localbackend import languages
from localbackend.admin_client import AdminClient, AdminError
from localbackend.problems import ProblemError
from localbackend.results import format_submission, format_summary
from localbackend.submission_files import SubmissionFileError, load_submission, load_submissions

SAMPLES = pathlib.Path(__file__).resolve().parent / 'samples'
COMMANDS = ('serve', 'submit', 'results', 'rejudge', 'demo')


def _positive(text: str) -> float:
    value = float(text)
    if not value > 0 or value == float('inf'):
        raise argparse.ArgumentTypeError('must be a positive number')
    return value


def _port(text: str) -> int:
    value = int(text)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError('must be 0..65535')
    return value


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog='python -m localbackend',
                                     description='The bundled judge backend.')
    commands = parser.add_subparsers(dest='command', required=True)

    serve = commands.add_parser('serve', help='run the backend (the default command)')
    serve.add_argument('--host', default='127.0.0.1', help='0.0.0.0 to reach it from containers')
    serve.add_argument('--port', type=_port, default=8080)
    serve.add_argument('--registration-token',
                       default=os.environ.get('RUNNER_REGISTRATION_TOKEN', ''))
    serve.add_argument('--sandbox-token', default=os.environ.get('SANDBOX_TOKEN', ''))
    serve.add_argument('--admin-token', default=os.environ.get('LOCALBACKEND_ADMIN_TOKEN'))
    serve.add_argument('--problems', type=pathlib.Path, help='a folder of problem folders')
    serve.add_argument('--samples', action='store_true', help='load the bundled sample problems')
    serve.add_argument('--lease-ttl', type=_positive, default=30.0, help='seconds (default 30)')
    serve.add_argument('--identity-ttl', type=_positive, default=600.0)
    serve.add_argument('--public-url', help='base of code URLs (default: the Host a runner used)')
    serve.add_argument('--log-level', default='INFO')

    def client_args(sub):
        sub.add_argument('--url', default=os.environ.get('BACKEND_URL', 'http://127.0.0.1:8080'))
        sub.add_argument('--admin-token', default=os.environ.get('LOCALBACKEND_ADMIN_TOKEN'))

    submit = commands.add_parser('submit', help='submit a source file')
    client_args(submit)
    submit.add_argument('--problem', type=int, help='problem id')
    submit.add_argument('--language', help='c, cpp or python (default: from the file suffix)')
    submit.add_argument('source', type=pathlib.Path, help='a source file, or a submission folder')
    submit.add_argument('--wait', type=float, default=0.0, help='seconds to wait for the result')

    results = commands.add_parser('results', help='verdict tables')
    client_args(results)
    results.add_argument('submission_ids', nargs='*')
    results.add_argument('--wait', type=float, default=0.0)

    rejudge = commands.add_parser('rejudge', help='queue a new job for a submission')
    client_args(rejudge)
    rejudge.add_argument('submission_id')

    demo = commands.add_parser('demo', help='submit the sample submissions and check verdicts')
    client_args(demo)
    demo.add_argument('--submissions', type=pathlib.Path, default=SAMPLES / 'submissions')
    demo.add_argument('--timeout', type=float, default=300.0)
    return parser


def _serve(args) -> int:
    logging.basicConfig(level=args.log_level.upper(),
                        format='%(asctime)s %(levelname)s %(name)s: %(message)s')
    if not args.registration_token:
        print('localbackend: set RUNNER_REGISTRATION_TOKEN (or --registration-token)',
              file=sys.stderr)
        return 2
    if not args.sandbox_token:
        print('localbackend: set SANDBOX_TOKEN (or --sandbox-token)', file=sys.stderr)
        return 2
    from localbackend.backend import LocalBackend
    try:
        backend = LocalBackend(host=args.host,
                               port=args.port,
                               registration_token=args.registration_token,
                               sandbox_token=args.sandbox_token,
                               lease_ttl_sec=args.lease_ttl,
                               identity_ttl_sec=args.identity_ttl,
                               admin_token=args.admin_token,
                               public_url=args.public_url)
    except (OSError, ValueError) as error:
        print(f'localbackend: cannot serve: {error}', file=sys.stderr)
        return 2
    try:
        if args.samples:
            backend.load_problems(SAMPLES / 'problems')
        if args.problems:
            backend.load_problems(args.problems)
    except ProblemError as error:
        print(f'localbackend: {error}', file=sys.stderr)
        return 2
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    backend.start()
    problem_ids = [p.problem_id for p in backend.store.problems()]
    logging.getLogger('localbackend').info('problems loaded: %s', problem_ids or 'none')
    stop.wait()
    backend.stop()
    backend.join(10)
    return 0


def _submit(args) -> int:
    client = AdminClient(args.url, args.admin_token)
    if args.source.is_dir():
        sample = load_submission(args.source)
        problem_id, language, source = sample.problem_id, sample.language, sample.source
    else:
        suffixes = {'.c': 'c', '.cpp': 'cpp', '.cc': 'cpp', '.cxx': 'cpp', '.py': 'python'}
        language = args.language or suffixes.get(args.source.suffix)
        if language is None or args.problem is None:
            print('submit: give --problem and --language (or a submission folder)', file=sys.stderr)
            return 2
        problem_id, source = args.problem, args.source.read_bytes()
        language = languages.parse_language(language)
    created = client.submit(problem_id, language, source)
    print(created['submission_id'])
    if args.wait > 0:
        print(format_submission(client.submission(created['submission_id'], wait=args.wait)))
    return 0


def _results(args) -> int:
    client = AdminClient(args.url, args.admin_token)
    if not args.submission_ids:
        print(format_summary(client.submissions()))
        return 0
    for submission_id in args.submission_ids:
        print(format_submission(client.submission(submission_id, wait=args.wait)))
    return 0


def _rejudge(args) -> int:
    print(AdminClient(args.url, args.admin_token).rejudge(args.submission_id)['job_id'])
    return 0


def _demo(args) -> int:
    """Submit every sample, wait for all, print the tables; 1 if a verdict is unexpected."""
    client = AdminClient(args.url, args.admin_token)
    samples = load_submissions(args.submissions)
    created = [(sample, client.submit(sample.problem_id, sample.language, sample.source))
               for sample in samples]
    deadline = time.monotonic() + args.timeout
    mismatches = []
    for sample, ids in created:
        document = client.submission(ids['submission_id'],
                                     wait=max(0.1, deadline - time.monotonic()))
        print(f'== {sample.name}: expected {sample.expected or "?"}' +
              (f', score {sample.expected_score}' if sample.expected_score is not None else ''))
        print(format_submission(document))
        if not document['done']:
            mismatches.append(f'{sample.name}: no result')
        elif sample.expected and document['verdict'] != sample.expected:
            mismatches.append(f'{sample.name}: expected {sample.expected}, '
                              f'got {document["verdict"]}')
        elif sample.expected_score is not None and document['score'] != sample.expected_score:
            mismatches.append(f'{sample.name}: expected score {sample.expected_score}, '
                              f'got {document["score"]}')
    print(f'{len(samples) - len(mismatches)}/{len(samples)} as expected')
    for line in mismatches:
        print('  ' + line)
    return 1 if mismatches else 0


def main(argv: Optional[List[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in COMMANDS + ('-h', '--help'):
        argv.insert(0, 'serve')
    args = _parser().parse_args(argv)
    handler = {
        'serve': _serve,
        'submit': _submit,
        'results': _results,
        'rejudge': _rejudge,
        'demo': _demo,
    }[args.command]
    try:
        return handler(args)
    except (AdminError, SubmissionFileError, ValueError, OSError) as error:
        print(f'localbackend {args.command}: {error}', file=sys.stderr)
        return 1
