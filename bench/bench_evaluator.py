"""Benchmark: seven-card hand evaluation, ours against phevaluator and PokerKit.

All evaluators get the same random seven-card hands in the same run. Each is timed
per batch; the script prints, per evaluator, the median and 99th-percentile time per
hand over the batches, the median throughput, and the ratio to phevaluator's public
``evaluate_cards`` measured in this run.

    .venv/bin/python bench/bench_evaluator.py [--batches 200] [--batch-size 2000]

PokerKit (pure Python, about 2,000 hands/s) gets 1/20 of the batch size so the run
stays short; its per-hand figures are comparable all the same.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable, Sequence
from itertools import combinations, combinations_with_replacement

import phevaluator
from phevaluator import _pheval
from pokerkit import StandardHighHand

from table_controller.domain import _hand_tables
from table_controller.domain.cards import Card
from table_controller.domain.hands import batch_evaluate, evaluate

Hands = Sequence[Sequence[int]]


def _ours_batch(hands: Hands) -> object:
    return batch_evaluate(hands)


def _ours_cards(hands: Hands) -> object:
    cards = [[Card.from_index(i) for i in hand] for hand in hands]
    start = time.perf_counter()
    for hand in cards:
        evaluate(hand)
    return time.perf_counter() - start  # conversion to Card is not part of the cost


def _pheval_public(hands: Hands) -> object:
    return [phevaluator.evaluate_cards(*hand) for hand in hands]


def _pheval_c_core(hands: Hands) -> object:
    core = _pheval.evaluate_7cards
    return [core(*hand) for hand in hands]


def _pheval_strength_map() -> list[int]:
    """phevaluator rank (1..7462) -> our strength int, from one hand of every class.

    Five cards per class: every rank multiset with suits dealt round-robin (never five
    of a suit) plus every five-rank mask in one suit. This is what a phevaluator-backed
    :class:`~table_controller.domain.hands.BatchEvaluator` would need to return our ints.
    """
    hands = [
        [(rank - 2) * 4 + position % 4 for position, rank in enumerate(ranks)]
        for ranks in combinations_with_replacement(range(2, 15), 5)
        if not any(map(int.__eq__, ranks, ranks[4:]))
    ]
    hands += [[(rank - 2) * 4 for rank in ranks] for ranks in combinations(range(2, 15), 5)]
    strengths = batch_evaluate(hands)
    by_rank = [0] * 7463
    for hand, strength in zip(hands, strengths, strict=True):
        by_rank[_pheval.evaluate_5cards(*hand)] = strength
    return by_rank


def _pheval_backend() -> Callable[[Hands], list[int]]:
    """A candidate fast BatchEvaluator: phevaluator's C core, answers in our ints."""
    core, to_ours = _pheval.evaluate_7cards, _pheval_strength_map()

    def evaluate_batch(hands: Hands) -> list[int]:
        return [to_ours[core(*hand)] for hand in hands]

    return evaluate_batch


def _pokerkit(hands: Hands) -> object:
    texts = ["".join(Card.from_index(i).code for i in hand) for hand in hands]
    start = time.perf_counter()
    for text in texts:
        StandardHighHand.from_game(text)
    return time.perf_counter() - start


def _evaluators() -> dict[str, tuple[Callable[[Hands], object], int]]:
    """name -> (function, batch-size divisor)."""
    return {
        "ours batch_evaluate (indices)": (_ours_batch, 1),
        "ours evaluate (Card objects)": (_ours_cards, 1),
        "phevaluator evaluate_cards": (_pheval_public, 1),
        "phevaluator C core (no wrapper)": (_pheval_c_core, 1),
        "phevaluator C core -> our ints": (_pheval_backend(), 1),
        "pokerkit StandardHighHand": (_pokerkit, 20),
    }

REFERENCE = "phevaluator evaluate_cards"


def _hands(rng: random.Random, count: int) -> list[list[int]]:
    return [rng.sample(range(52), 7) for _ in range(count)]


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def main() -> None:
    """Run the benchmark and print one row per evaluator."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    start = time.perf_counter()
    _hand_tables.tables()
    print(f"table build (once per process): {time.perf_counter() - start:.2f} s")

    rng = random.Random(args.seed)
    batches = [_hands(rng, args.batch_size) for _ in range(args.batches)]
    evaluators = _evaluators()
    # The phevaluator-backed candidate must answer exactly our ints to be a backend.
    candidate = evaluators["phevaluator C core -> our ints"][0]
    if candidate(batches[0]) != batch_evaluate(batches[0]):
        raise SystemExit("phevaluator-backed batch evaluator disagrees with ours")
    per_hand: dict[str, list[float]] = {name: [] for name in evaluators}
    # Interleave evaluators batch by batch so machine load hits them all alike.
    for batch in batches:
        for name, (function, divisor) in evaluators.items():
            hands = batch[: max(1, len(batch) // divisor)]
            t0 = time.perf_counter()
            inner = function(hands)
            elapsed = inner if isinstance(inner, float) else time.perf_counter() - t0
            per_hand[name].append(elapsed / len(hands) * 1e9)

    reference = statistics.median(per_hand[REFERENCE])
    print(
        f"{args.batches} batches of {args.batch_size} random 7-card hands"
        f" (PokerKit: {args.batch_size // 20}); ns per hand; ratio = speed vs {REFERENCE}"
    )
    print(f"{'evaluator':34} {'median':>9} {'p99':>9} {'hands/s':>11} {'ratio':>7}")
    for name, times in per_hand.items():
        median = statistics.median(times)
        print(
            f"{name:34} {median:9.0f} {_percentile(times, 0.99):9.0f}"
            f" {1e9 / median:11,.0f} {reference / median:7.2f}"
        )


if __name__ == "__main__":
    main()
