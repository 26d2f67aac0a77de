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


def test_entries_that_contradict_the_readers_are_refused_and_change_nothing(
        rig: TableRig) -> None:
    """Issue 19: a card the readers see at another seat, a seat whose 3rd-street cards
    were all read (one card too many), a card not in the deck and a seat not in the
    hand are refused; the state, the journal and the alerts stay as they were (only
    the malformed card, which no dealer meant, is alerted as ``console_rejected``)."""
    sub = subscribe(rig.broker.port)
    rig.start_thread()
    wait_state(sub, lambda s: s["hand"] is None)
    reply = _command(rig, "hand", {"players": list(PLAYERS)})
    assert reply["accepted"] is True, reply
    cards = [_place(f"seat{seat}.{'up' if n == 2 else 'down'}", THIRD[seat][n])
             for n in range(3) for seat in PLAYERS]
    rig.deal(cards, pace=0.05)
    before = wait_state(sub, lambda s: s["bring_in"] == 2, topic=f"{ROOT}/secure/state")
    journal = rig.tmp / "journal" / f"{TABLE}.journal.jsonl"
    records = len(read_journal(journal).records)
    for zone, card, code in (
            ("seat1.down", "8h", "card_seen"),      # a reader sees it at seat 2
            ("seat1.up", "9h", "card_seen"),        # seat 1's 3rd street is all read
            ("seat2.down", "Zz", "invalid_command"),  # not a card of the deck
            ("seat5.down", "9s", "unknown_seat"),   # seat 5 is not in the hand (rule 9)
    ):
        reply = _command(rig, "card", {"zone": zone, "card": card})
        assert (reply["accepted"], reply["code"]) == (False, code), (zone, card, reply)
    # One more accepted command: its state comes after every refusal above.
    assert _command(rig, "seat", {"seat": 1, "name": "Ann"})["accepted"] is True
    after = wait_state(sub, lambda s: s["seats"][0]["name"] == "Ann",
                       topic=f"{ROOT}/secure/state")
    # The live equity child answers when it has computed, so a seat's equity figures
    # may arrive between the two snapshots (a race, not a change the refusals made):
    # compare the cards and everything else a refusal could have touched. A seat's
    # ``reading`` comes with the equity (LiveEquity.readings), so it races the same way
    # (seen at load 32: null before, filled in after).
    computed = {"name", "equity", "win", "tie", "stderr", "outs", "reading"}
    assert [{k: v for k, v in seat.items() if k not in computed}
            for seat in after["seats"]] == [
        {k: v for k, v in seat.items() if k not in computed} for seat in before["seats"]]
    assert (after["hand"], after["street"], after["to_act"]) == (
        before["hand"], before["street"], before["to_act"])
    assert _manual_places(rig) == []
    added = [r.get("op") for r in read_journal(journal).records[records:]]
    assert sorted(added) == sorted(["seat", "alert"]), added  # + the console_rejected alert
    raised = [json.loads(m.payload)["code"] for m in sub.snapshot()
              if m.topic == f"{ROOT}/alerts"]
    assert raised == ["console_rejected"]  # the malformed card; no dealing alert
    assert not [m for m in sub.snapshot() if m.topic == f"{ROOT}/notices"
                and json.loads(m.payload).get("code") == "manual_card"]
