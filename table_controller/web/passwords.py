"""Passwords of the web services (broadcast producer, floor supervisors): scrypt hashes.

A config holds only ``scrypt$N$r$p$<salt>$<hash>`` (base64), made by
``stud-table broadcast --hash-password`` (or ``floor --hash-password``); the
services check a login against it in constant time. Nothing here logs a password.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
from typing import Final

_SCRYPT: Final = {"n": 2**14, "r": 8, "p": 1}
# scrypt's interactive-login parameters (RFC 7914 section 2): ~50 ms and 16 MiB per
# check, so a stolen config cannot be brute-forced cheaply.


def hash_password(password: str, salt: bytes | None = None) -> str:
    """The config form of ``password``: ``scrypt$N$r$p$<salt>$<hash>`` (base64)."""
    salt = salt if salt is not None else os.urandom(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, **_SCRYPT, dklen=32)
    b64 = base64.b64encode
    return (f"scrypt${_SCRYPT['n']}${_SCRYPT['r']}${_SCRYPT['p']}$"
            f"{b64(salt).decode()}${b64(digest).decode()}")


def _parse_hash(value: str) -> tuple[int, int, int, bytes, bytes]:
    parts = value.split("$")
    if len(parts) != 6 or parts[0] != "scrypt":
        raise ValueError("must be a hash from `stud-table broadcast --hash-password`"
                         " (scrypt$N$r$p$salt$hash), never the password itself")
    try:
        n, r, p = (int(x) for x in parts[1:4])
        salt, digest = base64.b64decode(parts[4], validate=True), base64.b64decode(
            parts[5], validate=True)
    except ValueError:
        raise ValueError("is not a valid scrypt$N$r$p$salt$hash string") from None
    if n < 2**10 or n & (n - 1) or not 1 <= r <= 64 or not 1 <= p <= 16 or len(digest) < 16:
        raise ValueError("scrypt parameters out of range (N a power of two >= 1024)")
    return n, r, p, salt, digest


def checked_hash(value: str) -> str:
    """``value`` if it is a well-formed scrypt hash (a config validator); ValueError if not."""
    _parse_hash(value)
    return value


def check_password(password: str, stored: str) -> bool:
    """True if ``password`` matches the ``stored`` hash (constant-time compare)."""
    n, r, p, salt, digest = _parse_hash(stored)
    got = hashlib.scrypt(password.encode(), salt=salt, n=n, r=r, p=p, dklen=len(digest),
                         maxmem=256 * 1024 * 1024)
    return hmac.compare_digest(got, digest)


def dummy_hash_like(stored: str) -> str:
    """A hash with ``stored``'s scrypt parameters that no password matches.

    Checked for an unknown login name, so that an unknown name costs the same
    work (and time) as a known one with a wrong password: the name's existence
    does not show in the answer's timing (issue 22).
    """
    n, r, p, _salt, digest = _parse_hash(stored)
    b64 = base64.b64encode
    salt, fake = b64(os.urandom(16)).decode(), b64(os.urandom(len(digest))).decode()
    return f"scrypt${n}${r}${p}${salt}${fake}"
