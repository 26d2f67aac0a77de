"""Benchmark: hands per second through the rules engine, against PokerKit in the same run.

    .venv/bin/python bench/bench_engine.py [--hands 10000] [--seed 1] [--fold-chance 0.05]
                                           [--game stud|razz|stud8|all]

The hands (random size 2-8 on random seats, random cards, a few folds, the rest to
7th street and showdown) are generated as zone events *before* timing by
:func:`table_controller.simulation.deal_random`. The engine replays each hand's
events (``replay_events``: a fresh engine, every event applied, showdown).
PokerKit plays the same hands through its class for the game
(``FixedLimitSevenCardStud``, ``FixedLimitRazz``,
``FixedLimitSevenCardStudHighLowSplitEightOrBetter``) with the same cards, burns
and folds, everyone else checking or calling (table_controller/testing/pokerkit_stud.py).
The same hands are timed for every game asked (``--game all``, the default: stud,
razz and stud8 in turn, docs/rules.md "Variants"). Printed per game: median and p99 time
per hand, hands per second, and the ratios. Target (issue 3, issue 10): the engine
at least 10 times faster than PokerKit in every game.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from table_controller.domain.engine.dealing import replay_events
from table_controller.domain.engine.settings import TableSettings
from table_controller.domain.engine.variants import warm_up
from table_controller.domain.hands import Game
from table_controller.simulation import PhysicalDeal, random_hands
from table_controller.testing.pokerkit_stud import play

ROOT = Path(__file__).resolve().parents[1]

WARM_UP = 50
"""Untimed hands run through both before measuring."""


def time_interleaved(
    hands: Sequence[PhysicalDeal],
    runs: Sequence[Callable[[PhysicalDeal], object]],
    clock: Callable[[], int] = time.perf_counter_ns,
) -> list[list[int]]:
    """Nanoseconds per hand for each of ``runs``, hand by hand in turn.

    Interleaving makes both see the same machine load, so the ratio holds even on a
    busy CI box where a run of one after the other would not.
    """
    times: list[list[int]] = [[] for _ in runs]
    for hand in hands:
        for run, out in zip(runs, times, strict=True):
            start = clock()
            run(hand)
            out.append(clock() - start)
    return times


def engine_replay(hand: PhysicalDeal, settings: TableSettings | None = None) -> object:
    """The engine's work for one hand: a fresh engine, every event, showdown."""
    return replay_events(hand.events, settings)


def runs_for(game: Game) -> list[Callable[[PhysicalDeal], object]]:
    """The engine and PokerKit, each playing ``game``."""
    settings = TableSettings(game=game)

    def engine(hand: PhysicalDeal) -> object:
        return engine_replay(hand, settings)

    def reference(hand: PhysicalDeal) -> object:
        return play(hand, game)

    return [engine, reference]


def summary(name: str, times: Sequence[int]) -> tuple[float, float]:
    """Print one line; return (median ms, hands per second)."""
    ordered = sorted(times)
    median = statistics.median(ordered) / 1e6
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] / 1e6
    rate = len(times) / (sum(times) / 1e9)
    print(f"{name:<9} median {median:8.3f} ms   p99 {p99:8.3f} ms   {rate:10,.0f} hands/s")
    return median, rate


def main(argv: Sequence[str] | None = None) -> None:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--fold-chance", type=float, default=0.05)
    parser.add_argument("--game", choices=("stud", "razz", "stud8", "all"), default="all")
    args = parser.parse_args(argv)
    games = list(Game) if args.game == "all" else [Game(args.game)]

    hands = random_hands(args.hands, args.seed, args.fold_chance)
    events = sum(len(hand.events) for hand in hands)
    seventh = sum(hand.last_street == 7 for hand in hands)
    print(
        f"{len(hands)} hands, {events} zone events ({events / len(hands):.1f} per hand),"
        f" {seventh / len(hands):.0%} dealt to 7th street"
    )
    # Warm-up, untimed: steady-state hands are what a running table sees. The daemon
    # obtains the evaluator's tables and fills the dealer's words before its first
    # input (variants.warm_up); without it the engine here valued each new rank
    # multiset one at a time (the replay door's way since issue 25), about a fifth of
    # its instructions per hand in a short run. PokerKit warms up on the hands below.
    warm_up()
    warm = random_hands(WARM_UP, args.seed + 1, args.fold_chance)
    for game in games:
        time_interleaved(warm, runs_for(game))
    for game in games:
        for label, clock in (("wall clock", time.perf_counter_ns),
                             ("CPU time", time.process_time_ns)):
            # CPU time of this process is what the work costs whatever else the
            # machine runs; wall clock is what a table sees. Both, each in its own
            # interleaved run.
            print(f"-- {game}, {label}")
            engine, reference = time_interleaved(hands, runs_for(game), clock)
            engine_median, engine_rate = summary("engine", engine)
            ref_median, ref_rate = summary("PokerKit", reference)
            print(
                f"engine / PokerKit ({game}): {engine_rate / ref_rate:.1f}x hands/s,"
                f" {ref_median / engine_median:.1f}x on the median hand (target: 15x, issue 25)"
            )


if __name__ == "__main__":
    main()
