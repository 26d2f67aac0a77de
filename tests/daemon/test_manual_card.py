"""Issue 19: manual entry of a card whose tag no reader can read, end to end.

The dealer's console sends ``cmd/card`` to the real daemon over Mosquitto; the
card is journaled as a ``place`` line with ``"manual": true``, applied as read
there, marked on every feed, and replayed from the journal. An entry that
contradicts the readers (they see that card) is refused and changes nothing.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from table_controller.domain.cards import Card
from table_controller.domain.events import CardPlaced
from table_controller.domain.zones import Zone
from table_controller.mqtt.request import send_request
from table_controller.records.journal import read_journal
from table_controller.testing.broker import WAIT, wait_until
from table_controller.testing.daemon_rig import (
    ROOT,
    TABLE,
    TableRig,
    events_of,
    subscribe,
    wait_state,
)

PLAYERS = (1, 2, 4)
THIRD = {1: ("Jc", "Td", "Kh"), 2: ("8h", "5s", "3c"), 4: ("6d", "4s", "Qd")}


def _place(zone: str, code: str) -> CardPlaced:
    return CardPlaced(Zone.parse(zone), Card.parse(code))


def _command(rig: TableRig, name: str, body: Any) -> dict[str, Any]:
    return send_request("127.0.0.1", rig.broker.port, TABLE, name,
                        json.dumps(body).encode(), timeout=WAIT)


def _manual_places(rig: TableRig) -> list[dict[str, Any]]:
    records = read_journal(rig.tmp / "journal" / f"{TABLE}.journal.jsonl").records
    return [r for r in records if r.get("op") == "place" and r.get("manual")]


def test_a_dead_tag_entered_at_the_console_counts_as_read(rig: TableRig) -> None:
    sub = subscribe(rig.broker.port)
    rig.start_thread()
    wait_state(sub, lambda s: s["hand"] is None)
    # 3rd street of a card-only hand; seat 4's upcard (Qd) has a dead tag.
    cards = [_place(f"seat{seat}.{'up' if n == 2 else 'down'}", THIRD[seat][n])
             for n in range(3) for seat in PLAYERS]
    dead = cards.pop()
    assert dead.card == Card.parse("Qd")
    rig.deal(cards, pace=0.05)
    wait_state(sub, lambda s: sum(len(x["up"]) for x in s["seats"]) == 2)

    # A card the readers see cannot be entered by hand: refused, nothing journaled.
    reply = _command(rig, "card", {"zone": "seat4.up", "card": "3c"})
    assert reply["accepted"] is False
    assert reply["code"] == "card_seen"
    assert "3c" not in reply["reason"]
    assert _manual_places(rig) == []

    reply = _command(rig, "card", {"zone": "seat4.up", "card": "Qd"})
    assert reply["accepted"] is True, reply
    state = wait_state(sub, lambda s: any(x["seat"] == 4 and x["up"] == ["Qd"]
                                          for x in s["seats"]))
    assert state["bring_in"] == 2  # 3c is the low card: 3rd street is complete
    ups = events_of(sub, f"{ROOT}/events", "card_dealt_up")
    assert [(e["seat"], e["manual"]) for e in ups] == [(1, False), (2, False), (4, True)]
    downs = events_of(sub, f"{ROOT}/events", "card_dealt_down")
    assert downs
    assert all(e["manual"] is False and "card" not in e for e in downs)
    wait_until(lambda: any(json.loads(m.payload).get("code") == "manual_card"
                           for m in sub.snapshot() if m.topic == f"{ROOT}/notices"),
               WAIT, "the manual_card notice")
    alerts = [m for m in sub.snapshot() if m.topic == f"{ROOT}/alerts"]
    assert alerts == []
    (record,) = _manual_places(rig)
    assert (record["zone"], record["card"]) == ("seat4.up", "Qd")

    # The same card again: it is on the table already.
    reply = _command(rig, "card", {"zone": "seat4.up", "card": "Qd"})
    assert reply["code"] == "card_seen"

    # The journal replays to the same hand, the manual card read where entered.
    journal = rig.tmp / "journal" / f"{TABLE}.journal.jsonl"
    out = subprocess.run([sys.executable, "-m", "table_controller", "replay", str(journal),
                          "--json"], capture_output=True, text=True, check=True)
    (hand,) = json.loads(out.stdout)["hands"]
    assert hand["players"]["4"]["up"] == ["Qd"]
    assert hand["alerts"] == []
    assert [n["code"] for n in hand["notices"]] == ["manual_card"]
