"""Benchmark: how long the command line's doors take, whole process, wall clock (issue 25).

Each command is started ``--runs`` times as a fresh process (``subprocess.run``, output
to a pipe) and timed from start to exit; the commands take turns, so a burst of load on
the shared machine falls on all of them alike. Printed per command: median, p90 and
max (ms), with two references measured in the same run the same way:

* ``python3 -c pass``: the ``python3`` found on PATH (named with its resolved path:
  on this machine a pyenv shim, a shell script that itself starts a Python);
* ``<venv python> -c pass``: the interpreter the ``stud-table`` script runs on, which
  is the floor under every door below.

The doors:

* ``stud-table --help``;
* ``stud-table replay tests/scripts/clean-hand.jsonl --json`` (32 lines: one whole hand
  to showdown, so the hand evaluator's tables are needed);
* ``stud-table equity SPEC --json`` for a heads-up 5th street stud spot (exact) and the
  same spot in stud8.

The evaluators' tables are kept in a fresh cache directory (``STUD_TABLE_CACHE``): the
first ``replay`` and ``equity`` build and write them (timed once and printed as
"first start"), every later start loads them. The children run with bytecode caching
on, as an installed package runs (pip compiles the ``.pyc`` files at install): the
environment variable ``PYTHONDONTWRITEBYTECODE`` (set on this project's CI machine) is
removed for them and their ``.pyc`` files go to a temporary ``PYTHONPYCACHEPREFIX``,
written by one warm-up start of each command before the timed runs. The load average
before and after is printed beside the figures, and each door's CPU time (user + system
of the child, median): the machine is shared, and CPU time waits less on the others.

``--baseline DIR`` also times the same doors run from another checkout of the project
(e.g. ``git archive <commit> | tar -x -C DIR``) and from this one, both started the same
way, interleaved with the others: ``python -S -m table_controller`` with ``PYTHONPATH``
= the checkout and the venv's site-packages (``-S``: no ``.pth`` files, so the editable
install's finder cannot point the import back at this worktree), to show before and
after in one run.

    .venv/bin/python bench/bench_cli_start.py [--runs 10] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "tests" / "scripts" / "clean-hand.jsonl"
SPOT = {"seats": {"1": ["As", "Kd", "Qh", "Jc", "2d"], "2": ["9s", "9d", "3h", "4c", "5d"]},
        "dead": ["7c", "8h"]}


def stud_table() -> str:
    """The ``stud-table`` console script beside this interpreter."""
    return str(Path(sys.executable).with_name("stud-table"))


def _time(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one start of ``command``, run in the
    environment's ``BENCH_CWD`` (not this checkout: ``-m`` would import from there)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, check=False,
                          cwd=env["BENCH_CWD"])
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):"
                         f" {done.stderr.decode(errors='replace')[-400:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu


def _row(name: str, times: list[tuple[float, float]]) -> dict[str, float | str]:
    ordered = sorted(wall for wall, _ in times)
    p90 = ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]
    cpu = statistics.median(cpu for _, cpu in times)
    return {"door": name, "median_ms": round(statistics.median(ordered) * 1000, 1),
            "p90_ms": round(p90 * 1000, 1), "max_ms": round(ordered[-1] * 1000, 1),
            "cpu_median_ms": round(cpu * 1000, 1)}


def main() -> None:
    """Time every door and print the table, then the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="starts per command")
    parser.add_argument("--baseline", type=Path, default=None,
                        help="also time the doors from this checkout (before/after)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        spec_stud = Path(work, "stud.json")
        spec_stud.write_text(json.dumps({"game": "stud", **SPOT}))
        spec_stud8 = Path(work, "stud8.json")
        spec_stud8.write_text(json.dumps({"game": "stud8", **SPOT}))
        env = {**os.environ, "STUD_TABLE_CACHE": str(Path(work, "cache")), "BENCH_CWD": work,
               "PYTHONPYCACHEPREFIX": str(Path(work, "pycache"))}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        shim = shutil.which("python3") or "python3"
        doors = {
            f"python3 -c pass ({os.path.realpath(shim)})": [shim, "-c", "pass"],
            f"{sys.executable} -c pass": [sys.executable, "-c", "pass"],
            "stud-table --help": [stud_table(), "--help"],
            f"stud-table replay {SCRIPT.name} --json": [stud_table(), "replay", str(SCRIPT),
                                                        "--json"],
            "stud-table equity SPEC --json (stud, heads-up 5th)": [
                stud_table(), "equity", str(spec_stud), "--json"],
            "stud-table equity SPEC --json (stud8, heads-up 5th)": [
                stud_table(), "equity", str(spec_stud8), "--json"],
        }
        base: dict[str, tuple[list[str], dict[str, str]]] = {}
        if args.baseline is not None:
            module = [sys.executable, "-S", "-m", "table_controller"]
            packages = sysconfig.get_paths()["purelib"]
            for label, checkout in (("before", args.baseline.resolve()), ("after", ROOT)):
                side_env = {**env, "PYTHONPATH": f"{checkout}{os.pathsep}{packages}"}
                for name, command in list(doors.items())[2:]:
                    base[f"{label} (-S) {name.removeprefix('stud-table ')}"] = (
                        [*module, *command[1:]], side_env)
        load_before = os.getloadavg()
        first = {
            "replay, first start (builds and keeps the hand tables)":
                _time(doors[f"stud-table replay {SCRIPT.name} --json"], env),
            "equity, first start (builds and keeps the equity tables)":
                _time(doors["stud-table equity SPEC --json (stud, heads-up 5th)"], env),
        }
        every = {name: (command, env) for name, command in doors.items()} | base
        for command, environment in every.values():  # warm-up: writes the .pyc files
            _time(command, environment)
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in every}
        for _ in range(args.runs):
            for name, (command, environment) in every.items():
                times[name].append(_time(command, environment))
        load_after = os.getloadavg()
    rows = [_row(name, values) for name, values in times.items()]
    print(f"{args.runs} starts per command; load average (1/5/15 min) before"
          f" {load_before[0]:.2f}/{load_before[1]:.2f}/{load_before[2]:.2f},"
          f" after {load_after[0]:.2f}/{load_after[1]:.2f}/{load_after[2]:.2f}"
          f" on {os.cpu_count()} cores")
    width = max(len(str(row["door"])) for row in rows)
    print(f"{'command':<{width}}  median     p90     max   (wall, ms)  CPU median (ms)")
    for row in rows:
        print(f"{row['door']:<{width}}  {row['median_ms']:>6}  {row['p90_ms']:>6}"
              f"  {row['max_ms']:>6}               {row['cpu_median_ms']:>6}")
    for name, (wall, cpu) in first.items():
        print(f"{name}: {wall * 1000:.0f} ms wall, {cpu * 1000:.0f} ms CPU")
    print(json.dumps({"runs": args.runs, "load_before": load_before, "load_after": load_after,
                      "rows": rows, "first_start_ms": {k: round(v[0] * 1000, 1)
                                                       for k, v in first.items()}}))


if __name__ == "__main__":
    main()
