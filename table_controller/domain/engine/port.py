"""What the dealing tracker asks of the rules that need betting knowledge.

A hand either has a console (:class:`~table_controller.domain.engine.console.TableConsole`:
antes, bets, pots, and docs/rules.md rules 6, 7, 9, 10, 14, 18, 19) or it is card-only.
The dealing tracker never tests which: it asks :attr:`HandState.rules
<table_controller.domain.engine.hand.HandState.rules>`, which answers with the console or
with :data:`CARD_ONLY`, and calls the :class:`HandRules` methods below. The other
direction (what the console rules may do to the hand) is
:class:`~table_controller.domain.engine.console.HandPort`.

This module imports no other engine module but :mod:`.betting` (for the type
of the console's betting), so the dependency arrows stay one way:
``dealing -> console -> hand -> port``.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol

from table_controller.domain.cards import Card
from table_controller.domain.engine.betting import BettingHand
from table_controller.domain.events import ConsoleAction, FloorRuling, HandEnded
from table_controller.domain.hands import HandValue
from table_controller.domain.zones import Zone

__all__ = ["CARD_ONLY", "CardOnlyRules", "ConsoleRules", "HandRules", "PotResult"]


class PotResult(NamedTuple):
    """Who the pots paid at a showdown: seats winning chips, and (stud8) the halves."""

    winners: list[int]
    winners_high: list[int]
    winners_low: list[int]


class HandRules(Protocol):
    """The rules a card alone cannot decide, as the dealing tracker asks them."""

    def street_dealt(self, street: int) -> None:
        """``street``'s deal is complete (its bring-in or high hand is known)."""
        ...

    def card_dealt(self, seat: int, card: Card, street: int) -> None:
        """A card for ``street`` reached ``seat`` (rule 14 checks the betting)."""
        ...

    def allowed_extra_burns(self, street: int) -> int:
        """Burns allowed for ``street`` beyond the one of rule 13 (rule 14)."""
        ...

    def card_left(self, card: Card, zone: Zone, owner: int) -> bool:
        """``owner``'s card left ``zone``; True if it is now out of play (rule 14)."""
        ...

    def may_receive_after_fold(self, seat: int) -> bool:
        """Rule 7: whether a folded seat is still to be dealt to."""
        ...

    def seat_out(self, seat: int, reason: str) -> None:
        """The cards killed or folded ``seat`` (muck, rule 5, 18...)."""
        ...

    def is_ruled_live(self, seat: int) -> bool:
        """Rule 18: the floor ruled ``seat``'s short hand live."""
        ...

    @property
    def pays_pots(self) -> bool:
        """Whether the pots (not the cards alone) decide who wins, still unpaid."""
        ...

    @property
    def folds_from_cards(self) -> bool:
        """Whether cards leaving the table tell folds and missing cards (card-only
        hands, docs/conformance.md "Reads that fail"); a console enters folds itself and
        judges cards picked up by rule 10."""
        ...

    def open_round(self) -> int | None:
        """The street whose betting round is open now, or None."""
        ...

    def showdown(self, values: dict[int, HandValue], lows: dict[int, int] | None
                 ) -> PotResult | None:
        """Pay the pots from the showdown values; None when the pots do not decide."""
        ...


class ConsoleRules(HandRules, Protocol):
    """A hand's console as readers outside the engine see it: its betting too."""

    betting: BettingHand
    betting_known: bool
    """False while only floor rulings reached a card-only hand: no betting is keyed."""

    def apply(self, event: ConsoleAction | FloorRuling | HandEnded) -> None:
        """Apply one console input (exactly one console result)."""
        ...


class CardOnlyRules:
    """:class:`HandRules` of a hand without console input: the cards decide alone.

    Without betting knowledge the engine cannot tell a fold with nothing to call
    (rule 7) from one facing a bet, so a folded seat dealt to in turn is fine.
    """

    __slots__ = ()

    def street_dealt(self, street: int) -> None:
        """No betting round to open."""

    def card_dealt(self, seat: int, card: Card, street: int) -> None:
        """No betting round for a card to come early in."""

    def allowed_extra_burns(self, street: int) -> int:
        """No premature deal (rule 14) without betting: no extra burn."""
        return 0

    def card_left(self, card: Card, zone: Zone, owner: int) -> bool:
        """A card leaving its zone is never out of play without betting."""
        return False

    def may_receive_after_fold(self, seat: int) -> bool:
        """Rule 7 may apply to any fold: a card in turn is accepted."""
        return True

    def seat_out(self, seat: int, reason: str) -> None:
        """No bets to take the seat out of."""

    def is_ruled_live(self, seat: int) -> bool:
        """Only a console ruling makes a short hand live."""
        return False

    @property
    def pays_pots(self) -> bool:
        """No pots: the best hand, or the last seat standing, wins."""
        return False

    @property
    def folds_from_cards(self) -> bool:
        """Only the cards tell a fold: a seat whose cards all left has folded."""
        return True

    def open_round(self) -> int | None:
        """No betting round."""
        return None

    def showdown(self, values: dict[int, HandValue], lows: dict[int, int] | None
                 ) -> PotResult | None:
        """The cards decide: the dealing tracker compares the hands."""
        return None


CARD_ONLY = CardOnlyRules()
"""The card-only rules, shared by every hand without a console (it holds no state)."""
