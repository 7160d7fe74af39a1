"""Job preparation both protocols share: what a claimed job's files go
through on their way to a folder the sandbox can judge.

- `zips.py`: extracting zips within their bounds (Normal-OJ's code and
  testdata zips, AlgoJudge's packages).
- `locks.py`: cross-process locks of the caches (Redis, or a file lock).
- `job_folders.py`: one folder per claim generation, removed or backed up
  once its report is settled.

A library: it starts no thread of its own.
"""
