"""The sandbox interface (a typing.Protocol) and what implements it agree
call for call: the dispatcher, the host's health and the metrics' decorator
are written against the interface, the runner runs the Docker one."""
import inspect

import pytest

from runner.metrics import MeteredSandbox
from sandbox.docker_sandbox import DockerSandbox
from sandbox.sandbox import Sandbox

CALLS = [
    name for name, member in vars(Sandbox).items()
    if inspect.isfunction(member) and not name.startswith('_')
]


def test_the_interface_names_the_calls_the_runner_makes():
    assert sorted(CALLS) == [
        'cancel', 'check_limits', 'compile', 'release', 'run_case', 'self_test'
    ]


@pytest.mark.parametrize('implementation', [DockerSandbox, MeteredSandbox])
@pytest.mark.parametrize('call', CALLS)
def test_each_implementation_has_the_interfaces_signature(implementation, call):
    assert inspect.signature(getattr(implementation,
                                     call)) == inspect.signature(getattr(Sandbox, call))
