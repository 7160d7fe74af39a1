# The runner daemon. It drives the host's Docker engine (mount its socket) and
# shares its data folder with the sandboxes it starts, so DATA_DIR must be
# mounted at the same path inside as on the host (see docker-compose.yml).
ARG BASE_IMAGE=python:3.11-slim-bookworm
FROM ${BASE_IMAGE}
WORKDIR /app
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt
COPY main.py ./
COPY runner runner
COPY dispatcher dispatcher
COPY sandbox sandbox
ENV DATA_DIR=/var/lib/oj-runner
# `docker stop` sends SIGTERM: the runner drains, then exits 0 (or 3).
STOPSIGNAL SIGTERM
CMD ["python", "main.py"]
