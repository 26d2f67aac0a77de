"""The engine thread's inbox: the table first, console work after, bounded per client.

Theory of operation
-------------------
Every thread of the daemon hands its work to the engine thread through one
:class:`Inbox`, which keeps it in two lanes:

* the **table lane**: reader reports and link-state changes (link threads),
  equity results, alerts the MQTT side raised, the stop request. Never refused,
  never reordered: their order is the order of the table.
* the **console lane**: console commands and rebirth requests (the MQTT
  thread), which any client of the broker can send at will. One queue per
  client (the ``<client>`` of its ``reply/<client>`` response topic; requests
  without a usable one share the anonymous queue), served round-robin, so one
  client's flood waits behind its own requests, not behind everyone's.

:meth:`Inbox.get` always serves the table lane first, and the loop
(:meth:`table_controller.daemon.runner.Daemon.run`) runs the core's timers (presence
holds, reader refresh, journal retry) when they are due *and* the table lane
is empty, before any console work: so a flood of console input can neither
delay a card nor make the core judge a reader silent (or a card gone) while its
frames are waiting to be handled.

Shed policy (docs/daemon.md "Console floods"): a console command that arrives
while :data:`MAX_COMMANDS_PER_CLIENT` of its client's, or
:data:`MAX_WAITING_COMMANDS` in all, are waiting is refused: not queued, not
carried out, answered ``busy`` by the publisher (a console may send it again).
The newest is refused, never one already waiting (those keep their place).
What is shed is counted per cause (:class:`InboxCounters`).
"""

from __future__ import annotations

import threading
from collections import OrderedDict, deque
from dataclasses import dataclass
from typing import Final, Generic, TypeVar

MAX_WAITING_COMMANDS: Final = 64
"""Console commands that may wait in all; more are refused ``busy``. A dealer's
console sends one at a time; 64 leave room for several consoles."""

MAX_COMMANDS_PER_CLIENT: Final = 8
"""Console commands one client may have waiting; more are refused ``busy``, so
that a flooding client cannot fill the inbox for the others."""

ANONYMOUS: Final = ""
"""The console queue of requests without a usable ``reply/<client>`` topic."""

T = TypeVar("T")


@dataclass(slots=True)
class InboxCounters:
    """What the inbox refused, and its peaks (for the daemon's log and the tests)."""

    commands_shed_client: int = 0
    """Console commands refused because their client had too many waiting."""
    commands_shed_total: int = 0
    """Console commands refused because too many were waiting in all."""
    table_peak: int = 0
    """The most table-lane items ever waiting at once."""
    console_peak: int = 0
    """The most console-lane items ever waiting at once."""


class Inbox(Generic[T]):
    """The two-lane queue described in the module docstring. Thread-safe."""

    def __init__(self, *, per_client: int = MAX_COMMANDS_PER_CLIENT,
                 total: int = MAX_WAITING_COMMANDS) -> None:
        """An empty inbox admitting ``per_client`` commands per client, ``total`` in all."""
        self._per_client = per_client
        self._total = total
        self._ready = threading.Condition(threading.Lock())
        self._table: deque[T] = deque()
        self._console: OrderedDict[str, deque[T]] = OrderedDict()
        self._console_waiting = 0
        self.counters = InboxCounters()
        """Counters, updated under the inbox's lock (read them as a snapshot)."""

    def put(self, item: T) -> None:
        """Queue ``item`` on the table lane (never refused)."""
        with self._ready:
            self._table.append(item)
            self.counters.table_peak = max(self.counters.table_peak, len(self._table))
            self._ready.notify()

    def offer(self, client: str, item: T, *, bounded: bool = True) -> bool:
        """Queue ``item`` on ``client``'s console queue; False (and counted) if it is
        shed (see the module docstring). ``bounded=False`` for work that is bounded
        upstream (a rebirth request: the publisher keeps one pending at most)."""
        with self._ready:
            waiting = self._console.get(client)
            if bounded:
                if waiting is not None and len(waiting) >= self._per_client:
                    self.counters.commands_shed_client += 1
                    return False
                if self._console_waiting >= self._total:
                    self.counters.commands_shed_total += 1
                    return False
            if waiting is None:
                waiting = self._console[client] = deque()
            waiting.append(item)
            self._console_waiting += 1
            self.counters.console_peak = max(self.counters.console_peak,
                                             self._console_waiting)
            self._ready.notify()
            return True

    def get(self, timeout: float, *, console: bool = True) -> T | None:
        """The next item: the table lane's first, else (if ``console``) the next
        client's console item; waits up to ``timeout`` seconds, None if nothing came."""
        with self._ready:
            item = self._take(console)
            if item is None and timeout > 0:
                self._ready.wait(timeout)
                item = self._take(console)
            return item

    def table_waiting(self) -> int:
        """How many table-lane items wait (the loop runs timers only at 0)."""
        with self._ready:
            return len(self._table)

    def console_waiting(self) -> int:
        """How many console-lane items wait."""
        with self._ready:
            return self._console_waiting

    def _take(self, console: bool) -> T | None:
        if self._table:
            return self._table.popleft()
        if not console or not self._console:
            return None
        client, waiting = next(iter(self._console.items()))
        item = waiting.popleft()
        self._console_waiting -= 1
        if waiting:
            self._console.move_to_end(client)  # round-robin: the next client's turn
        else:
            del self._console[client]
        return item
