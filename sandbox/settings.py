"""What a sandbox is made of: the settings of the sandbox layer and the limits
of one container. Plain values, without Docker: the runner's settings read
their defaults here."""
import dataclasses
import os
import pathlib
from typing import Dict, Optional

MiB = 1024 * 1024
# Memory a sandbox container needs beside a case's own: its writable places
# and the two outputs live in its memory, and the supervisor's, with room.
SUPERVISOR_HEADROOM_BYTES = 64 * MiB


@dataclasses.dataclass(frozen=True)
class ContainerLimits:
    """Every writable place is a tmpfs capped in bytes and in inodes; each
    run gets new mounts of the same sizes over them (supervisor.c)."""
    memory_bytes: int
    pids: int
    work_tmpfs_bytes: int  # compiles write here; cases only read their links here
    tmp_tmpfs_bytes: int  # what a case may write, outside its judged memory
    cpus: float
    work_inodes: int = 16384  # the job's top-level files (chaos/) are linked here
    tmp_inodes: int = 256
    shm_bytes: int = 1024 * 1024  # POSIX semaphores
    shm_inodes: int = 64
    connect_timeout_sec: float = 20.0
    # The engine confines containers with AppArmor (docker-default forbids
    # every mount, the supervisor's own for each run included): the runs'
    # confinement is then the supervisor's seccomp filter and Landlock.
    apparmor_unconfined: bool = False


@dataclasses.dataclass(frozen=True)
class SandboxSettings:
    root: pathlib.Path  # host folder for boxes and compiled artifacts
    max_containers: int = 8
    max_parallel_runs: int = dataclasses.field(default_factory=lambda: os.cpu_count() or 1)
    spares_per_image: int = 1
    output_limit: int = 32 * MiB
    report_limit: int = 8192
    docker_url: Optional[str] = None
    # One image serves every language by default (sandbox/images/Dockerfile):
    # any container can then serve any job.
    cpp_image: str = 'oj-sandbox:latest'
    python_image: str = 'oj-sandbox:latest'
    # Per container: comfortably above any case's limit and the compile bound,
    # since fork storms and the output files (tmpfs) are charged to it too.
    container_memory_bytes: int = 1536 * MiB
    # A case may start 64 threads; PID 1 and the run's init take two more.
    container_pids: int = 128
    container_cpus: float = 1.0
    work_bytes: int = 128 * MiB  # working folder, compiled program included
    tmp_bytes: int = 4 * MiB  # what a case may keep in files, beside its memory
    engine_timeout_sec: float = 30.0
    # Runs rooted in a copy of their image in memory (sandbox/image_copy.py);
    # off, in the image's own folders (a benchmark's baseline).
    image_copy: bool = True
    # A container serves this many jobs in turn, reset and checked between
    # them (sandbox/pool.py), and lives at most this long.
    jobs_per_container: int = 100
    container_max_age_sec: float = 3600.0
    # A case whose CPU time ends within this multiple of its limit is run once
    # more (the lower time counts); 1.0 stops every run at its limit.
    tle_margin: float = 1.5
    # The compile cache's bound on disk (sandbox/compile_cache.py); 0 turns it off.
    compile_cache_bytes: int = 1024 * MiB
    # A problem's checker, per case; not charged to the program.
    checker_time_ms: int = 10000
    checker_memory_kb: int = 1024 * 1024
    # A problem's interactor, per case; not charged to the program.
    interactor_time_ms: int = 10000
    interactor_memory_kb: int = 1024 * 1024

    @property
    def images(self) -> Dict[str, str]:
        return {'cpp': self.cpp_image, 'python': self.python_image}

    @property
    def headroom_bytes(self) -> int:
        """What a container holds beside a case's own memory."""
        return (self.work_bytes + self.tmp_bytes + ContainerLimits.shm_bytes +
                2 * self.output_limit + SUPERVISOR_HEADROOM_BYTES)
