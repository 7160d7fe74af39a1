# The runner daemon, built by scripts/build-runner-image.sh: no registry is
# needed (the default base is made with debootstrap, the dependencies are
# installed beside it from the pinned requirements.lock), and the build
# itself downloads nothing. Any base with python3 >= 3.10 works
# (RUNNER_BASE=python:3.11-slim-bookworm with a registry).
#
# It drives the host's Docker engine (mount its socket) and shares its data
# folder with the sandboxes it starts, so DATA_DIR must be mounted at the
# same path inside as on the host (see docker-compose.yml).
ARG BASE_IMAGE=oj-runner-base:bookworm
FROM ${BASE_IMAGE}
COPY build/runner-site /opt/oj-runner/lib
COPY main.py /opt/oj-runner/app/
COPY runner /opt/oj-runner/app/runner
COPY dispatcher /opt/oj-runner/app/dispatcher
COPY sandbox /opt/oj-runner/app/sandbox
COPY standard_io /opt/oj-runner/app/standard_io
ENV PYTHONPATH=/opt/oj-runner/lib PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 \
    DATA_DIR=/var/lib/oj-runner
WORKDIR /opt/oj-runner/app
ARG SOURCE_HASH=unknown
LABEL oj-runner.source=${SOURCE_HASH}
# `docker stop` sends SIGTERM: the runner drains, then exits 0 (or 3).
STOPSIGNAL SIGTERM
ENTRYPOINT ["python3", "main.py"]
