"""Poker hands: showdown values, the hand showing on board, bring-in and first to act.

Showdown (docs/rules.md: best five of seven, ties split):
:func:`evaluate` gives a :class:`HandValue` for 5, 6 or 7 cards; bigger is better and
equal values split the pot. :func:`best_five` names the five cards that play and
:func:`describe` says the hand the way a dealer would ("kings full of fours").

Board (who acts first on 4th-7th street): :func:`showing_value` ranks the face-up
cards only, as poker hands without straights or flushes while four or fewer cards
show (the ranking PokerKit uses for Seven Card Stud, checked by a differential test);
:func:`first_to_act` picks the high hand, ties by position. :func:`bring_in_seat`
picks the low card on 3rd street.

Speed seam: :func:`batch_evaluate` evaluates many hands given as card indices
(``Card.index``, 0..51) and returns the same strength ints as
:attr:`HandValue.strength`. Anything matching :class:`BatchEvaluator` (a numpy table
lookup, a C extension) can replace it for live equity, provided it returns the same
ints; docs/evaluator.md describes the encoding and the contract.
"""

from __future__ import annotations

import functools
import itertools
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum, StrEnum
from itertools import combinations
from typing import Final, Literal, Protocol

from table_controller.domain import _hand_tables as _t
from table_controller.domain.cards import RANK_NAMES, Card, Suit

__all__ = [
    "LOW_BASE",
    "BatchEvaluator",
    "Game",
    "HandCategory",
    "HandValue",
    "ShowingValue",
    "batch_evaluate",
    "best_five",
    "best_low",
    "bring_in_seat",
    "describe",
    "describe_showing",
    "evaluate",
    "first_to_act",
    "low_score",
    "low_showing",
    "low_value",
    "showing_value",
]


class Game(StrEnum):
    """The stud games of docs/rules.md "Variants": one parameter of every evaluation."""

    STUD = "stud"
    RAZZ = "razz"
    STUD8 = "stud8"


class HandCategory(IntEnum):
    """Poker hand categories, low to high. A royal flush is an ace-high straight flush."""

    HIGH_CARD = _t.HIGH_CARD
    PAIR = _t.PAIR
    TWO_PAIR = _t.TWO_PAIR
    THREE_OF_A_KIND = _t.THREE_OF_A_KIND
    STRAIGHT = _t.STRAIGHT
    FLUSH = _t.FLUSH
    FULL_HOUSE = _t.FULL_HOUSE
    FOUR_OF_A_KIND = _t.FOUR_OF_A_KIND
    STRAIGHT_FLUSH = _t.STRAIGHT_FLUSH

    @property
    def label(self) -> str:
        """Lower-case English name, e.g. ``full house``."""
        return self.name.lower().replace("_", " ")


def _tie_ranks(strength: int) -> tuple[int, ...]:
    """The tie-break ranks stored in a strength int, most significant first."""
    slots = (strength >> shift & 0xF for shift in (16, 12, 8, 4, 0))
    return tuple(rank for rank in slots if rank)


class _Packed:
    """Read-outs of a packed strength int, shared by hand and showing values.

    Showing values hold only the ranks actually showing, and straights and
    flushes only with five or more cards up.
    """

    __slots__ = ()
    strength: int

    @property
    def category(self) -> HandCategory:
        """Which kind of hand this is."""
        return HandCategory(self.strength >> _t.CATEGORY_SHIFT)

    @property
    def ranks(self) -> tuple[int, ...]:
        """Ranks that break ties, most significant first (the pair or set first)."""
        return _tie_ranks(self.strength)


@dataclass(frozen=True, slots=True, order=True)
class HandValue(_Packed):
    """The showdown value of a hand: compare with ``<``/``==``; equal values split.

    ``strength`` is the packed int described in docs/evaluator.md (category in the
    high bits, then up to five tie-break ranks); it is also what
    :func:`batch_evaluate` returns.
    """

    strength: int

    def __str__(self) -> str:
        return describe(self)


@dataclass(frozen=True, slots=True, order=True)
class ShowingValue(_Packed):
    """The rank of the face-up cards alone, for choosing who acts first.

    Compare with ``<``/``==``; suits never enter it, so equal values are ties that
    position breaks (docs/rules.md). ``strength`` uses the same packing as
    :class:`HandValue`, with only the ranks actually showing.
    """

    strength: int


class BatchEvaluator(Protocol):
    """A backend that values many 5-7 card hands given as ``Card.index`` lists.

    It must return, per hand, the same int as ``evaluate(cards).strength``, so a
    fast backend is a drop-in replacement for :func:`batch_evaluate`.
    """

    def __call__(self, hands: Sequence[Sequence[int]], /) -> list[int]:
        """Return one strength int per hand, in order."""
        ...


# Module-level names: global lookups are cheaper than attribute lookups on _t.
_CODES = _t.CARD_CODES
_SUIT_SHIFT = _t.SUIT_SHIFT
_FLUSH_PROBE = _t.FLUSH_PROBE
_FLUSH_LANES = _t.FLUSH_LANES
_RANK_KEY_MASK = _t.RANK_KEY_MASK



def _flush_strength(hand: Sequence[int], total: int) -> int:
    """Strength of a hand whose summed codes ``total`` show five or more of one suit."""
    lanes = ((total >> _t.SUIT_SHIFT) + _t.FLUSH_PROBE) & _t.FLUSH_LANES
    suit = (lanes.bit_length() >> 2) - 1
    bits = _t.SUIT_RANK_BITS
    suit_ranks = sum([bits[i] for i in hand]) >> (16 * suit) & 0x1FFF
    return _t.flush_rank_value(suit_ranks)


def _strength(indices: Sequence[int]) -> int:
    """Strength of 5-7 distinct card indices (see ``_hand_tables`` for how)."""
    codes = _CODES
    if len(indices) == 7:
        a, b, c, d, e, f, g = indices
        total = codes[a] + codes[b] + codes[c] + codes[d] + codes[e] + codes[f] + codes[g]
    else:
        total = sum([codes[i] for i in indices])
    if ((total >> _SUIT_SHIFT) + _FLUSH_PROBE) & _FLUSH_LANES:
        return _flush_strength(indices, total)
    return _t.rank_value(total & _RANK_KEY_MASK)


def _code_sums(hands: Sequence[Sequence[int]]) -> list[int]:
    """Summed card codes per hand."""
    codes = _t.CARD_CODES
    try:
        # Seven-card hands are the common case; unpacking and indexing by hand is
        # about three times faster than sum(map(...)) in CPython.
        return [
            codes[a] + codes[b] + codes[c] + codes[d] + codes[e] + codes[f] + codes[g]
            for a, b, c, d, e, f, g in hands
        ]
    except ValueError:  # some hand is not seven cards: take the general path
        return [sum([codes[i] for i in hand]) for hand in hands]


def batch_evaluate(hands: Sequence[Sequence[int]]) -> list[int]:
    """Strength ints (see :attr:`HandValue.strength`) of many hands of card indices.

    The pure-Python :class:`BatchEvaluator`. For speed it does not validate: each
    hand must hold 5 to 7 *distinct* indices in 0..51 (use :func:`evaluate` for
    checked input).
    """
    rank_values = _t.tables().rank_multiset_values
    key_mask, shift, probe, lanes = (
        _t.RANK_KEY_MASK,
        _t.SUIT_SHIFT,
        _t.FLUSH_PROBE,
        _t.FLUSH_LANES,
    )
    sums = _code_sums(hands)
    # Every rank multiset is in the table, flush or not, so look all hands up in one
    # fast pass and then overwrite the few (about 3 % of 7-card hands) that are flushes.
    out = [rank_values[total & key_mask] for total in sums]
    for i, total in enumerate(sums):
        if ((total >> shift) + probe) & lanes:
            out[i] = _flush_strength(hands[i], total)
    return out


def _checked_indices(cards: Sequence[Card], low: int, high: int, what: str) -> list[int]:
    if not low <= len(cards) <= high:
        raise ValueError(f"{what} takes {low} to {high} cards, got {len(cards)}")
    indices = [card.index for card in cards]
    if len(set(indices)) != len(indices):
        codes = " ".join(card.code for card in cards)
        raise ValueError(f"{what}: the same card appears twice in {codes}")
    return indices


def warm_up() -> None:
    """Build the evaluation tables now (about 0.7 s, once per process) rather than at
    the first showdown, where a live table would publish its first result late.

    Also fills the board caches (:func:`_small_board`, and :func:`_low_board` for
    razz) with every board they can be asked about: 2,379 rank multisets of one to
    four cards each, about 0.4 MB a cache. Filled
    lazily it grew with every new board for thousands of hands, which in a
    long-running daemon looked exactly like memory lost per hand (issue 9 item 26).
    The dealer's words are cached the same way and filled here for the same reason:
    every five-card value (7,462) and every board, about 1 MB.
    """
    tables = _t.tables()
    for size in range(1, 5):
        for ranks in itertools.combinations_with_replacement(range(2, 15), size):
            # (At most four cards: no rank five times.) The razz reading of every
            # board too, the paired ones included: filled hand by hand they cost
            # razz a miss every few hands (issue 25) and grew as the boards did.
            _describe_showing(_small_board(ranks))
            _low_board(ranks)
    for strength in {*tables.rank_multiset_values.values(), *tables.flush_values} - {0}:
        _describe_strength(strength)  # at showdown
        _describe_showing(strength)  # five or more cards up (rules 15 and 17)


def evaluate(cards: Sequence[Card]) -> HandValue:
    """Value of the best five-card hand among 5, 6 or 7 distinct cards.

    Raises ``ValueError`` for another number of cards or a repeated card.
    """
    return HandValue(_strength(_checked_indices(cards, 5, 7, "evaluate")))


def _cards_for(value: int, cards: Sequence[Card]) -> tuple[Card, ...]:
    """Pick the five cards that make ``value`` out of ``cards``."""
    category = value >> _t.CATEGORY_SHIFT
    ranks = _tie_ranks(value)
    if category in (HandCategory.STRAIGHT, HandCategory.STRAIGHT_FLUSH):
        top = ranks[0]
        wanted = [(rank, 1) for rank in range(top, top - 5, -1)]
        if top == 5:  # the wheel: the ace plays low
            wanted[-1] = (_t.ACE, 1)
    elif category == HandCategory.FULL_HOUSE:
        wanted = [(ranks[0], 3), (ranks[1], 2)]
    elif category == HandCategory.FOUR_OF_A_KIND:
        wanted = [(ranks[0], 4), (ranks[1], 1)]
    elif category == HandCategory.THREE_OF_A_KIND:
        wanted = [(ranks[0], 3), *((rank, 1) for rank in ranks[1:])]
    elif category == HandCategory.TWO_PAIR:
        wanted = [(ranks[0], 2), (ranks[1], 2), (ranks[2], 1)]
    elif category == HandCategory.PAIR:
        wanted = [(ranks[0], 2), *((rank, 1) for rank in ranks[1:])]
    else:  # high card, flush
        wanted = [(rank, 1) for rank in ranks]
    pool = list(cards)
    if category in (HandCategory.FLUSH, HandCategory.STRAIGHT_FLUSH):
        suit_counts = {suit: sum(card.suit == suit for card in pool) for suit in Suit}
        flush_suit = max(suit_counts, key=suit_counts.__getitem__)
        pool = [card for card in pool if card.suit == flush_suit]
    # Highest suit first only so the choice among equal ranks is deterministic.
    pool.sort(reverse=True)
    chosen: list[Card] = []
    for rank, count in wanted:
        chosen.extend([card for card in pool if card.rank == rank][:count])
    return tuple(chosen)


def best_five(cards: Sequence[Card]) -> tuple[Card, ...]:
    """The five cards that play, strongest group first (the trips before the pair).

    Among equal-ranked cards the higher suit is chosen; any choice has the same value.
    """
    return _cards_for(evaluate(cards).strength, cards)


def _singular(rank: int) -> str:
    return RANK_NAMES[rank][0]


def _plural(rank: int) -> str:
    return RANK_NAMES[rank][1]


DESCRIPTION_CACHE_SIZE = 16_384
"""Room for every five-card value (7,462) and every board of one to four cards
(2,379): a dealer's words depend on the packed int alone (filled by :func:`warm_up`)."""


@functools.lru_cache(maxsize=DESCRIPTION_CACHE_SIZE)
def _describe_strength(strength: int) -> str:
    category = HandCategory(strength >> _t.CATEGORY_SHIFT)
    ranks = _tie_ranks(strength)
    match category:
        case HandCategory.STRAIGHT_FLUSH if ranks[0] == _t.ACE:
            return "royal flush"
        case HandCategory.STRAIGHT_FLUSH:
            return f"straight flush, {_singular(ranks[0])} high"
        case HandCategory.FOUR_OF_A_KIND:
            return f"four of a kind, {_plural(ranks[0])}"
        case HandCategory.FULL_HOUSE:
            return f"{_plural(ranks[0])} full of {_plural(ranks[1])}"
        case HandCategory.FLUSH:
            return f"flush, {_singular(ranks[0])} high"
        case HandCategory.STRAIGHT:
            return f"straight, {_singular(ranks[0])} high"
        case HandCategory.THREE_OF_A_KIND:
            return f"three of a kind, {_plural(ranks[0])}"
        case HandCategory.TWO_PAIR:
            return f"two pair, {_plural(ranks[0])} and {_plural(ranks[1])}"
        case HandCategory.PAIR:
            return f"pair of {_plural(ranks[0])}"
        case _:
            return f"{_singular(ranks[0])} high"


def describe(value: HandValue) -> str:
    """What a dealer says at showdown: ``kings full of fours``, ``straight, five high``.

    An ace-high straight flush is called ``royal flush``.
    """
    return _describe_strength(value.strength)


_rank_of: Final[Callable[[Card], int]] = operator.attrgetter("rank")
"""A card's rank, read in C: a board's ranks are gathered every street of every hand,
and a comprehension is a Python function call on 3.11 (issue 25)."""

BOARD_CACHE_SIZE = 4096
"""Room for every board of one to four cards by rank (2,379 of them; see :func:`warm_up`)."""


def showing_value(up_cards: Sequence[Card]) -> ShowingValue:
    """Rank the face-up cards alone (1 to 7 cards) to find the high hand on board.

    With four or fewer cards only pairs, two pair, trips and quads count, then the
    remaining ranks high to low: pair of aces > pair of kings > A-K > A-Q. Suits
    never count. This is exactly PokerKit's Seven Card Stud opener ranking for hands
    with the same number of up cards. With five or more cards showing (a community
    card, rule 15, or a last card dealt up, rule 17) the cards form a real poker
    hand, so it is their best five-card value, straights and flushes included.

    Hands showing different numbers of cards compare on one scale: category first,
    then ranks, a missing rank counting below a deuce (A alone beats 5-4-3-2).
    """
    return ShowingValue(showing_strength(up_cards))


def showing_strength(up_cards: Sequence[Card]) -> int:
    """:func:`showing_value` as its packed int (``.strength``): what the engine
    compares on every street, without building a value object per board."""
    count = len(up_cards)
    if 1 <= count <= 4:
        # The common case (every street of every hand): validate cheaply and look
        # the rank multiset up in a cache, since suits never count here.
        if len(set(up_cards)) != count:
            _checked_indices(up_cards, 1, 4, "showing_value")  # raises, naming the cards
        return _small_board(tuple(sorted(map(_rank_of, up_cards))))
    return _strength(_checked_indices(up_cards, 1, 7, "showing_value"))


def _rank_groups(ranks: Sequence[int]) -> tuple[list[tuple[int, int]], tuple[int, ...]]:
    """(count, rank) groups, largest first, and the shape of the made groups:
    ``(2, 2)`` for two pair. Shared by boards and low hands (suits never count)."""
    counts: dict[int, int] = {}
    for rank in ranks:
        counts[rank] = counts.get(rank, 0) + 1
    groups = sorted(((n, rank) for rank, n in counts.items()), reverse=True)
    return groups, tuple(n for n, _ in groups if n > 1)


@functools.lru_cache(maxsize=BOARD_CACHE_SIZE)
def _small_board(ranks: tuple[int, ...]) -> int:
    """Strength of a board of one to four cards given its ranks (suits never count)."""
    groups, shape = _rank_groups(ranks)
    category = {
        (): HandCategory.HIGH_CARD,
        (2,): HandCategory.PAIR,
        (2, 2): HandCategory.TWO_PAIR,
        (3,): HandCategory.THREE_OF_A_KIND,
        (4,): HandCategory.FOUR_OF_A_KIND,
    }[shape]
    return _t.pack(category, [rank for _, rank in groups])


def describe_showing(up_cards: Sequence[Card]) -> str:
    """What the dealer announces for a board (rule 12): ``pair of nines``, ``ace-king high``.

    High cards name the top two ranks. Possible straights or flushes are never named;
    with five or more cards up, a made straight or flush is.
    """
    return describe_showing_value(showing_value(up_cards))


def describe_showing_value(value: ShowingValue) -> str:
    """:func:`describe_showing` of a showing value already computed."""
    return _describe_showing(value.strength)


def _describe_showing(strength: int) -> str:
    if strength >> _t.CATEGORY_SHIFT != HandCategory.HIGH_CARD:
        return _describe_strength(strength)
    return _describe_high_board(strength)


@functools.lru_cache(maxsize=DESCRIPTION_CACHE_SIZE)
def _describe_high_board(strength: int) -> str:
    """A board with no pair: its top two ranks (``ace-king high``)."""
    return "-".join(_singular(rank) for rank in _tie_ranks(strength)[:2]) + " high"


def _positions(seat_order: Sequence[int], seats: Mapping[int, object]) -> dict[int, int]:
    """Position of every seat in ``seat_order``; every seat of ``seats`` must be there."""
    position = {seat: i for i, seat in enumerate(seat_order)}
    missing = sorted(set(seats) - set(position))
    if missing:
        raise ValueError(f"seats {missing} are not in the seat order {list(seat_order)}")
    if not seats:
        raise ValueError("no seats to choose from")
    return position


def bring_in_seat(
    up_cards_by_seat: Mapping[int, Card],
    seat_order: Sequence[int],
    tiebreak: Literal["suit", "position"],
) -> int:
    """The seat that must bring it in: the lowest upcard, deuce low and ace high.

    Equal ranks go to the lowest suit (clubs, diamonds, hearts, spades) with
    ``tiebreak="suit"``, or to the seat first in ``seat_order`` (nearest the dealer's
    left) with ``tiebreak="position"`` — the rule profile's ``bring_in_tiebreak``.
    """
    position = _positions(seat_order, up_cards_by_seat)

    def low_key(seat: int) -> tuple[int, int]:
        card = up_cards_by_seat[seat]
        return card.rank, int(card.suit) if tiebreak == "suit" else position[seat]

    return min(up_cards_by_seat, key=low_key)


def first_to_act(up_by_seat: Mapping[int, Sequence[Card]], seat_order: Sequence[int]) -> int:
    """The seat that acts first on 4th-7th street: the highest hand showing.

    ``up_by_seat`` holds the face-up cards (plus any community card) of the seats
    still in the hand; ties go to the seat first in ``seat_order`` — suits never
    break a high-hand tie.
    """
    return highest_showing(
        {seat: showing_value(cards) for seat, cards in up_by_seat.items()}, seat_order
    )


def highest_showing(values: Mapping[int, ShowingValue], seat_order: Sequence[int]) -> int:
    """:func:`first_to_act` on showing values already computed (the engine reuses
    them for the rule-12 announcements): the highest, ties to the first in order."""
    position = _positions(seat_order, values)
    return min(values, key=lambda seat: (-values[seat].strength, position[seat]))


# ---------------------------------------------------------------- low hands
# Ace-to-five lows (razz, and the low half of stud8), shared with the equity
# package (equity/evaluate.py builds its lookup tables from low_value).


_EIGHT: Final = 8


@functools.lru_cache(maxsize=65536)
def low_score(ranks: tuple[int, ...], eight_or_better: bool) -> int:
    """:func:`best_low`'s score of sorted ranks (2..14), cached: the engine's showdown.

    Bigger is better; with ``eight_or_better`` 0 means no qualifying low. There are
    at most 49,205 seven-card rank multisets, so the cache stays bounded. With five
    different ranks (or, eight or better, five different ranks of eight or lower)
    the best low is simply the lowest five; with four, every rank plays and the
    lowest rank that can pairs; with three, the two lowest that can make two pair.
    Only trips or worse (at most three ranks in five or six cards, two in seven)
    search the five-card hands.
    """
    # (A miss costs a showdown a few microseconds: the ace-low ranks read from a
    # table, not a call each, and five different ranks packed inline; issue 25.)
    ace_low = _ACE_LOW_RANK
    low = sorted({ace_low[rank] for rank in ranks})
    if eight_or_better:
        # Only five different ranks of eight or lower qualify: the lowest five.
        if len(ranks) < 5 or len(low) < 5 or low[4] > _EIGHT:
            return 0
        return LOW_BASE - _pack_five_different(low)
    if len(low) >= 5:  # five different ranks: the lowest five, no pair (most hands)
        return LOW_BASE - _pack_five_different(low)
    if len(ranks) >= 5:
        # Every rank plays once; the extra cards pair the lowest ranks that can.
        counts: dict[int, int] = {}
        for rank in ranks:
            counts[ace_low[rank]] = counts.get(ace_low[rank], 0) + 1
        paired = [rank for rank in low if counts[rank] >= 2]
        need = 5 - len(low)
        if need == 1:
            pair = paired[0]
            kickers = [rank for rank in reversed(low) if rank != pair]
            return LOW_BASE - _t.pack(_t.PAIR, [pair, *kickers])
        if need == 2 and len(paired) >= 2:
            first, second = paired[0], paired[1]
            kicker = next(rank for rank in low if rank not in (first, second))
            return LOW_BASE - _t.pack(_t.TWO_PAIR, [second, first, kicker])
    return best_low(ranks, eight_or_better=False)[0]  # trips or worse: try them all


def _pack_five_different(low: list[int]) -> int:
    """The high-card packing (category 0) of the lowest five of ``low``, sorted
    ace-low ranks all different: ``pack(HIGH_CARD, low[4::-1])`` without its loop."""
    return low[4] << 16 | low[3] << 12 | low[2] << 8 | low[1] << 4 | low[0]


@functools.lru_cache(maxsize=BOARD_CACHE_SIZE)
def _low_board(ranks: tuple[int, ...]) -> int:
    """:func:`low_showing` of a board of one to four cards by its sorted ranks
    (every one of them filled by ``variants.warm_up``)."""
    return LOW_BASE - _pack_low(sorted((_ace_low(rank) for rank in ranks), reverse=True))


def low_showing(up_cards: Sequence[Card]) -> int:
    """The razz rank of the face-up cards alone (1 to 7 cards): bigger is a better low.

    docs/rules.md "Variants": in razz the lowest hand showing acts first. Ace-to-five:
    aces low, straights and flushes never count, pairs count against (any pair
    showing is worse than any unpaired board), then the highest card decides
    (7-4-3-2 is worse than 6-5-4-3). Five or more cards showing (rule 15's
    community card, rule 17) are ranked by their best five-card low.
    """
    ranks = tuple(sorted(map(_rank_of, up_cards)))
    if len(ranks) <= 4:
        return _low_board(ranks)
    return low_score(ranks, False)


LOW_BASE: Final = 1 << 24
"""Low scores are ``LOW_BASE - packed``: a smaller (better) low gives a bigger score."""

_ACE_LOW: Final = 1

_ACE_LOW_RANK: Final = (0, 0, *range(2, _t.ACE), _ACE_LOW)
"""Rank 0..14 (2..14 real, ace high) to its ace-low rank: :func:`_ace_low` as a table."""


def _pack_low(ranks: Sequence[int]) -> int:
    """Pack an ace-low hand (ranks 1..13) like a high hand: category, then group ranks."""
    groups, shape = _rank_groups(ranks)
    category = {
        (): _t.HIGH_CARD,
        (2,): _t.PAIR,
        (2, 2): _t.TWO_PAIR,
        (3,): _t.THREE_OF_A_KIND,
        (3, 2): _t.FULL_HOUSE,
        (4,): _t.FOUR_OF_A_KIND,
    }[shape]
    return _t.pack(category, [rank for _, rank in groups])


def _ace_low(rank: int) -> int:
    """Rank 2..14 (ace high) to 1..13 (ace low)."""
    return _ACE_LOW if rank == _t.ACE else rank


def low_value(ranks: Sequence[int], *, eight_or_better: bool) -> int:
    """Low score of up to five ranks (2..14, ace high as in :class:`Card`); bigger is better.

    Razz (``eight_or_better=False``): any five (or fewer) cards make a low; pairs
    count against it. Eight or better: only five different ranks of eight or lower
    (ace low) qualify; anything else scores 0, "no low".
    """
    low = sorted((_ace_low(rank) for rank in ranks), reverse=True)
    if eight_or_better and (len(set(low)) != 5 or low[0] > 8):
        return 0
    return LOW_BASE - _pack_low(low)


def best_low(ranks: Sequence[int], *, eight_or_better: bool) -> tuple[int, tuple[int, ...]]:
    """Best low score of 1 to 7 ranks and the ranks (ace low, high to low) that make it."""
    size = min(5, len(ranks))
    best: tuple[int, tuple[int, ...]] = (-1, ())
    for five in combinations(ranks, size):
        value = low_value(five, eight_or_better=eight_or_better)
        if value > best[0]:
            best = (value, tuple(sorted((_ace_low(r) for r in five), reverse=True)))
    return best
