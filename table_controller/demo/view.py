"""A readable live view of a table, built only from its *public* MQTT topics.

:class:`TableView` is pure: feed it each payload received on ``state``,
``events``, ``alerts`` or ``readers/<id>`` (already parsed from JSON) and it
keeps what a spectator needs. It can answer two ways:

* :meth:`TableView.update` returns plain lines describing what just happened
  (hand started, streets, announcements, folds, alerts, results): the output
  for logs and pipes, where redrawing is impossible;
* :func:`render_screen` draws the whole table as a list of lines: the output
  for a terminal, redrawn in place.

The view sees what the public sees: down cards are only ever counted (shown as
``[##]``); the public payloads carry nothing more, so nothing more can leak.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from table_controller.mqtt.topics import TableTopics, TopicKind

RECENT_LINES: Final = 6
"""How many recent announcements/alerts the screen keeps."""

RESULT_LINES: Final = 3
"""How many past hand results the screen keeps."""

HIDDEN_CARD: Final = "[##]"
UNREAD_CARD: Final = "[not read]"
"""An up card dealt that no reader read (the state's ``up_row`` slot, issue 19)."""
"""How a face-down card is drawn: the public never learns which card it is."""

_STREET_NAMES: Final = {3: "3rd street", 4: "4th street", 5: "5th street",
                        6: "6th street", 7: "7th street"}


def street_name(street: int | None) -> str:
    """``3`` -> ``"3rd street"``; ``None`` -> ``"between hands"``."""
    return _STREET_NAMES.get(street, "between hands") if street is not None else "between hands"


def describe_result(event: Mapping[str, Any]) -> str:
    """The readable text of a ``hand_result`` event."""
    winners: list[int] = list(event.get("winners") or [])
    shown: list[Mapping[str, Any]] = list(event.get("shown") or [])
    if not winners:
        return "no winner"
    who = (
        f"seat {winners[0]} wins"
        if len(winners) == 1
        else "split pot: seats " + ", ".join(str(s) for s in winners)
    )
    if not shown:
        return f"{who} (everyone else folded)"
    hands = "; ".join(
        f"{item['description']} ({' '.join(item['cards'])})"
        + (f" for seat {item['seat']}" if len(shown) > 1 else "")
        for item in shown
    )
    return f"{who} with {hands}"


def describe_alert(alert: Mapping[str, Any]) -> str:
    """One line for an alert payload: code, where, and its message."""
    where = [f"seat {alert['seat']}"] if alert.get("seat") is not None else []
    if alert.get("street") is not None:
        where.append(street_name(alert["street"]))
    if alert.get("rule") is not None:
        where.append(f"rule {alert['rule']}")
    place = f" ({', '.join(where)})" if where else ""
    return f"ALERT {alert.get('code')}{place}: {alert.get('message')}"


def seat_cards(seat: Mapping[str, Any]) -> str:
    """A seat's cards as the public sees them: ``[##] [##] Kd 7h``, an up card no
    reader read as ``[not read]``."""
    down = [HIDDEN_CARD] * int(seat.get("down_count", 0))
    row = seat.get("up_row", seat.get("up", []))
    return " ".join([*down, *(card if isinstance(card, str) else UNREAD_CARD for card in row)])


def table_line(state: Mapping[str, Any]) -> str:
    """The whole table on one line: every dealt-in seat and its public cards."""
    parts = []
    for seat in state.get("seats", []):
        status = seat.get("status")
        if status == "empty":
            continue
        cards = seat_cards(seat) or "-"
        label = cards if status == "active" else f"{status}"
        parts.append(f"{seat['seat']}: {label}")
    return " | ".join(parts) if parts else "no cards"


@dataclass
class TableView:
    """What a spectator knows of the table (see the module docstring)."""

    table: str
    state: dict[str, Any] | None = None
    readers: dict[str, str] = field(default_factory=dict)
    recent: deque[str] = field(default_factory=lambda: deque(maxlen=RECENT_LINES))
    results: deque[str] = field(default_factory=lambda: deque(maxlen=RESULT_LINES))
    hand_results: int = 0
    """How many ``hand_result`` events arrived (the dealer waits on it)."""
    alerts_seen: int = 0
    _summary_pending: bool = False

    # ---------------------------------------------------------------- input

    def update(self, topic: str, payload: Mapping[str, Any]) -> list[str]:
        """Take one payload from the topic name ``topic`` (this table's ``state``,
        ``events``, ``alerts`` or ``readers/<id>``, read by :meth:`TableTopics.parse`,
        the one parser, issue 20); return the plain lines that describe the change.
        Any other topic changes nothing."""
        parsed = TableTopics.parse(topic)
        if parsed is None or parsed.table != self.table:
            return []
        if parsed.kind is TopicKind.STATE:
            return self._state(payload)
        if parsed.kind is TopicKind.EVENTS:
            return self._event(payload)
        if parsed.kind is TopicKind.ALERTS:
            self.alerts_seen += 1
            line = self._hand_prefix(payload) + describe_alert(payload)
            self.recent.append(line)
            return [line]
        if parsed.kind is TopicKind.READER and parsed.name is not None:
            reader = parsed.name
            state = str(payload.get("state"))
            before = self.readers.get(reader)
            self.readers[reader] = state
            if before is not None and before != state:
                return [f"reader {reader}: {state}"]
        return []

    def _state(self, payload: Mapping[str, Any]) -> list[str]:
        self.state = dict(payload)
        if self._summary_pending:
            # Announcements are events published just before the state of the
            # same change, so the table summary waits for that state.
            self._summary_pending = False
            return [f"{self._hand_prefix(payload)}  {table_line(payload)}"]
        return []

    def _event(self, event: Mapping[str, Any]) -> list[str]:
        kind = event.get("kind")
        prefix = self._hand_prefix(event)
        line: str | None = None
        if kind == "hand_started":
            line = f"{prefix}started"
        elif kind == "street_started":
            line = f"{prefix}{street_name(event.get('street'))}"
        elif kind == "announcement":
            line = f"{prefix}{event.get('text')}"
            self._summary_pending = True
        elif kind == "fold":
            line = f"{prefix}seat {event.get('seat')} folds"
        elif kind == "community_card":
            line = f"{prefix}community card {event.get('card')} (rule 15)"
        elif kind == "hand_result":
            self.hand_results += 1
            text = describe_result(event)
            self.results.append(f"hand {event.get('hand')}: {text}")
            return [f"hand {event.get('hand')} result: {text}"]
        if line is None:
            return []  # single cards are drawn on the screen, not logged line by line
        self.recent.append(line)
        return [line]

    @staticmethod
    def _hand_prefix(payload: Mapping[str, Any]) -> str:
        hand = payload.get("hand")
        return f"hand {hand}: " if hand is not None else ""

    # -------------------------------------------------------------- queries

    @property
    def ready(self) -> bool:
        """True once the daemon's retained state has arrived."""
        return self.state is not None

    def readers_online(self, expected: int) -> bool:
        """True when ``expected`` readers report ``online``."""
        return sum(1 for s in self.readers.values() if s == "online") >= expected

    def hand_cleared(self, hand_results: int, *, empty_seats: bool) -> bool:
        """True when at least ``hand_results`` hands have ended and, if ``empty_seats``,
        the state shows no card at any seat."""
        if self.state is None or self.hand_results < hand_results:
            return False
        return not empty_seats or all(
            not seat.get("up") and not seat.get("down_count") for seat in self.state["seats"]
        )


def render_screen(
    view: TableView, header: Sequence[str] = (), height: int | None = None
) -> list[str]:
    """The table as a screen of lines (for redrawing in a terminal). With ``height``,
    the oldest recent lines are dropped first so that the results stay on screen."""
    lines = list(header)
    state = view.state
    if state is None:
        return [*lines, "", "waiting for the daemon's first state..."]
    hand = state.get("hand")
    bring_in = state.get("bring_in")
    title = f"table {view.table}"
    title += f" | hand {hand} | {street_name(state.get('street'))}" if hand is not None else ""
    if bring_in is not None:
        title += f" | bring-in: seat {bring_in}"
    if state.get("community"):
        title += f" | community: {state['community']}"
    online = sum(1 for s in view.readers.values() if s == "online")
    title += f" | readers {online}/{len(view.readers)} online"
    lines += ["", title, " seat  status   cards"]
    for seat in state.get("seats", []):
        status = seat.get("status", "empty")
        cards = seat_cards(seat) if status != "empty" else ""
        marker = "*" if seat["seat"] == bring_in else " "
        lines.append(f" {marker}{seat['seat']:>2}   {status:<8} {cards}")
    open_alerts = state.get("alerts") or []
    if open_alerts:
        lines += [f"open alerts ({len(open_alerts)}):"]
        lines += [f"  {describe_alert(a)}" for a in open_alerts[-3:]]
    results = ["results:", *([f"  {line}" for line in view.results] or ["  -"])]
    recent = [f"  {line}" for line in view.recent] or ["  -"]
    if height is not None:
        room = height - len(lines) - len(results) - 1
        recent = recent[-room:] if room > 0 else []
    return [*lines, "latest:", *recent, *results]
