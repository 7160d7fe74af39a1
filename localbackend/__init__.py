"""The bundled judge backend: serves the runner API (docs/protocol.md §2) from memory.

For demos, end-to-end tests of the runner, and as a reference for backend
implementers. Start with `LocalBackend` (backend.py); the rules live in
store.py, testable without HTTP.
"""
from localbackend.backend import LocalBackend
from localbackend.clock import ManualClock, MonotonicClock
from localbackend.problems import Problem, TaskSpec, load_problem, load_problems
from localbackend.zips import build_zip

__all__ = [
    'LocalBackend', 'ManualClock', 'MonotonicClock', 'Problem', 'TaskSpec', 'build_zip',
    'load_problem', 'load_problems'
]
