"""What the sandbox images hold: the precompiled <bits/stdc++.h> is the one g++
takes for a submission, with the submission's own flags."""
import pytest

from sandbox.languages import Language

pytestmark = pytest.mark.docker

PROGRAM = '#include <bits/stdc++.h>\nint main() { std::cout << 42 << std::endl; }\n'


def test_gxx_takes_the_precompiled_header_with_the_submission_flags(docker_client):
    argv = ' '.join(Language.CPP.toolchain.compile_argv)
    script = (
        f"cd /tmp && printf '%s' '{PROGRAM}' > main.cpp && {argv} -H 2> h.txt && head -n 1 h.txt && "
        './main')
    output = docker_client.containers.run('oj-sandbox:latest', ['sh', '-c', script],
                                          network_disabled=True,
                                          remove=True).decode()
    first, answer = output.splitlines()[:2]
    assert first.startswith('! ') and first.endswith('bits/stdc++.h.gch'), output
    assert answer == '42'
