"""The runner's exit codes (protocol §8), in one place."""
import enum


class ExitCode(enum.IntEnum):
    OK = 0  # a clean drain, or a stop during registration
    IDENTITY_REFUSED = 1  # registration 401, or the identity gone (two heartbeat 401s)
    CONFIG = 2  # bad configuration, or no usable engine or image at start
    DRAIN_INCOMPLETE = 3  # the drain left work to lease expiry
