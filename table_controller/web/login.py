"""Checking a password typed into a web service: throttled per client, bounded CPU, logged.

The broadcast producer's password and the floor supervisors' (issue 20) are checked
the same way: a client that is waiting out its backoff (:class:`LoginThrottle`) is
answered at once, without a hash; at most :data:`HASHES_AT_ONCE` scrypt checks run at
a time, in threads, with no lock held while anyone waits; a failure counts against
the client and is logged as ``<service>_login_refused`` when the throttle says so
(the 1st, 2nd, 4th... and the lockout), so a guesser cannot flood the log either.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Final

import structlog
from starlette.requests import Request

from table_controller.web.passwords import check_password
from table_controller.web.throttle import LoginThrottle

log = structlog.get_logger(__name__)

HASHES_AT_ONCE: Final = 2
"""Password checks run at the same time (scrypt: 16 MiB and ~50 ms each)."""


def client_of(request: Request) -> str:
    """The address a request came from (``?`` if the server does not know)."""
    return request.client.host if request.client else "?"


class PasswordCheck:
    """One service's password checks: its throttle, its bound on hashing, its log event."""

    def __init__(self, service: str, clock: Callable[[], float]) -> None:
        self.throttle = LoginThrottle()
        self._event = f"{service}_login_refused"
        self._clock = clock
        self._hashing: tuple[asyncio.AbstractEventLoop, asyncio.Semaphore] | None = None
        """The bound on hashing, made on the loop that serves (a new one per loop)."""

    def wait(self, request: Request) -> float:
        """Seconds ``request``'s client must wait before its next guess is checked (0:
        none); a waiting client is answered 429 with ``Retry-After`` and no hash."""
        return self.throttle.wait(client_of(request), self._clock())

    async def check(self, request: Request, password: str, stored: str, *,
                    known: bool = True, **shown: Any) -> bool:
        """Whether ``password`` matches the scrypt hash ``stored``, and ``known`` (an
        unknown name is checked against a dummy hash all the same: the answer's timing
        says nothing). A failure counts against the client; ``shown``: more fields of
        its log line (a name typed, never a password)."""
        client = client_of(request)
        loop = asyncio.get_running_loop()
        if self._hashing is None or self._hashing[0] is not loop:
            self._hashing = (loop, asyncio.Semaphore(HASHES_AT_ONCE))
        async with self._hashing[1]:  # bounded CPU; no lock held while anyone waits
            ok = await asyncio.to_thread(check_password, password, stored)
        if ok and known:
            self.throttle.succeeded(client)
            return True
        failures = self.throttle.failed(client, self._clock())
        if self.throttle.should_log(failures):
            log.warning(self._event, **shown, client=client, failures=failures,
                        locked=self.throttle.locked(failures))
        return False


__all__ = ["HASHES_AT_ONCE", "PasswordCheck", "client_of"]
