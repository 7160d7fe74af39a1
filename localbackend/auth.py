"""Secrets: minting, storing (as hashes only) and checking them in constant time.

Every check fails closed. Auth material arrives from JSON bodies, headers and
query strings, so it may be any JSON value: a number, a list, or a str holding
a lone UTF-16 surrogate (`json.loads('"\\ud800"')` is legal and cannot be
UTF-8 encoded). Such input is a refusal (401), never an exception (500).
"""
import hashlib
import hmac
import secrets
from typing import Optional


def utf8(value: object) -> Optional[bytes]:
    """The UTF-8 bytes of a str, or None for anything that is not a well-formed str."""
    if not isinstance(value, str):
        return None
    try:
        return value.encode('utf-8')
    except UnicodeEncodeError:
        return None


def mint(prefix: str, nbytes: int = 32) -> str:
    return prefix + secrets.token_urlsafe(nbytes)


def token_hash(token: str) -> bytes:
    """What is stored for an identity token: its SHA-256, never the token itself."""
    return hashlib.sha256(token.encode('utf-8')).digest()


# Compared against when there is nothing to compare with, so an unknown
# runner id costs the same work as a known one with a wrong token.
_NO_HASH = hashlib.sha256(b'no identity').digest()


def matches_hash(stored: Optional[bytes], candidate: object) -> bool:
    """Whether `candidate` is the token whose hash is `stored`."""
    raw = utf8(candidate)
    if raw is None:
        hmac.compare_digest(_NO_HASH, _NO_HASH)
        return False
    digest = hashlib.sha256(raw).digest()
    if stored is None:
        hmac.compare_digest(_NO_HASH, digest)
        return False
    return hmac.compare_digest(stored, digest)


def matches_secret(expected: str, candidate: object) -> bool:
    """Whether `candidate` equals a configured shared secret.

    An empty configured secret disables the channel: nothing matches it.
    Bytes are compared because `hmac.compare_digest` raises TypeError on
    non-ASCII str.
    """
    raw = utf8(candidate)
    if not expected or raw is None:
        return False
    return hmac.compare_digest(expected.encode('utf-8'), raw)


def sign(key: bytes, message: str) -> str:
    return hmac.new(key, message.encode('utf-8'), hashlib.sha256).hexdigest()


def signature_valid(key: bytes, message: object, candidate: object) -> bool:
    raw = utf8(candidate)
    if raw is None or utf8(message) is None:
        return False
    return hmac.compare_digest(sign(key, message).encode('ascii'), raw)
