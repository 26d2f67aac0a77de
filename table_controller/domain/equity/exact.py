"""Exact equity: every run-out enumerated, each seat's completions evaluated once.

A run-out gives every seat a set of its own cards from the unseen ones, the sets
disjoint. Instead of dealing run-outs one by one (and evaluating every seat again
each time), each seat's possible completions are listed and evaluated **once**
(heads-up on 5th street: C(42, 2) = 861 per seat, not 2 x 671,580), each with a
64-bit mask of its cards. Run-outs are then the tuples of completions with
pairwise disjoint masks, built seat by seat as a filtered cross product in numpy;
the pot shares of every run-out come from comparing the precomputed scores.

Heads-up in ``stud`` and ``razz`` (one score per hand) there is a faster way that
never forms the run-outs: for a completion ``a`` of the first seat with score ``x``,
the second seat's completions that beat, tie or lose to it *and share no card with
it* are counted by inclusion-exclusion over the subsets ``T`` of ``a``'s cards:
``sum over T of (-1)^|T| * #{b containing T with score < x}``, each term one binary
search in the second seat's scores sorted by (subset of cards, score). Heads-up on
5th street that is 861 completions x 4 subsets x a few searches instead of half a
million run-outs.
Heads-up in ``stud8`` (two scores per hand) the same counting works with one more
number per completion, the *class* of its low: 0 for no qualifying low, else the rank
of its low score among the distinct lows of the spot (at most 56 eight-or-better lows
exist). Seat 1's share of one run-out is ``H/2 + L/2``, where ``H`` is its share of a
high-only pot (1, 1/2, 0) and ``L`` the same by low class (a low beats no low), except
that with no low on either side the high takes all: ``H``. Every term is a count of
seat 2's disjoint completions in a range of (high score, low class), so
seat 2's completions are sorted by (subset, high score, low class) and a prefix table
per class threshold (``counts[k][i]``: how many of the first ``i`` have a class below
``k``) answers each count with two gathers; scoops (``H = L = 1``, or ``H = 1`` with no
low against) are such counts too. See docs/dev/equity.md "Exact, heads-up counting".

A community card (rule 15) is enumerated outside: for each possible card the rest
is an ordinary deal.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import combinations

import numpy as np
import numpy.typing as npt

from table_controller.domain.equity.evaluate import CODE, SUIT_BITS, Game, Scores, scores
from table_controller.domain.equity.model import UNITS, Deal, pot_units

__all__ = ["exact_units"]

_BIT = np.array([1 << i for i in range(52)], dtype=np.uint64)


def _completions(
    deal: Deal, seat: int, picks: npt.NDArray[np.intp] | None = None
) -> tuple[npt.NDArray[np.uint64], Scores]:
    """Card masks and scores of every completion of one seat (index into ``deal.seats``)."""
    if picks is None:
        picks = _picks(deal, seat)
    masks = _BIT[picks].sum(axis=1, dtype=np.uint64)
    code = deal.base_code[seat] + CODE[picks].sum(axis=1)
    bits = deal.base_bits[seat] + SUIT_BITS[picks].sum(axis=1, dtype=np.uint64)
    return masks, scores(code, bits, deal.game)


_SCORE_BITS = 25  # every score (high or low) is below 2**25


def _picks(deal: Deal, seat: int) -> npt.NDArray[np.intp]:
    """Every completion of one seat as rows of card indices, ascending."""
    unseen = np.asarray(deal.unseen, dtype=np.intp)
    return unseen[_positions(len(unseen), deal.needs[seat])]


@lru_cache(maxsize=64)  # a few hundred kB each on the exact streets
def _positions(unseen: int, need: int) -> npt.NDArray[np.intp]:
    """Every ``need``-subset of ``range(unseen)`` as ascending rows (one empty row for
    0): listed once per shape, since itertools' tuples cost more than the equity."""
    rows = np.array(list(combinations(range(unseen), need)), dtype=np.intp)
    rows = rows.reshape(len(rows), need)
    rows.flags.writeable = False
    return rows


def _subset_keys(picks: npt.NDArray[np.intp], positions: tuple[int, ...]) -> npt.NDArray[np.int64]:
    """One int per row naming the cards at ``positions`` (6 bits per card)."""
    key = np.zeros(len(picks), dtype=np.int64)
    for shift, position in enumerate(positions):
        key |= picks[:, position].astype(np.int64) << (6 * shift)
    return key


def _heads_up(deal: Deal) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], int]:
    """Exact units for two seats and a single score (stud, razz): see the module doc."""
    picks_a, picks_b = _picks(deal, 0), _picks(deal, 1)
    score_a = _completions(deal, 0, picks_a)[1].primary
    score_b = _completions(deal, 1, picks_b)[1].primary
    need_a, need_b = picks_a.shape[1], picks_b.shape[1]
    less = np.zeros(len(picks_a), dtype=np.int64)
    equal = np.zeros(len(picks_a), dtype=np.int64)
    total = np.zeros(len(picks_a), dtype=np.int64)
    for size in range(min(need_a, need_b) + 1):
        sign = -1 if size % 2 else 1
        b_subsets = list(combinations(range(need_b), size))
        keyed = np.concatenate(
            [(_subset_keys(picks_b, p) << _SCORE_BITS) | score_b for p in b_subsets]
        )
        keyed.sort()
        for positions in combinations(range(need_a), size):
            start = _subset_keys(picks_a, positions) << _SCORE_BITS
            first = np.searchsorted(keyed, start)
            below = np.searchsorted(keyed, start | score_a)
            upto = np.searchsorted(keyed, start | score_a, side="right")
            end = np.searchsorted(keyed, start + (1 << _SCORE_BITS))
            total += sign * (end - first)
            less += sign * (below - first)
            equal += sign * (upto - below)
    greater = total - less - equal
    half = UNITS // 2
    units = np.array([(UNITS * less + half * equal).sum(), (UNITS * greater + half * equal).sum()])
    wins = np.array([UNITS * less.sum(), UNITS * greater.sum()])
    return units, wins, int(total.sum())


_CLASS_BITS = 6  # low classes: 0 (no low) and at most 56 eight-or-better lows


def _heads_up_split(deal: Deal) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], int]:
    """Exact units for two seats in stud8 (high and low halves): see the module doc."""
    picks_a, picks_b = _picks(deal, 0), _picks(deal, 1)
    scored_a = _completions(deal, 0, picks_a)[1]
    scored_b = _completions(deal, 1, picks_b)[1]
    assert scored_a.low is not None
    assert scored_b.low is not None
    high_a, high_b = scored_a.primary, scored_b.primary
    # Low classes: 0 for no low (score 0), then the distinct lows, worst to best.
    lows = np.unique(np.concatenate([[0], scored_a.low, scored_b.low]))
    class_a = np.searchsorted(lows, scored_a.low)
    class_b = np.searchsorted(lows, scored_b.low)
    classes = len(lows)
    need_a, need_b = picks_a.shape[1], picks_b.shape[1]
    # Per completion of seat 1, summed over the disjoint completions of seat 2:
    high_less = np.zeros(len(picks_a), dtype=np.int64)  # seat 2 lower high
    high_equal = np.zeros(len(picks_a), dtype=np.int64)
    total = np.zeros(len(picks_a), dtype=np.int64)
    low_less = np.zeros(len(picks_a), dtype=np.int64)  # seat 2 lower low class
    low_equal = np.zeros(len(picks_a), dtype=np.int64)
    nolow_less = np.zeros(len(picks_a), dtype=np.int64)  # seat 2 no low, lower high
    nolow_equal = np.zeros(len(picks_a), dtype=np.int64)  # seat 2 no low, same high
    scoop_a = np.zeros(len(picks_a), dtype=np.int64)
    scoop_b = np.zeros(len(picks_a), dtype=np.int64)
    has_low = class_a > 0
    below_a = np.where(has_low, class_a, 1)  # seat 1 scoops over these classes
    above_a = np.where(has_low, class_a + 1, 0)  # seat 2 scoops from these classes up
    shift = _SCORE_BITS + _CLASS_BITS
    thresholds = np.arange(classes + 1)[:, None]
    for size in range(min(need_a, need_b) + 1):
        sign = -1 if size % 2 else 1
        keyed = np.concatenate([
            (_subset_keys(picks_b, p) << shift) | (high_b << _CLASS_BITS) | class_b
            for p in combinations(range(need_b), size)
        ])
        keyed.sort()
        # counts[k, i]: entries among the first i whose low class is below k.
        below_k = (keyed & ((1 << _CLASS_BITS) - 1))[None, :] < thresholds
        counts = np.zeros((classes + 1, len(keyed) + 1), dtype=np.int64)
        np.cumsum(below_k, axis=1, out=counts[:, 1:])
        for positions in combinations(range(need_a), size):
            start = _subset_keys(picks_a, positions) << shift
            at_high = start | (high_a << _CLASS_BITS)
            first = np.searchsorted(keyed, start)
            below = np.searchsorted(keyed, at_high)
            upto = np.searchsorted(keyed, at_high | ((1 << _CLASS_BITS) - 1), side="right")
            end = np.searchsorted(keyed, start + (1 << shift))
            total += sign * (end - first)
            high_less += sign * (below - first)
            high_equal += sign * (upto - below)
            lower = counts[class_a, end] - counts[class_a, first]
            low_less += sign * lower
            low_equal += sign * (counts[class_a + 1, end] - counts[class_a + 1, first] - lower)
            nolow_less += sign * (counts[1, below] - counts[1, first])
            nolow_equal += sign * (counts[1, upto] - counts[1, below])
            scoop_a += sign * (counts[below_a, below] - counts[below_a, first])
            scoop_b += sign * ((end - upto) - (counts[above_a, end] - counts[above_a, upto]))
    quarter = UNITS // 4
    half_high = 2 * quarter * high_less + quarter * high_equal  # sum of H/2
    rest = np.where(has_low, 2 * quarter * low_less + quarter * low_equal,  # sum of L/2
                    2 * quarter * nolow_less + quarter * nolow_equal)  # no lows: H/2 more
    units_a = int((half_high + rest).sum())
    runouts = int(total.sum())
    units = np.array([units_a, UNITS * runouts - units_a])
    wins = np.array([UNITS * int(scoop_a.sum()), UNITS * int(scoop_b.sum())])
    return units, wins, runouts


def exact_units(deal: Deal) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], int]:
    """Summed pot units per seat, summed units of whole pots won alone, and run-outs.

    The caller divides by ``UNITS * runouts``; integer sums keep the result exact.
    """
    if not deal.community:
        return _sum_with_wins(deal)
    total = np.zeros(len(deal.seats), dtype=np.int64)
    wins = np.zeros(len(deal.seats), dtype=np.int64)
    count = 0
    for card in deal.unseen:
        units, won, runouts = _sum_with_wins(deal.with_community_card(card))
        total += units
        wins += won
        count += runouts
    return total, wins, count


def _sum_with_wins(deal: Deal) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], int]:
    """Summed units, units of pots won alone, run-outs: a deal with no community card."""
    if len(deal.seats) == 2:
        return _heads_up_split(deal) if deal.game is Game.STUD8 else _heads_up(deal)
    return _cross_product(deal)


def _cross_product(deal: Deal) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], int]:
    """The general method: every run-out formed as a tuple of disjoint completions."""
    per_seat = [_completions(deal, seat) for seat in range(len(deal.seats))]
    # picked[i]: for every partial run-out, which completion seat i got.
    masks = per_seat[0][0]
    picked = [np.arange(len(masks))]
    for seat_masks, _ in per_seat[1:]:
        # Keep the pairs (partial run-out, completion) that share no card.
        rows, cols = np.nonzero((masks[:, None] & seat_masks[None, :]) == 0)
        masks = masks[rows] | seat_masks[cols]
        picked = [*(p[rows] for p in picked), cols]
    primary = np.stack([s.primary[p] for (_, s), p in zip(per_seat, picked, strict=True)])
    lows = [s.low[p] for (_, s), p in zip(per_seat, picked, strict=True) if s.low is not None]
    units = pot_units(Scores(primary, np.stack(lows) if lows else None))
    won = (units == UNITS).sum(axis=1) * UNITS
    return units.sum(axis=1), won, len(masks)
