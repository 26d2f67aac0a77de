"""What one reader shows the person fitting its antennas: pure counters (issue 13).

Theory of operation
-------------------
A :class:`FigureCounter` is fed the messages a :class:`~firmware_bridge.link.ReaderLink`
delivers, each with the monotonic time it was read, and answers
:meth:`FigureCounter.snapshot` for a time ``now`` passed in. It does no I/O and
reads no clock, so the same counter serves the daemon (``readers/<id>/stats``),
the installer's terminal view (``stud-table readers``) and property tests.

Per antenna port it keeps:

* the tags reported there now (TAG_ARRIVED adds, TAG_LEFT removes, INVENTORY
  replaces the set: it is the reader's own reconciliation point);
* *reads*: every tag report (a TAG_ARRIVED, or one tag listed in an INVENTORY)
  within the last :data:`RATE_WINDOW` seconds, shown as reads per second. A well
  tuned antenna lists each of its tags in every inventory; a weak one drops
  below that;
* *dropouts*: a tag that vanished from the antenna and came back within
  :data:`DROPOUT_WINDOW` seconds, the signature of a tag at the edge of the field,
  stacked cards or a detuned antenna. Presence tracking hides these from the
  table (``presence_hold``); the installer wants to see them.

The link's own figures (state, frame errors, sequence gaps) stay in
:class:`~firmware_bridge.link.LinkStats`; this module adds what only the
messages tell. UIDs are kept (the installer's own screen may show them), but
:meth:`AntennaFigures.count` is what a published payload carries.

Memory is bounded: reads older than the window are dropped on every feed and
snapshot, a tag's departure is remembered only for :data:`DROPOUT_WINDOW`, and
at most :data:`MAX_TAGS_PER_ANTENNA` tags are kept per antenna (a babbling
reader cannot grow the set without bound; the excess is counted).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Final

from firmware_bridge.messages import (
    MAX_INVENTORY_TAGS,
    Heartbeat,
    Hello,
    Inventory,
    ReaderMessage,
    TagArrived,
    TagLeft,
)

RATE_WINDOW: Final = 5.0
"""Seconds of reads averaged into reads per second: two inventory periods and a
half, so the figure does not jump with each inventory."""

DROPOUT_WINDOW: Final = 1.5
"""A tag gone and back within this many seconds counts as a dropout (the
daemon's default ``presence_hold``: the gap presence tracking bridges)."""

MAX_TAGS_PER_ANTENNA: Final = MAX_INVENTORY_TAGS
"""Most tags kept per antenna: what one INVENTORY may list (a deck and more)."""


@dataclass(frozen=True, slots=True)
class AntennaFigures:
    """One antenna port's figures at a moment. ``tags`` are UIDs: local view only."""

    port: int
    tags: tuple[str, ...]
    reads_per_s: float
    dropouts: int
    overflow: int = 0
    """Tags not kept because the antenna already had :data:`MAX_TAGS_PER_ANTENNA`."""

    @property
    def count(self) -> int:
        """How many tags the antenna sees now (what a payload may carry)."""
        return len(self.tags)


@dataclass(frozen=True, slots=True)
class ReaderFigures:
    """One reader's figures at a moment (see :meth:`FigureCounter.snapshot`)."""

    firmware: tuple[int, int, int] | None
    """From the last HELLO, or ``None`` before one."""
    antenna_count: int | None
    """Ports the reader announced in its HELLO, or ``None`` before one."""
    heartbeat_age: float | None
    """Seconds since the last HEARTBEAT, or ``None`` before one."""
    antennas: tuple[AntennaFigures, ...]
    """Every announced port (and any other that reported), in port order."""

    def antenna(self, port: int) -> AntennaFigures | None:
        """The figures of ``port``, or ``None`` if it neither was announced nor reported."""
        for figures in self.antennas:
            if figures.port == port:
                return figures
        return None

    @property
    def firmware_text(self) -> str | None:
        """The firmware version as ``major.minor.patch``, or ``None``."""
        return ".".join(map(str, self.firmware)) if self.firmware is not None else None


class _Antenna:
    """Mutable state of one port (see the module doc)."""

    __slots__ = ("dropouts", "left_at", "overflow", "reads", "tags")

    def __init__(self) -> None:
        self.tags: dict[str, None] = {}  # insertion order: stable display
        self.reads: deque[tuple[float, int]] = deque()  # (time, tags reported then)
        self.left_at: dict[str, float] = {}
        self.dropouts = 0
        self.overflow = 0

    def prune(self, now: float, rate_window: float, dropout_window: float) -> None:
        while self.reads and self.reads[0][0] <= now - rate_window:
            self.reads.popleft()
        if self.left_at:
            self.left_at = {
                uid: at for uid, at in self.left_at.items() if now - at <= dropout_window
            }

    def arrive(self, uid: str, now: float, dropout_window: float) -> None:
        if uid in self.tags:
            return
        if len(self.tags) >= MAX_TAGS_PER_ANTENNA:
            self.overflow += 1
            return
        self.tags[uid] = None
        left = self.left_at.pop(uid, None)
        if left is not None and now - left <= dropout_window:
            self.dropouts += 1

    def leave(self, uid: str, now: float) -> None:
        if uid in self.tags:
            del self.tags[uid]
            self.left_at[uid] = now


class FigureCounter:
    """Pure per-reader figures, fed message by message with the time each was read."""

    def __init__(
        self, *, rate_window: float = RATE_WINDOW, dropout_window: float = DROPOUT_WINDOW
    ) -> None:
        if rate_window <= 0 or dropout_window < 0:
            raise ValueError("rate_window must be positive and dropout_window not negative")
        self.rate_window = rate_window
        self.dropout_window = dropout_window
        self._hello: Hello | None = None
        self._last_heartbeat: float | None = None
        self._antennas: dict[int, _Antenna] = {}

    def feed(self, message: ReaderMessage, now: float) -> None:
        """Take one delivered message, read at monotonic time ``now``."""
        if isinstance(message, Hello):
            self._hello = message
            return
        if isinstance(message, Heartbeat):
            self._last_heartbeat = now
            return
        if not isinstance(message, TagArrived | TagLeft | Inventory):
            return  # a READER_FAULT is the daemon's alert, not a figure
        antenna = self._antennas.setdefault(message.antenna, _Antenna())
        antenna.prune(now, self.rate_window, self.dropout_window)
        if isinstance(message, TagArrived):
            antenna.reads.append((now, 1))
            antenna.arrive(message.uid, now, self.dropout_window)
        elif isinstance(message, TagLeft):
            antenna.leave(message.uid, now)
        else:
            if message.uids:
                antenna.reads.append((now, len(message.uids)))
            listed = set(message.uids)
            for uid in [uid for uid in antenna.tags if uid not in listed]:
                antenna.leave(uid, now)
            for uid in message.uids:
                antenna.arrive(uid, now, self.dropout_window)

    def tags(self, port: int) -> frozenset[str]:
        """The UIDs reported on ``port`` now (local use only: never publish them)."""
        antenna = self._antennas.get(port)
        return frozenset(antenna.tags) if antenna is not None else frozenset()

    def snapshot(self, now: float) -> ReaderFigures:
        """Every figure as of monotonic time ``now`` (not before the last feed)."""
        hello = self._hello
        ports = set(self._antennas)
        if hello is not None:
            ports.update(range(hello.antenna_count))
        antennas = []
        for port in sorted(ports):
            antenna = self._antennas.get(port)
            if antenna is None:
                antennas.append(AntennaFigures(port, (), 0.0, 0))
                continue
            antenna.prune(now, self.rate_window, self.dropout_window)
            reads = sum(count for _, count in antenna.reads)
            antennas.append(AntennaFigures(
                port, tuple(antenna.tags), reads / self.rate_window, antenna.dropouts,
                antenna.overflow,
            ))
        last = self._last_heartbeat
        return ReaderFigures(
            firmware=hello.firmware_version if hello is not None else None,
            antenna_count=hello.antenna_count if hello is not None else None,
            heartbeat_age=max(0.0, now - last) if last is not None else None,
            antennas=tuple(antennas),
        )
