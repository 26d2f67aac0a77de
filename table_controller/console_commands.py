"""Console commands: the JSON of ``cmd/<name>`` requests -> table events (pure).

The daemon's MQTT edge hands the raw request (command name and payload bytes)
to :func:`parse_command` on the engine thread. A well-formed command becomes
the :mod:`table_controller.events` event the engine applies and the journal
stores (``hand`` -> :class:`HandStarted`, ``act`` -> :class:`ConsoleAction`,
``kill``/``live`` -> :class:`FloorRuling`, ``end`` -> :class:`HandEnded`).
Anything else raises :class:`CommandError` with a stable ``code`` and a reason
a dealer can read; such a command never reaches the engine or the journal.

What is checked here is only what the JSON alone can tell: the command exists,
its fields are the expected ones with the right types, and seats exist at this
table. Whether the action is legal *now* (turn, amount, hand over) is the
engine's call (:class:`table_controller.engine.outputs.ConsoleResult`).

No I/O, no clock, no MQTT: the ``at`` timestamp is passed in.
"""

from __future__ import annotations

from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from table_controller.events import (
    ConsoleAction,
    FloorRuling,
    HandEnded,
    HandStarted,
)
from table_controller.topics import shown_name

COMMANDS: Final = ("hand", "act", "kill", "live", "end")
"""Console commands answered with a reply (``rebirth`` is handled by the publisher)."""

BAD_JSON: Final = "bad_json"
"""The payload is not JSON (or not UTF-8)."""
UNKNOWN_COMMAND: Final = "unknown_command"
"""``cmd/<name>`` with a name that is not a console command."""
INVALID_COMMAND: Final = "invalid_command"
"""JSON of the wrong shape: a missing, unexpected or mistyped field."""
UNKNOWN_SEAT: Final = "unknown_seat"
"""A seat number this table does not have (the engine uses the same code for a
seat of the table that is not in the hand)."""

CommandEvent = HandStarted | ConsoleAction | FloorRuling | HandEnded
"""What a valid console command turns into."""


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


class _Command(BaseModel):
    # strict: "4" is not seat 4 and true is not 1 — a console sending strings
    # has a bug the dealer should hear about, not a guess.
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class HandCommand(_Command):
    """``cmd/hand``: start a hand with ``players`` (seats that anted in) and their
    ``stacks`` (chips behind *after* the ante, keyed by seat number as a string)."""

    players: list[int] = Field(min_length=2, description="Seats dealt in.")
    stacks: dict[int, int] | None = Field(
        default=None, description="Chips behind each player after the ante."
    )
    hand_id: int | None = Field(default=None, ge=0, description="Hand number to use.")


class ActCommand(_Command):
    """``cmd/act``: a betting action; ``amount`` is the seat's total bet this round
    after the action (``null``: the fixed-limit size)."""

    seat: int
    action: Literal["bring_in", "complete", "bet", "raise", "call", "check", "fold", "allin"]
    amount: int | None = Field(default=None, ge=0)


class RulingCommand(_Command):
    """``cmd/kill`` / ``cmd/live``: a floor ruling on ``seat``, with the reason."""

    seat: int
    reason: str = Field(default="", max_length=500)


class EndCommand(_Command):
    """``cmd/end``: close the hand (an empty payload is accepted as ``{}``)."""


_MODELS: Final[dict[str, type[_Command]]] = {
    "hand": HandCommand,
    "act": ActCommand,
    "kill": RulingCommand,
    "live": RulingCommand,
    "end": EndCommand,
}


def parse_command(name: str, payload: bytes, seats: int, at: float = 0.0) -> CommandEvent:
    """The table event of console command ``name`` with JSON ``payload``.

    ``seats`` is the table's seat count. Raises :class:`CommandError`.
    """
    model = _MODELS.get(name)
    if model is None:
        raise CommandError(
            UNKNOWN_COMMAND,
            f"unknown command {shown_name(name)!r}: expected one of {', '.join(COMMANDS)}",
        )
    body = payload.strip() or b"{}"
    try:
        command = model.model_validate_json(body)
    except ValidationError as exc:
        raise _validation_error(name, exc) from None
    if isinstance(command, HandCommand):
        return _hand(command, seats, at)
    if isinstance(command, ActCommand):
        _check_seat(command.seat, seats, "act")
        return ConsoleAction(command.seat, command.action, command.amount, at)
    if isinstance(command, RulingCommand):
        _check_seat(command.seat, seats, name)
        return FloorRuling(command.seat, name, command.reason, at)
    return HandEnded(at)


def _validation_error(name: str, exc: ValidationError) -> CommandError:
    errors = exc.errors()
    if any(error["type"] == "json_invalid" for error in errors):
        detail = errors[0].get("ctx", {}).get("error", "not valid JSON")
        return CommandError(BAD_JSON, f"{name}: the payload is not valid JSON ({detail})")
    problems = []
    for error in errors[:3]:
        where = ".".join(str(part) for part in error["loc"])
        problems.append(f"{where}: {error['msg']}" if where else str(error["msg"]))
    more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
    return CommandError(INVALID_COMMAND, f"{name}: " + "; ".join(problems) + more)


def _check_seat(seat: int, seats: int, what: str) -> None:
    if not 1 <= seat <= seats:
        raise CommandError(
            UNKNOWN_SEAT, f"{what}: seat {seat} is not a seat of this {seats}-seat table"
        )


def _hand(command: HandCommand, seats: int, at: float) -> HandStarted:
    players = command.players
    for seat in players:
        _check_seat(seat, seats, "hand")
    if len(set(players)) != len(players):
        raise CommandError(INVALID_COMMAND, "hand: a seat is listed twice in players")
    stacks = command.stacks
    if stacks is not None:
        for seat, chips in stacks.items():
            if seat not in players:
                raise CommandError(
                    INVALID_COMMAND, f"hand: stacks names seat {seat}, which is not in players"
                )
            if chips < 0:
                raise CommandError(
                    INVALID_COMMAND, f"hand: the stack of seat {seat} is negative ({chips})"
                )
        missing = sorted(set(players) - set(stacks))
        if missing:
            raise CommandError(
                INVALID_COMMAND,
                "hand: stacks must give every player's chips; missing seat(s) "
                + ", ".join(map(str, missing)),
            )
    return HandStarted(tuple(sorted(players)), stacks, at, command.hand_id, console=True)
