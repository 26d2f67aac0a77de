"""Zone events: what the table physically did, as the rules engine consumes it.

Presence tracking (from RFID readers) and table scripts (docs/conformance.md) both
produce these; the journal stores them; the engine applies them. ``at`` is a
timestamp in seconds supplied by the edge that saw the event: the engine never
reads a clock.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Final

from table_controller.domain.cards import Card
from table_controller.domain.zones import Zone


@dataclass(frozen=True, slots=True)
class CardPlaced:
    """A registered card arrived in ``zone``.

    ``deck`` names the deck file the tag belongs to, so two physical copies of
    one card (two decks on the table) stay distinguishable without a tag UID.
    ``manual``: entered by hand for a tag no reader can read (a dead tag); it
    counts as the card read there (docs/conformance.md "Reads that fail").
    """

    zone: Zone
    card: Card
    at: float = 0.0
    deck: str | None = None
    manual: bool = False


@dataclass(frozen=True, slots=True)
class CardRemoved:
    """A registered card left ``zone``."""

    zone: Zone
    card: Card
    at: float = 0.0
    deck: str | None = None


@dataclass(frozen=True, slots=True)
class UnknownTag:
    """A tag that maps to no registered card arrived in ``zone``.

    ``uid`` is kept for the journal and the secure side only; it must never be
    published or logged at info level.
    """

    zone: Zone
    uid: str
    at: float = 0.0


@dataclass(frozen=True, slots=True)
class HandStarted:
    """A new hand: ``players`` are the seats that anted in, in seat order.

    ``stacks`` (optional) are the chips behind each seat after the ante.
    """

    players: tuple[int, ...]
    stacks: Mapping[int, int] | None = None
    at: float = 0.0
    hand_id: int | None = field(default=None)
    console: bool = False
    """Started at the dealer's console: betting is tracked from the first card."""


@dataclass(frozen=True, slots=True)
class UnknownTagRemoved:
    """A tag that maps to no registered card left ``zone`` (the engine ignores it)."""

    zone: Zone
    uid: str
    at: float = 0.0


class BetAction(StrEnum):
    """A betting action as the dealer's console names it (docs/conformance.md ``act``
    lines, ``cmd/act``): the one vocabulary from the wire to the betting engine,
    which also names what an action turned out to be with it (an ``allin`` is
    classified as the bring-in, call, completion, bet or raise it amounts to)."""

    BRING_IN = "bring_in"
    COMPLETE = "complete"
    BET = "bet"
    RAISE = "raise"
    CALL = "call"
    CHECK = "check"
    FOLD = "fold"
    ALLIN = "allin"


CONSOLE_ACTIONS: Final = tuple(action.value for action in BetAction)
"""The :class:`BetAction` names, in order (command-line choices, messages)."""

WAGER_ACTIONS: Final = frozenset(
    {BetAction.BRING_IN, BetAction.COMPLETE, BetAction.BET, BetAction.RAISE}
)
"""Actions that put a wager in (rule 7: a wager kills a hand folded with no bet)."""


@dataclass(frozen=True, slots=True)
class ConsoleAction:
    """A betting action entered at the dealer's console for ``seat``.

    ``amount`` is the total the player has put in this round after the action,
    when given; otherwise the fixed-limit size applies.
    """

    seat: int
    action: BetAction
    amount: int | None = None
    at: float = 0.0

    def __post_init__(self) -> None:
        # The record always holds the enum: a caller passing the name ("call") gets
        # BetAction.CALL, an unknown name is a ValueError here, not deep in the engine.
        if not isinstance(self.action, BetAction):
            object.__setattr__(self, "action", BetAction(self.action))


FLOOR_RULINGS = ("kill", "live")
"""Floor rulings: ``kill`` a hand (rules 6, 10, 18...), rule a short hand ``live`` (18)."""


@dataclass(frozen=True, slots=True)
class FloorRuling:
    """A floor supervisor's ruling on ``seat`` entered at the console."""

    seat: int
    ruling: str
    reason: str = ""
    at: float = 0.0


@dataclass(frozen=True, slots=True)
class SeatName:
    """The console names the player at ``seat`` (issue 12): shown on every page and on
    public ``state``. An empty ``name`` clears the seat's name. Names are public."""

    seat: int
    name: str
    country: str | None = None
    at: float = 0.0


@dataclass(frozen=True, slots=True)
class HandEnded:
    """The console closes the hand (showdown over, pot pushed)."""

    at: float = 0.0


ZoneEvent = CardPlaced | CardRemoved | UnknownTag | UnknownTagRemoved
"""What presence tracking produces from reader reports."""

ConsoleEvent = ConsoleAction | FloorRuling | HandEnded
"""What a dealer's console enters besides starting a hand."""

TableEvent = ZoneEvent | HandStarted | ConsoleEvent | SeatName
"""Everything the engine consumes."""


# ----------------------------------------------------------------- the floor (issue 14)
# Not table events: the rules engine never sees these. They change the alert
# lifecycle and the dealer on duty, which the daemon keeps beside the engine.


@dataclass(frozen=True, slots=True)
class AlertAck:
    """A floor supervisor (``by``) has seen alert ``alert`` (its id) and is on it."""

    alert: str
    by: str
    at: float = 0.0


@dataclass(frozen=True, slots=True)
class AlertResolve:
    """Alert ``alert`` is handled: ``by`` says how in ``note`` ("misdeal called")."""

    alert: str
    by: str
    note: str
    at: float = 0.0


@dataclass(frozen=True, slots=True)
class DealerChange:
    """Dealer ``dealer_id`` (``name``) signs in at the table; both ``None``: the
    dealer on duty signs out."""

    dealer_id: str | None
    name: str | None
    at: float = 0.0


FloorCommand = AlertAck | AlertResolve | DealerChange
"""What the floor's console commands (``ack``, ``resolve``, ``dealer``) turn into."""
