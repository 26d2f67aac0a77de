"""Saying, once and with the reason, that a broker cannot be reached (issue 24, item 4).

paho's background loop retries a failed connection every few seconds and calls
``on_connect_fail`` without the reason; the reason is the ``OSError`` paho is handling
at that moment, so the callback reads it with ``sys.exc_info()``. :class:`BrokerOutage`
logs one ``error`` line per outage with that reason ("Connection refused", "timed
out", "Name or service not known", a TLS failure...), another when the reason changes,
and one ``info`` line once the broker is back: a service pointed at a dead port says
so at the first attempt, not never. :class:`ConnectFailures` is the daemon's
(publisher's) version: the first failure at once, then a summary at most every
:data:`CONNECT_SUMMARY_PERIOD` seconds, and one line when the broker is back.
"""

from __future__ import annotations

import socket
import ssl
import sys
import threading
from dataclasses import dataclass
from typing import Final

import structlog

log = structlog.get_logger(__name__)


def connect_failure_reason() -> str:
    """The reason of the connection failure being handled now (in ``on_connect_fail``)."""
    error = sys.exc_info()[1]
    if error is None:
        return "no reason given"
    if isinstance(error, TimeoutError | socket.timeout):
        return "timed out"
    if isinstance(error, ssl.SSLError):
        return f"TLS: {error.reason or error}"
    if isinstance(error, socket.gaierror):
        return f"cannot resolve the host name: {error.strerror}"
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return f"{type(error).__name__}: {error}"


class BrokerOutage:
    """One client's view of its broker being unreachable: what to log, and when."""

    def __init__(self, event: str, host: str, port: int) -> None:
        self.event = event
        """The log event of the outage, e.g. ``broadcast_mqtt_unreachable``."""
        self.host = host
        self.port = port
        self._reason: str | None = None
        self._lock = threading.Lock()

    def on_connect_fail(self, _client: object, _userdata: object) -> None:
        """paho's ``on_connect_fail``: log the outage (once per reason)."""
        reason = connect_failure_reason()
        with self._lock:
            new = reason != self._reason
            self._reason = reason
        if new:
            log.error(self.event, host=self.host, port=self.port, reason=reason,
                      retrying=True)

    def connected(self) -> None:
        """Call from ``on_connect`` (success): the outage, if any, is over."""
        with self._lock:
            was, self._reason = self._reason, None
        if was is not None:
            log.info(self.event.replace("_unreachable", "_reachable"), host=self.host,
                     port=self.port)

    @property
    def reason(self) -> str | None:
        """Why the broker is unreachable now, or None."""
        return self._reason


CONNECT_SUMMARY_PERIOD: Final = 60.0
"""Seconds between two summary lines of a broker outage that goes on (the daemon's
``mqtt_connect_failed``): paho retries every few seconds, a line each was noise."""


@dataclass(frozen=True, slots=True)
class OutageLine:
    """A line to log about an outage: ``level`` (``"warning"``, ``"info"``), ``event``
    and its fields."""

    level: str
    event: str
    fields: dict[str, object]


class ConnectFailures:
    """What to log of repeated connection failures (pure: the caller passes the time).

    The first failure of an outage is said at once with its reason, and so is a
    change of reason; while it goes on, one summary (attempts so far, for how long)
    at most every ``period`` seconds; and one line when the connection is back.
    Not thread-safe: paho calls ``on_connect_fail`` and ``on_connect`` on one thread.
    """

    def __init__(self, event: str, period: float = CONNECT_SUMMARY_PERIOD) -> None:
        """Lines of event ``event`` (the summary: ``<event>_still``, the end:
        ``<event>_over``), a summary at most every ``period`` seconds."""
        self.event = event
        self.period = period
        self._reason: str | None = None
        self._began = 0.0
        self._last_line = 0.0
        self.attempts = 0
        """Failed attempts of the outage going on (0: none)."""

    def failed(self, reason: str, now: float) -> OutageLine | None:
        """One attempt failed with ``reason`` at ``now``: the line to log, or None."""
        self.attempts += 1
        if self.attempts == 1 or reason != self._reason:
            if self.attempts == 1:
                self._began = now
            self._reason, self._last_line = reason, now
            return OutageLine("warning", self.event,
                              {"reason": reason, "attempts": self.attempts, "retrying": True})
        if now - self._last_line < self.period:
            return None
        self._last_line = now
        return OutageLine("warning", f"{self.event}_still",
                          {"reason": reason, "attempts": self.attempts,
                           "seconds": round(now - self._began, 1)})

    def connected(self, now: float) -> OutageLine | None:
        """The connection succeeded at ``now``: the outage's last line, if there was one."""
        if self.attempts == 0:
            return None
        line = OutageLine("info", f"{self.event}_over",
                          {"attempts": self.attempts, "reason": self._reason,
                           "seconds": round(now - self._began, 1)})
        self.attempts, self._reason = 0, None
        return line
