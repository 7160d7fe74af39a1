"""Normal-OJ's protocol (docs/protocol.md): one typed call per endpoint
(`client.py`), bodies parsed and checked at the boundary (`inbound.py`),
results encoded into the bodies the backend takes (`outbound.py`)."""
