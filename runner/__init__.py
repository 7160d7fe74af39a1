"""The running process: one runner, its threads, and how it stops.

Where each part of the job's life lives:

- start: `daemon.py` (the sandbox, registration, the threads, then the wait for a stop);
  `registration.py` registers, `config.py` reads the settings, `check.py` is `--check`.
- claim: `poller.py` asks `next-job` while there is room, has the job prepared
  (`prep/`) and handed to the dispatcher; `active_jobs.py` holds the claims.
- lease renewal: `heartbeat.py` (every held claim, every interval; two 401s end
  the identity).
- report: `result_sender.py` delivers each claim's one report (`reports.py`: a
  complete or an abort) and then lets the claim go.
- drain: `signals.py` turns SIGTERM into an event; `drain.py` is the drain's
  order and its one deadline.
- host faults: `host_health.py` pauses claims while the host cannot judge.
- `backend/`: the HTTP boundary (client, what comes in, what goes out).
- `prep/`: job preparation (code and testdata zips, the testdata cache and
  its locks, job folders); no threads of its own.
- `logs.py`, `metrics.py`, `waiting.py`, `exit_codes.py`: shared plumbing.
"""
