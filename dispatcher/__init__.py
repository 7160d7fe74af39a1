"""The job queue between the poller and the sandbox.

- `job.py`: a prepared job as the dispatcher receives it, and its check.
- `generation.py`: one claim generation of a job, and its steps (the compile,
  then one per case) that the queue carries.
- `dispatcher.py`: the workers that take steps, call the sandbox, and hand each
  finished job's results to the runner (`on_complete`), or a job the host
  could not judge back (`on_abandon`). Its drain side: `stop_accepting`,
  `drain_unstarted`, `wait_in_flight`.

It knows nothing of HTTP, leases or reports: the runner wires those in.
"""
