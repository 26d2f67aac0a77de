"""bench/bench_room.py runs (issue 25): a tiny room on SQLite and on PostgreSQL.

The benchmark's figures are its business (no timing here); this checks that it runs
end to end with the real broker, archive writers, PostgreSQL and floor, prints its
JSON, and lost nothing: every alert the broker delivered reached the page, every
hand its row.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench_room.py"


@pytest.mark.parametrize(("database", "writers", "floors", "pages", "pits"),
                         [("sqlite", 1, 2, 2, False), ("postgres", 2, 1, 1, False),
                          ("sqlite", 1, 2, 3, True)])
def test_tiny_room_runs_and_loses_nothing(database: str, writers: int, floors: int,
                                          pages: int, pits: bool) -> None:
    """Two tables for three seconds, every figure present, nothing lost: SQLite with
    two floor instances, PostgreSQL with two archive writers in one share group, and
    two floors each following one pit (one table) with a third page read by the
    untimed pages' process: every alert still reaches a timed page."""
    done = subprocess.run(
        [sys.executable, str(BENCH), "--tables", "2", "--seconds", "3", "--hand-every", "10",
         "--alert-every", "1", "--database", database, "--writers", str(writers),
         "--floors", str(floors), "--pages", str(pages), *(["--pits"] if pits else [])],
        capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert figures["database"] == database
    assert figures["tables"] == 2
    assert figures["messages_published"] > 0
    assert figures["alerts_raised"] > 0
    assert figures["alerts_seen_on_page"] == figures["alerts_delivered"] == figures["alerts_raised"]
    assert figures["hands_delivered"] > 0
    assert figures["hands_archived"] == figures["hands_delivered"]
    assert figures["archive_drained"]
    def named(kind: str, count: int) -> set[str]:
        return {kind} if count == 1 else {f"{kind}{i + 1}" for i in range(count)}

    expected = {"mosquitto", "generators"} | named("archive", writers) | named("floor", floors)
    if database == "postgres":
        expected.add("postgres")
    if pages > (floors if pits else 1):
        expected.add("page_readers")
    assert figures["pits"] is pits
    assert set(figures["processes"]) == expected
