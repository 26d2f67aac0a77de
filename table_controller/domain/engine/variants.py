"""The stud games as data: Seven Card Stud, Razz and Stud Hi-Lo (docs/rules.md "Variants").

The three games share the physical deal and the dealing rules (5, 7, 11-18); they
differ only in the few choices a :class:`Variant` states, the way PokerKit states a
variant (``FixedLimitSevenCardStud``, ``FixedLimitRazz``,
``FixedLimitSevenCardStudHighLowSplitEightOrBetter``):

* **bring-in** (rule 1): the lowest upcard (stud, stud8: deuce low, ace high; ties
  to the lowest suit) or the highest (razz: king high, ace low; ties to the highest
  suit, spades);
* **first to act** on 4th-7th street (rule 1): the highest hand showing (stud,
  stud8) or the lowest, ace-to-five (razz); ties by position in every game;
* **open pair** (rule 4): the small-or-big-bet option on 4th street (stud,
  stud8; not razz);
* **showdown**: the best high hand (stud), the best ace-to-five low (razz), or the
  pot split between the best high and the best eight-or-better low, the high hand
  scooping when no low qualifies (stud8; the odd chip to the high half).

The engine asks :func:`variant` for these and never tests the game itself. Pure:
no I/O, no clock.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

from table_controller.domain._hand_tables import CATEGORY_SHIFT
from table_controller.domain.cards import Card, Suit
from table_controller.domain.hands import (
    LOW_BASE,
    Game,
    HandValue,
    ShowingValue,
    describe,
    describe_showing_value,
    evaluate,
    low_score,
    low_showing,
    showing_value,
)
from table_controller.domain.hands import warm_up as warm_up_high

__all__ = [
    "VARIANTS",
    "Game",
    "Showdown",
    "Variant",
    "bring_in_card",
    "bring_in_of",
    "describe_hand",
    "describe_low",
    "describe_showing",
    "key_has_pair",
    "low_value_of",
    "primary_value",
    "showing_key",
    "variant",
    "warm_up",
]

BringInTiebreak = Literal["suit", "position"]


class Showdown(StrEnum):
    """How a variant's showdown is evaluated."""

    HIGH = "high"
    """Best five-card poker hand."""
    LOW_A5 = "low_a5"
    """Best ace-to-five low (aces low, straights and flushes ignored, pairs bad)."""
    HIGH_LOW8 = "high_low8"
    """Pot split: best high and best eight-or-better low; no low, high scoops."""


@dataclass(frozen=True, slots=True)
class Variant:
    """One stud game as data (see the module docstring)."""

    game: Game
    name: str
    """The game's name as people say it (reports, readable summaries)."""
    phh: str
    """The PHH variant code (``F7S``, ``FR``, ``F7S/8``)."""
    bring_in_highest: bool
    """Rule 1: the highest upcard brings in (razz) rather than the lowest."""
    ace_low: bool
    """For the bring-in card: the ace is the lowest rank (razz) rather than the highest."""
    first_to_act_low: bool
    """Later streets: the lowest hand showing acts first (razz) rather than the highest."""
    open_pair_rule: bool
    """Rule 4 applies: a pair showing on 4th street allows the big bet."""
    showdown: Showdown

    @property
    def split_pot(self) -> bool:
        """Pots are split between a high and a low half (stud8)."""
        return self.showdown is Showdown.HIGH_LOW8


VARIANTS: Mapping[Game, Variant] = {
    Game.STUD: Variant(Game.STUD, "Seven Card Stud", "F7S", bring_in_highest=False,
                       ace_low=False, first_to_act_low=False, open_pair_rule=True,
                       showdown=Showdown.HIGH),
    Game.RAZZ: Variant(Game.RAZZ, "Razz", "FR", bring_in_highest=True, ace_low=True,
                       first_to_act_low=True, open_pair_rule=False,
                       showdown=Showdown.LOW_A5),
    Game.STUD8: Variant(Game.STUD8, "Seven Card Stud Hi-Lo, eight or better", "F7S/8",
                        bring_in_highest=False, ace_low=False, first_to_act_low=False,
                        open_pair_rule=True, showdown=Showdown.HIGH_LOW8),
}
"""Every game's variant."""


def variant(game: Game | str) -> Variant:
    """The :class:`Variant` of ``game`` (``stud``, ``razz`` or ``stud8``).

    Raises ``ValueError`` for another name.
    """
    return VARIANTS[Game(game)]


def _card_key(v: Variant, card: Card) -> tuple[int, int]:
    """A card's bring-in order in ``v``: rank (the ace lowest in razz), then suit."""
    rank = 1 if v.ace_low and card.rank == 14 else card.rank
    return rank, int(card.suit)


def bring_in_card(v: Variant, up_cards: Sequence[Card]) -> Card:
    """The card of one seat that counts for the bring-in: its lowest upcard (stud,
    stud8) or its highest (razz). ``up_cards`` must not be empty."""
    if v.bring_in_highest:
        return max(up_cards, key=lambda card: _card_key(v, card))
    return min(up_cards, key=lambda card: _card_key(v, card))


def bring_in_of(
    v: Variant,
    cards_by_seat: Mapping[int, Card],
    seat_order: Sequence[int],
    tiebreak: BringInTiebreak,
) -> int:
    """The seat that must bring it in (rule 1; razz: docs/rules.md "Variants").

    Stud and stud8: the lowest card, deuce low and ace high; razz: the highest,
    king high and ace low. Equal ranks: ``tiebreak="suit"`` gives it to the lowest
    suit (stud) or the highest suit (razz: spades); ``"position"`` to the seat
    first in ``seat_order`` (nearest the dealer's left) in every game.
    """
    if not cards_by_seat:
        raise ValueError("no seats to choose from")
    position = {seat: i for i, seat in enumerate(seat_order)}
    missing = sorted(set(cards_by_seat) - set(position))
    if missing:
        raise ValueError(f"seats {missing} are not in the seat order {list(seat_order)}")
    sign = -1 if v.bring_in_highest else 1

    def key(seat: int) -> tuple[int, int]:
        rank, suit = _card_key(v, cards_by_seat[seat])
        second = sign * suit if tiebreak == "suit" else position[seat]
        return sign * rank, second

    return min(cards_by_seat, key=key)


def showing_key(v: Variant, up_cards: Sequence[Card]) -> int:
    """How good a board is for acting first: the biggest key acts first.

    Stud, stud8: the high hand showing (``showing_value``); razz: the lowest
    ace-to-five hand showing (``low_showing``, bigger is a better low). Suits
    never count; equal keys are ties that position breaks (rule 1).
    """
    if v.first_to_act_low:
        return low_showing(up_cards)
    return showing_value(up_cards).strength


def describe_showing(
    v: Variant,
    up_cards: Sequence[Card],
    high: ShowingValue | None = None,
    low_key: int | None = None,
) -> str:
    """What the dealer announces for a board (rule 12): ``pair of nines``,
    ``ace-king high``; in razz the low showing, ``seven-four low``. ``high``: the
    board's :func:`showing_value` and ``low_key`` its razz :func:`showing_key`,
    when the caller knows them already."""
    if v.first_to_act_low and len(up_cards) <= 4:
        key = low_showing(up_cards) if low_key is None else low_key
        if not key_has_pair(key):
            return _describe_low_score(key, False)
    # A high board, or a pair or more showing: named as such in razz too.
    return describe_showing_value(high if high is not None else showing_value(up_cards))


def key_has_pair(low_key: int) -> bool:
    """Whether a razz board's :func:`showing_key` (its ace-to-five reading) shows a
    pair or more: what rule 12 announces in every game."""
    return (LOW_BASE - low_key) >> CATEGORY_SHIFT > 0


_LOW_NAMES = {1: "ace", 2: "deuce", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven",
              8: "eight", 9: "nine", 10: "ten", 11: "jack", 12: "queen", 13: "king"}


LOW_TEXT_CACHE_SIZE = 16_384
"""Room for the words of every low score (6,175 five-card rank multisets, each with
and without eight-or-better) and of every unpaired razz board (1,092), whose
:func:`low_showing` key is packed the same way."""


def describe_low(cards: Sequence[Card]) -> str:
    """An unpaired ace-to-five low by its top two ranks: ``seven-four low``, ``king low``."""
    ranks = sorted({1 if card.rank == 14 else card.rank for card in cards}, reverse=True)
    top = ranks[:2] if len(ranks) > 1 else ranks
    return "-".join(_LOW_NAMES[rank] for rank in top) + " low"


def low_value_of(cards: Sequence[Card], *, eight_or_better: bool) -> int:
    """The best ace-to-five low of 5 to 7 cards (bigger is better; with
    ``eight_or_better`` 0 is no qualifying low)."""
    return low_score(tuple(sorted([card.rank for card in cards])), eight_or_better)


def primary_value(v: Variant, cards: Sequence[Card]) -> HandValue:
    """The value that wins the pot (stud, razz) or its high half (stud8), as a
    :class:`HandValue` so the pots code compares every game alike: the high hand,
    or in razz the ace-to-five low (a bigger strength is a better low)."""
    if v.showdown is Showdown.LOW_A5:
        return HandValue(low_value_of(cards, eight_or_better=False))
    return evaluate(cards)


def describe_hand(v: Variant, cards: Sequence[Card], value: HandValue | None = None) -> str:
    """What a dealer says at showdown for 5 to 7 cards: ``kings full of fours``;
    razz ``seven-five low``; stud8 both halves, ``flush, ace high; eight-six low``
    (or ``...; no low``). ``value``: the cards' :func:`primary_value`, when known."""
    if v.showdown is Showdown.HIGH:
        return describe(value if value is not None else evaluate(cards))
    eight = v.showdown is Showdown.HIGH_LOW8
    # From the cached score, not a search: its packed ranks name the low (in razz
    # the primary value is that score already).
    score = (value.strength if value is not None and not eight
             else low_value_of(cards, eight_or_better=eight))
    low = _describe_low_score(score, eight)
    if not eight:
        return low
    return f"{describe(value if value is not None else evaluate(cards))}; {low}"


@functools.lru_cache(maxsize=LOW_TEXT_CACHE_SIZE)
def _describe_low_score(score: int, eight: bool) -> str:
    """The words for a low score (:func:`low_value_of`) or a razz board's
    :func:`low_showing` key: ``seven-four low``, ``paired low, ...``, ``no low``."""
    if eight and score <= 0:
        return "no low"
    packed = LOW_BASE - score
    ranks = [rank for rank in (packed >> shift & 0xF for shift in (16, 12, 8, 4, 0)) if rank]
    if packed >> CATEGORY_SHIFT == 0:  # no pair: the top two ranks, as a dealer reads a low
        return "-".join(_LOW_NAMES[rank] for rank in ranks[:2]) + " low"
    return "paired low, " + "-".join(_LOW_NAMES[rank] for rank in ranks)


def warm_up() -> None:
    """:func:`~table_controller.domain.hands.warm_up` (the evaluator's tables, the
    board cache and the high hands' words) plus the words of every low and every
    unpaired razz board: filled at start-up, not hand by hand, so a long-running
    daemon's memory stays flat whatever game it deals (issue 9 item 26)."""
    warm_up_high()
    for size in range(1, 5):
        for ranks in itertools.combinations(range(2, 15), size):
            key = low_showing([Card(rank, Suit.CLUBS) for rank in ranks])
            _describe_low_score(key, False)
    for ranks in itertools.combinations_with_replacement(range(2, 15), 5):
        if ranks[0] != ranks[4]:  # (sorted: five of one rank is the one impossible hand)
            for eight in (False, True):
                _describe_low_score(low_score(ranks, eight), eight)
