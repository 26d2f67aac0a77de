"""Benchmark: simulated hands per second with error injection, fast mode and daemon path.

    .venv/bin/python bench/bench_simulate.py [--batches 40] [--batch 250] [--rate 0.05]
        [--daemon-hands 8] [--speed 8] [--no-daemon] [--no-betting]

Fast mode (``stud-table simulate --mode fast``): planning (seeded deal, one error
injected at ``--rate`` per kind, clearing) plus the engine, timed per batch of
``--batch`` hands; printed as hands/s of the median batch and of the p99 (slow)
batch. The same batches without injection (every hand clean) are timed
interleaved with them, as the reference measured in the same run.

Fast mode with betting (``--betting``): the same, the players betting through
the console and the console kinds injected too; the clean card-only batches of
the same seeds are timed interleaved as the reference (the cost of betting).

Daemon path (``--mode daemon``): ``--daemon-hands`` hands at ``--speed`` through
emulated readers, the daemon process and mosquitto; printed as hands per minute
and the median / p99 seconds per hand (dealing, clearing, waiting for the table
to show clear).
"""

from __future__ import annotations

import argparse
import statistics
import time

from table_controller.simulation.kinds import CONSOLE_KINDS, DEAL_KINDS
from table_controller.simulation.runner import run_fast, simulate

WARM_UP = 200
"""Untimed hands first: the hand evaluator builds its tables on first use."""


def p99(values: list[float]) -> float:
    """The 99th percentile (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]


def bench_fast(batches: int, batch: int, rate: float) -> None:
    """Time fast-mode batches with injection and clean, interleaved."""
    rates = dict.fromkeys(DEAL_KINDS, rate)
    run_fast(WARM_UP, 0, rates)
    injected: list[float] = []
    clean: list[float] = []
    for number in range(batches):
        for rates_now, out in ((rates, injected), ({}, clean)):
            started = time.perf_counter()
            run_fast(batch, number + 1, rates_now)
            out.append(time.perf_counter() - started)
    for label, times in (("with injection", injected), ("clean reference", clean)):
        median = statistics.median(times)
        print(f"fast {label:<16} batch of {batch}: median {median * 1000:8.1f} ms"
              f" ({batch / median:7.0f} hands/s), p99 {p99(times) * 1000:8.1f} ms"
              f" ({batch / p99(times):7.0f} hands/s)")
    ratio = statistics.median(injected) / statistics.median(clean)
    print(f"fast injection cost: {ratio:.2f}x the clean batch time"
          f" ({rate:g} per kind, {rate * len(DEAL_KINDS):.0%} of hands with an error)")


def bench_fast_betting(batches: int, batch: int, rate: float) -> None:
    """Time fast-mode batches with betting (injected and clean) against card-only."""
    kinds = DEAL_KINDS + CONSOLE_KINDS
    rates = dict.fromkeys(kinds, rate)
    run_fast(WARM_UP, 0, rates, betting=True)
    timed: dict[str, list[float]] = {"betting, injection": [], "betting, clean": [],
                                     "card-only, clean": []}
    for number in range(batches):
        for label, rates_now, betting in (("betting, injection", rates, True),
                                          ("betting, clean", {}, True),
                                          ("card-only, clean", {}, False)):
            started = time.perf_counter()
            run_fast(batch, number + 1, rates_now, betting=betting)
            timed[label].append(time.perf_counter() - started)
    for label, times in timed.items():
        median = statistics.median(times)
        print(f"fast {label:<19} batch of {batch}: median {median * 1000:8.1f} ms"
              f" ({batch / median:7.0f} hands/s), p99 {p99(times) * 1000:8.1f} ms"
              f" ({batch / p99(times):7.0f} hands/s)")
    ratio = statistics.median(timed["betting, clean"]) / statistics.median(
        timed["card-only, clean"])
    print(f"fast betting cost: {ratio:.2f}x the card-only batch time; injection"
          f" {rate:g} per kind, {min(1.0, rate * len(kinds)):.0%} of hands with an error")


def bench_daemon(hands: int, speed: float, rate: float) -> None:
    """Hands per minute through the real daemon at ``speed``."""
    rates = {**dict.fromkeys(DEAL_KINDS, rate), "reader_flicker": rate}
    done: list[float] = []

    def progress(_count: int) -> None:
        done.append(time.perf_counter())

    started = time.perf_counter()
    report = simulate(hands, 1, rates, "daemon", speed=speed, progress=progress)
    per_hand = [b - a for a, b in zip([started, *done[:-1]], done, strict=True)]
    # The first hand also waits for the daemon and readers to come up.
    steady = per_hand[1:] or per_hand
    print(f"daemon speed {speed:g}: {hands} hands in {report.seconds:.1f} s"
          f" ({60 * hands / report.seconds:.1f} hands/min incl. start-up;"
          f" {60 / statistics.median(steady):.1f} hands/min per median hand)")
    print(f"daemon seconds per hand: median {statistics.median(steady):.2f},"
          f" p99 {p99(steady):.2f}; recall {report.recall},"
          f" false alerts {sum(report.false_alerts.values())}")


def main() -> None:
    """Parse the options and run both benchmarks."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=40)
    parser.add_argument("--batch", type=int, default=250)
    parser.add_argument("--rate", type=float, default=0.05)
    parser.add_argument("--daemon-hands", type=int, default=8)
    parser.add_argument("--speed", type=float, default=8.0)
    parser.add_argument("--no-daemon", action="store_true")
    parser.add_argument("--no-betting", action="store_true")
    args = parser.parse_args()
    bench_fast(args.batches, args.batch, args.rate)
    if not args.no_betting:
        bench_fast_betting(args.batches, args.batch, args.rate)
    if not args.no_daemon:
        bench_daemon(args.daemon_hands, args.speed, args.rate)


if __name__ == "__main__":
    main()
