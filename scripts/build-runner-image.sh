#!/usr/bin/env bash
# Builds the runner's image without a registry, in three steps:
#   1. a Debian base with python3 and CA certificates, made with debootstrap
#      (skipped when RUNNER_BASE names an image the engine has or can pull);
#   2. the pinned runtime dependencies (requirements.lock), installed from the
#      package index into build/runner-site for the base's Python;
#   3. the image (Dockerfile), built with no network at all.
#
#   scripts/build-runner-image.sh            # build what is missing or stale
#   FORCE=1 scripts/build-runner-image.sh    # rebuild everything
#
# Settings (environment): RUNNER_BASE (oj-runner-base:bookworm; any image with
# python3 >= 3.10, e.g. python:3.11-slim-bookworm), RUNNER_IMAGE
# (oj-runner:latest), DEBIAN_MIRROR (http://deb.debian.org/debian),
# DEBIAN_SUITE (bookworm), PYTHON (the Python whose pip installs step 2:
# .venv/bin/python, else python3).
set -euo pipefail
cd "$(dirname "$0")/.."
base="${RUNNER_BASE:-oj-runner-base:bookworm}"
image="${RUNNER_IMAGE:-oj-runner:latest}"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
suite="${DEBIAN_SUITE:-bookworm}"
python="${PYTHON:-$([ -x .venv/bin/python ] && echo .venv/bin/python || echo python3)}"

step() { echo "runner image: $*" >&2; }
# shellcheck source=quietly.sh
. scripts/quietly.sh
# Everything the image is made of: a change to any of it rebuilds the image.
source_hash() {
    {
        cat Dockerfile requirements.lock
        find main.py runner dispatcher sandbox -name '*.py' -print0 | sort -z | xargs -0 cat
    } | sha256sum | cut -c1-16
}

if [ -n "${FORCE:-}" ] || ! docker image inspect "$base" >/dev/null 2>&1; then
    if [ "$base" = oj-runner-base:bookworm ]; then
        command -v debootstrap >/dev/null || {
            echo "debootstrap is missing: apt-get install -y debootstrap" >&2
            exit 1
        }
        rootfs="$(mktemp -d)"
        trap 'rm -rf "$rootfs"' EXIT
        step "1/3 base $base: debootstrap $suite from $mirror (python3, ca-certificates), about a minute"
        quietly debootstrap --variant=minbase --include=python3,ca-certificates "$suite" "$rootfs" "$mirror"
        rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
        tar -C "$rootfs" -c . | docker import - "$base" >/dev/null
        rm -rf "$rootfs"
    else
        step "1/3 base $base: pulling it"
        quietly docker pull "$base"
    fi
else
    step "1/3 base $base: present"
fi

hash="$(source_hash)"
if [ -z "${FORCE:-}" ] && [ "$(docker image inspect -f '{{index .Config.Labels "oj-runner.source"}}' \
    "$image" 2>/dev/null || true)" = "$hash" ]; then
    step "2/3 and 3/3: $image is current"
    exit 0
fi

version="$(docker run --rm --network none --entrypoint python3 "$base" -c \
    'import sys; print("%d.%d" % sys.version_info[:2])')"
step "2/3 runtime dependencies for Python $version (requirements.lock) into build/runner-site"
rm -rf build/runner-site
quietly "$python" -m pip install --disable-pip-version-check --no-deps --only-binary=:all: \
    --implementation cp --python-version "$version" \
    --platform "manylinux2014_$(uname -m)" --platform any \
    --target build/runner-site -r requirements.lock

step "3/3 image $image (no network)"
quietly docker build --network none -t "$image" --build-arg BASE_IMAGE="$base" \
    --build-arg SOURCE_HASH="$hash" .
step "ready: $image ($(docker run --rm --network none "$image" --version))"
