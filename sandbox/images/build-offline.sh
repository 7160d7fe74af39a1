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

if ! have_image "$base"; then
    command -v debootstrap >/dev/null || {
        echo "debootstrap is missing: apt-get install -y debootstrap" >&2
        exit 1
    }
    rootfs="$(mktemp -d)"
    trap 'rm -rf "$rootfs"' EXIT
    echo "building base image $base from $mirror ($suite)" >&2
    debootstrap --variant=minbase --include=gcc,g++,libc6-dev,python3 \
        "$suite" "$rootfs" "$mirror" >&2
    rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
    tar -C "$rootfs" -c . | docker import - "$base" >/dev/null
fi

# The base has the compilers already, so the builds download nothing.
if ! have_image "$cpp"; then
    docker build -q -t "$cpp" --build-arg BASE_IMAGE="$base" \
        -f "$here/Dockerfile.cpp" "$here" >/dev/null
fi
if ! have_image "$python"; then
    docker build -q -t "$python" --build-arg BASE_IMAGE="$base" --build-arg BUILDER_IMAGE="$base" \
        -f "$here/Dockerfile.python" "$here" >/dev/null
fi
echo "sandbox images ready: $cpp $python" >&2
