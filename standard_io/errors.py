"""The one way `standard-io@1` says a job cannot be judged here."""


class NotJudgeable(ValueError):
    """The job cannot be judged (a bad package, an unknown language, a broken
    checker): an infrastructure failure, never a verdict. The message is the
    report's `failureReason`, so it names what is wrong and holds no secret."""
