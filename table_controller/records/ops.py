"""The operations table scripts and console commands share: one parser (issue 10).

A script's ``hand``, ``act``, ``kill`` and ``live`` lines (docs/conformance.md, and the
journal, which stores console commands in the same form) and the console's
``cmd/hand``, ``cmd/act``, ``cmd/kill`` and ``cmd/live`` payloads carry the same
fields. They used to be parsed twice, by rules that had drifted apart (a script
took stacks for some players only and a console command refused them; a console
stack had no upper bound; the words differed). Both edges now call the functions
here, so an object is accepted or refused alike, with the same words:
``<op>: <field>: <problem>`` (what, where, why), e.g.
``hand: stacks: seat 3 is not in players``. A script prefixes the file and
line (``s.jsonl:4: ...``); the console replies with the text and a code.

The rules, decided once:

* seats are JSON integers (``"4"`` and ``true`` are not seat 4) from 1 to the
  table's seat count; chips and amounts are whole numbers from 0 to
  :data:`~table_controller.domain.engine.settings.MAX_CHIPS`;
* ``hand``: ``players`` lists distinct seats, at least two (docs/rules.md: 2-8 players),
  or none at all: a card-only hand whose players are the seats dealt in the first
  round (the daemon's journal writes it; a console hand always names its players);
  ``stacks`` (optional) maps seats *of players* (keys are seat numbers as strings)
  to their chips behind after the ante. **Partial stacks are allowed**: docs/conformance.md
  makes ``stacks`` optional without asking for every player, and a seat whose stack
  is not given is played as when no stacks are given at all (unknown chips: the
  betting is checked for turn and size, its stack is shown as null). A player with
  0 chips at a table without ante is refused by the hand-start check both edges
  share (:func:`~table_controller.domain.engine.settings.stacks_problem`);
* ``act``: ``seat``, ``action`` one of :class:`~table_controller.domain.events.BetAction`,
  optional ``amount`` (null: the fixed-limit size);
* ``kill`` / ``live``: ``seat`` and an optional ``reason`` of at most
  :data:`MAX_REASON_CHARS` characters.

What differs by edge, on purpose: a console command is a whole message, so a key
it does not know is refused; a script line may carry keys for other tools and a
journal's envelope (``at``, ``jseq``...), which are ignored. The ``console`` flag
of a journaled ``hand`` exists in scripts only (the console sets it).

No I/O, no clock: ``at`` is passed in.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from table_controller.domain.cards import Card, CardParseError
from table_controller.domain.engine.outputs import ReplyCode
from table_controller.domain.engine.settings import MAX_CHIPS
from table_controller.domain.events import (
    AlertAck,
    AlertResolve,
    BetAction,
    CardPlaced,
    ConsoleAction,
    DealerChange,
    FloorCommand,
    FloorRuling,
    HandStarted,
    SeatName,
)
from table_controller.domain.zones import Zone, ZoneParseError

INVALID: Final = ReplyCode.INVALID_COMMAND
"""Console reply code of a malformed field (docs/console.md)."""
UNKNOWN_SEAT: Final = ReplyCode.UNKNOWN_SEAT
"""Console reply code of a seat number the table does not have."""

MAX_REASON_CHARS: Final = 500
"""Longest floor-ruling reason: a sentence for the floor, not a document."""

MAX_NAME_CHARS: Final = 40
"""Longest player name: what fits a seat box on the broadcast overlay."""

MAX_NOTE_CHARS: Final = 200
"""Longest note of a resolved alert (issue 14 contract): a line for the shift report."""

MAX_ALERT_ID_CHARS: Final = 100
"""Longest alert id accepted in a command (ids are ``<table>:<number>``, table ids at
most 64 characters): a longer one cannot exist, and is not echoed whole."""

MAX_DEALER_ID_CHARS: Final = 32
"""Longest dealer id (a badge number, ``D17``)."""

FLOOR_OPS: Final = ("ack", "resolve", "dealer")
"""Journal ops of the floor's commands (issue 14): not table events, the engine never
sees them; the daemon restores the alert lifecycle and the dealer from them."""

ALERT_OP: Final = "alert"
"""Journal op of an alert as raised (its id, code, dealer...): what restores the set of
open alerts after a restart, whichever hand or file it was raised in."""

NOTICE_OP: Final = "notice"
"""Journal op of a notice the daemon publishes itself (presence's ``cross_read_tie``,
issue 19): ``code``, ``seat``, ``street``, ``message``, ``hand``. Like the floor's
records no table event: a replay of the game skips it, the daemon's restart puts it
back in its hand's record."""

MIN_PLAYERS: Final = 2
"""docs/rules.md "Structure of a hand": 2-8 players."""


class OpError(ValueError):
    """A malformed shared op. ``str()`` is ``<op>: <field>: <problem>``; ``code`` is
    the console's reply code for it, ``seat`` the seat the op named when valid."""

    def __init__(self, op: str, field: str, problem: str, *, code: str = INVALID,
                 seat: int | None = None) -> None:
        super().__init__(f"{op}: {field}: {problem}" if field else f"{op}: {problem}")
        self.op = op
        self.field = field
        self.problem = problem
        self.code = code
        self.seat = seat


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:40] + "..."


def seat_of(obj: Mapping[str, Any], seats: int, op: str, field: str = "seat") -> int:
    """The seat number at ``obj[field]``, a seat of this ``seats``-seat table."""
    if field not in obj:
        raise OpError(op, field, "is missing: a seat number is needed")
    return _seat(obj[field], seats, op, field)


def _seat(value: object, seats: int, op: str, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise OpError(op, field, f"must be a seat number (a JSON integer), got {_shown(value)}")
    if not 1 <= value <= seats:
        # "act: seat 9 is not...", "hand: players: seat 9 is not...".
        raise OpError(op, "" if field == "seat" else field,
                      f"seat {value} is not a seat of this {seats}-seat table", code=UNKNOWN_SEAT)
    return value


def chips(value: object, op: str, field: str) -> int:
    """A chip count or amount: a whole number from 0 to MAX_CHIPS."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_CHIPS:
        raise OpError(op, field, f"must be a whole number from 0 to {MAX_CHIPS},"
                      f" got {_shown(value)}")
    return value


def parse_hand(obj: Mapping[str, Any], seats: int, at: float = 0.0, *,
               console: bool = False) -> HandStarted:
    """The :class:`HandStarted` of a ``hand`` op (``console``: from the console)."""
    op = "hand"
    players = obj.get("players")
    if players is None and "players" not in obj:
        raise OpError(op, "players", "is missing: a list of seat numbers, e.g. [1, 2, 4]")
    if not isinstance(players, list):
        raise OpError(op, "players", "must be a list of seat numbers, e.g. [1, 2, 4]")
    chosen = [_seat(p, seats, op, "players") for p in players]
    if len(set(chosen)) != len(chosen):
        twice = next(s for s in chosen if chosen.count(s) > 1)
        raise OpError(op, "players", f"seat {twice} is listed twice")
    if 0 < len(chosen) < MIN_PLAYERS:
        raise OpError(op, "players", "a hand needs at least two players (docs/rules.md),"
                      " or none for a card-only hand")
    stacks: dict[int, int] | None = None
    raw = obj.get("stacks")
    if raw is not None:
        if not isinstance(raw, dict):
            raise OpError(op, "stacks", "must be an object of seat -> chips, e.g."
                          ' {"1": 100, "4": 80}')
        stacks = {}
        for key, value in raw.items():
            # int() alone would also take " 1", "1_0" and other scripts' digits.
            if not (key.isascii() and key.isdigit() and len(key) <= 2):
                raise OpError(op, "stacks", f"key {_shown(key)} is not a seat number")
            seat = int(key)
            if seat not in chosen:
                raise OpError(op, "stacks", f"seat {seat} is not in players")
            stacks[seat] = chips(value, op, f"stacks.{seat}")
    hand_id = obj.get("hand_id")
    if hand_id is not None:
        hand_id = chips(hand_id, op, "hand_id")
    flag = obj.get("console", False)
    if not isinstance(flag, bool):
        raise OpError(op, "console", "must be true or false")
    if console and not chosen:  # checked last: every other field is judged as in a script
        raise OpError(op, "players", "a console hand names its players (at least two)")
    return HandStarted(tuple(sorted(chosen)), stacks, at, hand_id, console or flag)


def parse_act(obj: Mapping[str, Any], seats: int, at: float = 0.0) -> ConsoleAction:
    """The :class:`ConsoleAction` of an ``act`` op."""
    op = "act"
    seat = seat_of(obj, seats, op)
    if "action" not in obj:
        raise OpError(op, "action", f"is missing: one of {', '.join(BetAction)}", seat=seat)
    name = obj.get("action")
    try:
        action = BetAction(name) if isinstance(name, str) else None
    except ValueError:
        action = None
    if action is None:
        raise OpError(op, "action", f"unknown action {_shown(name)}: expected one of"
                      f" {', '.join(BetAction)}", seat=seat)
    amount = obj.get("amount")
    if amount is not None:
        amount = chips(amount, op, "amount")
    return ConsoleAction(seat, action, amount, at)


def parse_ruling(op: str, obj: Mapping[str, Any], seats: int, at: float = 0.0) -> FloorRuling:
    """The :class:`FloorRuling` of a ``kill`` or ``live`` op."""
    seat = seat_of(obj, seats, op)
    reason = obj.get("reason", "")
    if not isinstance(reason, str):
        raise OpError(op, "reason", "must be a string", seat=seat)
    # Issue 21 item 7: the reason goes out in the public announcement, so it gets
    # the check seat names get (one line, nothing that cannot be shown: a lone
    # surrogate could not even be serialised, after it was journaled and applied).
    reason = " ".join(reason.split())
    if len(reason) > MAX_REASON_CHARS:
        raise OpError(op, "reason", f"is longer than {MAX_REASON_CHARS} characters", seat=seat)
    if any(not ch.isprintable() for ch in reason):
        raise OpError(op, "reason", "has a character that cannot be shown", seat=seat)
    return FloorRuling(seat, op, reason, at)


def parse_seat(obj: Mapping[str, Any], seats: int, at: float = 0.0) -> SeatName:
    """The :class:`SeatName` of a ``seat`` op: ``seat``, ``name`` (empty: clear) and an
    optional ``country`` (ISO 3166 code, 2 or 3 capital letters) (issue 12)."""
    op = "seat"
    seat = seat_of(obj, seats, op)
    name = obj.get("name")
    if not isinstance(name, str):
        raise OpError(op, "name", "must be a string (empty to clear the seat)", seat=seat)
    name = " ".join(name.split())  # one line: no tabs or newlines on an overlay
    if len(name) > MAX_NAME_CHARS:
        raise OpError(op, "name", f"is longer than {MAX_NAME_CHARS} characters", seat=seat)
    if any(not ch.isprintable() for ch in name):
        raise OpError(op, "name", "has a character that cannot be shown", seat=seat)
    country = obj.get("country")
    if country is not None and not (isinstance(country, str) and country.isascii()
                                    and country.isalpha() and country.isupper()
                                    and len(country) in (2, 3)):
        raise OpError(op, "country", f"must be an ISO 3166 code like \"FR\" or \"USA\","
                      f" got {_shown(country)}", seat=seat)
    return SeatName(seat, name, country if name else None, at)


def parse_card(obj: Mapping[str, Any], seats: int, at: float = 0.0) -> CardPlaced:
    """The manual :class:`CardPlaced` of a console ``card``: ``zone`` (``seat3.down``,
    ``burn``, ``board``...) and ``card`` (``As``): the dealer enters a card whose tag
    no reader can read (issue 19); it counts as read there."""
    op = "card"
    name = obj.get("zone")
    if not isinstance(name, str):
        raise OpError(op, "zone", "must be a zone name such as \"seat3.down\" or \"burn\"")
    try:
        zone = Zone.parse(name)
    except ZoneParseError as exc:
        raise OpError(op, "zone", str(exc)) from None
    if zone.seat is not None and zone.seat > seats:
        raise OpError(op, "zone", f"this table has {seats} seats", code=UNKNOWN_SEAT)
    code = obj.get("card")
    if not isinstance(code, str):
        raise OpError(op, "card", f"must be a card code such as \"As\", got {_shown(code)}",
                      seat=zone.seat)
    try:
        card = Card.parse(code)
    except CardParseError as exc:
        raise OpError(op, "card", str(exc), seat=zone.seat) from None
    return CardPlaced(zone, card, at, None, manual=True)


# ----------------------------------------------------------------- the floor (issue 14)


def _text(obj: Mapping[str, Any], op: str, field: str, limit: int, *,
          required: bool = True) -> str:
    """A one-line printable string field of 1..``limit`` characters (spaces squeezed)."""
    value = obj.get(field)
    if value is None and field not in obj and required:
        raise OpError(op, field, "is missing")
    if not isinstance(value, str):
        raise OpError(op, field, f"must be a string, got {_shown(value)}")
    text = " ".join(value.split())
    if not text:
        raise OpError(op, field, "must not be empty")
    if len(text) > limit:
        raise OpError(op, field, f"is longer than {limit} characters")
    if any(not ch.isprintable() for ch in text):
        raise OpError(op, field, "has a character that cannot be shown")
    return text


def parse_ack(obj: Mapping[str, Any], at: float = 0.0) -> AlertAck:
    """The :class:`AlertAck` of an ``ack`` op: ``alert`` (its id) and ``by`` (who)."""
    return AlertAck(_text(obj, "ack", "alert", MAX_ALERT_ID_CHARS),
                    _text(obj, "ack", "by", MAX_NAME_CHARS), at)


def parse_resolve(obj: Mapping[str, Any], at: float = 0.0) -> AlertResolve:
    """The :class:`AlertResolve` of a ``resolve`` op: ``alert``, ``by`` and a ``note``
    (required: the shift report says how each alert was handled)."""
    op = "resolve"
    alert = _text(obj, op, "alert", MAX_ALERT_ID_CHARS)
    by = _text(obj, op, "by", MAX_NAME_CHARS)
    if "note" not in obj:
        raise OpError(op, "note", "is missing: say how the alert was handled"
                      " (e.g. \"misdeal called\")")
    return AlertResolve(alert, by, _text(obj, op, "note", MAX_NOTE_CHARS), at)


def parse_dealer(obj: Mapping[str, Any], at: float = 0.0) -> DealerChange:
    """The :class:`DealerChange` of a ``dealer`` op: ``{"action": "in", "id", "name"}``
    or ``{"action": "out"}``."""
    op = "dealer"
    action = obj.get("action")
    if action == "out":
        extra = sorted(set(obj) & {"id", "name"})
        if extra:
            raise OpError(op, extra[0], "is not given when a dealer signs out")
        return DealerChange(None, None, at)
    if action != "in":
        raise OpError(op, "action", f"must be \"in\" or \"out\", got {_shown(action)}")
    dealer_id = _text(obj, op, "id", MAX_DEALER_ID_CHARS)
    if " " in dealer_id:
        raise OpError(op, "id", "must be one word (a badge number like \"D17\")")
    return DealerChange(dealer_id, _text(obj, op, "name", MAX_NAME_CHARS), at)


def parse_floor(op: str, obj: Mapping[str, Any], at: float = 0.0) -> FloorCommand:
    """The floor command of op ``op`` (one of :data:`FLOOR_OPS`)."""
    if op == "ack":
        return parse_ack(obj, at)
    if op == "resolve":
        return parse_resolve(obj, at)
    if op == "dealer":
        return parse_dealer(obj, at)
    raise OpError(op, "", f"not a floor op: expected one of {', '.join(FLOOR_OPS)}")


def floor_op(command: FloorCommand) -> dict[str, Any]:
    """The journal op of ``command`` (the inverse of :func:`parse_floor`)."""
    if isinstance(command, AlertAck):
        return {"op": "ack", "alert": command.alert, "by": command.by}
    if isinstance(command, AlertResolve):
        return {"op": "resolve", "alert": command.alert, "by": command.by, "note": command.note}
    if command.dealer_id is None:
        return {"op": "dealer", "action": "out"}
    return {"op": "dealer", "action": "in", "id": command.dealer_id, "name": command.name}
