"""Vectorised seven-card evaluation for the three stud games (numpy, no I/O).

Theory of operation
-------------------
Equity needs millions of seven-card evaluations per second; the pure-Python
evaluator of :mod:`table_controller.domain.hands` does about one million. Here a hand is
evaluated by *summing one int64 code per card* (numpy gathers and sums whole arrays
of hands at once) and looking the sum up in small tables:

* the low 24 bits of the summed codes are a **rank key**: the sum of a per-rank
  magic number (:data:`RANK_KEYS`, the keys of Kenneth Shackleton's SKPokerEval)
  chosen so that every multiset of seven ranks (at most four of a rank) has its own
  sum, below 7,825,760. A ``uint16`` array of that size maps a rank key to the
  multiset's number (49,205 multisets), and per-game value arrays map the number
  to a score;
* above bit 24, four 4-bit lanes count the cards of each suit; adding 3 to each
  lane sets a lane's top bit exactly when that suit holds five or more cards (the
  flush test of ``_hand_tables``). Only for those hands (about 3 %) a second summed
  code, one 16-bit rank mask per suit, gives the flush suit's ranks, looked up in
  the 8,192-entry flush table of :mod:`table_controller.domain._hand_tables`.

Scores are ints where **bigger is better** in every game, so the equity code
compares them the same way whatever the game:

* ``stud`` (high): exactly :attr:`table_controller.domain.hands.HandValue.strength`;
* ``razz`` (ace-to-five low, straights and flushes ignored, pairs count against):
  ``LOW_BASE - packed`` where ``packed`` is the ace-low hand packed like a high
  hand (category, then ranks high to low, ace = 1);
* ``stud8``: the high score above plus an eight-or-better low score, 0 when the
  seven cards hold no five different ranks of eight or lower.

The low tables are built from the 6,175 five-card rank multisets (written out in
:func:`low_value` below) and each seven-card multiset takes the best of its 21
five-card sub-multisets. Everything is built once per process on first use
(:func:`tables`, about 0.4-0.7 s) and checked for key collisions as it is built, or
loaded from the program's :mod:`~table_controller.domain.table_store` (the command
line keeps it in a file: a few milliseconds instead of a build at every start).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from itertools import combinations, combinations_with_replacement
from typing import Final, NamedTuple

import numpy as np
import numpy.typing as npt

from table_controller.domain import _hand_tables as _t
from table_controller.domain import table_store

# The low evaluator and the game names live beside the high evaluator, where the
# rules engine (which must not import numpy) uses them too.
from table_controller.domain.hands import LOW_BASE, Game, best_low, low_value

__all__ = [
    "CODE",
    "LOW_BASE",
    "RANK_KEYS",
    "SUIT_BITS",
    "Game",
    "Scores",
    "best_low",
    "low_value",
    "scores",
    "scores_of_hands",
    "tables",
]

IntArray = npt.NDArray[np.int64]


RANK_KEYS: Final[tuple[int, ...]] = (
    0, 1, 5, 22, 98, 453, 2031, 8698, 22854, 83661, 262349, 636345, 1479181,
)
"""Per rank (deuce .. ace): seven of these never sum alike for two rank multisets."""

_KEY_BITS: Final = 24
_KEY_MASK: Final = (1 << _KEY_BITS) - 1
_KEY_SPACE: Final = 4 * RANK_KEYS[12] + 3 * RANK_KEYS[11] + 1
_FLUSH_PROBE: Final = 0x3333
_FLUSH_LANES: Final = 0x8888

CODE: Final[IntArray] = np.array(
    [RANK_KEYS[i >> 2] + (1 << (_KEY_BITS + 4 * (i & 3))) for i in range(52)], dtype=np.int64
)
"""Per card index (``Card.index``): its rank key plus one count in its suit's lane."""

SUIT_BITS: Final[npt.NDArray[np.uint64]] = np.array(
    [1 << (16 * (i & 3) + (i >> 2)) for i in range(52)], dtype=np.uint64
)
"""Per card index: its rank bit in a 16-bit lane per suit (summing = OR-ing distinct cards)."""

class Tables(NamedTuple):
    """The lookup arrays, built together on first use."""

    number: npt.NDArray[np.uint16]
    """Rank key -> number of the seven-card rank multiset (0..49,204)."""
    high: IntArray
    """Multiset number -> high score when the hand holds no flush."""
    razz: IntArray
    """Multiset number -> razz (ace-to-five) score."""
    low8: IntArray
    """Multiset number -> eight-or-better low score, 0 for no low."""
    flush: IntArray
    """13-bit rank mask of the flush suit -> high score of its best flush."""


def _five_card_lows() -> tuple[IntArray, IntArray, IntArray]:
    """Base-5 keys of the 6,175 five-card rank multisets (sorted) and their low scores."""
    keys, razz, low8 = [], [], []
    for ranks in combinations_with_replacement(range(2, _t.ACE + 1), 5):
        if ranks[0] == ranks[4]:  # five of a rank: not in one deck
            continue
        keys.append(_t.rank_key(ranks))
        razz.append(low_value(ranks, eight_or_better=False))
        low8.append(low_value(ranks, eight_or_better=True))
    order = np.argsort(keys)
    return (
        np.asarray(keys, dtype=np.int64)[order],
        np.asarray(razz, dtype=np.int64)[order],
        np.asarray(low8, dtype=np.int64)[order],
    )


def _seven_card_multisets() -> tuple[IntArray, IntArray]:
    """Every seven-card rank multiset (rows of rank indices 0..12, ascending) in the
    order of their numbers, and its rank key."""
    hands = [
        ranks
        for ranks in combinations_with_replacement(range(13), 7)
        if not any(map(int.__eq__, ranks, ranks[4:]))  # at most four of a rank
    ]
    sorted_ranks = np.asarray(hands, dtype=np.int64)  # (49205, 7)
    return sorted_ranks, np.asarray(RANK_KEYS, dtype=np.int64)[sorted_ranks].sum(axis=1)


def build_tables() -> Tables:
    """Build the lookup arrays from the rules (about 0.4-0.7 s)."""
    sorted_ranks, rank_keys = _seven_card_multisets()
    count = len(sorted_ranks)
    if len(np.unique(rank_keys)) != count:  # pragma: no cover - a wrong constant
        raise AssertionError("RANK_KEYS do not separate every seven-card rank multiset")
    index = np.zeros(_KEY_SPACE, dtype=np.uint16)
    index[rank_keys] = np.arange(count, dtype=np.uint16)
    pow5 = 5 ** np.arange(13, dtype=np.int64)
    base5 = pow5[sorted_ranks].sum(axis=1)
    rank_values = _t.tables().rank_multiset_values
    high = np.fromiter((rank_values[int(key)] for key in base5), np.int64, count)
    # Lows: the best of the 21 five-card sub-multisets (drop two of the seven cards).
    keys5, razz5, low85 = _five_card_lows()
    razz = np.zeros(count, dtype=np.int64)
    low8 = np.zeros(count, dtype=np.int64)
    for i, j in combinations(range(7), 2):
        sub = base5 - pow5[sorted_ranks[:, i]] - pow5[sorted_ranks[:, j]]
        where = np.searchsorted(keys5, sub)
        np.maximum(razz, razz5[where], out=razz)
        np.maximum(low8, low85[where], out=low8)
    flush = np.asarray(_t.tables().flush_values, dtype=np.int64)
    return Tables(index, high, razz, low8, flush)


_MULTISETS: Final = 49_205
"""Seven-card rank multisets (at most four of a rank): the rows of each score array."""
_STORED: Final = (  # what dump_tables writes, in order: (dtype, length)
    *((np.dtype("<i8"), _MULTISETS),) * 4,  # rank keys, high, razz, low8
    (np.dtype("<i8"), 1 << 13),  # flush
)


def dump_tables(built: Tables) -> bytes:
    """The arrays as bytes for :func:`load_tables`: the 49,205 rank keys that
    ``number`` maps (its 15.6 MB are mostly zeros), the three score arrays, flush."""
    keys = _seven_card_multisets()[1]
    if not np.array_equal(built.number[keys], np.arange(_MULTISETS)):
        raise ValueError("equity tables: not the rank keys this module numbers")
    parts = (keys, built.high, built.razz, built.low8, built.flush)
    return b"".join(np.ascontiguousarray(a, dtype=d).tobytes()
                    for a, (d, _) in zip(parts, _STORED, strict=True))


def load_tables(data: bytes) -> Tables:
    """The arrays :func:`dump_tables` wrote; ``ValueError`` if ``data`` is not such."""
    if len(data) != sum(d.itemsize * n for d, n in _STORED):
        raise ValueError("equity tables: wrong size")
    parts: list[IntArray] = []
    at = 0
    for dtype, count in _STORED:
        parts.append(np.frombuffer(data, dtype, count, at).astype(np.int64))
        at += dtype.itemsize * count
    keys = parts[0]
    if keys.min() < 0 or keys.max() >= _KEY_SPACE:
        raise ValueError("equity tables: rank key out of range")
    index = np.zeros(_KEY_SPACE, dtype=np.uint16)
    index[keys] = np.arange(_MULTISETS, dtype=np.uint16)
    return Tables(index, parts[1], parts[2], parts[3], parts[4])


@cache
def tables() -> Tables:
    """Return the lookup arrays: built once per process, or loaded from the program's
    :mod:`~table_controller.domain.table_store`."""
    sources = (__name__, _t.__name__, "table_controller.domain.hands")
    return table_store.obtain("equity-tables", sources, build_tables, dump_tables,
                              load_tables)


class Scores(NamedTuple):
    """Scores of many hands: ``primary`` (high, or razz low) and the stud8 low half."""

    primary: IntArray
    low: IntArray | None


def scores(
    code_sums: IntArray,
    bit_sums: npt.NDArray[np.uint64] | Callable[[npt.NDArray[np.intp]], npt.NDArray[np.uint64]],
    game: Game,
) -> Scores:
    """Scores of seven-card hands given their summed :data:`CODE` and :data:`SUIT_BITS`.

    Callers sum the codes themselves, so cards known before a run-out are summed once.
    ``bit_sums`` may be a function giving the summed suit bits of some rows only: they
    are needed for flushes alone (about 3 % of hands). Each hand must be seven
    distinct cards (not checked: this is the hot path).
    """
    tab = tables()
    number = tab.number[code_sums & _KEY_MASK]
    if game is Game.RAZZ:
        return Scores(tab.razz[number], None)
    high = tab.high[number]
    lanes = ((code_sums >> _KEY_BITS) + _FLUSH_PROBE) & _FLUSH_LANES
    flushed = np.flatnonzero(lanes)
    if len(flushed):
        flush_lanes = lanes[flushed]
        for suit in range(4):
            rows = flushed[(flush_lanes >> (4 * suit + 3)) & 1 == 1]
            if len(rows):
                rows_bits = bit_sums(rows) if callable(bit_sums) else bit_sums[rows]
                masks = (rows_bits >> np.uint64(16 * suit)) & np.uint64(0x1FFF)
                high[rows] = tab.flush[masks.astype(np.intp)]
    if game is Game.STUD8:
        return Scores(high, tab.low8[number])
    return Scores(high, None)


def scores_of_hands(hands: npt.ArrayLike, game: Game) -> Scores:
    """Scores of an ``(n, 7)`` array of card indices (a convenience for tests and tools)."""
    cards = np.asarray(hands, dtype=np.intp)
    return scores(CODE[cards].sum(axis=1), SUIT_BITS[cards].sum(axis=1), game)
