"""The sandbox: compile a job once, judge its cases, release it.

- `sandbox.py`: the interface the dispatcher calls (a typing.Protocol);
  `faults.py`: `HostFault`, the host could not judge (never a verdict).
- `docker_sandbox.py`: that interface on Docker, a facade over the rest:
  - `pool.py` the containers (one record each) and their spares;
    `container.py` one container and its supervisor; `protocol.py` the
    supervisor's wire format; `images/` the images, the supervisor
    (`supervisor.c`) that runs inside each container and the Python zygote
    (`python_zygote.c`) a job's Python cases are forked from; `image_copy.py` the
    image's copy in memory that runs are rooted in (`page_cache.py`: the
    warm-up of an image without one);
  - `engine.py` the run engine: a run on a core in a container from the
    pool, a pair of runs, the retry in a fresh container;
    `run_requests.py` what a compile and a case are asked to run;
  - `building.py` compiles, with the compile cache (`compile_cache.py`);
  - `job_state.py` a job between its compile and its release;
    `graders/` how its cases are judged, one module per mode;
  - `self_test.py` the host's self-test; `leftovers.py` what sandboxes
    leave on the engine and the disk (`instance_folder.py`: this
    process's own folder under a shared root); `trash.py` the folders let
    go of, removed off the paths runs wait on.
- `verdict.py`, `compare.py`, `static_memory.py`: from measurements to a verdict.
- `results.py`: verdicts and results; `languages.py`: how each language builds
  and runs; `job.py`: what the sandbox knows of a job and a case;
  `settings.py`: its settings and a container's limits.
"""
