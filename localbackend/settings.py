"""The backend's settings: secrets, lease and identity lifetimes, what register hands out."""
import dataclasses
import types
from typing import Mapping

DEFAULT_RUNNER_CONFIG = types.MappingProxyType({
    'heartbeat_interval_sec': 15,
    'poll_interval_sec': 3,
    'max_concurrent_jobs': 8,
})


@dataclasses.dataclass(frozen=True)
class Settings:
    """An empty `registration_token` or `sandbox_token` disables that channel (fail closed).

    `runner_config` is sent as is in the register answer, so a test may leave a
    key out to exercise the runner's defaults.
    """
    registration_token: str = dataclasses.field(repr=False)
    sandbox_token: str = dataclasses.field(repr=False)
    lease_ttl_sec: float = 30.0
    identity_ttl_sec: float = 600.0
    max_attempts: int = 3
    long_poll_max_sec: float = 60.0
    runner_config: Mapping[str, object] = dataclasses.field(
        default_factory=lambda: dict(DEFAULT_RUNNER_CONFIG))
    checker: str = 'diff'

    def __post_init__(self):
        for name in ('lease_ttl_sec', 'identity_ttl_sec', 'long_poll_max_sec'):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                raise ValueError(f'{name} must be a positive number of seconds')
        if isinstance(self.max_attempts, bool) or not isinstance(self.max_attempts, int) \
                or self.max_attempts < 1:
            raise ValueError('max_attempts must be a positive integer')
        object.__setattr__(self, 'runner_config', types.MappingProxyType(dict(self.runner_config)))
