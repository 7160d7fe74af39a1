"""Job preparation: from a claimed payload to a job folder the sandbox can judge.

- `prepare.py`: the steps, in order (code zip, testdata, the job's folder).
- `testdata.py`: the per-problem testdata cache, checked against its checksum.
- `locks.py`: the cache's cross-process locks (Redis, or a file lock).
- `zips.py`: extracting the code and testdata zips within their bounds.
- `job_folders.py`: one folder per claim generation, removed or backed up
  once its report is settled.

A library: it runs on the poller's thread and starts no thread of its own.
"""
