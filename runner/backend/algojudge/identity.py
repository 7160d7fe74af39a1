"""The runner's AlgoJudge identity: an Ed25519 key made once and never
rotated (docs/algojudge.md §2).

The key file holds the raw 32-byte secret seed, mode 0600. It is created
when missing (written under a temporary name and linked into place, so two
starts at once never leave half a key, and neither replaces the other's);
an existing file that is not a key is a configuration error and is never
replaced: replacing it would make the runner a stranger to its server,
which only an administrator's approval undoes.
"""
import base64
import hashlib
import logging
import os
import pathlib
import secrets
import stat

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

log = logging.getLogger(__name__)

SEED_BYTES = 32


class KeyFileError(ValueError):
    """RUNNER_KEY_FILE cannot be used; the message says why (never the key)."""


class RunnerKey:
    """The key: the public half as the wire carries it, and signatures."""

    def __init__(self, seed: bytes):
        self._private = Ed25519PrivateKey.from_private_bytes(seed)
        raw = self._private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        self.public_key = base64.b64encode(raw).decode('ascii')
        self.fingerprint = hashlib.sha256(raw).hexdigest()

    def __repr__(self) -> str:
        return f'RunnerKey(fingerprint={self.fingerprint[:16]}...)'

    def sign(self, nonce: str) -> str:
        """The signature of a challenge: over the nonce's UTF-8 bytes as
        received (not decoded, not hashed), base64."""
        return base64.b64encode(self._private.sign(nonce.encode('utf-8'))).decode('ascii')


def load_or_create(path: pathlib.Path) -> RunnerKey:
    try:
        return _load(path)
    except FileNotFoundError:
        pass
    _create(path)
    return _load(path)


def _load(path: pathlib.Path) -> RunnerKey:
    try:
        with open(path, 'rb') as key_file:
            mode = os.fstat(key_file.fileno()).st_mode
            seed = key_file.read(SEED_BYTES + 1)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise KeyFileError(f'RUNNER_KEY_FILE {path}: cannot read it ({exc.strerror})') from None
    if not stat.S_ISREG(mode):
        raise KeyFileError(f'RUNNER_KEY_FILE {path}: not a regular file')
    if len(seed) != SEED_BYTES:
        raise KeyFileError(f'RUNNER_KEY_FILE {path}: not an Ed25519 key file (a key file holds '
                           f'the {SEED_BYTES}-byte secret seed); it is left as it is')
    if mode & 0o077:
        log.warning('RUNNER_KEY_FILE %s: readable by others (mode %o); it should be 0600', path,
                    stat.S_IMODE(mode))
    return RunnerKey(seed)


def _create(path: pathlib.Path) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f'.{path.name}.{secrets.token_hex(8)}.new')
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(descriptor, 'wb') as out:
                out.write(os.urandom(SEED_BYTES))
                out.flush()
                os.fsync(out.fileno())
            try:
                os.link(temporary, path)  # never over a key another start made
                log.info('made a new runner key at %s: an administrator approves it once', path)
            except FileExistsError:
                pass
        finally:
            temporary.unlink(missing_ok=True)
    except OSError as exc:
        raise KeyFileError(f'RUNNER_KEY_FILE {path}: cannot create it ({exc.strerror})') from None
