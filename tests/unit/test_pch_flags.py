"""The precompiled <bits/stdc++.h> of the C/C++ image is built with the flags
C++ submissions are compiled with: g++ ignores a .gch built otherwise."""
import pathlib
import re

from sandbox.languages import Language

DOCKERFILE = pathlib.Path(__file__).resolve().parents[2] / 'sandbox' / 'images' / 'Dockerfile'


def pch_relevant(argv):
    """The options that decide whether g++ may use a precompiled header."""
    return [arg for arg in argv if re.match(r'-(std=|O|D|U|f|m)', arg)]


def test_the_image_precompiles_with_the_submission_flags():
    (flags, ) = re.findall(r'^ARG PCH_FLAGS="([^"]*)"$', DOCKERFILE.read_text(), re.MULTILINE)
    assert flags.split() == pch_relevant(Language.CPP.toolchain.compile_argv)
