"""AlgoJudge's runner protocol (docs/algojudge.md): the runner's Ed25519
identity (`identity.py`), bodies parsed at the boundary (`wire.py`) and one
typed call per endpoint (`client.py`)."""
