"""The runner daemon: `python main.py`, the same as `oj-runner` (see `--help`)."""
import sys

from runner.cli import main

if __name__ == '__main__':
    sys.exit(main())
