"""Alerts and notices: stable codes, the seed rule each comes from, dealer messages.

An **alert** is for a person who must act: something went wrong at the table
(a dealing error, a console input refused) and the dealer or the floor has to
look at it. A **notice** is what the engine observed that needs no action: a
legal procedure the dealer announces (rule 15's community card), a legal but
noteworthy play (rule 19: a call into a hand already beaten on board, rule 10:
a fold by picking up the up cards). A legal hand dealt and played correctly
raises no alert; it may raise notices (CONFORMANCE.md). Which codes are notices
is decided in one place, :data:`NOTICE_CODES`; docs/engine.md lists the decision
and its reason per code.

Codes are a public contract (CONFORMANCE.md): consumers match on them, so a
code is never renamed. Messages are for people and may improve over time.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Final


class AlertCode(StrEnum):
    """Every alert or notice the engine can raise. Values are the stable wire codes."""

    TOO_MANY_CARDS = "too_many_cards"
    SHORT_HAND = "short_hand"
    HOLE_CARD_EXPOSED = "hole_card_exposed"
    BOTH_HOLE_CARDS_EXPOSED = "both_hole_cards_exposed"
    UPCARD_DEALT_DOWN = "upcard_dealt_down"
    LAST_CARD_EXPOSED = "last_card_exposed"
    MISSING_BURN = "missing_burn"
    EXTRA_BURN = "extra_burn"
    PREMATURE_DEAL = "premature_deal"
    OUT_OF_ORDER = "out_of_order"
    CARD_TO_INACTIVE_SEAT = "card_to_inactive_seat"
    UNKNOWN_CARD = "unknown_card"
    DUPLICATE_CARD = "duplicate_card"
    CARD_FROM_MUCK = "card_from_muck"
    COMMUNITY_CARD = "community_card"
    WRONG_BRING_IN = "wrong_bring_in"
    OUT_OF_TURN = "out_of_turn"
    ILLEGAL_BET = "illegal_bet"
    # Beyond the contract's minimum list:
    MISDEAL = "misdeal"
    """Tournament profile: a down card dealt face up is a misdeal (rule 5)."""
    ILLEGAL_ACTION = "illegal_action"
    """A console action the betting state does not allow (e.g. check facing a bet)."""
    UPCARDS_LIFTED = "upcards_lifted"
    """Rule 10: a player picked up the up cards while facing a bet: a fold."""
    BEATEN_ON_BOARD = "beaten_on_board"
    """Rule 19: a call into a hand already beaten by an opponent's board."""
    UNEXPECTED_BOARD_CARD = "unexpected_board_card"
    """A card lands in the centre when no community card belongs there (rule 15)."""


RULE_OF: dict[AlertCode, int | None] = {
    AlertCode.TOO_MANY_CARDS: 18,
    AlertCode.SHORT_HAND: 18,
    AlertCode.HOLE_CARD_EXPOSED: 5,
    AlertCode.BOTH_HOLE_CARDS_EXPOSED: 5,
    AlertCode.UPCARD_DEALT_DOWN: None,
    AlertCode.LAST_CARD_EXPOSED: 17,
    AlertCode.MISSING_BURN: 13,
    AlertCode.EXTRA_BURN: 13,
    AlertCode.PREMATURE_DEAL: 14,
    AlertCode.OUT_OF_ORDER: None,
    AlertCode.CARD_TO_INACTIVE_SEAT: 7,
    AlertCode.UNKNOWN_CARD: None,
    AlertCode.DUPLICATE_CARD: None,
    AlertCode.CARD_FROM_MUCK: None,
    AlertCode.COMMUNITY_CARD: 15,
    AlertCode.WRONG_BRING_IN: 9,
    AlertCode.OUT_OF_TURN: None,
    AlertCode.ILLEGAL_BET: 3,
    AlertCode.MISDEAL: 5,
    AlertCode.UNEXPECTED_BOARD_CARD: 15,
    AlertCode.ILLEGAL_ACTION: None,
    AlertCode.UPCARDS_LIFTED: 10,
    AlertCode.BEATEN_ON_BOARD: 19,
}
"""The seed rule number (RULES.md) each alert comes from by default."""

NOTICE_CODES: Final = frozenset(
    {
        AlertCode.COMMUNITY_CARD,
        AlertCode.BEATEN_ON_BOARD,
        AlertCode.UPCARDS_LIFTED,
    }
)
"""Codes the engine reports as notices, not alerts: nobody must act on them.

* ``community_card`` (rule 15): the deck is short and the dealer announces a
  community card (rule 12): a correct procedure, not a mistake.
* ``beaten_on_board`` (rule 19): a legal call; the rule only says the caller has
  no claim to the money back.
* ``upcards_lifted`` (rule 10): picking up the up cards facing a bet *is* a fold;
  the engine has folded the hand already, as the rule says.
"""

SECRET_CODES: Final = frozenset({AlertCode.BEATEN_ON_BOARD})
"""Notices computed from a seat's down cards (rule 19 compares the caller's whole
hand with a board): they may go to the production room only, never to a public
topic or an info log."""


@dataclass(frozen=True, slots=True)
class _Finding:
    """What alerts and notices share: code, where, the seed rule and a message."""

    code: AlertCode
    seat: int | None
    street: int | None
    rule: int | None
    message: str
    at: float = 0.0

    def as_dict(self) -> dict[str, object]:
        """As in the CONFORMANCE.md report (``code`` as its string)."""
        return {
            "code": self.code.value,
            "seat": self.seat,
            "street": self.street,
            "rule": self.rule,
            "message": self.message,
        }


@dataclass(frozen=True, slots=True)
class Alert(_Finding):
    """One error at the table, for the dealer or floor supervisor who must act on it."""


@dataclass(frozen=True, slots=True)
class Notice(_Finding):
    """What the engine observed that needs no action (see :data:`NOTICE_CODES`).

    A sibling of :class:`Alert`, not a subclass: code that picks alerts out of
    the engine's outputs (``isinstance(output, Alert)``) never counts a notice.
    """

    @property
    def secret(self) -> bool:
        """Computed from down cards: production room only (:data:`SECRET_CODES`)."""
        return self.code in SECRET_CODES
