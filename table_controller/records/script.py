"""Table scripts (docs/conformance.md): JSON Lines in, settings and table events out.

A script line is one op object (``table``, ``hand``, ``place``, ``remove``,
``act``). The journal stores its records in the same op form, so one parser
serves both; envelope keys a journal adds (``jseq``, ``at``, ``crc``...) are
ignored here (checking them is :mod:`table_controller.records.replay`'s job).
:func:`event_to_op` is the inverse, used when journaling. The ops a console
command also carries (``hand``, ``act``, ``kill``, ``live``) are parsed by
:mod:`table_controller.records.ops`, the code ``cmd/<name>`` payloads go through too:
one set of rules and words for both (issue 10).

:class:`ScriptParser` takes one line at a time, so a script of any length is
parsed in constant memory; :func:`parse_script` is the list form of it.
Whatever a line holds, the parser either returns its event or raises one
:class:`ScriptError` naming the line: never another exception (issue 9).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from table_controller.domain.cards import Card, CardParseError
from table_controller.domain.engine.settings import (
    TableSettings,
    stacks_problem,
    validate_settings,
)
from table_controller.domain.events import (
    FLOOR_RULINGS,
    CardPlaced,
    CardRemoved,
    FloorRuling,
    HandEnded,
    HandStarted,
    SeatName,
    TableEvent,
    UnknownTag,
    UnknownTagRemoved,
)
from table_controller.domain.zones import MAX_SEATS, Zone, ZoneParseError
from table_controller.records.ops import (
    ALERT_OP,
    FLOOR_OPS,
    NOTICE_OP,
    parse_act,
    parse_hand,
    parse_ruling,
    parse_seat,
)

OPS = ("table", "hand", "place", "remove", "act", "kill", "live", "end", "seat")
"""The ops a script line may carry: docs/conformance.md's five, plus the console's floor
rulings (``kill``, ``live``) and ``end`` of a hand, which journals also record."""


MAX_DIGITS: Final = 18
"""Longest integer a script may write. Python's ``int()`` refuses strings of more
than 4,300 digits with an error of its own and ``float()`` overflows past about
300; seats, chips and times never need more than a few digits."""

MAX_PROBLEM_CHARS: Final = 300
"""An error message quotes at most this much of the offending value: a line of
60,000 characters must still give one readable line."""

JOURNAL_KEYS: Final = frozenset({"jseq", "crc"})
"""Envelope keys only a journal record carries (docs/journal.md)."""

OP_KEYS: Final = {
    "hand": frozenset({"players", "stacks", "hand_id", "console"}),
    "place": frozenset({"zone", "card", "uid", "deck", "manual"}),
    "remove": frozenset({"zone", "card", "uid", "deck"}),
    "act": frozenset({"seat", "action", "amount"}),
    "kill": frozenset({"seat", "reason"}),
    "live": frozenset({"seat", "reason"}),
    "end": frozenset(),
    "seat": frozenset({"seat", "name", "country"}),
}
"""The keys each op may carry besides ``op`` and the envelope (``at``; a journal's
``jseq``, ``crc``): any other key is refused, as in the config files (a misspelt
``"amout"`` must not be a bet of the fixed size). ``place`` may mark a card entered
by hand (``"manual"``, docs/conformance.md)."""


def one_line(text: str, limit: int = MAX_PROBLEM_CHARS) -> str:
    """``text`` as one short line: every line break (also U+2028 & co.) escaped, clipped."""
    flat = "".join(
        ch if ch.isprintable() or ch == " " else ch.encode("unicode_escape").decode("ascii")
        for ch in text[: limit * 2]
    )
    return flat if len(flat) <= limit and len(text) <= limit * 2 else flat[:limit] + "..."


class ScriptError(ValueError):
    """A malformed script line. ``str()`` is one line naming the line number."""

    def __init__(self, line: int, problem: str, source: str = "") -> None:
        self.line = line
        self.problem = one_line(problem)
        self.source = source
        where = f"{one_line(source, 4096)}:{line}" if source else f"line {line}"
        super().__init__(f"{where}: {self.problem}")


@dataclass(slots=True)
class Script:
    """A parsed script: the table settings and the events with their line numbers."""

    settings: TableSettings = field(default_factory=TableSettings)
    events: list[tuple[int, TableEvent]] = field(default_factory=list)


def load_json(text: str) -> object:
    """Parse one line of JSON; raise ``ValueError`` saying why it is not acceptable.

    Stricter than ``json.loads`` where the standard library would accept
    something no script means or fail with another exception: ``NaN`` and
    ``Infinity`` (not JSON), numbers too large (:data:`MAX_DIGITS`, and floats
    that overflow to infinity), nesting deep enough to exhaust the stack.
    """
    try:
        return _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"bad JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise ValueError("bad JSON (nested too deeply)") from None


def _bounded_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_DIGITS:
        raise ValueError(f"a number of {digits} digits is out of range (at most {MAX_DIGITS})")
    return int(text)


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:40]} is out of range")
    return value


def _no_constant(text: str) -> object:
    raise ValueError(f"bad JSON ({text} is not a JSON value)")


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object's pairs as a dict; a key written twice is refused (issue 21, item 9:
    ``{"op":"place","op":"remove"}`` must not quietly mean the last one)."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _value in pairs:
            if key in seen:
                raise ValueError(f"duplicate key {one_line(key, 40)!r}: a key may appear"
                                 " once in an object")
            seen.add(key)
    return obj


# One decoder for every line: json.loads with hooks would build a new one per call.
_DECODER: Final = json.JSONDecoder(
    parse_int=_bounded_int, parse_float=_finite_float, parse_constant=_no_constant,
    object_pairs_hook=unique_keys,
)


class ScriptParser:
    """Turns a script (or journal ops) into settings and events, one line at a time.

    Memory does not grow with the script: the parser keeps the settings and two
    flags. ``settings`` is final once the first op line has been fed (the
    ``table`` line may only come first).
    """

    def __init__(self, source: str = "", *, journal: bool = False) -> None:
        self.source = source
        self.journal = journal
        """Lines are journal records: their ``jseq``/``crc`` keys were checked already."""
        self.settings = TableSettings()
        self._seen_op = False
        self._seen_hand = False

    def feed_line(self, number: int, text: str) -> TableEvent | None:
        """Parse script line ``number``; return its event (None: blank or ``table`` line).

        ``text`` is one line split on ``\\n`` only; whitespace around it (also a
        form feed or a U+2028) is ignored, inside a JSON string it is kept.
        """
        text = text.strip()
        if number == 1:
            text = text.removeprefix("\ufeff").strip()  # a Windows editor's BOM
        if not text:
            return None
        try:
            obj = load_json(text)
        except ValueError as exc:
            raise ScriptError(number, str(exc), self.source) from None
        return self.feed_object(number, obj)

    def feed_object(self, number: int, obj: object) -> TableEvent | None:
        """Turn the already-parsed object of line ``number`` into its event."""
        if not isinstance(obj, dict):
            raise ScriptError(number, "a line must be a JSON object with an \"op\"", self.source)
        try:
            return self._op(obj)
        except ScriptError:
            raise
        except (ValueError, OverflowError) as exc:
            raise ScriptError(number, str(exc), self.source) from None
        except Exception as exc:  # a parser bug must still name the line
            raise ScriptError(
                number, f"internal error reading this line ({type(exc).__name__}: {exc});"
                " please report it", self.source) from None

    def _op(self, obj: Mapping[str, Any]) -> TableEvent | None:
        if not self.journal:
            stray = sorted(JOURNAL_KEYS.intersection(obj))
            if stray:
                # Line 1 decides whether a file is a journal; a record in a script would
                # replay unchecked, so a half-edited journal is refused, not trusted.
                raise ValueError(
                    f"journal key {stray[0]!r} in a table script (the first line is not a"
                    " journal record, so no line is checked as one)"
                )
        op = obj.get("op")
        if self.journal and (op in FLOOR_OPS or op in (ALERT_OP, NOTICE_OP)):
            # The floor's records (issue 14: alerts raised, their lifecycle, the
            # dealer on duty) and the daemon's own notices (issue 19) are no table
            # events: a replay of the game skips them.
            return None
        if op == "table":
            if self._seen_op:
                raise ValueError("the table line must be the first line of the script")
            self.settings = parse_settings(obj)
            self._seen_op = True
            return None
        _check_keys(obj)
        event = op_to_event(obj, self.settings.seats)
        if isinstance(event, HandStarted):
            _check_stacks(event, self.settings)
            if not event.players and not self.journal and not self.settings.auto_hands:
                raise ValueError(
                    "hand: players: is empty: a hand needs at least two players"
                    " (docs/rules.md); a card-only table whose hands start by themselves"
                    " says \"auto_hands\": true on its table line")
            self._seen_hand = True
        elif not self._seen_hand and not self.settings.auto_hands:
            # Issue 9, item 17: the engine ignores input outside a hand; silently
            # dropping a script's cards would report a clean, empty table.
            raise ValueError(
                f"{op} before the first \"hand\" line: a hand starts with"
                " {\"op\":\"hand\",\"players\":[...]} (or the table line sets"
                " \"auto_hands\": true, a card-only table)"
            )
        self._seen_op = True
        return event


def parse_script(lines: Iterable[str], source: str = "") -> Script:
    """Parse script text lines (blank lines are skipped). Raises :class:`ScriptError`.

    ``lines`` must be split on ``\\n`` only (not ``str.splitlines``, which also
    splits on form feeds and U+2028 and so shifts every later line number).
    """
    parser = ScriptParser(source)
    events: list[tuple[int, TableEvent]] = []
    for number, raw in enumerate(lines, start=1):
        event = parser.feed_line(number, raw)
        if event is not None:
            events.append((number, event))
    return Script(parser.settings, events)


def _check_keys(obj: Mapping[str, Any]) -> None:
    """Refuse a key the line's op does not know (:data:`OP_KEYS`)."""
    allowed = OP_KEYS.get(obj.get("op"))  # type: ignore[arg-type]
    if allowed is None:
        return  # an unknown or missing op: op_to_event names it
    unknown = [key for key in obj if key != "op" and key not in allowed
               and key not in _ENVELOPE]
    if unknown:
        known = ", ".join(sorted(allowed)) or "none"  # the console's words (console_commands)
        raise ValueError(f"{obj['op']}: {one_line(unknown[0], 40)}: unexpected field (the"
                         f" fields of {obj['op']} are: {known})")


def _check_stacks(event: HandStarted, settings: TableSettings) -> None:
    """A player with no chips at all cannot be dealt in (the betting engine's rule)."""
    problem = stacks_problem(event.stacks, settings.ante)
    if problem is not None:
        raise ValueError(problem)


def parse_settings(obj: Mapping[str, Any]) -> TableSettings:
    """Validate a ``table`` line into :class:`TableSettings`."""
    fields = {k: v for k, v in obj.items() if k != "op" and k not in _ENVELOPE}
    try:
        return validate_settings(fields)
    except ValueError as exc:
        raise ValueError(f"table setting {exc}") from None


def op_to_event(obj: Mapping[str, Any], seats: int = MAX_SEATS) -> TableEvent:
    """Turn one op object into a table event. Raises ``ValueError`` on a bad op."""
    op = obj.get("op")
    at = _number(obj.get("at", 0.0), "at")
    if op == "hand":
        return parse_hand(obj, seats, at)  # the one parser the console shares (ops.py)
    if op in ("place", "remove"):
        zone = _zone(obj, seats)
        if "card" in obj:
            card = _card(obj["card"])
            deck = obj.get("deck")
            if deck is not None and not isinstance(deck, str):
                raise ValueError("\"deck\" must be a string")
            if op == "place":
                manual = obj.get("manual", False)
                if not isinstance(manual, bool):
                    raise ValueError("\"manual\" must be true or false")
                return CardPlaced(zone, card, at, deck, manual)
            if "manual" in obj:
                raise ValueError("\"manual\" belongs on a place line only")
            return CardRemoved(zone, card, at, deck)
        uid = obj.get("uid")
        if not isinstance(uid, str) or not uid:
            raise ValueError(f"{op} needs a \"card\" (like \"As\") or a tag \"uid\"")
        if op == "place":
            return UnknownTag(zone, uid, at)
        return UnknownTagRemoved(zone, uid, at)
    if op == "act":
        return parse_act(obj, seats, at)
    if op in FLOOR_RULINGS:
        return parse_ruling(str(op), obj, seats, at)
    if op == "end":
        return HandEnded(at)
    if op == "seat":  # a player's name (issue 12): journaled like every console input
        return parse_seat(obj, seats, at)
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
        if isinstance(event, CardPlaced) and event.manual:
            op["manual"] = True
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
    if isinstance(event, SeatName):
        op = {"op": "seat", "seat": event.seat, "name": event.name}
        if event.country is not None:
            op["country"] = event.country
        return op
    op = {"op": "act", "seat": event.seat, "action": event.action}
    if event.amount is not None:
        op["amount"] = event.amount
    return op


_ENVELOPE = frozenset({"jseq", "at", "crc", "ts", "seq"})


def _number(value: object, key: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"\"{key}\" must be a number")
    try:
        number = float(value)
    except OverflowError:  # an int of hundreds of digits (a journal is not loaded by us)
        number = math.inf
    if not math.isfinite(number):
        raise ValueError(f"\"{key}\" is out of range")
    return number


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
        card = Card.parse(value)
    except CardParseError as exc:
        raise ValueError(str(exc)) from None
    if card.code != value:  # the contract's spelling only: "As", never "as" or "AS"
        raise ValueError(f"bad card code {one_line(value, 40)!r}: write the rank in capitals"
                         f" and the suit in lower case, as in {card.code!r}")
    return card
