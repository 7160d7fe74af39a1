"""The runner daemon: `python main.py`, the same as `oj-runner` (see `--help`)."""
import sys

if sys.version_info < (3, 10):
    sys.exit('oj-runner needs Python 3.10 or newer (this is %d.%d)' % sys.version_info[:2])

from runner.cli import main  # noqa: E402

if __name__ == '__main__':
    sys.exit(main())
