"""Pot equity of every live seat: exact when affordable, else seeded Monte Carlo.

Pure: no I/O, no clock. The same inputs (and seed) give the same result, so a
replayed or simulated hand shows exactly the numbers the live table showed.

The switch (docs/equity.md), by the number of run-outs: a spot is enumerated
exactly when it has at most :data:`EXACT_LIMIT` run-outs (three-way 6th street:
about 36,000; four-way 7th street: about 490,000; five-way 7th street, about
3 million, is sampled), or, heads-up
in ``stud`` and ``razz`` where run-outs are counted without being formed, at most
:data:`HEADS_UP_EXACT_LIMIT` (4th street: about 100-140 million; 3rd street, about
10 billion, is sampled). Otherwise it is sampled.

Equity counts a win as the whole pot and a k-way tie as 1/k each; in ``stud8``
each half counts half and is split the same way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from table_controller.domain.cards import Card
from table_controller.domain.equity.evaluate import Game
from table_controller.domain.equity.exact import exact_units
from table_controller.domain.equity.model import UNITS, EquityError, prepare
from table_controller.domain.equity.montecarlo import sample_units

__all__ = ["EXACT_LIMIT", "HEADS_UP_EXACT_LIMIT", "EquityError", "EquityResult", "compute_equity"]

EXACT_LIMIT: Final = 1_000_000
"""Spots with at most this many run-outs are enumerated exactly (tens of ms)."""
HEADS_UP_EXACT_LIMIT: Final = 200_000_000
"""Heads-up stud and razz: the counting method takes about 0.1 s at this size."""
CROSS_PRODUCT_CAP: Final = 5_000_000
"""Hard cap for the general method even when ``exact_limit`` asks for more: it holds
every run-out in memory (about 100 bytes each)."""
MAX_SAMPLES: Final = 2_000_000
"""An explicit sample count above this is refused (it would run for seconds)."""


@dataclass(frozen=True, slots=True)
class EquityResult:
    """Each seat's pot equity and how it was computed.

    ``equity[s] = win[s] + tie[s]``: ``win`` is the share of run-outs where seat
    ``s`` takes the whole pot alone (a scoop in ``stud8``), ``tie`` what it gets
    from divided pots (ties, and in ``stud8`` halves and quarters). ``stderr`` is
    the standard error of each equity (Monte Carlo only, else ``None``).
    ``community`` says the last card was modelled as one shared card (rule 15).
    """

    game: Game
    equity: dict[int, float]
    win: dict[int, float]
    tie: dict[int, float]
    exact: bool
    runouts: int
    possible_runouts: int
    stderr: dict[int, float] | None
    community: bool
    seed: int | None


def compute_equity(
    seats: Mapping[int, Sequence[Card]],
    dead: Sequence[Card] = (),
    game: Game = Game.STUD,
    *,
    samples: int | None = None,
    seed: int = 0,
    exact_limit: int | None = None,
) -> EquityResult:
    """Pot equity of every seat in ``seats`` (seat number -> its cards, down and up).

    ``dead``: cards known out of play. ``samples``: Monte Carlo sample count when the
    spot is sampled (default: until the standard error is at most 0.25 points).
    ``exact_limit`` overrides the run-out count up to which the spot is enumerated
    (never above :data:`CROSS_PRODUCT_CAP` except heads-up in stud and razz).
    Raises :class:`EquityError` naming the problem for an impossible spot.
    """
    if samples is not None and not 1 <= samples <= MAX_SAMPLES:
        raise EquityError(f"samples must be 1 to {MAX_SAMPLES}, got {samples}")
    deal = prepare(seats, dead, game)
    possible = deal.runouts
    heads_up = len(deal.seats) == 2 and game is not Game.STUD8
    if exact_limit is None:
        exact_limit = HEADS_UP_EXACT_LIMIT if heads_up else EXACT_LIMIT
    if not heads_up:
        exact_limit = min(exact_limit, CROSS_PRODUCT_CAP)
    if possible <= exact_limit:
        units, wins, runouts = exact_units(deal)
        stderr = None
        used_seed = None
    else:
        sampled = sample_units(deal, samples, seed)
        units, wins, runouts = sampled.units, sampled.wins, sampled.samples
        stderr = dict(zip(deal.seats, map(float, sampled.stderr()), strict=True))
        used_seed = seed
    scale = UNITS * runouts
    equity = {seat: int(u) / scale for seat, u in zip(deal.seats, units, strict=True)}
    win = {seat: int(w) / scale for seat, w in zip(deal.seats, wins, strict=True)}
    tie = {seat: int(u - w) / scale for seat, u, w in zip(deal.seats, units, wins, strict=True)}
    return EquityResult(
        game=game,
        equity=equity,
        win=win,
        tie=tie,
        exact=stderr is None,
        runouts=runouts,
        possible_runouts=possible,
        stderr=stderr,
        community=deal.community,
        seed=used_seed,
    )
