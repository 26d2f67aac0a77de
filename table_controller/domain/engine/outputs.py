"""What the engine emits besides alerts and notices: game events and console results."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import NamedTuple

from table_controller.domain.cards import Card
from table_controller.domain.engine.alerts import Alert, Notice


class GameEventKind(StrEnum):
    """Kinds of game events; values are the wire names."""

    HAND_STARTED = "hand_started"
    CARD_DEALT_UP = "card_dealt_up"
    CARD_DEALT_DOWN = "card_dealt_down"
    CARD_BURNED = "card_burned"
    COMMUNITY_CARD = "community_card"
    STREET_STARTED = "street_started"
    ANNOUNCEMENT = "announcement"
    FOLD = "fold"
    HAND_DEAD = "hand_dead"
    HAND_RESULT = "hand_result"
    ACTION = "action"


@dataclass(frozen=True, slots=True)
class ShownHand:
    """A seat's cards at showdown with the hand's readable name."""

    seat: int
    cards: tuple[Card, ...]
    description: str


class GameEvent(NamedTuple):
    """A game event. ``card`` of a ``card_dealt_down`` is secret: public consumers
    must get the event without it (see :meth:`public_card`).

    A named tuple rather than a frozen dataclass: the engine makes one per card,
    and a frozen dataclass's ``__init__`` was a tenth of the engine's time.
    """

    kind: GameEventKind
    seat: int | None = None
    street: int | None = None
    card: Card | None = None
    text: str | None = None
    winners: tuple[int, ...] = ()
    shown: tuple[ShownHand, ...] = ()
    at: float = 0.0
    amount: int | None = None
    """``action`` events: the total the seat has put in this round after it."""
    manual: bool = False
    """Dealt cards: entered by hand for a tag no reader reads (issue 19)."""

    @property
    def public_card(self) -> Card | None:
        """The card as a public topic may show it: never a down card's identity,
        never a burned card (the burn pile is as secret as the deck)."""
        if self.kind in (GameEventKind.CARD_DEALT_DOWN, GameEventKind.CARD_BURNED):
            return None
        return self.card


class ReplyCode(StrEnum):
    """Every code a console reply can carry (docs/console.md's table): one vocabulary.

    String-valued, so the wire is exactly the plain strings it always was.
    """

    # The engine's (a rejected input changes nothing).
    UNKNOWN_SEAT = "unknown_seat"
    """A seat not in the hand (the daemon: a seat this table does not have)."""
    OUT_OF_TURN = "out_of_turn"
    ILLEGAL_BET = "illegal_bet"
    ILLEGAL_ACTION = "illegal_action"
    HAND_OVER = "hand_over"
    HAND_IN_PROGRESS = "hand_in_progress"
    NO_BETTING_ROUND = "no_betting_round"
    BAD_STACKS = "bad_stacks"
    # The daemon's, before the engine.
    BAD_JSON = "bad_json"
    UNKNOWN_COMMAND = "unknown_command"
    INVALID_COMMAND = "invalid_command"
    BAD_RESPONSE_TOPIC = "bad_response_topic"
    BUSY = "busy"
    JOURNAL_UNAVAILABLE = "journal_unavailable"
    CARD_SEEN = "card_seen"
    """A manual ``card`` for a card the readers see, or one already on the table."""
    INTERNAL_ERROR = "internal_error"
    """The engine gave no answer to a console input: a defect, reported rather than
    guessed at (the command may or may not have been applied; ``status`` tells)."""
    # The floor's commands (ack, resolve, dealer; docs/console.md "Alerts and the dealer").
    UNKNOWN_ALERT = "unknown_alert"
    ALERT_RESOLVED = "alert_resolved"
    ALERT_ACKNOWLEDGED = "alert_acknowledged"
    NO_DEALER = "no_dealer"


class ConsoleResult(NamedTuple):
    """The engine's answer to a console input (hand start, action, ruling, end):
    accepted, or rejected with a stable ``code`` and a message for the console.
    A rejected input changes nothing."""

    accepted: bool
    code: str | None = None
    """A :class:`ReplyCode` when rejected (a plain ``str`` subtype: the wire is the same)."""
    message: str = ""


EngineOutput = Alert | Notice | GameEvent | ConsoleResult
"""Everything :meth:`DealingEngine.apply` returns."""
