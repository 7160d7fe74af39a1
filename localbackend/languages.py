"""Submission languages: wire values (protocol §3) and the names people type."""
from typing import Union

C, CPP, PYTHON = 0, 1, 2
SOURCE_NAMES = {C: 'main.c', CPP: 'main.cpp', PYTHON: 'main.py'}
DISPLAY_NAMES = {C: 'C', CPP: 'C++', PYTHON: 'Python'}
_ALIASES = {
    'c': C,
    'c11': C,
    'cpp': CPP,
    'c++': CPP,
    'cxx': CPP,
    'c++17': CPP,
    'python': PYTHON,
    'python3': PYTHON,
    'py': PYTHON,
}


def parse_language(value: Union[int, str]) -> int:
    """The wire value of a language given as 0/1/2 or a name like `c`, `cpp`, `python`."""
    if isinstance(value, bool):
        raise ValueError(f'unknown language {value!r}')
    if isinstance(value, int) and value in SOURCE_NAMES:
        return value
    if isinstance(value, str):
        key = value.strip().lower()
        if key in _ALIASES:
            return _ALIASES[key]
        if key.isdigit() and int(key) in SOURCE_NAMES:
            return int(key)
    raise ValueError(f'unknown language {value!r} (use c, cpp or python)')
