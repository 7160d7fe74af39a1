#!/usr/bin/env bash
# Builds the sandbox image without any registry: a Debian base made with
# debootstrap from a package mirror (or a local one), imported with
# `docker import`, then the Dockerfile on top of it.
#
#   sandbox/images/build-offline.sh            # build what is missing
#   FORCE=1 sandbox/images/build-offline.sh    # rebuild everything
#
# Settings (environment): DEBIAN_MIRROR (default http://deb.debian.org/debian),
# DEBIAN_SUITE (bookworm), BASE_NAME (oj-sandbox-base:bookworm-2: with what
# the Python zygote is built from),
# IMAGE (oj-sandbox:latest).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
suite="${DEBIAN_SUITE:-bookworm}"
base="${BASE_NAME:-oj-sandbox-base:bookworm-2}"
image="${IMAGE:-oj-sandbox:latest}"

have_image() { [ -z "${FORCE:-}" ] && docker image inspect "$1" >/dev/null 2>&1; }
# An image is current when it was built from today's supervisor and Dockerfile
# (its oj-sandbox.source label): a changed supervisor is never left unbuilt.
source_hash() {
    cat "$here/supervisor.c" "$here/python_zygote.c" "$here/zygote.h" "$here/build-zygote.sh" \
        "$here/Dockerfile" | sha256sum | cut -c1-16
}
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
    quietly debootstrap --variant=minbase --include=gcc,g++,libc6-dev,python3,libpython3-dev \
        "$suite" "$rootfs" "$mirror"
    rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
    tar -C "$rootfs" -c . | docker import - "$base" >/dev/null
fi

# The base has the compilers and Python already, so the build downloads nothing.
hash="$(source_hash)"
if ! is_current "$image" "$hash"; then
    echo "building $image" >&2
    quietly docker build -t "$image" --build-arg BASE_IMAGE="$base" \
        --build-arg SOURCE_HASH="$hash" -f "$here/Dockerfile" "$here"
fi
echo "sandbox image ready: $image" >&2
