#!/usr/bin/env bash
# The runner's main job, end to end: sets the host up when needed (Docker
# engine, sandbox images), then judges the sample submissions on the bundled
# local backend and stops the runner with SIGTERM (see scripts/demo.py).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python scripts/demo.py
