"""Benchmark: equity, ours against phevaluator loops, our general method and PokerKit.

Every timing is of a **fresh spot** (random, seeded, the same for every contender):
each spot is computed once and timed once, so no cache holds that spot's cards
(repeating one spot measured ~40 % faster: issue 25). Kinds of spot:

* heads-up 5th street, exact, five dead cards (396,270 run-outs), in ``stud``,
  ``razz`` and ``stud8``;
* three-way 6th street, exact (about 36,000 run-outs), ``stud``;
* eight-way 3rd street, ``stud``, Monte Carlo to a standard error of at most 0.25
  points (the rule-15 community card included: 8 x 4 cards do not fit in 28).

Contenders, each named exactly in the output:

* **ours**: ``compute_equity`` (numpy; tables built before timing);
* **phe, every run-out** (stud): a plain Python loop over the same run-outs (exact
  spots) or the same number of random run-outs (Monte Carlo spot) calling
  phevaluator's C core ``_pheval.evaluate_7cards`` for every seat of every run-out
  (heads-up: seat 1 once per completion, seat 2 per run-out);
* **phe, completions once** (stud, heads-up only): the fastest obvious design with
  phevaluator, each seat's completions valued once by its C core (861 each) and the
  disjoint pairs compared with numpy broadcasting (card masks, one 861 x 861 matrix);
* **ours, cross product** (heads-up razz and stud8): our general method
  (``exact._cross_product``: every run-out formed), what stud8 heads-up used before
  the counting method of issue 25;
* **PokerKit** ``calculate_equities`` (stud: its model of seven hole cards, no board;
  with the community card, six hole cards and a one-card board): pure Python, so it is
  timed on 200 samples and its time per run-out multiplied by the run-outs ours
  covered ("extrapolated").

Prints per kind the median and p99 wall time of ours over the spots, CPU time, and each
contender's median with the ratio contender / ours (median wall), and the load average.

    .venv/bin/python bench/bench_equity.py [--spots 20]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
from collections.abc import Callable
from itertools import combinations

import numpy as np
import pokerkit
from phevaluator import _pheval

from table_controller.domain.cards import DECK, Card
from table_controller.domain.equity.core import compute_equity
from table_controller.domain.equity.evaluate import Game, tables
from table_controller.domain.equity.exact import _cross_product
from table_controller.domain.equity.model import prepare

Seats = dict[int, list[Card]]
PK = {card: next(iter(pokerkit.Card.parse(card.code))) for card in DECK}


def _spot(rng: random.Random, counts: tuple[int, ...], dead: int) -> tuple[Seats, list[Card]]:
    deck = list(DECK)
    rng.shuffle(deck)
    seats = {}
    for seat, count in enumerate(counts, start=1):
        seats[seat], deck = deck[:count], deck[count:]
    return seats, deck[:dead]


def _phe_exact(seats: Seats, dead: list[Card]) -> list[float]:
    """Plain enumeration of every run-out, phevaluator's C core per seat (lower = better)."""
    evaluate = _pheval.evaluate_7cards
    used = {c for cards in seats.values() for c in cards} | set(dead)
    unseen = [c.index for c in DECK if c not in used]
    hands = [[c.index for c in cards] for cards in seats.values()]
    needs = [7 - len(hand) for hand in hands]
    if len(hands) == 2:
        return _phe_heads_up(hands, needs, unseen)
    totals = [0.0] * len(hands)

    def deal(i: int, left: list[int], finals: list[int]) -> None:
        if i == len(hands):
            best = min(finals)
            winners = [j for j, v in enumerate(finals) if v == best]
            for j in winners:
                totals[j] += 1 / len(winners)
            return
        for mine in combinations(left, needs[i]):
            rest = [c for c in left if c not in mine]
            deal(i + 1, rest, [*finals, evaluate(*hands[i], *mine)])

    deal(0, unseen, [])
    total = sum(totals)
    return [t / total for t in totals]


def _phe_heads_up(hands: list[list[int]], needs: list[int], unseen: list[int]) -> list[float]:
    """The tightest plain loop for two seats: no lists built per run-out."""
    evaluate = _pheval.evaluate_7cards
    first, second = hands
    wins = ties = count = 0
    for mine in combinations(unseen, needs[0]):
        value = evaluate(*first, *mine)
        rest = [c for c in unseen if c not in mine]
        for theirs in combinations(rest, needs[1]):
            other = evaluate(*second, *theirs)
            count += 1
            if value < other:
                wins += 1
            elif value == other:
                ties += 1
    share = (wins + ties / 2) / count
    return [share, 1 - share]


def _phe_completions_once(seats: Seats, dead: list[Card]) -> list[float]:
    """Heads-up: each seat's completions valued once by phevaluator's C core, the
    disjoint pairs compared with numpy broadcasting."""
    evaluate = _pheval.evaluate_7cards
    used = {c for cards in seats.values() for c in cards} | set(dead)
    unseen = [c.index for c in DECK if c not in used]
    values, masks = [], []
    for cards in seats.values():
        hand = [c.index for c in cards]
        picks = list(combinations(unseen, 7 - len(hand)))
        values.append(np.array([evaluate(*hand, *pick) for pick in picks]))
        masks.append(np.array([sum(1 << c for c in pick) for pick in picks], dtype=np.uint64))
    disjoint = (masks[0][:, None] & masks[1][None, :]) == 0
    wins = ((values[0][:, None] < values[1][None, :]) & disjoint).sum()
    ties = ((values[0][:, None] == values[1][None, :]) & disjoint).sum()
    share = (wins + ties / 2) / disjoint.sum()
    return [float(share), float(1 - share)]


def _phe_sampled(seats: Seats, samples: int, community: bool) -> list[float]:
    """The same number of random run-outs as ours, phevaluator's C core per seat."""
    evaluate = _pheval.evaluate_7cards
    rng = random.Random(1)
    used = {c for cards in seats.values() for c in cards}
    unseen = [c.index for c in DECK if c not in used]
    hands = [[c.index for c in cards] for cards in seats.values()]
    needs = [7 - len(hand) - (1 if community else 0) for hand in hands]
    dealt = sum(needs) + (1 if community else 0)
    totals = [0.0] * len(hands)
    for _ in range(samples):
        cards = rng.sample(unseen, dealt)
        extra = cards[-1:] if community else []
        finals, start = [], 0
        for hand, need in zip(hands, needs, strict=True):
            finals.append(evaluate(*hand, *cards[start:start + need], *extra))
            start += need
        best = min(finals)
        winners = [j for j, v in enumerate(finals) if v == best]
        for j in winners:
            totals[j] += 1 / len(winners)
    return [t / samples for t in totals]


def _pokerkit_per_runout(seats: Seats, dead: list[Card], community: bool) -> float:
    samples = 200
    deck = [PK[c] for c in DECK if c not in dead]
    random.seed(3)
    start = time.perf_counter()
    pokerkit.calculate_equities(
        [[[PK[c] for c in cards]] for cards in seats.values()], [],
        6 if community else 7, 1 if community else 0, deck, (pokerkit.StandardHighHand,),
        sample_count=samples,
    )
    return (time.perf_counter() - start) / samples


def _timed(fn: Callable[[], object]) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _contenders(game: Game, heads_up: bool) -> list[str]:
    if game is not Game.STUD:
        return ["ours, cross product"]
    if heads_up:
        return ["phe, every run-out", "phe, completions once", "PokerKit (extrapolated)"]
    return ["phe, every run-out", "PokerKit (extrapolated)"]


def _contender(name: str, seats: Seats, dead: list[Card], game: Game, *,
               runouts: int, community: bool, exact: bool) -> tuple[float, list[float] | None]:
    """(seconds, its equities or None) of one contender on one spot."""
    start = time.perf_counter()
    if name == "phe, every run-out":
        equities = (_phe_exact(seats, dead) if exact
                    else _phe_sampled(seats, runouts, community))
    elif name == "phe, completions once":
        equities = _phe_completions_once(seats, dead)
    elif name == "ours, cross product":
        _cross_product(prepare(seats, dead, game))
        equities = None
    else:
        return _pokerkit_per_runout(seats, dead, community) * runouts, None
    return time.perf_counter() - start, equities


def main() -> None:
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spots", type=int, default=20, help="fresh spots per kind")
    args = parser.parse_args()
    build, _ = _timed(tables)
    print(f"table build (once per process): {build * 1000:.0f} ms;"
          f" load average at start {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)")
    kinds = [
        ("heads-up 5th street, exact", Game.STUD, (5, 5), 5, 0.050),
        ("heads-up 5th street, exact", Game.RAZZ, (5, 5), 5, 0.050),
        ("heads-up 5th street, exact", Game.STUD8, (5, 5), 5, 0.005),
        ("three-way 6th street, exact", Game.STUD, (6, 6, 6), 0, 0.050),
        ("eight-way 3rd street, MC (SE <= 0.25 pt)", Game.STUD, (3,) * 8, 0, 0.100),
    ]
    rng = random.Random(2026)
    for name, game, counts, dead, target in kinds:
        walls, cpus, runouts, diffs = [], [], [], []
        others: dict[str, list[float]] = {c: [] for c in _contenders(game, len(counts) == 2)}
        spots = args.spots if len(counts) < 8 else max(3, args.spots // 4)
        for _ in range(spots):
            seats, dead_cards = _spot(rng, counts, dead)
            wall, cpu = _timed(lambda s=seats, d=dead_cards, g=game: compute_equity(s, d, g))
            result = compute_equity(seats, dead_cards, game)  # the result, untimed
            walls.append(wall)
            cpus.append(cpu)
            runouts.append(result.runouts)
            for contender, times in others.items():
                seconds, equities = _contender(
                    contender, seats, dead_cards, game, runouts=result.runouts,
                    community=result.community, exact=result.exact)
                times.append(seconds)
                if equities is not None:
                    diffs.extend(abs(a - b) for a, b in zip(result.equity.values(), equities,
                                                            strict=True))
        med = statistics.median(walls)
        print(f"\n{name}, {game.value}: {len(walls)} fresh spots, run-outs"
              f" {statistics.median(runouts):,.0f} (median); target {target * 1000:.0f} ms")
        print(f"  ours: median {med * 1000:.2f} ms, p99 {_pct(walls, 0.99) * 1000:.2f} ms,"
              f" CPU median {statistics.median(cpus) * 1000:.2f} ms")
        for contender, times in others.items():
            other = statistics.median(times)
            unit = f"{other:.1f} s" if other >= 10 else f"{other * 1000:.1f} ms"
            print(f"  {contender}: median {unit} = {other / med:,.1f} x ours")
        if diffs:
            print(f"  largest equity difference from the phevaluator loops: {max(diffs):.4f}")
    print(f"\nload average at the end {os.getloadavg()[0]:.2f}")
    print("phe = phevaluator's C core (_pheval.evaluate_7cards) called from Python. Exact"
          " spots differ from it by rounding only; the MC spot compares two independent"
          " samples of the same size.")


if __name__ == "__main__":
    main()
