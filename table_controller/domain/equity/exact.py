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
A community card (rule 15) is enumerated outside: for each possible card the rest
is an ordinary deal.
"""

from __future__ import annotations

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
    need = deal.needs[seat]
    picks = np.array(list(combinations(deal.unseen, need)), dtype=np.intp)
    return picks.reshape(len(picks), need)  # need 0: one empty completion


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
    if len(deal.seats) == 2 and deal.game is not Game.STUD8:
        return _heads_up(deal)
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
