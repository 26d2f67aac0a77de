"""The reader board: each reader's link state, its figures, and what to publish of them.

The board takes what the links report (state changes, counters, messages for
the figures) and returns decisions, without I/O: whether a change of state is
an outage to alert (once per outage, whatever the retries in between) or the
reader back; the retained ``readers/<id>`` status to publish, only when what it
shows changed; the periodic ``readers/<id>/stats`` figures. The core carries
them out (presence, alerts, publishing), on the engine thread.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from firmware_bridge.figures import FigureCounter
from firmware_bridge.link import ConnectionState, LinkProblem, LinkStats
from firmware_bridge.messages import ReaderFault, ReaderMessage
from table_controller.domain.engine.alerts import AlertCode
from table_controller.mqtt.payloads import AntennaStats, ReaderStats, ReaderStatus
from table_controller.table.layout import TableLayout

READER_REFRESH_PERIOD: Final = 5.0
"""Seconds between checks of the reader statuses (heartbeat age, error counters):
a reader's retained topic is republished only if its status changed, so an online
reader's moves with its heartbeat and an offline reader's stays put."""

_BAD_STATES: Final = frozenset(
    {
        ConnectionState.DISCONNECTED,
        ConnectionState.STALE,
        ConnectionState.WRONG_READER,
        ConnectionState.INCOMPATIBLE,
    }
)
"""Link states in which a reader's zones are not being read."""

_PROBLEM_WHY: Final = {
    LinkProblem.PORT_MISSING: "its port does not exist: unplugged, or a wrong device path",
    LinkProblem.PERMISSION_DENIED: "the daemon may not open its port (permission denied)",
    LinkProblem.PORT_BUSY: "another program holds its port",
    LinkProblem.OPEN_FAILED: "its port cannot be opened",
    LinkProblem.PORT_LOST: "it is unplugged or not answering",
    LinkProblem.NO_HELLO: "its port opens but no reader answers on it",
    LinkProblem.INCOMPATIBLE: "it speaks an unsupported protocol version",
    LinkProblem.SILENT: "it stopped sending heartbeats",
}
"""The floor's words for why a reader is offline (the alert message)."""

_STATE_WHY: Final = {
    ConnectionState.DISCONNECTED: "it is unplugged or not answering",
    ConnectionState.STALE: "it stopped sending heartbeats",
    ConnectionState.INCOMPATIBLE: "it speaks an unsupported protocol version",
}
"""The words for a bad state whose link named no problem."""

_PROBLEM_STATE: Final = {
    LinkProblem.WRONG_READER: ConnectionState.WRONG_READER.value,
    LinkProblem.INCOMPATIBLE: ConnectionState.INCOMPATIBLE.value,
}
"""Problems with a state of their own (see :func:`shown_state`)."""

LinkStatsSource = Callable[[int], LinkStats | None]
"""Latest counters of reader ``id``'s link (read from the link, thread-safe)."""


@dataclass(frozen=True, slots=True)
class BoardAlert:
    """An alert the board asks the core to raise."""

    code: AlertCode
    message: str
    seat: int | None = None


@dataclass(frozen=True, slots=True)
class LinkVerdict:
    """What a link's change of state means for the table."""

    online: bool
    """The reader delivers again: presence may restore its tags."""
    back: bool
    """It was down (alerted) and is online again."""
    lost: BoardAlert | None
    """It went down (first time this outage): presence drops its tags, the floor is told."""


def reader_down(state: ConnectionState, stats: LinkStats) -> bool:
    """Whether a reader's zones are not being read: a bad state, or not online with
    a known problem (a port that opens but never answers stays in HANDSHAKE)."""
    return state in _BAD_STATES or (
        state is not ConnectionState.ONLINE and stats.problem is not None
    )


def shown_state(state: ConnectionState, stats: LinkStats) -> str:
    """The state a reader's topic shows: ``offline`` for a port that cannot be
    opened; for one still connecting or in handshake once the link knows why
    nothing arrives, the state that reason leads to (the link names the reason a
    moment before it changes state: shown this way, the topic changes once)."""
    if state is ConnectionState.DISCONNECTED:
        return "offline"
    if state in (ConnectionState.CONNECTING, ConnectionState.HANDSHAKE) and stats.problem:
        return _PROBLEM_STATE.get(stats.problem, "offline")
    return str(state.value)


def frame_errors(stats: LinkStats) -> dict[str, int]:
    """The frame error counters every reader payload carries (``missed``: sequence gaps)."""
    return {
        "crc": stats.crc_errors,
        "framing": stats.framing_errors,
        "oversized": stats.oversized,
        "truncated": stats.truncated,
        "unknown_type": stats.unknown_type,
        "unsupported_version": stats.unsupported_version,
        "malformed": stats.malformed,
        "missed": stats.frames_missed,
    }


class ReaderBoard:
    """Link states, figures and published statuses of one table's readers."""

    def __init__(self, table_id: str, layout: TableLayout,
                 link_stats: LinkStatsSource | None = None) -> None:
        """A board for ``layout``'s readers; ``link_stats`` reads a link's freshest
        counters (without it, those of the last state change)."""
        self.table_id = table_id
        self.layout = layout
        self._link_stats = link_stats
        self._states: dict[int, ConnectionState] = {}
        self._stats: dict[int, LinkStats] = {}
        self._down: set[int] = set()
        self._shown: dict[int, tuple[object, ...]] = {}
        """What each reader's retained topic last said (see :meth:`status`)."""
        self._figures = {reader.id: FigureCounter() for reader in layout.readers}
        """Per reader: tags per antenna, reads/s, dropouts (``readers/<id>/stats``)."""
        self.next_refresh = 0.0
        """Monotonic time of the next refresh of every reader's status and figures."""

    def feed(self, reader: int, message: ReaderMessage, at: float) -> None:
        """Count ``message`` in reader ``reader``'s figures (the table's state comes
        from presence, not from here)."""
        figures = self._figures.get(reader)
        if figures is not None:
            figures.feed(message, at)

    def state_change(self, reader: int, state: ConnectionState,
                     stats: LinkStats) -> LinkVerdict:
        """Record a link's new state or problem; what it means (once per outage)."""
        was_down = reader in self._down
        self._states[reader] = state
        self._stats[reader] = stats
        if state is ConnectionState.ONLINE:
            self._down.discard(reader)
            return LinkVerdict(online=True, back=was_down, lost=None)
        if reader_down(state, stats) and not was_down:
            self._down.add(reader)
            return LinkVerdict(online=False, back=False,
                               lost=self._offline_alert(reader, state, stats))
        return LinkVerdict(online=False, back=False, lost=None)

    def fault_alert(self, reader: int, fault: ReaderFault) -> BoardAlert:
        """The alert of a fault the reader itself reports."""
        zone = (self.layout.zone_for(reader, fault.antenna)
                if fault.antenna is not None else None)
        where = f"antenna {fault.antenna} ({zone.name})" if zone else "the reader itself"
        return BoardAlert(
            AlertCode.READER_FAULT,
            f"Reader {reader} reports a fault on {where}: {fault.text or 'no details'}."
            " Cards there may not be seen until it is fixed.",
            seat=zone.seat if zone else None,
        )

    def refresh_due(self, now: float, period: float = READER_REFRESH_PERIOD) -> bool:
        """Whether every reader's status and figures are due at ``now`` (then the
        next refresh is ``period`` later)."""
        if now < self.next_refresh:
            return False
        self.next_refresh = now + period
        return True

    def status(self, reader: int, *, hand: int | None, wall: float, mono: float,
               force: bool = False) -> ReaderStatus | None:
        """Reader ``reader``'s retained status if it changed since it was last
        returned (or ``force``): its shown state, last heartbeat or error counters.
        Consumers get a message when there is something new to show, not one per
        link retry or per refresh of a reader that stays offline. ``wall`` and
        ``mono`` are the same instant on both clocks (the heartbeat's wall time)."""
        state, stats = self.link(reader)
        last_hb = stats.last_heartbeat
        shown = shown_state(state, stats)
        reason = stats.problem.value if stats.problem is not None else None
        detail = stats.problem_detail if reason is not None else ""
        firmware = (".".join(map(str, stats.hello.firmware_version))
                    if stats.hello is not None else None)
        errors = frame_errors(stats)
        # The heartbeat's monotonic stamp, not its wall-clock rendering: the latter
        # drifts by float noise between two refreshes of an unchanged reader. The
        # reason and its detail are part of what it shows: a change of cause is news,
        # the link's retries with the same cause are not (issue 13).
        key = (shown, reason, detail, firmware, last_hb, tuple(errors.values()))
        if not force and self._shown.get(reader) == key:
            return None
        self._shown[reader] = key
        return ReaderStatus(
            table=self.table_id, hand=hand, seq=0, ts=0.0, reader=str(reader),
            state=shown,
            reason=reason,  # type: ignore[arg-type]  # LinkProblem values == ReaderProblem
            detail=detail, firmware=firmware,
            last_heartbeat=wall - (mono - last_hb) if last_hb is not None else None,
            frame_errors=errors,
            zones=[zone.name for zone in self.layout.zones_of_reader(reader)],
        )

    def stats(self, reader: int, now: float) -> ReaderStats:
        """Reader ``reader``'s periodic figures: counts per antenna, never a UID
        (``readers/<id>/stats``, issue 13)."""
        state, stats = self.link(reader)
        figures = self._figures[reader].snapshot(now)
        config = self.layout.reader(reader)
        ports = sorted({a.port for a in figures.antennas} | set(config.antennas if config else ()))
        antennas = []
        for port in ports:
            zone = self.layout.zone_for(reader, port)
            seen = figures.antenna(port)
            antennas.append(AntennaStats(
                port=port,
                zone=zone.name if zone is not None else None,
                tags=seen.count if seen is not None else 0,
                reads_per_s=round(seen.reads_per_s, 2) if seen is not None else 0.0,
                dropouts=seen.dropouts if seen is not None else 0,
            ))
        return ReaderStats(
            table=self.table_id, ts=0.0, reader=str(reader),
            state=shown_state(state, stats),
            firmware=figures.firmware_text,
            heartbeat_age=(round(figures.heartbeat_age, 3)
                           if figures.heartbeat_age is not None else None),
            frame_errors=frame_errors(stats),
            antennas=antennas,
        )

    def link(self, reader: int) -> tuple[ConnectionState, LinkStats]:
        """Reader ``reader``'s link state and freshest counters."""
        state = self._states.get(reader, ConnectionState.CONNECTING)
        fresh = self._link_stats(reader) if self._link_stats else None
        return state, fresh or self._stats.get(reader, LinkStats())

    def _offline_alert(self, reader: int, state: ConnectionState,
                       stats: LinkStats) -> BoardAlert:
        zones = ", ".join(zone.name for zone in self.layout.zones_of_reader(reader))
        problem = stats.problem
        if state is ConnectionState.WRONG_READER or problem is LinkProblem.WRONG_READER:
            return BoardAlert(AlertCode.WRONG_READER, (
                f"Reader {reader} is offline (another reader answered on its port (a"
                " reader plugged into the wrong USB port); its tags are ignored so no"
                f" card lands on the wrong seat): {zones} are not being read."))
        known = _PROBLEM_WHY.get(problem) if problem is not None else None
        why = known or _STATE_WHY.get(state, state.value)
        return BoardAlert(
            AlertCode.READER_OFFLINE,
            f"Reader {reader} is offline ({why}): {zones} are not being read.")
