#!/usr/bin/env bash
# The test suite: sets the host up if needed, then the fast unit tests (no
# Docker), then the tests that run real sandboxes, processes and backends.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/python -m pytest -q tests/unit tests/localbackend
.venv/bin/python -m pytest -q tests --ignore=tests/unit --ignore=tests/localbackend
