"""Login throttling for the web services: per-client backoff, lockout, rate-limited logging.

Pure (the time comes in as ``now``): :class:`LoginThrottle` keeps, per client (its
address), the failures of the current window and when it may try again.

* The first ``free_tries`` failures cost nothing (a typo); after the ``n``-th
  failure in a row past them a client waits ``base_s * 2**(n-1)`` seconds (capped
  at ``max_wait_s``) before its next guess is even checked; one that tries
  earlier is answered at once with HTTP 429 and ``Retry-After`` and costs no
  password hash (no CPU for a flood).
* From ``lockout_after`` failures it is locked out for ``lockout_s``.
* A success clears the client's record. Records expire after ``forget_s`` without
  a failure, and at most ``max_clients`` are kept (the oldest go first), so a
  flood of addresses cannot grow memory without bound.

Throttling one client never slows another: there is no global lock and no sleep
while holding one (issue 22: eight guessers delayed the right password by 4.9 s).
:meth:`LoginThrottle.should_log` says which failures are logged (the 1st, 2nd, 4th,
8th... of a client, and its lockout), so a guesser cannot flood the log either.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

MAX_CLIENTS: Final = 10_000


@dataclass(slots=True)
class _Record:
    failures: int
    last: float
    not_before: float


@dataclass(slots=True)
class LoginThrottle:
    """Per-client login backoff (module docstring)."""

    free_tries: int = 3
    base_s: float = 1.0
    max_wait_s: float = 60.0
    lockout_after: int = 10
    lockout_s: float = 900.0
    forget_s: float = 3600.0
    max_clients: int = MAX_CLIENTS
    _clients: dict[str, _Record] = field(default_factory=dict)

    def wait(self, client: str, now: float) -> float:
        """Seconds ``client`` must still wait before a guess is checked (0: go ahead)."""
        record = self._clients.get(client)
        if record is None:
            return 0.0
        if now - record.last > max(self.forget_s, record.not_before - record.last):
            del self._clients[client]
            return 0.0
        return max(0.0, record.not_before - now)

    def failed(self, client: str, now: float) -> int:
        """Note a failed login of ``client``; return its failures in a row."""
        record = self._clients.pop(client, None)
        failures = 1 if record is None else record.failures + 1
        if failures >= self.lockout_after:
            wait = self.lockout_s
        elif failures <= self.free_tries:
            wait = 0.0
        else:
            wait = min(self.base_s * 2 ** (failures - self.free_tries - 1), self.max_wait_s)
        self._clients[client] = _Record(failures, now, now + wait)  # newest last
        while len(self._clients) > self.max_clients:
            self._clients.pop(next(iter(self._clients)))
        return failures

    def succeeded(self, client: str) -> None:
        """A correct login: forget the client's failures."""
        self._clients.pop(client, None)

    def locked(self, failures: int) -> bool:
        """True if ``failures`` in a row lock the client out."""
        return failures >= self.lockout_after

    def should_log(self, failures: int) -> bool:
        """Log this failure? The 1st, 2nd, 4th, 8th... and the lockout."""
        return failures & (failures - 1) == 0 or failures == self.lockout_after
