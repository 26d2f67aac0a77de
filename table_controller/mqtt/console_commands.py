"""Console commands: the JSON of ``cmd/<name>`` requests -> table events (pure).

The daemon's MQTT edge hands the raw request (command name and payload bytes)
to :func:`parse_command` on the engine thread. A well-formed command becomes
the :mod:`table_controller.domain.events` event the engine applies and the journal
stores (``hand`` -> :class:`HandStarted`, ``act`` -> :class:`ConsoleAction`,
``kill``/``live`` -> :class:`FloorRuling`, ``end`` -> :class:`HandEnded`,
``seat`` -> :class:`SeatName`, ``card`` -> a manual :class:`CardPlaced`, issue 19:
the dealer enters a card whose tag no reader reads); the floor's commands (issue 14) become floor
commands the daemon applies itself, never the engine (``ack`` -> :class:`AlertAck`,
``resolve`` -> :class:`AlertResolve`, ``dealer`` -> :class:`DealerChange`), and
whether the alert they name exists is the daemon's alert book's call.
Anything else raises :class:`CommandError` with a stable ``code`` and a reason
a dealer can read; such a command never reaches the engine or the journal.

What is checked here is only what the JSON alone can tell: the command exists,
its fields are the expected ones with the right types, and seats exist at this
table. The fields are checked by the one parser table scripts use too
(:mod:`table_controller.records.ops`): same rules, same words. Whether the action is
legal *now* (turn, amount, hand over) is the engine's call
(:class:`table_controller.domain.engine.outputs.ConsoleResult`).

No I/O, no clock, no MQTT: the ``at`` timestamp is passed in.
"""

from __future__ import annotations

from typing import Any, Final

from table_controller.domain.engine.outputs import ReplyCode
from table_controller.domain.events import (
    FLOOR_RULINGS,
    AlertAck,
    AlertResolve,
    CardPlaced,
    ConsoleAction,
    DealerChange,
    FloorCommand,
    FloorRuling,
    HandEnded,
    HandStarted,
    SeatName,
)
from table_controller.mqtt.topics import shown_name
from table_controller.records.ops import (
    INVALID,
    UNKNOWN_SEAT,  # re-exported: a seat number this table does not have
    OpError,
    floor_op,
    parse_act,
    parse_card,
    parse_floor,
    parse_hand,
    parse_ruling,
    parse_seat,
)
from table_controller.records.script import event_to_op, load_json

COMMANDS: Final = ("hand", "act", "kill", "live", "end", "seat", "card", "ack", "resolve",
                   "dealer")
"""Console commands answered with a reply (``rebirth`` is handled by the publisher)."""

BAD_JSON: Final = ReplyCode.BAD_JSON
"""The payload is not JSON (or not UTF-8)."""
UNKNOWN_COMMAND: Final = ReplyCode.UNKNOWN_COMMAND
"""``cmd/<name>`` with a name that is not a console command."""
INVALID_COMMAND: Final = INVALID
"""JSON of the wrong shape: a missing, unexpected or mistyped field."""

__all__ = [
    "BAD_JSON",
    "COMMANDS",
    "INVALID_COMMAND",
    "UNKNOWN_COMMAND",
    "UNKNOWN_SEAT",
    "CommandError",
    "CommandEvent",
    "parse_command",
]

CommandEvent = (HandStarted | ConsoleAction | FloorRuling | HandEnded | SeatName | CardPlaced
                | FloorCommand)
"""What a valid console command turns into: a table event for the engine, or (``ack``,
``resolve``, ``dealer``, issue 14) a floor command the daemon applies itself."""


class CommandError(ValueError):
    """A console command refused before it reaches the engine: ``code`` + ``reason``.

    ``seat`` is the seat the command named, when it named a valid one (for the
    floor alert).
    """

    def __init__(self, code: str, reason: str, seat: int | None = None) -> None:
        super().__init__(f"{code}: {reason}")
        self.code = code
        self.reason = reason
        self.seat = seat


_FIELDS: Final[dict[str, frozenset[str]]] = {
    "hand": frozenset({"players", "stacks", "hand_id"}),
    "act": frozenset({"seat", "action", "amount"}),
    "kill": frozenset({"seat", "reason"}),
    "live": frozenset({"seat", "reason"}),
    "end": frozenset(),
    "seat": frozenset({"seat", "name", "country"}),
    "card": frozenset({"zone", "card"}),
    "ack": frozenset({"alert", "by"}),
    "resolve": frozenset({"alert", "by", "note"}),
    "dealer": frozenset({"action", "id", "name"}),
}
"""The fields each command may carry: a console command is a whole message, so
any other key is refused (a script line may carry more; see ops.py)."""


def parse_command(name: str, payload: bytes, seats: int, at: float = 0.0) -> CommandEvent:
    """The table event of console command ``name`` with JSON ``payload``.

    ``seats`` is the table's seat count. Raises :class:`CommandError`. The fields
    are checked by the parser table scripts use (:mod:`table_controller.records.ops`),
    so a command and a script line with the same fields get the same verdict
    and the same words.
    """
    event = _parse(name, payload, seats, at)
    _check_publishable(name, event)
    return event


def _check_publishable(name: str, event: CommandEvent) -> None:
    """Refuse an event any of whose text could not be published (issue 21 item 7):
    the field checks above already refuse what cannot be shown; this is the net under
    them, so that no input is journaled and applied that the state cannot carry."""
    if isinstance(event, AlertAck | AlertResolve | DealerChange):
        op = floor_op(event)
    else:
        op = event_to_op(event)
    for value in _strings(op):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise CommandError(INVALID_COMMAND, f"{name}: a text field cannot be published"
                               " (not valid Unicode)") from None


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for key, item in value.items() for s in (*_strings(key), *_strings(item))]
    if isinstance(value, list | tuple):
        return [s for item in value for s in _strings(item)]
    return []


def _parse(name: str, payload: bytes, seats: int, at: float) -> CommandEvent:
    fields = _FIELDS.get(name)
    if fields is None:
        raise CommandError(
            UNKNOWN_COMMAND,
            f"unknown command {shown_name(name)!r}: expected one of {', '.join(COMMANDS)}",
        )
    obj = _json_object(name, payload)
    extra = sorted(set(obj) - fields)
    if extra:
        expected = ", ".join(sorted(fields)) or "none"
        raise CommandError(INVALID_COMMAND, f"{name}: {shown_name(extra[0])}: unexpected field"
                           f" (the fields of {name} are: {expected})")
    try:
        if name == "hand":
            return parse_hand(obj, seats, at, console=True)
        if name == "act":
            return parse_act(obj, seats, at)
        if name in FLOOR_RULINGS:
            return parse_ruling(name, obj, seats, at)
        if name == "seat":
            return parse_seat(obj, seats, at)
        if name == "card":
            return parse_card(obj, seats, at)
        if name in ("ack", "resolve", "dealer"):
            return parse_floor(name, obj, at)
    except OpError as exc:
        raise CommandError(exc.code, str(exc), exc.seat) from None
    return HandEnded(at)


def _json_object(name: str, payload: bytes) -> dict[str, Any]:
    """The payload as a JSON object, by the JSON rules of table scripts
    (:func:`table_controller.records.script.load_json`: no NaN, bounded numbers)."""
    body = payload.strip() or b"{}"
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise CommandError(BAD_JSON, f"{name}: the payload is not valid JSON (not UTF-8)"
                           ) from None
    try:
        obj = load_json(text)
    except ValueError as exc:
        problem = str(exc)
        if problem.startswith("bad JSON"):
            raise CommandError(
                BAD_JSON, f"{name}: the payload is not valid JSON"
                f" ({problem.removeprefix('bad JSON (').removesuffix(')')})") from None
        raise CommandError(INVALID_COMMAND, f"{name}: {problem}") from None
    if not isinstance(obj, dict):
        raise CommandError(INVALID_COMMAND, f"{name}: the payload must be a JSON object")
    return obj
