"""The command line: `oj-runner` or `python main.py` (see `--help`).

Reads its settings from the environment, registers with the backend, then
claims, judges and reports jobs until SIGTERM or SIGINT, when it drains.

Exit codes: 0 after a clean drain or a stop during registration; 1 when the
backend refuses the runner's identity; 2 for bad configuration (or an
unreachable Docker engine); 3 when the drain ran out of budget and left work
to lease expiry.
"""
import argparse
import gc
import logging
import os
import sys
import threading
from typing import Mapping, Optional, Sequence

from runner.config import SETTINGS_HELP, ConfigError, Settings, check_folders
from runner.exit_codes import ExitCode
from runner.logs import configure_logging
from runner.signals import SignalWatcher
from runner.version import VERSION

log = logging.getLogger('runner')


def parse_args(argv: Optional[Sequence[str]]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog='oj-runner',
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description='Pull-mode sandbox runner: claims judging jobs from the backend, judges '
        'them in Docker sandboxes and reports the verdicts.',
        epilog='settings (environment variables, default in brackets):\n' + SETTINGS_HELP +
        '\n\nexit codes: 0 clean stop, 1 identity refused, 2 bad configuration, '
        '3 drain left work to lease expiry')
    parser.add_argument('--version', action='version', version=f'%(prog)s {VERSION}')
    parser.add_argument('--check',
                        action='store_true',
                        help='check that this host can judge (configuration, Docker, images, '
                        'a known program per language, folders, Redis, backend), claim nothing')
    return parser.parse_args(argv)


def main(argv: Optional[Sequence[str]] = None, environ: Mapping[str, str] = os.environ) -> int:
    args = parse_args(argv)
    if args.check:
        from runner import check
        return check.run(environ, sys.stdout)
    try:
        settings = Settings.from_env(environ)
        check_folders(settings)
    except ConfigError as exc:
        print(f'oj-runner: configuration error: {exc}', file=sys.stderr)
        return ExitCode.CONFIG
    configure_logging(settings.log_level, settings.log_format)

    stop = threading.Event()
    # First, before any other thread exists: every thread inherits the mask.
    SignalWatcher(stop).start()

    # Imported here so that `--help` and a bad configuration answer at once.
    from runner.daemon import Daemon, StartupError
    # What start-up made lives as long as the process: the collector leaves
    # it alone, and runs less often (its young generation's collections are
    # many short pauses of every thread at an exam's load).
    gc.freeze()
    gc.set_threshold(10000, 20, 20)
    daemon = Daemon(settings, stop)
    try:
        return daemon.run()
    except StartupError as exc:
        log.error('cannot start: %s', exc)
        return ExitCode.CONFIG
