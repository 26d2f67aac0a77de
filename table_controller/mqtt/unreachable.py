"""Saying, once and with the reason, that a broker cannot be reached (issue 24, item 4).

paho's background loop retries a failed connection every few seconds and calls
``on_connect_fail`` without the reason; the reason is the ``OSError`` paho is handling
at that moment, so the callback reads it with ``sys.exc_info()``. :class:`BrokerOutage`
logs one ``error`` line per outage with that reason ("Connection refused", "timed
out", "Name or service not known", a TLS failure...), another when the reason changes,
and one ``info`` line once the broker is back: a service pointed at a dead port says
so at the first attempt, not never.
"""

from __future__ import annotations

import socket
import ssl
import sys
import threading

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
