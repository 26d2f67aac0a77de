"""Every benchmark under bench/ still runs (issue 24, item 8): a smoke run at tiny sizes.

Each bench is started as its own process, as a person would (``python bench/X.py
ARGS``), with sizes small enough for the suite; the test checks it exits 0 and printed
something, never how fast it was (figures belong to docs, not to assertions). A new
bench must be added to :data:`TINY`, so none can rot unnoticed again.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"

TINY: dict[str, tuple[str, ...] | None] = {
    "bench_archive.py": ("write", "--records", "40", "--batch", "10"),
    "bench_bridge.py": ("--messages", "20", "--gap", "1"),
    "bench_broadcast.py": ("latency", "--cards", "6"),
    "bench_cli_start.py": ("--runs", "1"),
    "bench_console.py": ("--rounds", "5", "--fsync", "never"),
    "bench_daemon_equity.py": ("--hands", "1", "--speed", "50", "--modes", "off"),
    "bench_daemon_flood.py": ("--hands", "1", "--speed", "50", "--messages", "200"),
    "bench_daemon_latency.py": ("--hands", "1", "--speed", "50", "--fsync", "never",
                                "--breakdown"),
    "bench_daemon_skeleton.py": ("--cards", "20", "--pace", "0.01"),
    "bench_daemon_work.py": ("--hands", "1"),
    "bench_decoder.py": ("--frames", "200", "--repeats", "2"),
    "bench_engine.py": ("--hands", "20", "--game", "all"),
    "bench_equity.py": ("--spots", "1"),
    "bench_evaluator.py": ("--batches", "2", "--batch-size", "50"),
    "bench_floor.py": ("--tables", "2", "--seconds", "2", "--pages", "1"),
    "bench_floor_fanout.py": ("--tables", "2", "--seconds", "0.5", "--pages", "2"),
    "bench_link_recovery.py": ("--repeats", "1"),
    "bench_phh.py": ("--rounds", "1", "--hands", "20"),
    "bench_pn5180.py": ("--scans", "5"),
    "bench_presence_latency.py": ("--placements", "50", "--reports", "500", "--repeats",
                                  "1", "--settle", "0.02"),
    "bench_room.py": ("--tables", "2", "--seconds", "2", "--pages", "1"),
    "bench_simulate.py": ("--batches", "2", "--batch", "5", "--daemon-hands", "1",
                          "--speed", "50"),
    "daemon_breakdown.py": None,  # not a bench: bench_daemon_latency --breakdown runs it
    "daemon_rig.py": None,  # not a bench: the helpers the four bench_daemon_* runs share
    "room_curve.py": None,  # draws bench_room's JSON lines: tests/floor/test_bench_room.py
}
"""Arguments of a tiny run of each file of bench/ (None: run by another bench)."""


def test_every_bench_has_a_tiny_run() -> None:
    assert sorted(p.name for p in BENCH.glob("*.py")) == sorted(TINY)


@pytest.mark.parametrize("name", sorted(n for n, args in TINY.items() if args is not None))
def test_the_bench_runs_at_tiny_sizes(name: str) -> None:
    args = TINY[name]
    assert args is not None
    run = run_bench(name, *args)
    assert run.returncode == 0, f"{name}: exit {run.returncode}\n{run.stderr[-3000:]}"
    assert run.stdout.strip(), f"{name} printed nothing\n{run.stderr[-2000:]}"


def run_bench(name: str, *args: str, path: str | None = None) -> subprocess.CompletedProcess[str]:
    """``python bench/NAME ARGS`` as a person would start it (``path``: its PATH)."""
    env = dict(os.environ)
    env["PATH"] = path or f"{Path(sys.executable).parent}:/usr/sbin:{env.get('PATH', '/usr/bin')}"
    return subprocess.run([sys.executable, str(BENCH / name), *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=900, check=False)


ENGINE_INSTRUCTIONS = ("--hands", "2", "--game", "stud", "--instructions",
                       "--instruction-hands", "1", "--warm-up", "1")
"""The engine bench's callgrind mode at its smallest (valgrind runs ~50x slower)."""


@pytest.mark.skipif(shutil.which("valgrind") is None,
                    reason="valgrind not installed (scripts/setup)")
def test_the_engine_bench_counts_instructions_at_tiny_sizes() -> None:
    run = run_bench("bench_engine.py", *ENGINE_INSTRUCTIONS)
    assert run.returncode == 0, f"exit {run.returncode}\n{run.stderr[-3000:]}"
    lines = [line for line in run.stdout.splitlines() if line.startswith("stud ")]
    assert len(lines) == 1, run.stdout
    assert "on instructions" in lines[0]


def test_the_engine_bench_says_valgrind_is_missing_and_exits_2() -> None:
    # Only the interpreter's own directory on the PATH: no valgrind there.
    run = run_bench("bench_engine.py", *ENGINE_INSTRUCTIONS, path=str(Path(sys.executable).parent))
    assert run.returncode == 2, run.stderr
    assert run.stderr.strip().splitlines() == [
        "bench_engine: --instructions needs valgrind (callgrind), which is not installed:"
        " scripts/setup installs it (apt-get install valgrind)"]
    assert not run.stdout  # said before any clock run
