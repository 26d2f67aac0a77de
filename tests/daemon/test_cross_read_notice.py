"""The daemon on cross-reads without strengths (issue 19, docs/presence.md rule 1).

The real :class:`~table_controller.daemon.core.TableCore` with the daemon's settle
window, fed reader reports with no strength: the deal order places a card read by two
antennas; a tie nothing decides is published as a ``cross_read_tie`` notice, journaled
first, naming zones and never the card; the replay door skips that record.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from firmware_bridge.messages import TagArrived
from table_controller.daemon.core import ReaderReport
from table_controller.domain.cards import Card
from table_controller.domain.zones import Zone
from table_controller.table.presence import DEFAULT_SETTLE_TIME
from table_controller.testing.core_rig import CoreTable


def _read(table: CoreTable, zone: str, card: str) -> None:
    """The antenna of ``zone`` reports ``card`` (no strength)."""
    reader, port = table.layout.antennas_of(Zone.parse(zone))[0]
    uid = table.registry.uid_for(Card.parse(card), table.registry.decks[0])
    table.core.handle(ReaderReport(reader, TagArrived(port, uid), table.now))


def test_the_deal_order_places_a_cross_read_card_and_a_tie_is_a_notice(tmp_path: Path) -> None:
    table = CoreTable(tmp_path, settle_time=DEFAULT_SETTLE_TIME)
    # Round 1 of an auto hand: seat 1's hole card, cross-read by its up antenna first.
    _read(table, "seat1.up", "As")
    table.advance(0.05)
    _read(table, "seat1.down", "As")
    table.advance(0.5)
    dealt = [e for e in table.publisher.on("secure/events") if e.get("card") == "As"]
    assert len(dealt) == 1, dealt
    assert "down" in json.dumps(dealt[0]), dealt
    assert table.publisher.on("notices") == []
    # An up card in round 1, read by seat 4's and seat 5's up rows alike: neither is
    # due (round 1 is dealt face down), so the first read keeps it and it is named.
    _read(table, "seat4.up", "Kd")
    table.advance(0.05)
    _read(table, "seat5.up", "Kd")
    table.advance(0.5)
    (notice,) = table.publisher.on("notices")
    assert notice["code"] == "cross_read_tie"
    assert notice["seat"] == 4
    assert "seat4.up" in notice["message"]
    assert "seat5.up" in notice["message"]
    assert "Kd" not in json.dumps(notice)  # zones only: the card may be a hole card
    table.journal.close()
    path = tmp_path / "core.journal.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    (record,) = [r for r in records if r["op"] == "notice"]
    assert record["code"] == "cross_read_tie"
    assert record["hand"] == 1
    # The replay door skips the daemon's notice record: the game replays as dealt.
    done = subprocess.run([sys.executable, "-m", "table_controller", "replay", str(path),
                           "--json"], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "cross_read_tie" not in done.stdout
