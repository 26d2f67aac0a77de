"""The issue-19 grid: the detection report over a grid of read conditions.

Cells: muck read depth 0 / 5 / all x stack loss 0 / 5 / 15 % x cross-reads 0 / 2 / 5 %,
on top of the ``no-muck`` profile (peeks of up to 5 s in 10 % of hands, 0.5 % dead
tags, 1 % flicker, the dealer's hand over the antennas), every deal kind at 5 %,
fast mode. Each cell runs alone, one after the other in this process (the machine
is shared), and its summary is appended as one JSON line to ``--out`` as soon as it
is done, so a long run interrupted keeps what it measured::

    python -m table_controller.simulation.grid --hands 20000 --out grid.jsonl
    python -m table_controller.simulation.grid --table grid.jsonl   # the markdown table
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Final

from firmware_bridge.rf_channel import profile
from table_controller.simulation.kinds import DEAL_KINDS
from table_controller.simulation.report import DetectionReport
from table_controller.simulation.runner import simulate

MUCK_DEPTHS: Final = ("0", "5", "all")
STACK_LOSSES: Final = ("0", "0.05", "0.15")
CROSS_READS: Final = ("0", "0.02", "0.05")
BASE: Final = "no-muck"


def cells() -> Iterator[tuple[str, str, str]]:
    """(muck depth, stack loss, cross-read) of every cell, in table order."""
    yield from itertools.product(MUCK_DEPTHS, STACK_LOSSES, CROSS_READS)


def run_cell(muck: str, stack: str, cross: str, hands: int, seed: int, *,
             mode: str = "fast", speed: float = 8.0,
             extra: Sequence[str] = ()) -> dict[str, Any]:
    """One cell's summary (the figures the grid table shows); ``extra``: further
    ``NAME=VALUE`` channel overrides for every cell (e.g. ``strength_reported=0``)."""
    overrides = [f"muck_depth={muck}", f"stack_loss={stack}", f"cross_read={cross}",
                 *extra]
    rf = profile(BASE, overrides)
    rates = dict.fromkeys(DEAL_KINDS, 0.05)
    report = simulate(hands, seed, rates, "fast" if mode == "fast" else "daemon",
                      speed=speed, rf=rf, rf_name=BASE)
    return summary(report, muck, stack, cross)


def summary(report: DetectionReport, muck: str, stack: str, cross: str) -> dict[str, Any]:
    """What the grid keeps of a report."""
    data = report.as_json()
    per_kind = {name: {"injected": row["injected"], "flagged": row["flagged"],
                       "recall": row["recall"], "masked": row.get("masked", {}),
                       "undetectable": row.get("undetectable")}
                for name, row in data["kinds"].items()}
    detectable = {k: v for k, v in per_kind.items()
                  if not v["undetectable"] and v["recall"] is not None}
    worst = min(detectable.items(), key=lambda kv: kv[1]["recall"], default=(None, None))
    return {
        "muck_depth": muck, "stack_loss": stack, "cross_read": cross,
        "mode": data["mode"], "seed": data["seed"], "hands": data["hands"],
        "seconds": data["seconds"], "clean_hands": data["clean_hands"],
        "false_alerts": data["totals"]["false_alerts"],
        "false_by_code": data["false_alerts"],
        "dead_tag_hands": data["rf"]["dead_tag_hands"],
        "dead_tag_alerts": sum(data["rf"]["dead_tag_alerts"].values()),
        "recall": data["totals"]["recall"],
        "worst_kind": worst[0], "worst_recall": worst[1]["recall"] if worst[1] else None,
        "masked": data["rf"]["masked"], "undetectable": sorted(data["rf"]["undetectable"]),
        "kinds": per_kind, "false_alert_list": data["false_alert_list"][:5],
    }


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{int(value * 10_000) / 100:.2f}%"


def table(rows: Sequence[dict[str, Any]]) -> str:
    """The grid as a markdown table."""
    out = ["| muck depth | stack loss | cross-reads | hands | clean hands | false alerts"
           " (clean hands) | dead-tag hands (their alerts) | recall, detectable kinds |"
           " lowest kind | masked | undetectable |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---|"]
    for row in rows:
        worst = (f"{row['worst_kind']} {_pct(row['worst_recall'])}" if row["worst_kind"]
                 else "-")
        out.append(
            f"| {row['muck_depth']} | {float(row['stack_loss']):.0%} |"
            f" {float(row['cross_read']):.0%} | {row['hands']:,} | {row['clean_hands']:,} |"
            f" **{row['false_alerts']}** | {row['dead_tag_hands']:,} ({row['dead_tag_alerts']:,})"
            f" | {_pct(row['recall'])} | {worst} | {row['masked']:,} |"
            f" {', '.join(row['undetectable']) or '-'} |")
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the grid (or print the table of a finished run)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--hands", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=19)
    parser.add_argument("--out", type=Path, default=Path("rf-grid.jsonl"))
    parser.add_argument("--table", type=Path, default=None,
                        help="print the markdown table of a finished run's JSON lines")
    parser.add_argument("--only", action="append", default=[], metavar="MUCK,STACK,CROSS",
                        help="run only these cells (repeatable), e.g. 0,0.05,0.02")
    parser.add_argument("--mode", choices=("fast", "daemon"), default="fast")
    parser.add_argument("--speed", type=float, default=8.0)
    parser.add_argument("--rf-param", action="append", default=[], metavar="NAME=VALUE",
                        help="a further channel override for every cell, e.g."
                        " strength_reported=0 (readers that report no strength)")
    args = parser.parse_args(argv)
    if args.table is not None:
        rows = [json.loads(line) for line in args.table.read_text().splitlines() if line]
        print(table(rows))
        return 0
    wanted = [tuple(item.split(",")) for item in args.only] or list(cells())
    for muck, stack, cross in wanted:
        row = run_cell(muck, stack, cross, args.hands, args.seed, mode=args.mode,
                       speed=args.speed, extra=args.rf_param)
        with args.out.open("a", encoding="utf-8") as out:
            out.write(json.dumps(row) + "\n")
        print(f"muck {muck} stack {stack} cross {cross}: {row['false_alerts']} false alerts,"
              f" recall {_pct(row['recall'])}, {row['seconds']:.0f} s", file=sys.stderr,
              flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
