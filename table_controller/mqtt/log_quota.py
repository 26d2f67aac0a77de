"""A quota on log lines that other clients can cause: N per window, then one summary.

Whatever a client of the broker can make the daemon do at will (send a bad
command, a refused reply topic, a retained command, more commands than may
wait) must not write one log line each: a flood of 50,000 requests wrote 9.8 MB
of log in one go (issue 20), and journald drops lines past its own rate limit
anyway, the useful ones with them. :class:`LogQuota` decides, per event name,
whether a line may be written: the first :data:`LOG_BURST` of each
:data:`LOG_WINDOW`, then none until the window ends, when the caller writes one
summary line with the count (:meth:`LogQuota.ended`). Pure decisions: the
caller passes the time in; :func:`log_limited` does the logging.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any, Final

LOG_BURST: Final = 20
"""Lines per event name per window."""

LOG_WINDOW: Final = 10.0
"""Seconds of a window (the same as the ``console_rejected`` alerts')."""

SUMMARY_EVENT: Final = "log_lines_suppressed"
"""The event name of the summary line: ``what`` (the event summed up), ``count``, ``window``."""


@dataclass(slots=True)
class _Window:
    ends: float
    written: int = 0
    suppressed: int = 0


@dataclass(frozen=True, slots=True)
class Suppressed:
    """``count`` lines of ``event`` were not written in the window that ended."""

    event: str
    count: int


class LogQuota:
    """Per event name: :data:`LOG_BURST` lines per :data:`LOG_WINDOW` (thread-safe)."""

    def __init__(self, burst: int = LOG_BURST, window: float = LOG_WINDOW) -> None:
        """A quota of ``burst`` lines per ``window`` seconds for each event name."""
        self.burst = burst
        self.window = window
        self._windows: dict[str, _Window] = {}
        self._lock = threading.Lock()
        self.suppressed_total = 0
        """Lines not written since the start (all events)."""

    def admit(self, event: str, now: float) -> bool:
        """Whether a line of ``event`` may be written at ``now``; counted if not."""
        with self._lock:
            window = self._windows.get(event)
            if window is None or now >= window.ends:
                if window is not None and window.suppressed:
                    # Its summary is still due: keep it until ended() hands it out.
                    return self._count(window)
                window = self._windows[event] = _Window(ends=now + self.window)
            if window.written < self.burst:
                window.written += 1
                return True
            return self._count(window)

    def _count(self, window: _Window) -> bool:
        window.suppressed += 1
        self.suppressed_total += 1
        return False

    def ended(self, now: float) -> list[Suppressed]:
        """The summaries of the windows that ended by ``now`` with lines suppressed
        (each handed out once); their events start afresh."""
        with self._lock:
            done = [(event, w) for event, w in self._windows.items() if now >= w.ends]
            for event, _ in done:
                del self._windows[event]
            return [Suppressed(event, w.suppressed) for event, w in done if w.suppressed]


def log_limited(quota: LogQuota, logger: Any, level: str, event: str,
                now: float | None = None, **fields: Any) -> None:
    """Write ``event`` at ``level`` (``"info"``, ``"warning"``, ...) with ``fields`` on
    ``logger`` if ``quota`` admits it, after the summaries of the windows that ended."""
    at = time.monotonic() if now is None else now
    write_summaries(quota, logger, at)
    if quota.admit(event, at):
        getattr(logger, level)(event, **fields)


def write_summaries(quota: LogQuota, logger: Any, now: float) -> None:
    """Write one :data:`SUMMARY_EVENT` warning per window of ``quota`` that ended by
    ``now`` with lines suppressed."""
    for gone in quota.ended(now):
        logger.warning(SUMMARY_EVENT, what=gone.event, count=gone.count, window=quota.window)
