"""Dealing-error alerts: stable codes, the seed rule each comes from, dealer messages.

Codes are a public contract (CONFORMANCE.md): consumers match on them, so a
code is never renamed. Messages are for people and may improve over time.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class AlertCode(StrEnum):
    """Every alert the engine can raise. Values are the stable wire codes."""

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


@dataclass(frozen=True, slots=True)
class Alert:
    """One dealing error, as a dealer and a floor supervisor need it."""

    code: AlertCode
    seat: int | None
    street: int | None
    rule: int | None
    message: str
    at: float = 0.0

    def as_dict(self) -> dict[str, object]:
        """The alert as in the CONFORMANCE.md report (``code`` as its string)."""
        return {
            "code": self.code.value,
            "seat": self.seat,
            "street": self.street,
            "rule": self.rule,
            "message": self.message,
        }
