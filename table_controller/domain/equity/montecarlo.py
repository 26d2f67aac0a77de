"""Monte Carlo equity: seeded random run-outs, evaluated a batch at a time in numpy.

Each sample deals the unseen cards in a random order (a per-sample sort of random
keys), gives every seat its cards from that order and, with a community card
(rule 15), the last one to every sharing seat. The generator is numpy's PCG64
seeded with ``seed``, batches have a fixed size, so the same inputs and seed give
the same numbers on every run: replay and simulation stay exact.

Without an explicit sample count, a first batch of :data:`BATCH` measures the
variance, then more are drawn (as many as that variance says the target needs, plus
5 %) until every seat's standard error is at most :data:`TARGET_STDERR` (0.25
percentage points), and at most :data:`MAX_AUTO_SAMPLES`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from table_controller.domain.equity.evaluate import CODE, SUIT_BITS, Scores, scores
from table_controller.domain.equity.model import UNITS, Deal, pot_units

__all__ = ["BATCH", "MAX_AUTO_SAMPLES", "TARGET_STDERR", "Sampled", "sample_units"]

BATCH: Final = 10_000
"""Samples drawn and evaluated together (about 10-20 MB of arrays for eight seats)."""
TARGET_STDERR: Final = 0.0025
"""Automatic sampling stops once every seat's standard error is this small."""
MAX_AUTO_SAMPLES: Final = 200_000
"""Automatic sampling never draws more than this (a spot needing more is rare)."""


@dataclass(frozen=True, slots=True)
class Sampled:
    """Sums over the samples, per seat, in pot units."""

    units: npt.NDArray[np.int64]
    squares: npt.NDArray[np.float64]
    wins: npt.NDArray[np.int64]
    samples: int

    def stderr(self) -> npt.NDArray[np.float64]:
        """Standard error of each seat's mean pot share (as a fraction of the pot)."""
        n = self.samples
        mean = self.units / n
        variance = np.maximum(self.squares / n - mean * mean, 0.0) * n / max(n - 1, 1)
        result: npt.NDArray[np.float64] = np.sqrt(variance / n) / UNITS
        return result


def _bits_of(
    base: np.uint64, own: list[npt.NDArray[np.intp]]
) -> Callable[[npt.NDArray[np.intp]], npt.NDArray[np.uint64]]:
    """Summed suit bits of some rows, computed only when a flush needs them."""

    def bits(rows: npt.NDArray[np.intp]) -> npt.NDArray[np.uint64]:
        total = np.full(len(rows), base, dtype=np.uint64)
        for column in own:
            total += SUIT_BITS[column[rows]]
        return total

    return bits


def _batch(
    deal: Deal, rng: np.random.Generator, size: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64], npt.NDArray[np.int64]]:
    unseen = np.asarray(deal.unseen, dtype=np.intp)
    count = len(unseen)
    dealt = sum(deal.needs) + int(deal.community)
    # A random permutation per row: sort random keys whose low bits hold the position.
    # uint32 keys sort ten times faster than uint64 in numpy; two of a row's keys tie
    # with probability about C(u, 2) / 2**26 (< 2e-5), and then keep their dealing
    # order: a bias far below any standard error reported.
    index_bits = max(1, (count - 1).bit_length())
    keys = rng.integers(0, 1 << (32 - index_bits), size=(size, count), dtype=np.uint32)
    keys = (keys << np.uint32(index_bits)) | np.arange(count, dtype=np.uint32)
    keys.sort(axis=1)
    # Row j of ``cards`` holds the j-th card dealt in every sample (contiguous rows
    # make the gathers below fast).
    positions = (keys[:, :dealt] & np.uint32((1 << index_bits) - 1)).T
    cards = unseen[positions]
    codes = CODE[cards]
    primary, low = [], []
    start = 0
    for seat, need in enumerate(deal.needs):
        rows = list(range(start, start + need))
        start += need
        if deal.community_seats[seat]:
            rows.append(dealt - 1)
        # Row by row: numpy reduces a short axis far slower than it adds arrays.
        code = np.full(size, deal.base_code[seat], dtype=np.int64)
        for row in rows:
            code += codes[row]
        own = [cards[row] for row in rows]
        seat_scores = scores(code, _bits_of(deal.base_bits[seat], own), deal.game)
        primary.append(seat_scores.primary)
        if seat_scores.low is not None:
            low.append(seat_scores.low)
    units = pot_units(Scores(np.stack(primary), np.stack(low) if low else None))
    squares = (units.astype(np.float64) ** 2).sum(axis=1)
    return units.sum(axis=1), squares, (units == UNITS).sum(axis=1) * UNITS


def sample_units(deal: Deal, samples: int | None, seed: int) -> Sampled:
    """Sample run-outs: exactly ``samples`` of them, or adaptively when ``None``."""
    rng = np.random.default_rng(seed)
    seats = len(deal.seats)
    units = np.zeros(seats, dtype=np.int64)
    squares = np.zeros(seats, dtype=np.float64)
    wins = np.zeros(seats, dtype=np.int64)
    done = 0
    limit = MAX_AUTO_SAMPLES if samples is None else samples
    while done < limit:
        size = min(BATCH, limit - done)
        batch_units, batch_squares, batch_wins = _batch(deal, rng, size)
        units += batch_units
        squares += batch_squares
        wins += batch_wins
        done += size
        if samples is None:
            worst = float(Sampled(units, squares, wins, done).stderr().max())
            if worst <= TARGET_STDERR:
                break
            # The error falls as 1/sqrt(n): aim at the samples the variance seen so far
            # needs (5 % margin, whole thousands) rather than overshoot by a batch.
            needed = math.ceil(done * (worst / TARGET_STDERR) ** 2 * 1.05 / 1000) * 1000
            limit = min(MAX_AUTO_SAMPLES, max(needed, done + 1000))
    return Sampled(units, squares, wins, done)
