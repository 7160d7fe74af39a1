"""HTTP values the route handlers see and return, and decoding of hostile request bodies."""
import dataclasses
import json
from typing import Callable, Dict, List, Mapping, Optional, Tuple

NOT_JSON = object()  # what `decode_json` returns for a body that is not JSON


@dataclasses.dataclass(frozen=True)
class Request:
    method: str
    path: str  # without the query string: paths may be logged, queries never
    segments: Tuple[str, ...]
    query: Mapping[str, str] = dataclasses.field(repr=False)
    headers: Mapping[str, str] = dataclasses.field(repr=False)
    body: bytes = dataclasses.field(repr=False)
    base_url: str = ''
    # Whether the client is still connected: a held long poll must not lease a
    # job to a caller that has gone.
    caller_present: Callable[[], bool] = dataclasses.field(default=lambda: True,
                                                           repr=False,
                                                           compare=False)

    @property
    def bearer_token(self) -> Optional[str]:
        value = self.headers.get('authorization', '')
        scheme, _, token = value.partition(' ')
        if scheme.lower() != 'bearer' or not token.strip():
            return None
        return token.strip()

    def json(self) -> object:
        return decode_json(self.body)


@dataclasses.dataclass(frozen=True)
class Response:
    status: int
    body: bytes = dataclasses.field(default=b'', repr=False)
    content_type: str = 'application/json'

    @classmethod
    def json(cls, status: int, value: object) -> 'Response':
        return cls(status, json.dumps(value).encode('utf-8'))

    @classmethod
    def error(cls, status: int, message: str) -> 'Response':
        return cls.json(status, {'error': message})

    @classmethod
    def empty(cls, status: int) -> 'Response':
        return cls(status, b'', '')


def decode_json(body: bytes) -> object:
    """The JSON value of a body, or NOT_JSON (bad UTF-8, bad syntax, absurd nesting)."""
    try:
        return json.loads(body.decode('utf-8'))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return NOT_JSON


Handler = Callable[[Request, Dict[str, str]], Response]


@dataclasses.dataclass(frozen=True)
class Route:
    """`pattern` segments in braces bind parameters; `endpoint` names the fault kind."""
    method: str
    pattern: Tuple[str, ...]
    handler: Handler
    endpoint: Optional[str] = None

    def match(self, segments: Tuple[str, ...]) -> Optional[Dict[str, str]]:
        if len(segments) != len(self.pattern):
            return None
        params = {}
        for part, segment in zip(self.pattern, segments):
            if part.startswith('{'):
                params[part[1:-1]] = segment
            elif part != segment:
                return None
        return params


def route(method: str, path: str, handler: Handler, endpoint: Optional[str] = None) -> Route:
    return Route(method, tuple(path.strip('/').split('/')), handler, endpoint)


def find(routes: List[Route], method: str,
         segments: Tuple[str, ...]) -> Tuple[Optional[Route], Dict[str, str], bool]:
    """(route, params, path_known): path_known without a route means 405."""
    path_known = False
    for candidate in routes:
        params = candidate.match(segments)
        if params is None:
            continue
        path_known = True
        if candidate.method == method:
            return candidate, params, True
    return None, {}, path_known
