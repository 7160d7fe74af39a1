"""The language ids of `standard-io@1` (docs/algojudge.md §10.5) and the
ones this runner evaluates.

An id names a standard and a compiler (`c11-gcc`, `cpp20-gcc`, `python3`);
its family (`c`, `cpp`, `python`) fixes the file extensions. This runner
has gcc and CPython only: a `-clang` or `pypy3` id, a bare standard
(`cpp17`) or anything else is not ours to evaluate (an infrastructure
failure, so that another runner may), never a verdict.
"""
import dataclasses
import re
from typing import Tuple

from sandbox.languages import Language
from standard_io.errors import NotJudgeable

FAMILY_EXTENSIONS = {
    'c': ('.c', ),
    'cpp': ('.cpp', '.cc', '.cxx', '.c++'),
    'python': ('.py', ),
}
ALIASES = {'cpp': 'cpp20-gcc', 'python': 'python3'}

# gcc 12 (Debian 12's) knows C23 only by its draft name.
_C_STANDARDS = {'c89': 'c89', 'c99': 'c99', 'c11': 'c11', 'c23': 'c2x'}
_CPP_STANDARDS = {'cpp11': 'c++11', 'cpp17': 'c++17', 'cpp20': 'c++20', 'cpp23': 'c++23'}


@dataclasses.dataclass(frozen=True)
class Toolchain:
    """A language id this runner evaluates."""
    id: str
    family: str
    language: Language  # the sandbox's language: how the build is run
    compile_flags: Tuple[str, ...]  # beyond the source and the output ('' for Python)

    def fits(self, file_name: str) -> bool:
        """Whether the submission's file name has one of the family's extensions."""
        return file_name.lower().endswith(FAMILY_EXTENSIONS[self.family])


_PLAIN_ID = re.compile(r'[A-Za-z0-9._+-]{1,64}')


def toolchain(language_id: object) -> Toolchain:
    """The toolchain of a submission's `props.language`; NotJudgeable for an
    id this runner does not evaluate."""
    if not isinstance(language_id, str):
        raise NotJudgeable('the submission names no language (props.language)')
    wanted = ALIASES.get(language_id, language_id)
    for standards, family, language in ((_C_STANDARDS, 'c', Language.C), (_CPP_STANDARDS, 'cpp',
                                                                          Language.CPP)):
        standard, sep, compiler = wanted.partition('-')
        if sep and compiler == 'gcc' and standard in standards:
            flags = ('-O2', f'-std={standards[standard]}', '-static')
            if standard == 'c89':
                flags += ('-pedantic-errors', )
            return Toolchain(wanted, family, language, flags)
    if wanted == 'python3':
        return Toolchain(wanted, 'python', Language.PYTHON, ())
    # The contract's words, the id as it came when it reads as one.
    shown = language_id if _PLAIN_ID.fullmatch(language_id) else _show(language_id)
    raise NotJudgeable(f'this runner does not evaluate {shown}')


def _show(text: str) -> str:
    return repr(text[:64]) + ('...' if len(text) > 64 else '')
