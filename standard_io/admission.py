"""Whether a submission is built at all (docs/algojudge.md §10.5), in the
contract's order: a language this runner evaluates (else not judgeable
here), one the problem allows (else PolicyViolation), a file name of its
family (else Compilation error), a source of at most 8 MiB (else
PolicyViolation)."""
import dataclasses
from typing import Optional, Union

from standard_io.config import Config
from standard_io.languages import FAMILY_EXTENSIONS, Toolchain, toolchain
from standard_io.scoring import Reason, Verdict

MAX_SOURCE_BYTES = 8 * 1024 * 1024


@dataclasses.dataclass(frozen=True)
class Refusal:
    """The submission's verdict without a build; `log` says why."""
    verdict: Verdict
    reason: Reason
    log: str
    toolchain: Optional[Toolchain] = None  # the one named, when known (details, props)


def admit(config: Config, language_id: object, file_name: str,
          source_bytes: int) -> Union[Toolchain, Refusal]:
    """The toolchain to build with, or the refusal; NotJudgeable for a
    language this runner does not evaluate."""
    chosen = toolchain(language_id)
    if not config.allows(chosen):
        return Refusal(Verdict.POLICY_VIOLATION, Reason.POLICY_VIOLATION,
                       f'{chosen.id} is not allowed for this problem', chosen)
    if not chosen.fits(file_name):
        extensions = ' '.join(FAMILY_EXTENSIONS[chosen.family])
        return Refusal(Verdict.COMPILATION_ERROR, Reason.COMPILATION_ERROR,
                       f'a {chosen.id} source needs a file name ending in {extensions}', chosen)
    if source_bytes > MAX_SOURCE_BYTES:
        return Refusal(Verdict.POLICY_VIOLATION, Reason.POLICY_VIOLATION,
                       f'the source is {source_bytes} bytes, over the {MAX_SOURCE_BYTES} allowed',
                       chosen)
    return chosen
