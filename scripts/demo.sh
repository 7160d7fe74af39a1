#!/usr/bin/env bash
# The runner's main job, end to end: sets the host up when needed (Docker
# engine, sandbox images), then judges the sample submissions on a bundled
# backend and stops the runner with SIGTERM.
#   bash scripts/demo.sh                       Normal-OJ (scripts/demo.py)
#   bash scripts/demo.sh --protocol algojudge  AlgoJudge (scripts/demo_algojudge.py)
set -euo pipefail
cd "$(dirname "$0")/.."
demo=scripts/demo.py
case "${1:-}" in
    '') ;;
    --protocol)
        case "${2:-}" in
            noj) ;;
            algojudge) demo=scripts/demo_algojudge.py ;;
            *) echo "usage: $0 [--protocol noj|algojudge]" >&2; exit 2 ;;
        esac ;;
    *) echo "usage: $0 [--protocol noj|algojudge]" >&2; exit 2 ;;
esac
bash scripts/setup.sh
exec .venv/bin/python "$demo"
