#!/usr/bin/env bash
# Builds the sandbox images without any registry: a Debian base made with
# debootstrap from a package mirror (or a local one), imported with
# `docker import`, then the two Dockerfiles on top of it.
#
#   sandbox/images/build-offline.sh            # build what is missing
#   FORCE=1 sandbox/images/build-offline.sh    # rebuild everything
#
# Settings (environment): DEBIAN_MIRROR (default http://deb.debian.org/debian),
# DEBIAN_SUITE (bookworm), BASE_NAME (oj-sandbox-base:bookworm),
# CPP_IMAGE (oj-sandbox-cpp:latest), PYTHON_IMAGE (oj-sandbox-python:latest).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
suite="${DEBIAN_SUITE:-bookworm}"
base="${BASE_NAME:-oj-sandbox-base:bookworm}"
cpp="${CPP_IMAGE:-oj-sandbox-cpp:latest}"
python="${PYTHON_IMAGE:-oj-sandbox-python:latest}"

have_image() { [ -z "${FORCE:-}" ] && docker image inspect "$1" >/dev/null 2>&1; }
# An image is current when it was built from today's supervisor and Dockerfile
# (its oj-sandbox.source label): a changed supervisor is never left unbuilt.
source_hash() { cat "$here/supervisor.c" "$here/$1" | sha256sum | cut -c1-16; }
# shellcheck source=../../scripts/quietly.sh
. "$here/../../scripts/quietly.sh"
is_current() {
    have_image "$1" &&
        [ "$(docker image inspect -f '{{index .Config.Labels "oj-sandbox.source"}}' "$1")" = "$2" ]
}

if ! have_image "$base"; then
    command -v debootstrap >/dev/null || {
        echo "debootstrap is missing: apt-get install -y debootstrap" >&2
        exit 1
    }
    rootfs="$(mktemp -d)"
    trap 'rm -rf "$rootfs"' EXIT
    echo "building base image $base from $mirror ($suite), about a minute" >&2
    quietly debootstrap --variant=minbase --include=gcc,g++,libc6-dev,python3 \
        "$suite" "$rootfs" "$mirror"
    rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
    tar -C "$rootfs" -c . | docker import - "$base" >/dev/null
fi

# The base has the compilers already, so the builds download nothing.
cpp_hash="$(source_hash Dockerfile.cpp)"
if ! is_current "$cpp" "$cpp_hash"; then
    echo "building $cpp" >&2
    quietly docker build -t "$cpp" --build-arg BASE_IMAGE="$base" \
        --build-arg SOURCE_HASH="$cpp_hash" -f "$here/Dockerfile.cpp" "$here"
fi
python_hash="$(source_hash Dockerfile.python)"
if ! is_current "$python" "$python_hash"; then
    echo "building $python" >&2
    quietly docker build -t "$python" --build-arg BASE_IMAGE="$base" \
        --build-arg BUILDER_IMAGE="$base" --build-arg SOURCE_HASH="$python_hash" \
        -f "$here/Dockerfile.python" "$here"
fi
echo "sandbox images ready: $cpp $python" >&2
