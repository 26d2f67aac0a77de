"""Draw the room's growth curves (docs/scaling.md) from bench_room.py's JSON lines.

Three panels side by side, x = simulated tables (10 .. 100): alert -> page p99 (ms, log
scale; medians dotted), archive lag p99 (ms, log scale), and CPU (% of one core) of each
service in the 1-page SQLite runs. One line per (database, pages) series. Plain SVG
written by hand: no plotting library, nothing fetched.

    .venv/bin/python bench/room_curve.py room.jsonl -o docs/scaling-room.svg [--title ...]
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

WIDTH, HEIGHT = 330, 260
LEFT, RIGHT, TOP, BOTTOM = 52, 12, 34, 40
COLOURS = ("#1b6ca8", "#d1495b", "#2e8b57", "#e0a100", "#7b4fa0", "#555555")


def _series(runs: list[dict[str, Any]], key: str) -> dict[str, list[tuple[int, float]]]:
    lines: dict[str, list[tuple[int, float]]] = {}
    for run in runs:
        value = run.get(key)
        if value is None:
            continue
        name = f"{run['database']}, {run['pages']} page{'s' if run['pages'] > 1 else ''}"
        if run.get("floors", 1) > 1:
            name += f", {run['floors']} floors"
        if run.get("writers", 1) > 1:
            name += f", {run['writers']} writers"
        if run.get("mode") == "bridge":
            name += ", bridged"
        lines.setdefault(name, []).append((run["tables"], float(value)))
    return {name: sorted(points) for name, points in sorted(lines.items())}


def _panel(x0: int, title: str, lines: dict[str, list[tuple[int, float]]], *,
           log: bool, unit: str, dotted: dict[str, list[tuple[int, float]]] | None = None,
           target: float | None = None) -> list[str]:
    """One panel's SVG elements, its top-left corner at (x0, 0)."""
    every = [v for points in [*lines.values(), *(dotted or {}).values()] for _, v in points]
    tables = sorted({t for points in lines.values() for t, _ in points}) or [10, 100]
    if target is not None:
        every.append(target)
    low = min(every, default=1.0)
    high = max(every, default=10.0)
    if log:
        low, high = 10 ** math.floor(math.log10(max(low, 0.1))), 10 ** math.ceil(
            math.log10(max(high, 1.0)))
    else:  # a round step: 1, 2 or 5 times a power of ten, four or five steps
        raw = max(high, 1.0) / 4
        step = min(m * 10 ** math.floor(math.log10(raw)) for m in (1, 2, 5, 10)
                    if m * 10 ** math.floor(math.log10(raw)) >= raw)
        low, high = 0.0, step * math.ceil(max(high, 1.0) / step)
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    t_low, t_high = min(tables), max(tables)

    def x(t: float) -> float:
        return x0 + LEFT + (t - t_low) / max(t_high - t_low, 1) * plot_w

    def y(v: float) -> float:
        if log:
            share = (math.log10(max(v, low)) - math.log10(low)) / (
                math.log10(high) - math.log10(low))
        else:
            share = (v - low) / (high - low)
        return TOP + plot_h * (1 - share)

    out = [f'<text x="{x0 + WIDTH / 2}" y="18" text-anchor="middle" font-weight="bold">'
           f"{title}</text>",
           f'<rect x="{x0 + LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="none"'
           ' stroke="#999"/>']
    ticks = ([10 ** e for e in range(round(math.log10(low)), round(math.log10(high)) + 1)]
             if log else [step * i for i in range(round(high / step) + 1)])
    for tick in ticks:
        out.append(f'<line x1="{x0 + LEFT}" x2="{x0 + LEFT + plot_w}" y1="{y(tick):.1f}"'
                   f' y2="{y(tick):.1f}" stroke="#e5e5e5"/>')
        out.append(f'<text x="{x0 + LEFT - 4}" y="{y(tick) + 4:.1f}" text-anchor="end">'
                   f"{tick:g}</text>")
    for t in tables:
        out.append(f'<text x="{x(t):.1f}" y="{TOP + plot_h + 15}" text-anchor="middle">'
                   f"{t}</text>")
    out.append(f'<text x="{x0 + LEFT + plot_w / 2}" y="{HEIGHT - 6}" text-anchor="middle">'
               "simulated tables</text>")
    out.append(f'<text x="{x0 + 12}" y="{TOP + plot_h / 2}" text-anchor="middle"'
               f' transform="rotate(-90 {x0 + 12} {TOP + plot_h / 2})">{unit}</text>')
    if target is not None:
        out.append(f'<line x1="{x0 + LEFT}" x2="{x0 + LEFT + plot_w}" y1="{y(target):.1f}"'
                   f' y2="{y(target):.1f}" stroke="#000" stroke-dasharray="6 3"/>')
        out.append(f'<text x="{x0 + LEFT + plot_w - 2}" y="{y(target) - 4:.1f}"'
                   f' text-anchor="end">target {target:g}</text>')
    for i, (name, points) in enumerate(lines.items()):
        colour = COLOURS[i % len(COLOURS)]
        path = " ".join(f"{x(t):.1f},{y(v):.1f}" for t, v in points)
        out.append(f'<polyline points="{path}" fill="none" stroke="{colour}"'
                   ' stroke-width="2"/>')
        out += [f'<circle cx="{x(t):.1f}" cy="{y(v):.1f}" r="3" fill="{colour}"/>'
                for t, v in points]
        if dotted and name in dotted:
            path = " ".join(f"{x(t):.1f},{y(v):.1f}" for t, v in dotted[name])
            out.append(f'<polyline points="{path}" fill="none" stroke="{colour}"'
                       ' stroke-width="1.5" stroke-dasharray="2 3"/>')
    return out


def _cpu_lines(runs: list[dict[str, Any]]) -> dict[str, list[tuple[int, float]]]:
    chosen = [r for r in runs if r["pages"] == 1 and r["database"] == "sqlite"
              and r.get("mode") != "bridge" and r.get("floors", 1) == 1
              and r.get("writers", 1) == 1]
    lines: dict[str, list[tuple[int, float]]] = {}
    for run in chosen:
        for name, process in run["processes"].items():
            lines.setdefault(name, []).append((run["tables"], process["cpu_percent"]))
    return {name: sorted(points) for name, points in sorted(lines.items())}


def _legend(x0: int, y0: int, names: list[str]) -> list[str]:
    out = []
    for i, name in enumerate(names):
        colour = COLOURS[i % len(COLOURS)]
        out.append(f'<line x1="{x0}" x2="{x0 + 18}" y1="{y0 + 14 * i}" y2="{y0 + 14 * i}"'
                   f' stroke="{colour}" stroke-width="2"/>')
        out.append(f'<text x="{x0 + 22}" y="{y0 + 14 * i + 4}">{name}</text>')
    return out


def draw(runs: list[dict[str, Any]], title: str) -> str:
    """The SVG document."""
    alerts = _series(runs, "alert_latency_ms_p99")
    lags = _series(runs, "archive_lag_ms_p99")
    cpu = _cpu_lines(runs)
    legend_rows = max(len(alerts), len(cpu))
    height = HEIGHT + 30 + 14 * legend_rows
    body = [
        *_panel(0, "alert -> page p99 (median dotted)", alerts, log=True, unit="ms",
                dotted=_series(runs, "alert_latency_ms_median"), target=100),
        *_panel(WIDTH, "hand -> archive row p99", lags, log=True, unit="ms", target=1000),
        *_panel(2 * WIDTH, "CPU, % of one core (SQLite, 1 page)", cpu, log=False, unit="%"),
        *_legend(LEFT, HEIGHT + 20, list(alerts)),
        *_legend(2 * WIDTH + LEFT, HEIGHT + 20, list(cpu)),
    ]
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{3 * WIDTH}" height="{height}"'
            f' viewBox="0 0 {3 * WIDTH} {height}" font-family="sans-serif" font-size="11">\n'
            f"<title>{title}</title>\n"
            f'<rect width="100%" height="100%" fill="#fff"/>\n' + "\n".join(body) + "\n</svg>\n")


def main() -> None:
    """Read the JSON lines, write the SVG."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", type=Path, help="bench_room.py --out file (JSON lines)")
    parser.add_argument("-o", "--output", type=Path, required=True)
    parser.add_argument("--title", default="The room as it grows (bench/bench_room.py)")
    args = parser.parse_args()
    runs = [json.loads(line) for line in args.runs.read_text().splitlines() if line.strip()]
    args.output.write_text(draw(runs, args.title))


if __name__ == "__main__":
    main()
