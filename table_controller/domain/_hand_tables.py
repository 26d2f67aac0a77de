"""Lookup tables for the pure-Python hand evaluator in :mod:`table_controller.domain.hands`.

Theory of operation
-------------------
A hand's value is one int, the *strength*::

    category << 20 | r1 << 16 | r2 << 12 | r3 << 8 | r4 << 4 | r5

``category`` is 0 (high card) .. 8 (straight flush) and ``r1..r5`` are the ranks
(2..14) that decide ties, most significant first, with unused slots 0. Only the
ranks that matter are stored (a straight keeps just its top card, a full house just
its two ranks), so equal strengths mean exactly "split the pot" and bigger ints are
better hands. The same int can be decoded back into words, which is what
:func:`table_controller.domain.hands.describe` does.

Evaluating 5, 6 or 7 distinct cards (card indices 0..51, ``(rank - 2) * 4 + suit``):

1. Sum one precomputed code per card. The low 32 bits of the sum are the rank
   multiset written in base 5 (``count[rank]`` is a base-5 digit, at most 4); the
   four 4-bit lanes from bit 32 up count cards per suit.
2. Adding 3 to every suit lane sets a lane's top bit exactly when that suit holds five
   or more cards: that is the flush test, one add and one mask.
3. No flush: the rank multiset alone fixes the value, looked up in
   ``Tables.rank_multiset_values`` (every multiset of 5, 6 or 7 ranks: 73,775 keys).
4. Flush: with at most seven cards only one suit can hold five, and neither quads nor
   a full house can coexist with a flush, so the value is that suit's best flush or
   straight flush, looked up by the suit's 13-bit rank mask in ``Tables.flush_values``.

The tables are built on first use (:func:`tables`, about 0.3-0.7 s) from the
rules of poker written out below, not from any other evaluator; the tests cross-check them
against phevaluator and PokerKit. A program may keep them between processes
(:mod:`table_controller.domain.table_store`: the command line loads them from a file in
a few milliseconds instead of building them at every start).
"""

from __future__ import annotations

import struct
from array import array
from functools import cache
from itertools import combinations_with_replacement
from typing import Final, NamedTuple

from table_controller.domain import table_store

HIGH_CARD: Final = 0
PAIR: Final = 1
TWO_PAIR: Final = 2
THREE_OF_A_KIND: Final = 3
STRAIGHT: Final = 4
FLUSH: Final = 5
FULL_HOUSE: Final = 6
FOUR_OF_A_KIND: Final = 7
STRAIGHT_FLUSH: Final = 8

CATEGORY_SHIFT: Final = 20
"""Bits below the category: five 4-bit rank slots."""

SUIT_SHIFT: Final = 32
"""Where the per-suit counting lanes start in a summed card code (5**13 < 2**31)."""

RANK_KEY_MASK: Final = (1 << SUIT_SHIFT) - 1
FLUSH_PROBE: Final = 0x3333
"""Added to the four suit lanes: a lane holding 5+ cards then has its top bit set."""
FLUSH_LANES: Final = 0x8888

ACE: Final = 14
_WHEEL_MASK: Final = 0b1_0000_0000_1111  # A, 5, 4, 3, 2 as rank bits (rank - 2)


def pack(category: int, ranks: list[int]) -> int:
    """Return the strength int for ``category`` and up to five tie-break ranks."""
    value = category
    for rank in ranks:
        value = value << 4 | rank
    return value << 4 * (5 - len(ranks))


def _straight_top_of(rank_mask: int) -> int:
    for top in range(ACE, 5, -1):
        window = 0b11111 << (top - 6)
        if rank_mask & window == window:
            return top
    if rank_mask & _WHEEL_MASK == _WHEEL_MASK:
        return 5
    return 0


def _straight_tops() -> tuple[int, ...]:
    """:func:`_straight_top_of` of every mask, by marking each window's supersets (lowest
    straight first, so a higher one overwrites): 2,560 writes, not 8,192 searches at
    import (issue 25: the command line imports this at every start)."""
    tops = [0] * (1 << 13)
    windows = [(5, _WHEEL_MASK)] + [(top, 0b11111 << (top - 6)) for top in range(6, ACE + 1)]
    for top, window in windows:
        free = ((1 << 13) - 1) & ~window
        subset = free
        while True:  # every subset of the free bits, largest first
            tops[window | subset] = top
            if not subset:
                break
            subset = (subset - 1) & free
    return tuple(tops)


STRAIGHT_TOPS: Final[tuple[int, ...]] = _straight_tops()
"""13-bit rank mask (bit ``rank - 2``) -> top rank of its best straight, 0 for none.

The wheel (A-2-3-4-5) is five high.
"""


def _ranks_in(rank_mask: int) -> list[int]:
    """Ranks present in a 13-bit mask, highest first."""
    return [rank for rank in range(ACE, 1, -1) if rank_mask >> (rank - 2) & 1]


def value_from_ranks(ranks: tuple[int, ...]) -> int:
    """Best five-card value of 5 to 7 ranks (2..14) whose suits make no flush."""
    counts: dict[int, int] = {}
    for rank in ranks:
        counts[rank] = counts.get(rank, 0) + 1
    # Count first, then rank, both high to low: the order a dealer reads a hand in.
    groups = sorted(((n, rank) for rank, n in counts.items()), reverse=True)
    top_count, top_rank = groups[0]
    second_count = groups[1][0]
    if top_count == 4:
        return pack(FOUR_OF_A_KIND, [top_rank, max(rank for _, rank in groups[1:])])
    if top_count == 3 and second_count >= 2:
        # Of two sets the lower plays as the pair, and a pair above it beats that.
        return pack(FULL_HOUSE, [top_rank, max(rank for n, rank in groups[1:] if n >= 2)])
    top = STRAIGHT_TOPS[sum(1 << (rank - 2) for rank in counts)]
    if top:
        return pack(STRAIGHT, [top])
    if top_count == 3:
        return pack(THREE_OF_A_KIND, [top_rank, groups[1][1], groups[2][1]])
    if top_count == 2 and second_count == 2:
        # A third pair's rank can be the kicker, so take the best of everything left.
        kicker = max(rank for _, rank in groups[2:])
        return pack(TWO_PAIR, [top_rank, groups[1][1], kicker])
    if top_count == 2:
        return pack(PAIR, [top_rank, *(rank for _, rank in groups[1:4])])
    return pack(HIGH_CARD, [rank for _, rank in groups[:5]])


def flush_value(rank_mask: int) -> int:
    """Best five-card value of five or more cards of one suit, given their rank mask."""
    top = STRAIGHT_TOPS[rank_mask]
    if top:
        return pack(STRAIGHT_FLUSH, [top])
    return pack(FLUSH, _ranks_in(rank_mask)[:5])


_POW5: Final[tuple[int, ...]] = (0, 0, *(5 ** (rank - 2) for rank in range(2, ACE + 1)))


def rank_key(ranks: tuple[int, ...] | list[int]) -> int:
    """The base-5 key of a rank multiset, as the summed card codes spell it."""
    return sum(map(_POW5.__getitem__, ranks))


def _build_rank_table() -> dict[int, int]:
    table: dict[int, int] = {}
    # 73,775 keys share 6,175 distinct values: sharing one int object per value keeps
    # the table smaller, so more of it stays in cache during lookups (~15 % faster).
    shared: dict[int, int] = {}
    for size in (5, 6, 7):
        for ranks in combinations_with_replacement(range(2, ACE + 1), size):
            # A rank can appear at most four times in one deck (ranks come sorted).
            if any(map(int.__eq__, ranks, ranks[4:])):
                continue
            value = value_from_ranks(ranks)
            table[rank_key(ranks)] = shared.setdefault(value, value)
    return table


def _build_flush_table() -> list[int]:
    # Masks with fewer than five ranks never reach this table; 0 marks them.
    return [
        flush_value(mask) if 5 <= mask.bit_count() <= 7 else 0 for mask in range(1 << 13)
    ]


class Tables(NamedTuple):
    """The two evaluation tables, built together on first use."""

    rank_multiset_values: dict[int, int]
    """Base-5 rank key -> strength, for every multiset of 5, 6 or 7 ranks (no flush)."""
    flush_values: list[int]
    """13-bit rank mask of one suit -> strength of its best flush or straight flush."""


def build_tables() -> Tables:
    """Build the evaluation tables from the rules (about 0.3-0.7 s)."""
    return Tables(_build_rank_table(), _build_flush_table())


_HEADER: Final = struct.Struct("<III")  # rank keys, distinct values, flush entries


def dump_tables(built: Tables) -> bytes:
    """The tables as bytes for :func:`load_tables` (this machine's byte order)."""
    distinct = sorted(set(built.rank_multiset_values.values()))
    number = {value: i for i, value in enumerate(distinct)}
    keys = array("q", built.rank_multiset_values)
    which = array("H", (number[v] for v in built.rank_multiset_values.values()))
    flush = array("q", built.flush_values)
    values = array("q", distinct)
    return (_HEADER.pack(len(keys), len(values), len(flush)) + keys.tobytes()
            + which.tobytes() + values.tobytes() + flush.tobytes())


def load_tables(data: bytes) -> Tables:
    """The tables :func:`dump_tables` wrote; ``ValueError`` if ``data`` is not such."""
    if len(data) < _HEADER.size:
        raise ValueError("hand tables: too short")
    n_keys, n_values, n_flush = _HEADER.unpack_from(data)
    parts = ((array("q"), n_keys), (array("H"), n_keys), (array("q"), n_values),
             (array("q"), n_flush))
    at = _HEADER.size
    for part, count in parts:
        end = at + count * part.itemsize
        part.frombytes(data[at:end])
        if len(part) != count:
            raise ValueError("hand tables: truncated")
        at = end
    if at != len(data) or n_flush != 1 << 13:
        raise ValueError("hand tables: wrong size")
    keys, which, values, flush = (part for part, _ in parts)
    # One int object per distinct value, as _build_rank_table shares them.
    shared = values.tolist()
    if which and max(which) >= len(shared):
        raise ValueError("hand tables: value out of range")
    return Tables(dict(zip(keys, map(shared.__getitem__, which), strict=True)),
                  flush.tolist())


_obtained: Tables | None = None  # set by tables(): then rank_value and flush reads it


@cache
def tables() -> Tables:
    """Return the evaluation tables: built once per process (about 0.3-0.7 s), or
    loaded from the program's :mod:`~table_controller.domain.table_store`.

    Obtained lazily rather than at import so that importing the package, e.g. for the
    CLI's ``--help``, stays instant.
    """
    global _obtained  # noqa: PLW0603 - the one cache of this module
    _obtained = table_store.obtain("hand-tables", (__name__,), build_tables, dump_tables,
                                   load_tables)
    return _obtained


_one_by_one: dict[int, int] = {}
"""Values computed one hand at a time before :func:`tables` was asked for (at most the
73,775 keys of the table: bounded)."""


def rank_value(key: int) -> int:
    """:attr:`Tables.rank_multiset_values` of one base-5 rank key.

    From the tables once a caller has obtained them (the daemon and every batch do);
    until then the value is computed for this key alone, so a command that values a
    handful of hands (``stud-table replay``, the equity door's readings) pays
    microseconds, not the 73,775-entry table (issue 25).
    """
    if _obtained is not None:
        return _obtained.rank_multiset_values[key]
    value = _one_by_one.get(key)
    if value is None:
        ranks = tuple(rank for rank in range(2, ACE + 1)
                      for _ in range(key // _POW5[rank] % 5))
        value = _one_by_one[key] = value_from_ranks(ranks)
    return value


def flush_rank_value(rank_mask: int) -> int:
    """:attr:`Tables.flush_values` of one suit's rank mask, as :func:`rank_value` does."""
    if _obtained is not None:
        return _obtained.flush_values[rank_mask]
    return flush_value(rank_mask)


CARD_CODES: Final[tuple[int, ...]] = tuple(
    5 ** (index >> 2) + (1 << (SUIT_SHIFT + 4 * (index & 3))) for index in range(52)
)
"""Per card index: its base-5 rank digit plus one count in its suit's lane."""

SUIT_RANK_BITS: Final[tuple[int, ...]] = tuple(
    1 << (16 * (index & 3) + (index >> 2)) for index in range(52)
)
"""Per card index: its rank bit in a 16-bit lane per suit (sum = OR for distinct cards)."""
