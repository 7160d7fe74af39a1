# Sandbox image for C (c11) and C++ (c++17) submissions.
# BASE_IMAGE is any Debian-like image; an offline base made with debootstrap
# (see build-offline.sh) already has the compilers, so nothing is downloaded.
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}
RUN (command -v gcc && command -v g++ && test -f "$(gcc -print-file-name=libc.a)") >/dev/null \
    || (apt-get update && apt-get install -y --no-install-recommends gcc g++ libc6-dev \
        && rm -rf /var/lib/apt/lists/*)
# <bits/stdc++.h>, what most competitive C++ starts with, precompiled with the
# flags submissions are compiled with (sandbox/languages.py; a unit test keeps
# the two the same): g++ takes the .gch beside the header only when the flags
# match, so a program that includes it compiles several times faster, to the
# same program.
ARG PCH_FLAGS="-std=c++17 -O2"
RUN header="$(printf '#include <bits/stdc++.h>\n' | g++ $PCH_FLAGS -x c++ -H -E -o /dev/null - 2>&1 \
        | sed -n 's/^\. //p' | grep 'bits/stdc++\.h$' | head -n 1)" \
    && test -n "$header" && g++ $PCH_FLAGS -x c++-header "$header" -o "$header.gch"
COPY supervisor.c /usr/src/judge-supervisor.c
RUN gcc -O2 -Wall -static -o /usr/local/bin/judge-supervisor /usr/src/judge-supervisor.c \
    && rm /usr/src/judge-supervisor.c
# /work is a tmpfs at run time; a mount point's mode is its tmpfs's mode.
RUN mkdir -p /work && chmod 1777 /work
# The supervisor protocol this image speaks (PROTOCOL_VERSION in supervisor.c
# and sandbox/protocol.py), and the sources it was built from (build-offline.sh
# rebuilds an image whose sources changed).
ARG SOURCE_HASH=unknown
LABEL oj-sandbox.protocol="6" oj-sandbox.source="${SOURCE_HASH}"
# PID 1 starts as root and drops to its own uid at once (see supervisor.c).
USER 0:0
