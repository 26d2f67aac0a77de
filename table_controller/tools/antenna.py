"""Watching one zone's antennas on one live reader: the I/O edge of ``stud-table deck``.

:class:`AntennaWatch` opens the reader through :class:`firmware_bridge.link.ReaderLink`
(the daemon's own link: a real reader on a serial port and the emulator on a pty
are the same to it) and turns its messages into :class:`Seen`
snapshots: the whole set of tags the zone's antennas report, after each change.
Snapshots rather than arrivals, so an INVENTORY after a reconnect or a sequence
gap simply replaces what was believed. Link trouble arrives the same way as
:class:`LinkChange` (once per change of state or problem, never per retry).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Final

from firmware_bridge.kinds import open_link
from firmware_bridge.link import ConnectionState, LinkProblem, LinkStats
from firmware_bridge.messages import Inventory, ReaderMessage, TagArrived, TagLeft
from table_controller.domain.zones import Zone, ZoneParseError
from table_controller.table.layout import TableLayout

__all__ = ["AntennaError", "AntennaWatch", "LinkChange", "Seen", "resolve_antennas"]

HEARTBEAT_PERIOD: Final = 2.0
"""Seconds between reader heartbeats expected (the daemon's default)."""


class AntennaError(ValueError):
    """The reader or zone asked for is not in the layout (one line for the operator)."""


@dataclass(frozen=True, slots=True)
class Seen:
    """Every tag the watched antennas report now (secret: UIDs)."""

    uids: frozenset[str]


@dataclass(frozen=True, slots=True)
class LinkChange:
    """The link changed state or problem; :attr:`text` is one line for the operator."""

    state: ConnectionState
    problem: LinkProblem | None
    text: str


def resolve_antennas(layout: TableLayout, reader_id: int, zone_name: str) -> tuple[
        str, frozenset[int]]:
    """The device of reader ``reader_id`` and its ports that watch ``zone_name``.

    Raises :class:`AntennaError` naming what is wrong (unknown reader, bad zone
    name, or a reader with no antenna on that zone, with the zones it does watch).
    """
    reader = layout.reader(reader_id)
    if reader is None:
        known = ", ".join(str(r.id) for r in layout.readers)
        raise AntennaError(f"the layout has no reader {reader_id} (its readers: {known})")
    try:
        zone = Zone.parse(zone_name)
    except ZoneParseError as err:
        raise AntennaError(str(err)) from None
    ports = frozenset(port for port, watched in reader.antennas.items() if watched == zone)
    if not ports:
        zones = ", ".join(z.name for z in layout.zones_of_reader(reader_id))
        raise AntennaError(f"reader {reader_id} has no antenna on zone {zone.name}"
                           f" (it watches: {zones})")
    return reader.device, ports


class AntennaWatch:
    """The tags on ``ports`` of reader ``reader_id`` at ``url``, each change handed to
    ``sink`` (on the link's thread: a ``queue.put``)."""

    def __init__(self, url: str, reader_id: int, ports: Iterable[int],
                 sink: Callable[[Seen | LinkChange], None],
                 heartbeat_period: float = HEARTBEAT_PERIOD, *, kind: str = "stud",
                 all_ports: Iterable[int] | None = None) -> None:
        self._sink = sink
        self._ports = frozenset(ports)
        self._tags: dict[int, frozenset[str]] = {port: frozenset() for port in self._ports}
        self._lock = threading.Lock()
        self._last: frozenset[str] = frozenset()
        # A polled reader (feig-isc) asks only the antennas given: the zone's own.
        self._link = open_link(kind, url, reader_id, self._on_message, self._on_state,
                               antennas=sorted(all_ports or self._ports),
                               heartbeat_period=heartbeat_period)

    @property
    def state(self) -> ConnectionState:
        """The link's state now."""
        return self._link.state

    def start(self) -> AntennaWatch:
        """Open the link (its own thread)."""
        self._link.start()
        return self

    def stop(self) -> None:
        """Close the link."""
        self._link.stop()

    def __enter__(self) -> AntennaWatch:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # Both callbacks run on the link's thread: they only update sets and enqueue.

    def _on_message(self, _reader: int, message: ReaderMessage, _now: float) -> None:
        if not isinstance(message, TagArrived | TagLeft | Inventory):
            return
        if message.antenna not in self._ports:
            return
        with self._lock:
            tags = self._tags[message.antenna]
            if isinstance(message, TagArrived):
                tags = tags | {message.uid}
            elif isinstance(message, TagLeft):
                tags = tags - {message.uid}
            else:
                tags = frozenset(message.uids)
            self._tags[message.antenna] = tags
            seen = frozenset().union(*self._tags.values())
            if seen == self._last:
                return
            self._last = seen
        self._sink(Seen(seen))

    def _on_state(self, reader: int, state: ConnectionState, stats: LinkStats) -> None:
        if state is ConnectionState.ONLINE:
            text = f"reader {reader} online"
        elif stats.problem is not None:
            text = f"reader {reader} {state.value}: {stats.problem.value} ({stats.problem_detail})"
        else:
            text = f"reader {reader} {state.value}"
        self._sink(LinkChange(state, stats.problem, text))
