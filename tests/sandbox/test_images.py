"""What the sandbox images hold: the precompiled <bits/stdc++.h> and <iostream>
are the ones g++ takes for a submission that starts with them, with the
submission's own flags."""
import pytest

from sandbox.languages import Language

pytestmark = pytest.mark.docker


@pytest.mark.parametrize('header, gch', [('bits/stdc++.h', 'bits/stdc++.h.gch'),
                                         ('iostream', '/iostream.gch')])
def test_gxx_takes_the_precompiled_header_with_the_submission_flags(docker_client, header, gch):
    program = f'#include <{header}>\\nint main() {{ std::cout << 42 << std::endl; }}\\n'
    argv = ' '.join(Language.CPP.toolchain.compile_argv)
    script = (
        f"cd /tmp && printf '{program}' > main.cpp && {argv} -H 2> h.txt && head -n 1 h.txt && "
        './main')
    output = docker_client.containers.run('oj-sandbox:latest', ['sh', '-c', script],
                                          network_disabled=True,
                                          remove=True).decode()
    first, answer = output.splitlines()[:2]
    assert first.startswith('! ') and first.endswith(gch), output
    assert answer == '42'
