"""PN5180 front end scan time (hardware/firmware/README.md "PN5180 timing", issue 23).

Two figures per stack size (0, 1, 4, 8, 12 ISO 15693 tags on one zone), over
``--scans`` scans with random UIDs each:

* **air**: the time the scan takes on air, from ISO/IEC 15693-2 timing as the host
  model of the chip accounts it (tests/firmware/fake_pn5180.py): request, slots,
  answers, collision rounds. What a real board would spend in RF, before SPI and
  MicroPython overheads.
* **host**: wall time of the driver (hardware/firmware/stud_reader/pn5180.py, run by
  CPython) with the register model on this machine: the driver's logic cost only,
  measured, not the Pico's (a Pico at 125 MHz under MicroPython is some 30-100x
  slower per Python line: see the README for the estimate).

And per table: the 10 stacked zones of an 8-seat table (8 down-card zones, burn,
muck) with 3, 3, 3, 3, 3, 3, 3, 3, 8 and 12 cards, scanned in turn.

    .venv/bin/python bench/bench_pn5180.py [--scans 200]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests" / "firmware"), str(ROOT / "hardware" / "firmware"),
                str(ROOT)]

from pn5180_rig import PN5180Board, iso15693_uid, virtual_time  # noqa: E402

TABLE_ZONES = (3, 3, 3, 3, 3, 3, 3, 3, 8, 12)
"""Cards on each stacked zone of an 8-seat table mid-hand (down cards, burn, muck)."""


def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def scan_figures(count: int, scans: int, rng: random.Random) -> tuple[list[float], list[float]]:
    air, host = [], []
    with virtual_time():
        for _ in range(scans):
            board = PN5180Board(1)
            for _tag in range(count):
                board.place(0, iso15693_uid(rng))
            start = time.perf_counter()
            found = board.scan_port(0)
            host.append((time.perf_counter() - start) * 1000)
            assert len(found) == count
            air.append(board.chips[0].air_us / 1000)
    return air, host


def table_figures(scans: int, rng: random.Random) -> tuple[list[float], list[float]]:
    air, host = [], []
    with virtual_time():
        for _ in range(scans):
            board = PN5180Board(len(TABLE_ZONES))
            for port, count in enumerate(TABLE_ZONES):
                for _tag in range(count):
                    board.place(port, iso15693_uid(rng))
            start = time.perf_counter()
            for port in range(len(TABLE_ZONES)):
                board.scan_port(port)
            host.append((time.perf_counter() - start) * 1000)
            air.append(sum(chip.air_us for chip in board.chips) / 1000)
    return air, host


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scans", type=int, default=200)
    args = parser.parse_args()
    rng = random.Random(5180)
    print(f"{'tags':>5} {'air median':>11} {'air p99':>8} {'host median':>12} {'host p99':>9}"
          "   (ms per scan of one zone)")
    for count in (0, 1, 4, 8, 12):
        air, host = scan_figures(count, args.scans, rng)
        print(f"{count:>5} {statistics.median(air):>11.1f} {p99(air):>8.1f}"
              f" {statistics.median(host):>12.2f} {p99(host):>9.2f}")
    air, host = table_figures(max(20, args.scans // 10), rng)
    print(f"table ({len(TABLE_ZONES)} stacked zones, {sum(TABLE_ZONES)} cards): air median"
          f" {statistics.median(air):.0f} ms, p99 {p99(air):.0f} ms; host median"
          f" {statistics.median(host):.1f} ms, p99 {p99(host):.1f} ms per cycle")


if __name__ == "__main__":
    main()
