"""Login sessions of the web services: random cookie tokens, bounded, with a lifetime.

The broadcast producer and the floor's supervisors (issue 20) log in the same way
once their password is checked: a random token (32 bytes) in an HttpOnly,
SameSite=Strict cookie, remembered on the server with the logged-in name and when it
expires. At most :data:`MAX_SESSIONS` are remembered (a client without cookies logging
in again and again pushes out the oldest, nothing grows without bound), and an
expired one is forgotten when it is next shown. The clock is passed in.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Final

from starlette.requests import Request
from starlette.responses import Response

MAX_SESSIONS: Final = 1000
"""Logins remembered; past this the oldest is forgotten."""
SESSION_S: Final = 12 * 3600
"""A login lasts a shift."""


class Sessions:
    """The logged-in sessions of one service, keyed by the token of ``cookie``."""

    def __init__(self, cookie: str, clock: Callable[[], float],
                 lifetime_s: float = SESSION_S, limit: int = MAX_SESSIONS) -> None:
        self.cookie = cookie
        """The cookie's name (``stud_broadcast``, ``stud_floor``)."""
        self.lifetime_s = lifetime_s
        self._clock = clock
        self._limit = limit
        self._open: dict[str, tuple[str, float]] = {}  # token -> (name, expires); oldest first

    def __len__(self) -> int:
        """Sessions remembered now (expired ones not yet shown included)."""
        return len(self._open)

    def who(self, request: Request) -> str | None:
        """The name logged in with ``request``'s cookie, or None (none, unknown, expired)."""
        token = request.cookies.get(self.cookie)
        session = self._open.get(token) if token else None
        if session is None:
            return None
        name, expires = session
        if self._clock() > expires:
            self._open.pop(token or "", None)
            return None
        return name

    def open(self, response: Response, name: str) -> None:
        """Log ``name`` in: a new token, remembered and set as ``response``'s cookie."""
        token = secrets.token_urlsafe(32)
        if len(self._open) >= self._limit:
            self._open.pop(next(iter(self._open)))
        self._open[token] = (name, self._clock() + self.lifetime_s)
        response.set_cookie(self.cookie, token, httponly=True, samesite="strict", path="/",
                            max_age=int(self.lifetime_s))

    def close(self, request: Request, response: Response) -> None:
        """Log out: forget ``request``'s session and delete its cookie in ``response``."""
        self._open.pop(request.cookies.get(self.cookie) or "", None)
        response.delete_cookie(self.cookie, path="/")


__all__ = ["MAX_SESSIONS", "SESSION_S", "Sessions"]
