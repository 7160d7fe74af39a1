"""A package's `config.yml`, the job's `config` laid over it, and the limits
of one test (docs/algojudge.md §10.2 to §10.4).

Both layers are hostile input. Unknown members are refused (a member we do
not know could change what the judging means); every number is an int, not
a bool, and within bounds; the merged result is what is validated, so an
overlay cannot smuggle in what a package could not hold.
"""
import dataclasses
from typing import Any, Dict, List, Mapping, Optional, Tuple

import yaml

from standard_io.errors import NotJudgeable
from standard_io.languages import Toolchain

TYPE = 'standard-io@1'
MAX_CONFIG_BYTES = 1024 * 1024
MAX_GROUPS = 1000
MAX_INTERACTIVE_TESTS = 26
# Beyond these no host here could honour the limit: refused, not clamped.
MAX_TIME_MS = 10 * 60 * 1000
MAX_MEMORY_BYTES = 64 * 1024**3
MAX_POINTS = 10**9

_TOP = frozenset({
    'type', 'format', 'version', 'limits', 'overrideLimits', 'languages', 'groups', 'checker',
    'interactor', 'modelSolution', 'modelSolutions', 'calibration', 'extraCompilationFiles'
})
# Carried by a package, laid over by nobody: the overlay's copies are not applied.
_NOT_OVERLAID = ('type', 'format', 'version')
_LIMITS = frozenset({'timeMs', 'memoryBytes', 'memoryKib'})
_GROUP = frozenset({'group', 'points', 'examples', 'limits', 'tests'})
_PROGRAM = frozenset({'source', 'language'})


@dataclasses.dataclass(frozen=True)
class Limits:
    """A layer of limits; None where the layer leaves a field to the one below."""
    time_ms: Optional[int] = None
    memory_bytes: Optional[int] = None

    def over(self, below: 'Limits') -> 'Limits':
        return Limits(self.time_ms if self.time_ms is not None else below.time_ms,
                      self.memory_bytes if self.memory_bytes is not None else below.memory_bytes)


@dataclasses.dataclass(frozen=True)
class Group:
    group: int
    points: int
    examples: bool
    limits: Limits
    tests: Optional[int]  # a count, interactive problems only


@dataclasses.dataclass(frozen=True)
class ProgramRef:
    """A checker or interactor: its source's path in the package and its language id."""
    source: str
    language: str


@dataclasses.dataclass(frozen=True)
class Config:
    limits: Limits  # both fields set
    override_limits: Mapping[str, Limits]
    languages: Tuple[str, ...]  # () = anything the runner can build
    groups: Tuple[Group, ...]  # in the order of their numbers
    checker: Optional[ProgramRef]
    interactor: Optional[ProgramRef]

    def language_limits(self, toolchain: Toolchain) -> Limits:
        """The limits a submission in `toolchain` is held to before any
        group's own (what `details.limits` shows)."""
        limits = self.limits
        for key in (toolchain.family, toolchain.id):
            if key in self.override_limits:
                limits = self.override_limits[key].over(limits)
        return limits

    def test_limits(self, toolchain: Toolchain, group: Group) -> Limits:
        """Field by field, most specific wins: a group's own limit stays
        whatever the global or the language's says."""
        return group.limits.over(self.language_limits(toolchain))

    def allows(self, toolchain: Toolchain) -> bool:
        return not self.languages or toolchain.id in self.languages or (toolchain.family
                                                                        in self.languages)


def load(config_yml: bytes, overlay: Optional[Mapping[str, Any]] = None) -> Config:
    """The configuration a job is judged by: the package's `config.yml` with
    the job's `config` laid over it."""
    if len(config_yml) > MAX_CONFIG_BYTES:
        raise NotJudgeable(f'config.yml: over {MAX_CONFIG_BYTES} bytes')
    try:
        base = yaml.safe_load(config_yml)
    except yaml.YAMLError as exc:
        where = getattr(exc, 'problem_mark', None)
        at = f' (line {where.line + 1})' if where is not None else ''
        raise NotJudgeable(f'config.yml: not valid YAML{at}') from None
    except RecursionError:
        raise NotJudgeable('config.yml: nested too deeply') from None
    except ValueError:
        # A scalar YAML reads but Python cannot hold (an integer of
        # thousands of digits, a date past the calendar).
        raise NotJudgeable('config.yml: a value that cannot be read') from None
    base = _normalised(_object(base, 'config.yml'), 'config.yml')
    if overlay is not None:
        layer = _normalised(_object(overlay, 'the job\'s config'), 'the job\'s config')
        base = merged(base, {k: v for k, v in layer.items() if k not in _NOT_OVERLAID})
    return parse(base)


def merged(base: Any, overlay: Any) -> Any:
    """`overlay` laid over `base` (§10.3): objects member by member, arrays
    of distinct `group`s by group, any other array or value replaced. An
    absent member keeps the base's; nothing can be removed."""
    if isinstance(base, dict) and isinstance(overlay, dict):
        result = dict(base)
        for key, value in overlay.items():
            if value is not None:
                result[key] = merged(base[key], value) if key in base else value
        return result
    if _by_group(base) is not None and _by_group(overlay) is not None:
        result = _by_group(base)
        for number, item in _by_group(overlay).items():
            result[number] = merged(result[number], item) if number in result else item
        return list(result.values())
    return base if overlay is None else overlay


def parse(raw: Mapping[str, Any]) -> Config:
    """The merged configuration, checked in full."""
    _only(raw, _TOP, 'config')
    _check_type(raw)
    if 'limits' not in raw:
        raise NotJudgeable('config: limits is required')
    limits = _limits(raw['limits'], 'config limits')
    if limits.time_ms is None or limits.memory_bytes is None:
        raise NotJudgeable('config limits: timeMs and memoryBytes are both required')
    overrides = {}
    for key, value in _object(raw.get('overrideLimits', {}), 'overrideLimits').items():
        # Checked as limits whatever the key: one of a language this contract
        # does not name (a server's other runners may judge it) applies to
        # no submission here, and is no reason to judge none.
        overrides[key] = _limits(value, f'overrideLimits {_show(key)}')
    languages = raw.get('languages', [])
    if not isinstance(languages, list) or not all(isinstance(x, str) for x in languages):
        raise NotJudgeable('languages: must be a list of language ids or families')
    groups = _groups(raw.get('groups'))
    checker = _program(raw, 'checker')
    interactor = _program(raw, 'interactor')
    if checker is not None and interactor is not None:
        raise NotJudgeable('config: a checker and an interactor, never both')
    tests = [g.group for g in groups if g.tests is not None]
    if tests and interactor is None:
        raise NotJudgeable(f'group {tests[0]}: tests is a count for interactive problems only')
    return Config(limits, overrides, tuple(languages), groups, checker, interactor)


def _normalised(layer: Dict[str, Any], what: str) -> Dict[str, Any]:
    """Older packages give memory in KiB: as bytes, before layers meet, so a
    layer in bytes replaces one in KiB."""

    def fix(limits: Any, where: str) -> Any:
        if not isinstance(limits, dict) or 'memoryKib' not in limits:
            return limits
        limits = dict(limits)
        kib = limits.pop('memoryKib')
        if 'memoryBytes' in limits:
            raise NotJudgeable(f'{where}: memoryBytes and memoryKib, never both')
        limits['memoryBytes'] = _int(kib, f'{where} memoryKib', 1, MAX_MEMORY_BYTES // 1024) * 1024
        return limits

    layer = dict(layer)
    if 'limits' in layer:
        layer['limits'] = fix(layer['limits'], f'{what} limits')
    if isinstance(layer.get('overrideLimits'), dict):
        layer['overrideLimits'] = {
            key: fix(value, f'{what} overrideLimits')
            for key, value in layer['overrideLimits'].items()
        }
    if isinstance(layer.get('groups'), list):
        layer['groups'] = [
            dict(g, limits=fix(g['limits'], f'{what} group limits'))
            if isinstance(g, dict) and 'limits' in g else g for g in layer['groups']
        ]
    return layer


def _by_group(value: Any) -> Optional[Dict[int, Any]]:
    """An array whose elements all carry a distinct integer `group`, by group."""
    if not isinstance(value, list) or not value:
        return None
    by_group = {}
    for item in value:
        if not isinstance(item, dict) or type(item.get('group')) is not int:
            return None
        by_group[item['group']] = item
    return by_group if len(by_group) == len(value) else None


def _check_type(raw: Mapping[str, Any]) -> None:
    if 'type' in raw:
        if raw['type'] != TYPE:
            raise NotJudgeable(f'config type {_show(raw["type"])} is not {TYPE}')
    elif raw.get('format') == 'standard-io' and raw.get('version') in (1, '1'):
        pass  # an older package's way of saying the same
    else:
        raise NotJudgeable(f'config: type must be {TYPE}')


def _limits(raw: Any, what: str) -> Limits:
    _only(_object(raw, what), _LIMITS, what)
    time_ms = raw.get('timeMs')
    memory = raw.get('memoryBytes')
    return Limits(
        None if time_ms is None else _int(time_ms, f'{what} timeMs', 1, MAX_TIME_MS),
        None if memory is None else _int(memory, f'{what} memoryBytes', 1, MAX_MEMORY_BYTES))


def _groups(raw: Any) -> Tuple[Group, ...]:
    if not isinstance(raw, list) or not raw:
        raise NotJudgeable('config: groups must be a non-empty list')
    if len(raw) > MAX_GROUPS:
        raise NotJudgeable(f'config: more than {MAX_GROUPS} groups')
    groups: List[Group] = []
    for index, item in enumerate(raw):
        what = f'groups[{index}]'
        _only(_object(item, what), _GROUP, what)
        if 'group' not in item or 'points' not in item:
            raise NotJudgeable(f'{what}: group and points are required')
        number = _int(item['group'], f'{what} group', 0, 10**6)
        examples = item.get('examples', False)
        if not isinstance(examples, bool):
            raise NotJudgeable(f'group {number}: examples must be true or false')
        tests = item.get('tests')
        groups.append(
            Group(
                number, _int(item['points'], f'group {number} points', 0, MAX_POINTS), examples,
                _limits(item.get('limits', {}),
                        f'group {number} limits'), None if tests is None else _int(
                            tests, f'group {number} tests', 1, MAX_INTERACTIVE_TESTS)))
    numbers = [g.group for g in groups]
    if len(set(numbers)) != len(numbers):
        raise NotJudgeable('config: two groups share a number')
    return tuple(sorted(groups, key=lambda g: g.group))


def _program(raw: Mapping[str, Any], role: str) -> Optional[ProgramRef]:
    if role not in raw:
        return None
    item = _object(raw[role], role)
    _only(item, _PROGRAM, role)
    source, language = item.get('source'), item.get('language')
    if not isinstance(source, str) or not source or not isinstance(language, str):
        raise NotJudgeable(f'{role}: source and language are required strings')
    return ProgramRef(source, language)


def _object(value: Any, what: str) -> Dict[str, Any]:
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise NotJudgeable(f'{what}: must be an object')
    return value


def _only(obj: Mapping[str, Any], known: frozenset, what: str) -> None:
    unknown = sorted(set(obj) - known)
    if unknown:
        raise NotJudgeable(f'{what}: unknown member {_show(unknown[0])}')


def _int(value: Any, what: str, minimum: int, maximum: int) -> int:
    # bool is an int subclass: `true` is not a time limit.
    if type(value) is not int or not minimum <= value <= maximum:
        raise NotJudgeable(f'{what}: must be an integer from {minimum} to {maximum}')
    return value


def _show(value: Any) -> str:
    """A value for a message: a scalar, cut short, or only its kind. Never
    the repr of a list or an object: YAML's aliases make a small file a
    structure of millions of nodes when written out."""
    if isinstance(value, (list, dict)):
        return 'a list' if isinstance(value, list) else 'an object'
    text = repr(value)
    return text[:64] + ('...' if len(text) > 64 else '')
