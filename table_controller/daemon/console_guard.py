"""The console guard: may this console request run, and what does the floor hear of it?

Console requests come from other clients of the broker and are untrusted
(docs/console.md). The guard decides, without I/O, thread or clock of its own
(the core passes the time in and carries the decisions out):

* **the response topic** (:meth:`ConsoleGuard.reply_problem`): a request whose
  *Response Topic* is not the table's own ``reply/<client>`` is refused before
  anything else, never carried out (its requester could not learn the outcome);
* **idempotency** (:meth:`ConsoleGuard.recall`, :meth:`ConsoleGuard.remember`): a
  request whose *Correlation Data* (with the same command and payload) was
  answered recently is answered again with the first reply instead of being
  applied twice;
* **the rejected-alert window** (:meth:`ConsoleGuard.rejected`,
  :meth:`ConsoleGuard.close_window`): ``console_rejected`` alerts and their
  warning lines are limited to :data:`REJECTED_ALERT_BURST` per
  :data:`REJECTED_ALERT_WINDOW`; the rest are counted and summed up in one alert
  and one log line when the window ends.

How many requests may wait at all (per client and in all) is the inbox's
business (:mod:`table_controller.daemon.inbox`), before a request reaches the
engine thread.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import dataclass
from typing import Final

from table_controller.domain.engine.outputs import ConsoleResult
from table_controller.mqtt.publisher import CommandRequest
from table_controller.mqtt.topics import TableTopics

REJECTED_ALERT_BURST: Final = 20
"""``console_rejected`` alerts published per :data:`REJECTED_ALERT_WINDOW`; more
are counted and reported in one summary alert: a client sending garbage by the
thousand must not bury the floor's alerts (or the feed) under its own."""

REJECTED_ALERT_WINDOW: Final = 10.0
"""Seconds of the ``console_rejected`` alert window."""

REQUEST_MEMORY: Final = 1000
"""Recent console requests (by correlation data) remembered for idempotency."""


@dataclass(frozen=True, slots=True)
class Recalled:
    """A request answered before: its first result and the reply's bytes."""

    result: ConsoleResult
    payload: bytes


@dataclass(frozen=True, slots=True)
class RejectedSummary:
    """``count`` more rejections in the window that ended; ``last`` the last one's message."""

    count: int
    last: str


class ConsoleGuard:
    """The decisions of the module docstring, for the console of table ``topics``."""

    def __init__(self, topics: TableTopics, *, memory: int = REQUEST_MEMORY,
                 burst: int = REJECTED_ALERT_BURST,
                 window: float = REJECTED_ALERT_WINDOW) -> None:
        """A guard remembering ``memory`` requests and alerting ``burst`` rejections
        per ``window`` seconds."""
        self._topics = topics
        self._memory = memory
        self._burst = burst
        self.window = window
        self._answered: OrderedDict[bytes, Recalled] = OrderedDict()
        self._window_end: float | None = None
        self._in_window = 0
        self._suppressed = 0
        self._last = ""
        self.repeats = 0
        """Requests answered from memory instead of applied again."""

    # ------------------------------------------------------------- response topic

    def reply_problem(self, request: CommandRequest) -> str | None:
        """Why ``request`` may not run for its response topic (None: it may, or it
        has none: then it runs unanswered)."""
        if request.response_topic is None:
            return None
        return self._topics.reply_problem(request.response_topic)

    # ------------------------------------------------------------- idempotency

    @staticmethod
    def key(request: CommandRequest) -> bytes | None:
        """The request id of ``request``: its correlation data, with the command and
        payload (so a console that reuses correlation data for different commands
        is not answered from memory); ``None`` without correlation data."""
        if request.correlation_data is None:
            return None
        digest = hashlib.sha256()
        for part in (request.name.encode("utf-8", "surrogatepass"), request.payload,
                     request.correlation_data):
            digest.update(len(part).to_bytes(4, "big"))
            digest.update(part)
        return digest.digest()

    def recall(self, key: bytes | None) -> Recalled | None:
        """The first answer to the request ``key``, if it was answered recently
        (counted in :attr:`repeats`)."""
        if key is None:
            return None
        found = self._answered.get(key)
        if found is not None:
            self._answered.move_to_end(key)
            self.repeats += 1
        return found

    def remember(self, key: bytes | None, result: ConsoleResult, payload: bytes) -> None:
        """Keep the answer to request ``key`` (the oldest forgotten past the memory)."""
        if key is None:
            return
        self._answered[key] = Recalled(result, payload)
        while len(self._answered) > self._memory:
            self._answered.popitem(last=False)

    # ------------------------------------------------------------- rejected alerts

    def rejected(self, message: str, now: float) -> bool:
        """A request was rejected at ``now``: True if the floor is alerted (and a
        warning written), False if it is only counted until the window's summary."""
        if self._window_end is None:
            self._window_end = now + self.window
            self._in_window = 0
        if self._in_window < self._burst:
            self._in_window += 1
            return True
        self._suppressed += 1
        self._last = message
        return False

    def next_deadline(self) -> float | None:
        """When the open rejected-alert window ends (None: none is open)."""
        return self._window_end

    def close_window(self, now: float) -> RejectedSummary | None:
        """Close the window if it has ended by ``now``; the summary to alert, if any
        rejection was only counted in it."""
        if self._window_end is None or now < self._window_end:
            return None
        self._window_end = None
        suppressed, self._suppressed = self._suppressed, 0
        return RejectedSummary(suppressed, self._last) if suppressed else None
