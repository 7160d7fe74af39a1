"""The backend boundary: everything the runner says to the backend and hears back.

- `client.py`: one typed call per endpoint; statuses mapped to outcomes.
- `inbound.py`: bodies from the backend parsed and checked into typed values.
- `outbound.py`: typed results encoded into the bodies the backend takes.
- `http_session.py`: sessions whose requests a stop can cut short.

Nothing outside this package sees JSON or a status code.
"""
