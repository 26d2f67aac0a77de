"""Table scripts (CONFORMANCE.md): JSON Lines in, settings and table events out.

A script line is one op object (``table``, ``hand``, ``place``, ``remove``,
``act``). The journal stores its records in the same op form, so one parser
serves both; envelope keys a journal adds (``jseq``, ``at``, ``crc``...) are
ignored here. :func:`event_to_op` is the inverse, used when journaling.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from table_controller.cards import Card, CardParseError
from table_controller.engine.settings import TableSettings
from table_controller.events import (
    CONSOLE_ACTIONS,
    FLOOR_RULINGS,
    CardPlaced,
    CardRemoved,
    ConsoleAction,
    FloorRuling,
    HandEnded,
    HandStarted,
    TableEvent,
    UnknownTag,
    UnknownTagRemoved,
)
from table_controller.zones import MAX_SEATS, Zone, ZoneParseError

OPS = ("table", "hand", "place", "remove", "act", "kill", "live", "end")
"""The ops a script line may carry: CONFORMANCE.md's five, plus the console's floor
rulings (``kill``, ``live``) and ``end`` of a hand, which journals also record."""


class ScriptError(ValueError):
    """A malformed script line. ``str()`` is one line naming the line number."""

    def __init__(self, line: int, problem: str, source: str = "") -> None:
        self.line = line
        self.problem = problem
        self.source = source
        where = f"{source}:{line}" if source else f"line {line}"
        super().__init__(f"{where}: {problem}")


@dataclass(slots=True)
class Script:
    """A parsed script: the table settings and the events with their line numbers."""

    settings: TableSettings = field(default_factory=TableSettings)
    events: list[tuple[int, TableEvent]] = field(default_factory=list)


def parse_script(lines: Iterable[str], source: str = "") -> Script:
    """Parse script text lines (blank lines are skipped). Raises :class:`ScriptError`."""
    script = Script()
    seen_op = False
    for number, raw in enumerate(lines, start=1):
        text = raw.strip()
        if not text:
            continue
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            problem = f"bad JSON ({exc.msg} at column {exc.colno})"
            raise ScriptError(number, problem, source) from None
        if not isinstance(obj, dict):
            raise ScriptError(number, "a line must be a JSON object with an \"op\"", source)
        try:
            if obj.get("op") == "table":
                if seen_op:
                    raise ValueError("the table line must be the first line of the script")
                script.settings = parse_settings(obj)
            else:
                script.events.append((number, op_to_event(obj, script.settings.seats)))
        except ScriptError:
            raise
        except ValueError as exc:
            raise ScriptError(number, str(exc), source) from None
        seen_op = True
    return script


def parse_settings(obj: Mapping[str, Any]) -> TableSettings:
    """Validate a ``table`` line into :class:`TableSettings`."""
    fields = {k: v for k, v in obj.items() if k != "op" and k not in _ENVELOPE}
    try:
        return TableSettings.model_validate(fields)
    except ValidationError as exc:
        first = exc.errors()[0]
        key = ".".join(str(part) for part in first["loc"]) or "table"
        raise ValueError(f"table setting {key}: {first['msg']}") from None


def op_to_event(obj: Mapping[str, Any], seats: int = MAX_SEATS) -> TableEvent:
    """Turn one op object into a table event. Raises ``ValueError`` on a bad op."""
    op = obj.get("op")
    at = _number(obj.get("at", 0.0), "at")
    if op == "hand":
        return _hand(obj, seats, at)
    if op in ("place", "remove"):
        zone = _zone(obj, seats)
        if "card" in obj:
            card = _card(obj["card"])
            deck = obj.get("deck")
            if deck is not None and not isinstance(deck, str):
                raise ValueError("\"deck\" must be a string")
            if op == "place":
                return CardPlaced(zone, card, at, deck)
            return CardRemoved(zone, card, at, deck)
        uid = obj.get("uid")
        if not isinstance(uid, str) or not uid:
            raise ValueError(f"{op} needs a \"card\" (like \"As\") or a tag \"uid\"")
        if op == "place":
            return UnknownTag(zone, uid, at)
        return UnknownTagRemoved(zone, uid, at)
    if op == "act":
        return _act(obj, seats, at)
    if op in FLOOR_RULINGS:
        reason = obj.get("reason", "")
        if not isinstance(reason, str):
            raise ValueError("\"reason\" must be a string")
        return FloorRuling(_seat(obj.get("seat"), seats, f"{op} seat"), str(op), reason, at)
    if op == "end":
        return HandEnded(at)
    if op is None:
        raise ValueError("missing \"op\"")
    raise ValueError(f"unknown op {op!r}: expected one of {', '.join(OPS)}")


def event_to_op(event: TableEvent) -> dict[str, Any]:
    """The op object of ``event`` (the inverse of :func:`op_to_event`)."""
    if isinstance(event, HandStarted):
        op: dict[str, Any] = {"op": "hand", "players": list(event.players)}
        if event.stacks is not None:
            op["stacks"] = {str(seat): chips for seat, chips in sorted(event.stacks.items())}
        if event.hand_id is not None:
            op["hand_id"] = event.hand_id
        if event.console:
            op["console"] = True
        return op
    if isinstance(event, CardPlaced | CardRemoved):
        op = {
            "op": "place" if isinstance(event, CardPlaced) else "remove",
            "zone": event.zone.name,
            "card": event.card.code,
        }
        if event.deck is not None:
            op["deck"] = event.deck
        return op
    if isinstance(event, UnknownTag | UnknownTagRemoved):
        op_name = "place" if isinstance(event, UnknownTag) else "remove"
        return {"op": op_name, "zone": event.zone.name, "uid": event.uid}
    if isinstance(event, FloorRuling):
        op = {"op": event.ruling, "seat": event.seat}
        if event.reason:
            op["reason"] = event.reason
        return op
    if isinstance(event, HandEnded):
        return {"op": "end"}
    op = {"op": "act", "seat": event.seat, "action": event.action}
    if event.amount is not None:
        op["amount"] = event.amount
    return op


_ENVELOPE = frozenset({"jseq", "at", "crc", "ts", "seq"})


def _number(value: object, key: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"\"{key}\" must be a number")
    return float(value)


def _seat(value: object, seats: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{what} must be a seat number, got {value!r}")
    if not 1 <= value <= seats:
        raise ValueError(f"{what} {value} is not a seat of this {seats}-seat table")
    return value


def _hand(obj: Mapping[str, Any], seats: int, at: float) -> HandStarted:
    players = obj.get("players")
    if not isinstance(players, list):
        raise ValueError("hand needs \"players\": a list of seat numbers")
    # An empty list is a card-only table's hand (the daemon's journal): the
    # players are learnt from the first round of the deal.
    chosen = [_seat(p, seats, "player") for p in players]
    if len(set(chosen)) != len(chosen):
        raise ValueError("hand lists a seat twice in \"players\"")
    stacks: dict[int, int] | None = None
    raw = obj.get("stacks")
    if raw is not None:
        if not isinstance(raw, dict):
            raise ValueError("\"stacks\" must be an object of seat -> chips")
        stacks = {}
        for key, chips in raw.items():
            try:
                seat = int(key)
            except ValueError:
                raise ValueError(f"stacks key {key!r} is not a seat number") from None
            if seat not in chosen:
                raise ValueError(f"stacks names seat {seat}, which is not in \"players\"")
            if isinstance(chips, bool) or not isinstance(chips, int) or chips < 0:
                raise ValueError(f"stacks of seat {seat} must be a whole number >= 0")
            stacks[seat] = chips
    hand_id = obj.get("hand_id")
    if hand_id is not None and (isinstance(hand_id, bool) or not isinstance(hand_id, int)):
        raise ValueError("\"hand_id\" must be a whole number")
    console = obj.get("console", False)
    if not isinstance(console, bool):
        raise ValueError("\"console\" must be true or false")
    return HandStarted(tuple(chosen), stacks, at, hand_id, console)


def _zone(obj: Mapping[str, Any], seats: int) -> Zone:
    name = obj.get("zone")
    if not isinstance(name, str):
        raise ValueError(f"{obj.get('op')} needs a \"zone\" such as \"seat4.up\" or \"burn\"")
    try:
        zone = Zone.parse(name)
    except ZoneParseError as exc:
        raise ValueError(str(exc)) from None
    if zone.seat is not None and zone.seat > seats:
        raise ValueError(f"unknown zone {name!r}: this table has {seats} seats")
    return zone


def _card(value: object) -> Card:
    if not isinstance(value, str):
        raise ValueError(f"bad card code {value!r}")
    try:
        return Card.parse(value)
    except CardParseError as exc:
        raise ValueError(str(exc)) from None


def _act(obj: Mapping[str, Any], seats: int, at: float) -> ConsoleAction:
    seat = _seat(obj.get("seat"), seats, "act seat")
    action = obj.get("action")
    if action not in CONSOLE_ACTIONS:
        raise ValueError(
            f"unknown action {action!r}: expected one of {', '.join(CONSOLE_ACTIONS)}"
        )
    amount = obj.get("amount")
    if amount is not None and (isinstance(amount, bool) or not isinstance(amount, int)
                               or amount < 0):
        raise ValueError("\"amount\" must be a whole number of chips >= 0")
    return ConsoleAction(seat, str(action), amount, at)
