"""Virtual players who bet through the dealer's console, seeded and pure.

Theory of operation
-------------------
:class:`BettingPlayers` is the :class:`~.physical.RoundHook` the virtual dealer
calls after each street's deal. It keeps its own
:class:`~table_controller.domain.engine.betting.BettingHand` (the engine's pure
betting rules, used as a library: the players only ever choose among its
``legal_actions()``) and opens each round the way a dealer announces it:

* 3rd street: the lowest upcard brings it in (``bring_in_tiebreak``); if that
  player is all-in for the ante the next player to the left may fold, bring it
  in or complete (rule 8);
* 4th-7th street: the highest hand showing (the community card counts on 7th
  street, rule 15); the open-pair option on 4th street (rule 4).

At each decision a player draws an action with weights that look like a
fixed-limit game: mostly calls and checks, some bets and raises, some folds
facing a bet, and all-ins from short stacks. A player whose hand is already
beaten on board mostly folds, but sometimes calls anyway (:data:`CALL_BEATEN`:
legal, a rule-19 notice). Nobody folds when they could check (a fold with
nothing to call keeps receiving cards under rule 7, which a virtual dealer
following the muck would get wrong). Every action becomes a
:class:`~table_controller.domain.events.ConsoleAction` in the hand's events. A fold's
cards go to the muck right after it, or, as at a real table where the dealer
pulls the cards in before the operator keys the fold, just before it
(:data:`MUCK_BEFORE_FOLD`; sometimes the up cards first, rule 10). A street is
dealt only once its round is complete; when at most one player has chips left
the remaining streets are dealt with no betting.

At showdown the pots are paid on the players' own copy of the betting; the
seats that win nothing muck their cards (in showdown order) and the dealer
closes the hand with the console's ``end`` (:class:`HandEnded`).

Each decision is recorded (:class:`Decision`) so that console errors can be
injected at a real decision point afterwards (:mod:`.console_errors`).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from table_controller.domain.cards import Card
from table_controller.domain.engine.betting import BettingHand, BettingStructure, LegalAction
from table_controller.domain.engine.pots import odd_chip_order
from table_controller.domain.engine.settings import TableSettings
from table_controller.domain.engine.variants import (
    Showdown,
    Variant,
    bring_in_card,
    bring_in_of,
    low_value_of,
    primary_value,
    showing_key,
    variant,
)
from table_controller.domain.events import BetAction, ConsoleAction, HandEnded
from table_controller.domain.hands import HandCategory, HandValue, evaluate, showing_value
from table_controller.simulation.physical import DealerTable, PhysicalDeal, deal_random

SHORT_STACK_CHANCE: Final = 0.2
"""Chance that a player sits with a short stack (a few bets or less)."""

FOLD_FACING: Final = 0.12
"""Chance of folding when facing a bet."""

WAGER_FACING: Final = 0.15
"""Chance of raising when facing a bet (if a raise is allowed)."""

WAGER_OPEN: Final = 0.3
"""Chance of betting when nobody has (if a bet is allowed)."""

COMPLETE_BRING_IN: Final = 0.25
"""Chance that the bring-in player completes instead of bringing it in."""

ALL_IN_SHORT: Final = 0.35
"""Chance that a short stack shoves when all-in is a legal action."""

CALL_BEATEN: Final = 0.3
"""Chance that a player whose hand is already beaten on board calls anyway (rule 19:
legal, no claim to the money back; the engine reports a notice)."""

MUCK_BEFORE_FOLD: Final = 0.5
"""Chance that a folding player's cards reach the muck before the console's fold."""

UP_CARDS_FIRST: Final = 0.5
"""Of those, the chance that the up cards are picked up first (rule 10: a fold)."""


@dataclass(frozen=True, slots=True)
class Decision:
    """One betting decision: where its action lies in the hand's events and the
    situation the player faced (what console errors are injected against)."""

    index: int
    """Index of the :class:`ConsoleAction` in the hand's events."""
    start: int
    """Index of the decision's first event: the action's, or the first card of a
    fold mucked before the operator keyed it (console errors go in before it)."""
    seat: int
    street: int
    legal: tuple[LegalAction, ...]
    waiting: tuple[int, ...]
    """The other live seats (any of them acting now would be out of turn)."""
    stack: int
    """The seat's chips behind before acting."""
    bet: int
    """The seat's bet this round before acting."""
    forced_bring_in: bool
    """The first decision of 3rd street, with the bring-in forced on this seat."""
    ends_round: bool
    """This action completed the betting round (or ended the hand)."""


def random_stacks(seats: tuple[int, ...], rng: random.Random, big_bet: int) -> dict[int, int]:
    """Chips behind each seat after the ante: mostly 3 to 30 big bets, sometimes a
    short stack of at most two big bets (zero: all-in for the ante, rule 8)."""
    stacks = {}
    for seat in seats:
        if rng.random() < SHORT_STACK_CHANCE:
            stacks[seat] = rng.randint(0, 2 * big_bet)
        else:
            stacks[seat] = rng.randint(3 * big_bet, 30 * big_bet)
    return stacks


@dataclass(slots=True)
class BettingPlayers:
    """The players of one hand (module docstring); a :class:`RoundHook`."""

    seats: tuple[int, ...]
    rng: random.Random
    settings: TableSettings = field(default_factory=TableSettings)
    folding: bool = True
    """False: nobody folds (hands that must reach 7th street)."""
    chips: dict[int, int] = field(default_factory=dict)
    betting: BettingHand = field(init=False)
    decisions: list[Decision] = field(default_factory=list)

    variant: Variant = field(init=False)
    """The game's choices (docs/rules.md "Variants"), from ``settings.game``."""

    def __post_init__(self) -> None:
        self.variant = variant(self.settings.game)
        if not self.chips:
            self.chips = random_stacks(self.seats, self.rng, self.settings.big_bet)
        self.betting = BettingHand(
            self.chips, BettingStructure.from_settings(self.settings), stacks_after_ante=True
        )

    # ------------------------------------------------------------ the hook

    def stacks(self) -> Mapping[int, int]:
        """Chips behind each seat after the ante."""
        return dict(self.chips)

    def hand_over(self) -> bool:
        """Everyone but one player folded."""
        return self.betting.hand_over

    def betting_round(self, street: int, dealer: DealerTable) -> None:
        """Open ``street``'s round as the dealer announces it and play it out."""
        betting = self.betting
        if betting.hand_over or betting.betting_closed:
            return
        live = [s for s in dealer.live() if s in betting.live_seats]
        opener, optional = self._opener(street, live, dealer)
        if opener is None:
            return
        open_pair = street == 4 and self.variant.open_pair_rule and any(
            showing_value(list(dealer.up_cards(s))).category >= HandCategory.PAIR
            for s in live if dealer.up_cards(s)
        )
        if not betting.can_start_street(
            street, opener, open_pair=open_pair, bring_in_optional=optional
        ):
            return
        betting.start_street(street, opener, open_pair=open_pair, bring_in_optional=optional)
        first = True
        while not betting.round_complete and not betting.hand_over:
            seat = betting.to_act
            assert seat is not None
            legal = betting.legal_actions()
            stack, bet = betting.stacks[seat], betting.bets[seat]
            forced = first and street == 3 and not any(a.action == "fold" for a in legal)
            beaten = self._beaten_on_board(seat, live, dealer)
            action, amount = self._choose(legal, stack, beaten)
            muck_first = action == "fold" and self.rng.random() < MUCK_BEFORE_FOLD
            start = None
            if muck_first:
                # The dealer pulls the cards in before the operator keys the fold.
                up_first = self.rng.random() < UP_CARDS_FIRST
                start = dealer.muck(seat, street, up_first=up_first)
            index = dealer.emit(ConsoleAction(seat, BetAction(action), amount))
            betting.act(seat, BetAction(action), amount)
            waiting = tuple(s for s in betting.live_seats if s != seat)
            ends = betting.round_complete or betting.hand_over
            self.decisions.append(Decision(
                index, index if start is None else start, seat, street, legal, waiting,
                stack, bet, forced, ends,
            ))
            if action == "fold" and not muck_first:
                dealer.muck(seat, street)  # the folded cards go to the muck at once
            first = False

    def finish(self, dealer: DealerTable) -> tuple[Decision, ...]:
        """Showdown: the seats that win nothing muck; then the console's ``end``."""
        betting = self.betting
        if not betting.hand_over:
            values: dict[int, HandValue] = {}
            lows: dict[int, int] | None = {} if self.variant.split_pot else None
            for seat in betting.live_seats:
                cards = list(dealer.cards_of(seat))
                if dealer.community is not None:
                    cards.append(dealer.community)
                if 5 <= len(cards) <= 7:
                    values[seat] = primary_value(self.variant, cards)
                    if lows is not None:
                        lows[seat] = low_value_of(cards, eight_or_better=True)
            if betting.can_award(values):
                order = betting.showdown_order()
                cards_by_seat = {s: dealer.cards_of(s) for s in betting.live_seats}
                betting.award(values, odd_chip_order(cards_by_seat), lows)
                won = betting.winnings
                for seat in order:
                    if won[seat] == 0:
                        dealer.muck(seat, 7)
        dealer.emit(HandEnded())
        return tuple(self.decisions)

    # ----------------------------------------------------------- decisions

    def _opener(
        self, street: int, live: list[int], dealer: DealerTable
    ) -> tuple[int | None, bool]:
        """Who opens ``street``'s round, and whether the bring-in is optional."""
        if street == 3:
            candidates: dict[int, Card] = {
                s: bring_in_card(self.variant, dealer.up_cards(s))
                for s in live if dealer.up_cards(s)
            }
            if not candidates:
                return None, False
            low = bring_in_of(self.variant, candidates, live,
                              self.settings.rules.bring_in_tiebreak)
            if self.chips[low] == 0:
                # Rule 8: all-in for the ante; the next player to the left acts first.
                later = [s for s in live if s > low]
                return (later[0] if later else live[0]), True
            return low, False
        keys = {}
        for seat in live:
            up = list(dealer.up_cards(seat))
            if street == 7 and dealer.community is not None:
                up.append(dealer.community)
            if up:
                keys[seat] = showing_key(self.variant, up)
        if not keys:
            return None, False
        return max((s for s in live if s in keys), key=keys.__getitem__), False

    def _beaten_on_board(self, seat: int, live: list[int], dealer: DealerTable) -> bool:
        """Whether an opponent's up cards already beat ``seat``'s whole hand (rule 19)."""
        cards = list(dict.fromkeys(dealer.cards_of(seat)))
        if len(cards) < 5 or self.variant.showdown is not Showdown.HIGH:
            return False  # the engine's rule-19 notice is for high-only games
        mine = evaluate(cards[:7]).strength
        return any(
            showing_value(list(dealer.up_cards(other))).strength > mine
            for other in live
            if other != seat and other in self.betting.live_seats and dealer.up_cards(other)
        )

    def _choose(
        self, legal: tuple[LegalAction, ...], stack: int, beaten: bool
    ) -> tuple[str, int | None]:
        """One action among ``legal`` with the weights of the module docstring.

        A player whose hand is already beaten on board (rule 19) mostly does not
        call: folds, or, when folding is off and only two seats are left, raises
        if it may (else calls after all); with :data:`CALL_BEATEN` it calls.
        """
        rng = self.rng
        names = {a.action: a for a in legal}
        wager = next((a for a in legal if a.action in ("complete", "bet", "raise")), None)
        if beaten and "call" in names and rng.random() < CALL_BEATEN:
            return "call", None  # legal: rule 19 only says no claim to the money back
        if beaten and "call" in names:
            if self.folding or len(self.betting.live_seats) > 2:
                return "fold", None  # without folds, still two seats reach 7th street
            if wager is not None:
                return self._wager(wager)
            return "call", None
        short = stack <= 2 * self.settings.big_bet
        if "allin" in names and short and not beaten and rng.random() < ALL_IN_SHORT:
            return "allin", None
        if "bring_in" in names:
            if "fold" in names and self.folding and rng.random() < FOLD_FACING:
                return "fold", None  # rules 5 and 8: the bring-in is optional
            if wager is not None and rng.random() < COMPLETE_BRING_IN:
                return self._wager(wager)
            return "bring_in", None
        if "check" in names:
            if wager is not None and rng.random() < WAGER_OPEN:
                return self._wager(wager)
            return "check", None
        draw = rng.random()
        if self.folding and draw < FOLD_FACING:
            return "fold", None
        if wager is not None and draw < FOLD_FACING + WAGER_FACING:
            return self._wager(wager)
        return "call", None

    def _wager(self, wager: LegalAction) -> tuple[str, int | None]:
        """A bet, raise or completion; half the time the console gets the amount."""
        total = self.rng.choice(wager.totals)
        if len(wager.totals) == 1 and self.rng.random() < 0.5:
            return wager.action, None  # the fixed-limit size applies
        return wager.action, total


def deal_betting(
    seats: tuple[int, ...],
    rng: random.Random,
    settings: TableSettings | None = None,
    *,
    folding: bool = True,
    hand_id: int | None = None,
) -> PhysicalDeal:
    """One hand dealt by the virtual dealer to players who bet (``folding=False``:
    nobody folds). The deal carries the stacks and every decision made;
    ``hand_id`` numbers its ``HandStarted``."""
    settings = settings or TableSettings()
    players = BettingPlayers(tuple(sorted(seats)), rng, settings, folding=folding)
    return deal_random(seats, rng, rules=settings.rules, betting=players, hand_id=hand_id)
