"""PHH import/export and replay republishing: per-hand cost (median, p99).

1. **Import**: read a WSOP PHH file and turn it into a physical table script
   (``read_phh`` + ``import_hand`` + ``script_lines``), per hand.
2. **Export**: a table script's hand back to PHH text (``parse_script`` +
   ``export_script`` + ``write_phh``), per hand.
3. **Reference**: PokerKit reading and replaying the same PHH text
   (``HandHistory.loads`` + iterating every state), per hand, measured in the same
   run; the ratios say how our import/export compare with just loading the file.
4. **Republish loop**: events per second through the engine and the daemon's
   projection into a publisher that drops everything (``--speed`` so high that no
   wait happens): the ceiling of ``stud-table replay --mqtt`` before MQTT.

    .venv/bin/python bench/bench_phh.py [--rounds 200] [--hands 2000]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pokerkit import HandHistory

from table_controller.domain.engine.settings import TableSettings
from table_controller.handhistory import export_script, import_hand, read_phh, write_phh
from table_controller.records.script import parse_script
from table_controller.simulation import deal_random
from table_controller.tools.republish import Recording, republish

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "phh-wsop-2023-event43"


class NullPublisher:
    """Accepts every payload and does nothing (the loop's own cost only)."""

    def start(self) -> None:
        """Nothing to start."""

    def republish_retained(self) -> None:
        """Nothing retained."""

    def publish_state(self, public: Any, secure: Any) -> None:
        """Dropped."""

    def publish_event(self, public: Any, secure: Any) -> None:
        """Dropped."""

    def publish_alert(self, alert: Any) -> None:
        """Dropped."""

    def publish_reader(self, status: Any) -> None:
        """Dropped."""

    def publish_reader_stats(self, stats: Any) -> None:
        """Dropped."""

    def publish_notice(self, public: Any, secure: Any) -> None:
        """Dropped."""

    def stop(self, timeout: float = 0.0) -> None:
        """Nothing to stop."""


def timings(work: Callable[[], object], rounds: int) -> list[float]:
    out = []
    for _ in range(rounds):
        start = time.perf_counter()
        work()
        out.append(time.perf_counter() - start)
    return out


def p99(values: list[float]) -> float:
    return sorted(values)[min(len(values) - 1, int(len(values) * 0.99))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200, help="passes over the 13 hands")
    parser.add_argument("--hands", type=int, default=2000, help="hands for the republish loop")
    args = parser.parse_args()
    texts = [p.read_text() for p in sorted(DATA.glob("stud-hand-*.phh"))]
    scripts = [import_hand(read_phh(t)).script_lines() for t in texts]

    def pokerkit(text: str) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            list(HandHistory.loads(text))

    results: dict[str, list[float]] = {"import": [], "export": [], "pokerkit load+replay": []}
    for text, lines in zip(texts, scripts, strict=True):
        results["import"] += timings(
            lambda t=text: import_hand(read_phh(t)).script_lines(), args.rounds)
        results["export"] += timings(
            lambda s=lines: write_phh(export_script(parse_script(s))[0]), args.rounds)
        results["pokerkit load+replay"] += timings(lambda t=text: pokerkit(t), args.rounds)
    reference = statistics.median(results["pokerkit load+replay"])
    print(f"{len(texts)} WSOP hands x {args.rounds} rounds, per hand:")
    for name, values in results.items():
        median = statistics.median(values)
        print(f"  {name:<22} median {median * 1e3:7.3f} ms  p99 {p99(values) * 1e3:7.3f} ms"
              f"  ({median / reference:4.2f}x PokerKit)")

    rng = random.Random(1)
    events = []
    for number in range(args.hands):
        seats = sorted(rng.sample(range(1, 9), rng.randint(2, 8)))
        deal = deal_random(seats, rng, hand_id=number + 1, start=number * 100.0, step=0.5)
        events += deal.events
    recording = Recording(TableSettings(), tuple(events), journal=True)
    runs = []
    for _ in range(3):
        start = time.perf_counter()
        republish(recording, NullPublisher(), "bench", speed=1e12)
        runs.append(time.perf_counter() - start)
    best = statistics.median(runs)
    print(f"republish loop (no MQTT): {len(events)} events of {args.hands} hands,"
          f" median of 3 runs {best:.2f} s = {len(events) / best:,.0f} events/s")


if __name__ == "__main__":
    main()
