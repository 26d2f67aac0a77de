"""Benchmark: stud equity, ours against a phevaluator loop and PokerKit, same spots.

Three kinds of spot (random, seeded, the same for every contender):

* heads-up 5th street, exact (five dead cards: about 400,000 run-outs);
* three-way 6th street, exact (about 36,000 run-outs);
* eight-way 3rd street, Monte Carlo to a standard error of at most 0.25 points
  (the rule-15 community card included: 8 x 4 cards do not fit in 28).

Contenders:

* **ours**: ``compute_equity`` (numpy; tables built before timing);
* **phevaluator loop**: a plain loop over the same run-outs (exact spots) or the
  same number of random run-outs (Monte Carlo spot), each seat valued by
  phevaluator's C core ``_pheval.evaluate_7cards`` — the obvious fast design;
* **PokerKit** ``calculate_equities`` (its stud model: seven hole cards, no board;
  with the community card, six hole cards and a one-card board): pure Python, so it
  is timed on a few hundred samples and its time per run-out is multiplied by the
  run-outs ours covered ("extrapolated").

Prints per spot kind the median and p99 wall time of ours, CPU time too (the
machine may be shared), and the ratios. ``--spots`` spots per kind, ``--repeat``
timings of ours per spot.

    .venv/bin/python bench/bench_equity.py [--spots 5] [--repeat 10]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable
from itertools import combinations

import pokerkit
from phevaluator import _pheval

from table_controller.domain.cards import DECK, Card
from table_controller.domain.equity.core import compute_equity
from table_controller.domain.equity.evaluate import tables

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


def main() -> None:
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spots", type=int, default=5, help="random spots per kind")
    parser.add_argument("--repeat", type=int, default=10, help="timings of ours per spot")
    args = parser.parse_args()
    build, _ = _timed(tables)
    print(f"table build (once per process): {build * 1000:.0f} ms")
    kinds = [
        ("heads-up 5th street, exact", (5, 5), 5, 0.050),
        ("three-way 6th street, exact", (6, 6, 6), 0, 0.050),
        ("eight-way 3rd street, MC (SE <= 0.25 pt)", (3,) * 8, 0, 0.100),
    ]
    rng = random.Random(2026)
    print(f"{'spot':44} {'runouts':>9} {'ours med':>9} {'ours p99':>9} {'ours cpu':>9}"
          f" {'target':>7} {'phe loop':>9} {'x':>6} {'PokerKit*':>10} {'x':>7} {'max|d|':>7}")
    for name, counts, dead, target in kinds:
        walls, cpus, phe_times, pk_times, runouts, diffs = [], [], [], [], [], []
        for _ in range(args.spots):
            seats, dead_cards = _spot(rng, counts, dead)
            result = compute_equity(seats, dead_cards)
            for _ in range(args.repeat):
                wall, cpu = _timed(lambda s=seats, d=dead_cards: compute_equity(s, d))
                walls.append(wall)
                cpus.append(cpu)
            runouts.append(result.runouts)
            if result.exact:
                start = time.perf_counter()
                reference = _phe_exact(seats, dead_cards)
            else:
                start = time.perf_counter()
                reference = _phe_sampled(seats, result.runouts, result.community)
            phe_times.append(time.perf_counter() - start)
            diffs.extend(abs(a - b) for a, b in zip(result.equity.values(), reference,
                                                    strict=True))
            pk_times.append(_pokerkit_per_runout(seats, dead_cards, result.community)
                            * result.runouts)
        med = statistics.median(walls)
        phe = statistics.median(phe_times)
        pk = statistics.median(pk_times)
        print(f"{name:44} {statistics.median(runouts):>9,.0f} {med * 1000:>7.1f}ms"
              f" {_pct(walls, 0.99) * 1000:>7.1f}ms {statistics.median(cpus) * 1000:>7.1f}ms"
              f" {target * 1000:>5.0f}ms {phe * 1000:>7.0f}ms {phe / med:>6.1f}"
              f" {pk:>9.1f}s {pk / med:>7.0f} {max(diffs):>7.4f}")
    print("x = contender time / ours (median wall). PokerKit* = its time per sample x the"
          " run-outs ours covered. max|d| = largest equity difference from the phevaluator"
          " loop (exact spots: rounding only; MC spot: two independent samples).")


if __name__ == "__main__":
    main()
