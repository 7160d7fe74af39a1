"""The languages a submission may be written in, and how each is built and run."""
import enum


class Language(enum.IntEnum):
    """Wire values of the job payload's `language` field (SPEC §2)."""
    C = 0
    CPP = 1
    PYTHON = 2

    @property
    def source_name(self) -> str:
        return _SOURCE_NAMES[self]


_SOURCE_NAMES = {Language.C: 'main.c', Language.CPP: 'main.cpp', Language.PYTHON: 'main.py'}
