"""The daemon core's work per card against the in-process reference, in instructions.

Issue 20's target holds the engine thread's CPU time per card against the pure
engine + projection + JSON measured back to back. In the daemon a card comes to a
processor idle since the last one (cold caches), and the same work then costs several
times the CPU (``bench_daemon_latency.py`` prints the reference both ways). This bench
measures what does not depend on that: the work.

* ``core``: the real :class:`~table_controller.daemon.core.TableCore` (presence with
  the daemon's 0.3 s settle window, journal with fsync ``never``, engine, projection)
  fed a demo table's reader reports on a fake clock (``testing.core_rig.CoreTable``),
  every payload stamped and serialised as ``MqttPublisher`` does; no paho and no
  threads (their share is the difference to the daemon's own figure).
* ``ref``: the reference loop of ``bench_daemon_latency.py`` (engine + projection +
  JSON per zone event).

Without ``--callgrind`` both run back to back and print CPU time per card (the
harness's own planning and clock included for ``core``). With ``--callgrind`` each runs
under ``valgrind --tool=callgrind`` with 1 and ``--hands`` + 1 hands, and the same for the
hand plans alone; the differences give instructions per card, harness and start-up
taken out, independent of the machine's load. Not part of the product.

    python bench/bench_daemon_work.py --hands 4 [--callgrind]
"""

from __future__ import annotations

import argparse
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import bench_daemon_latency

from table_controller.daemon.logging import configure_logging
from table_controller.demo.dealer import plan_hand
from table_controller.mqtt import publisher
from table_controller.mqtt.payloads import to_json
from table_controller.testing import core_rig

ROOT = Path(__file__).resolve().parents[1]
SEED = 5


def run_core(hands: int) -> tuple[int, float]:
    """(cards applied, CPU seconds) of ``hands`` demo hands through the core, after one
    hand of warm-up."""
    stamped = [0]

    class Stamping(core_rig.RecordingPublisher):
        """Stamps and serialises every payload as the real publisher does."""

        def _add(self, topic: str, payload: object) -> None:
            self.published += 1
            if payload is not None:
                stamped[0] += 1
                to_json(publisher._stamp(payload, stamped[0], 1.0))  # type: ignore[type-var]

    with tempfile.TemporaryDirectory(prefix="bench-work-") as tmp:
        table = core_rig.CoreTable(Path(tmp), keep=False, settle_time=0.3, publisher=Stamping)
        try:
            rng = random.Random(SEED)
            table.hand(rng)  # warm-up: the first showdown loads the evaluator's tables
            start, start_cpu = table.core.events_applied, time.thread_time()
            for _ in range(hands):
                table.hand(rng)
            return table.core.events_applied - start, time.thread_time() - start_cpu
        finally:
            table.close()


def run_ref(hands: int) -> tuple[int, float]:
    """(events, CPU seconds of the timed part) of the latency bench's reference."""
    _wall, cpu = bench_daemon_latency.run_in_process(hands, SEED)
    return len(cpu), sum(cpu)


def run_plans(mode: str, hands: int) -> int:
    """Only the hand plans the ``core`` or ``ref`` run of ``hands`` hands makes."""
    rng = random.Random(SEED)
    if mode == "core":
        for _ in range(hands + 1):
            core_rig.plan_hand(rng, seats=8)
    else:
        for _ in range(3):
            _ = plan_hand(rng, players=8, fold_chance=0.0).all_motions
        for _ in range(hands):
            _ = plan_hand(rng, players=8).all_motions
    return hands


def _instructions(*args: str) -> tuple[int, int]:
    """(instructions, cards) of this script run with ``args`` under callgrind."""
    with tempfile.TemporaryDirectory(prefix="bench-work-cg-") as tmp:
        out = Path(tmp) / "callgrind.out"
        # A fixed hash seed: set and dict orders, and with them the start-up's
        # instructions, are then the same in every run (millions apart otherwise).
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        done = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
             sys.executable, __file__, "--child", *args],
            capture_output=True, text=True, check=True, cwd=ROOT, env=env)
        totals = re.search(r"^totals: (\d+)", out.read_text(), re.MULTILINE)
        cards = re.search(r"^cards (\d+)", done.stdout, re.MULTILINE)
        assert totals is not None, done.stderr
        assert cards is not None, done.stdout
        return int(totals.group(1)), int(cards.group(1))


def main() -> int:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hands", type=int, default=4, help="hands measured per run")
    parser.add_argument("--callgrind", action="store_true",
                        help="count instructions under valgrind (minutes)")
    parser.add_argument("--child", nargs=2, metavar=("MODE", "HANDS"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        configure_logging("console", "warning")
        mode, hands = args.child[0], int(args.child[1])
        if mode.startswith("plan-"):
            print(f"cards {run_plans(mode[5:], hands)}")
        else:
            cards, _cpu = run_core(hands) if mode == "core" else run_ref(hands)
            print(f"cards {cards}")
        return 0
    configure_logging("console", "warning")
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    cards, cpu = run_core(args.hands)
    print(f"core (presence, journal, engine, projection, stamping and JSON; harness"
          f" included), {cards} cards back to back: CPU {cpu / cards * 1000:.3f} ms per card")
    events, ref_cpu = run_ref(args.hands)
    print(f"reference (engine + projection + JSON), {events} events back to back:"
          f" CPU {ref_cpu / events * 1000:.3f} ms per event")
    if not args.callgrind:
        return 0
    per_card: dict[str, float] = {}
    for mode in ("core", "ref"):
        few, few_cards = _instructions(mode, "1")
        many, many_cards = _instructions(mode, str(args.hands + 1))
        plans_few, _ = _instructions(f"plan-{mode}", "1")
        plans_many, _ = _instructions(f"plan-{mode}", str(args.hands + 1))
        cards = many_cards - few_cards
        per_card[mode] = ((many - few) - (plans_many - plans_few)) / cards
        print(f"{mode}: {per_card[mode] / 1e6:.3f} M instructions per card ({cards} cards;"
              f" the hand plans' {(plans_many - plans_few) / cards / 1e6:.3f} M taken out)")
    print(f"core / reference in instructions: {per_card['core'] / per_card['ref']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
