"""The sandbox: compile a job once, judge its cases, release it.

- `sandbox.py`: the interface the dispatcher calls, and `HostFault` (the host
  could not judge: never a verdict).
- `docker_sandbox.py`: that interface on Docker; `pool.py` the containers and
  their spares; `container.py` one container and its supervisor;
  `protocol.py` the supervisor's wire format; `images/` the images and the
  supervisor (`supervisor.c`) that runs inside each container.
- `verdict.py`, `compare.py`, `static_memory.py`: from measurements to a verdict.
- `results.py`: verdicts and results; `languages.py`: how each language builds
  and runs; `job.py`: what the sandbox knows of a job and a case;
  `instance_folder.py`: this process's own folder under a shared root.
"""
