"""Hand readings in plain English, for commentators and broadcast overlays.

Two readings per seat: :func:`hand_reading`, the best hand its cards make now
("Two pair, kings and fives", "Seven-high straight", "Eight-six low") — it uses down
cards, so it belongs on secure topics only — and :func:`showing_reading`, what its
up cards show ("Pair of nines showing", "Ace-king high showing"), whose API takes
*only* up cards so it cannot leak a down card.

Every wording comes from one formatter, :func:`say`, over a :class:`Reading`:
which side (high or low), the category and the ranks that name it. Low hands are
ace-to-five (ace low; straights and flushes do not count; pairs count against):
``razz`` reads every hand as a low, ``stud8`` reads the high and the eight-or-better
low ("No low" when five different ranks of eight or lower are not there).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from table_controller.domain import _hand_tables as _t
from table_controller.domain.cards import RANK_NAMES, Card
from table_controller.domain.equity.evaluate import LOW_BASE, Game, best_low
from table_controller.domain.hands import HandCategory, evaluate, showing_value

__all__ = [
    "Reading",
    "current_value",
    "hand_reading",
    "high_reading",
    "low_reading",
    "say",
    "showing_reading",
]

_LOW_NAMES: Final = {1: ("ace", "aces"), **{r: RANK_NAMES[r] for r in range(2, 14)}}
"""Ace-low rank names (1 = ace .. 13 = king)."""


@dataclass(frozen=True, slots=True)
class Reading:
    """A hand before it is put into words.

    ``category`` is a :class:`HandCategory` (``None``: no qualifying low);
    ``ranks`` name it, most significant first: 2..14 for a high hand, 1..13 (ace
    low) for a low hand.
    """

    side: Literal["high", "low"]
    category: HandCategory | None
    ranks: tuple[int, ...]


def _one(rank: int, side: str) -> str:
    return (_LOW_NAMES if side == "low" else RANK_NAMES)[rank][0]


def _many(rank: int, side: str) -> str:
    return (_LOW_NAMES if side == "low" else RANK_NAMES)[rank][1]


def say(reading: Reading) -> str:
    """The one formatter: ``Two pair, kings and fives``, ``Eight-six low``, ``No low``."""
    side, ranks = reading.side, reading.ranks
    match reading.category:
        case None:
            text = "no low"
        case HandCategory.STRAIGHT_FLUSH if ranks[0] == _t.ACE:
            text = "royal flush"
        case HandCategory.STRAIGHT_FLUSH:
            text = f"{_one(ranks[0], side)}-high straight flush"
        case HandCategory.FOUR_OF_A_KIND:
            text = f"four of a kind, {_many(ranks[0], side)}"
        case HandCategory.FULL_HOUSE:
            text = f"full house, {_many(ranks[0], side)} full of {_many(ranks[1], side)}"
        case HandCategory.FLUSH:
            text = f"flush, {_one(ranks[0], side)} high"
        case HandCategory.STRAIGHT:
            text = f"{_one(ranks[0], side)}-high straight"
        case HandCategory.THREE_OF_A_KIND:
            text = f"three of a kind, {_many(ranks[0], side)}"
        case HandCategory.TWO_PAIR:
            text = f"two pair, {_many(ranks[0], side)} and {_many(ranks[1], side)}"
        case HandCategory.PAIR:
            text = f"pair of {_many(ranks[0], side)}"
        case _:  # no pair: the top two ranks, as a dealer reads a board or a low
            top = "-".join(_one(rank, side) for rank in ranks[:2])
            text = f"{top} low" if side == "low" else f"{top} high"
    return text[0].upper() + text[1:]


def _unpack(strength: int) -> tuple[HandCategory, tuple[int, ...]]:
    """Category and ranks of a packed value (high strength or packed low)."""
    slots = (strength >> shift & 0xF for shift in (16, 12, 8, 4, 0))
    return HandCategory(strength >> _t.CATEGORY_SHIFT), tuple(r for r in slots if r)


def high_reading(cards: Sequence[Card]) -> Reading:
    """The best high hand of 1 to 7 cards (with four or fewer no straight or flush exists)."""
    # Four or fewer cards: pairs, trips, quads, then high cards (the board ranking).
    strength = evaluate(cards).strength if len(cards) >= 5 else showing_value(cards).strength
    category, ranks = _unpack(strength)
    return Reading("high", category, ranks)


def low_reading(cards: Sequence[Card], *, eight_or_better: bool) -> Reading:
    """The best ace-to-five low of 1 to 7 cards (eight or better: ``None`` category if none)."""
    score, _ = best_low([card.rank for card in cards], eight_or_better=eight_or_better)
    if eight_or_better and (score <= 0 or len(cards) < 5):
        return Reading("low", None, ())
    category, ranks = _unpack(LOW_BASE - score)
    return Reading("low", category, ranks)


def hand_reading(cards: Sequence[Card], game: Game) -> str:
    """The best hand a seat's cards (down and up) make now, in words. Secure use only.

    ``stud8`` reads both halves: ``Pair of nines; Eight-six low`` or ``...; No low``.
    """
    return "; ".join(_parts(cards, game, name_no_low=True))


def showing_reading(up_cards: Sequence[Card], game: Game) -> str:
    """What a seat's up cards show, for the public view: ``Pair of nines showing``.

    Takes the up cards only. With four or fewer up cards possible straights and
    flushes are never named (rule 12); in ``stud8`` a low is named only when the up
    cards alone make one.
    """
    if not up_cards:
        return "Nothing showing"
    return ", ".join(f"{part} showing" for part in _parts(up_cards, game, name_no_low=False))


def _parts(cards: Sequence[Card], game: Game, *, name_no_low: bool) -> list[str]:
    if game is Game.RAZZ:
        return [say(low_reading(cards, eight_or_better=False))]
    parts = [say(high_reading(cards))]
    if game is Game.STUD8:
        low = low_reading(cards, eight_or_better=True)
        if low.category is not None or name_no_low:
            parts.append(say(low))
    return parts


def current_value(cards: Sequence[Card], game: Game) -> tuple[int, int]:
    """Scores of the hand as it stands (bigger is better): primary (high, or razz low)
    and the eight-or-better low (0: none; always 0 outside ``stud8``)."""
    if game is Game.RAZZ:
        return best_low([card.rank for card in cards], eight_or_better=False)[0], 0
    high = evaluate(cards).strength if len(cards) >= 5 else showing_value(cards).strength
    if game is Game.STUD8 and len(cards) >= 5:
        return high, best_low([card.rank for card in cards], eight_or_better=True)[0]
    return high, 0
