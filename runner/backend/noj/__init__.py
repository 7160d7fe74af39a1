"""Normal-OJ's protocol (docs/protocol.md), the runner's side of it:

- `client.py`: one typed call per endpoint; `inbound.py`: bodies parsed and
  checked at the boundary; `outbound.py`: results encoded into the bodies
  the backend takes;
- `registration.py`: registering; `poller.py`: claiming, preparing
  (`prepare.py`, the testdata cache `testdata.py`) and dispatching;
  `heartbeat.py`: lease renewal; `result_sender.py` and `reports.py`: every
  claim's end, complete or abort.

The daemon wires these around the shared dispatcher and sandbox."""
