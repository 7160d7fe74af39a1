#!/usr/bin/env bash
# Prepares a Debian host for the runner, its demo and its tests: Debian
# packages, a virtual environment with the Python dependencies (.venv: a stock
# Debian 12 has no pip and refuses system-wide installs), a running Docker
# engine and the sandbox images (built offline). Safe to run again: it only
# does what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

missing=()
command -v dockerd >/dev/null || missing+=(docker.io)
command -v debootstrap >/dev/null || missing+=(debootstrap)
command -v redis-server >/dev/null || missing+=(redis-server)
command -v docker-compose >/dev/null || missing+=(docker-compose)
python3 -c 'import ensurepip, venv' 2>/dev/null || missing+=(python3-venv)
command -v systemd-analyze >/dev/null || missing+=(systemd)
if [ ${#missing[@]} -gt 0 ]; then
    echo "installing ${missing[*]}" >&2
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# The project's own Python: the demo, the tests and CI run with .venv/bin/python.
venv=.venv
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
stamp="$venv/.requirements-$(cat requirements.txt requirements-dev.txt | sha256sum | cut -c1-16)"
if [ ! -e "$stamp" ]; then
    echo "installing the Python dependencies into $venv" >&2
    "$venv/bin/python" -m pip install -q --disable-pip-version-check -r requirements-dev.txt
    rm -f "$venv"/.requirements-*
    touch "$stamp"
fi

if ! docker info >/dev/null 2>&1; then
    echo "starting the Docker engine" >&2
    as_root sh -c 'nohup dockerd >/var/log/dockerd.log 2>&1 &'
    for _ in $(seq 60); do
        docker info >/dev/null 2>&1 && break
        sleep 1
    done
    docker info >/dev/null 2>&1 || {
        echo "the Docker engine did not start; see /var/log/dockerd.log" >&2
        exit 1
    }
fi

sandbox/images/build-offline.sh
