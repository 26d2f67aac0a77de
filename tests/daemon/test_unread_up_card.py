"""Issue 19 end to end: an up card no reader read, then entered by hand, over a real
Mosquitto with emulated readers and the real daemon (``[table] unread_stacks``).

Seat 2's 4th-street up card is never read (a dead tag). Once seat 4's card shows the
seat was passed over, the public and secure ``state`` show seat 2's row with a slot
of unknown face (``{"unread": true}`` in ``up_row``, docs/mqtt.md); no topic names
the card. The dealer enters it at the console (``cmd/card``): it fills the slot,
marked ``manual`` on the events, with no alert (rule 7: the seat was not skipped).
The hand record keeps the cards the table knew: the entered card, and none invented.
"""

from __future__ import annotations

import json
from typing import Any

from table_controller.domain.cards import Card
from table_controller.domain.events import CardPlaced, CardRemoved, TableEvent
from table_controller.domain.zones import BURN, Zone
from table_controller.mqtt.request import send_request
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
FOURTH = {1: "9s", 2: "Ah", 4: "2d"}  # seat 2's Ah: a dead tag, never read
UNREAD = {"unread": True}


def _place(zone: str, code: str) -> CardPlaced:
    return CardPlaced(Zone.parse(zone), Card.parse(code))


def _row(state: dict[str, Any], seat: int) -> list[Any]:
    row: list[Any] = state["seats"][seat - 1]["up_row"]
    return row


def _names_card(payload: bytes, code: str) -> bool:
    def values(item: Any) -> list[Any]:
        if isinstance(item, dict):
            return [v for value in item.values() for v in values(value)]
        if isinstance(item, list):
            return [v for value in item for v in values(value)]
        return [item]
    return code in values(json.loads(payload)) if payload else False


def test_an_unread_up_card_is_a_slot_until_the_console_enters_it(rig: TableRig) -> None:
    rig.config_path.write_text(rig.config_path.read_text().replace(
        "[stakes]", "unread_stacks = true\n[stakes]", 1))
    sub = subscribe(rig.broker.port)
    rig.start_thread()
    wait_state(sub, lambda s: s["hand"] is None)
    cards: list[TableEvent] = [
        _place(f"seat{seat}.{'up' if n == 2 else 'down'}", THIRD[seat][n])
        for n in range(3) for seat in PLAYERS]
    cards.append(CardPlaced(BURN, Card.parse("7c")))
    cards += [_place(f"seat{seat}.up", FOURTH[seat]) for seat in PLAYERS if seat != 2]
    rig.deal(cards, pace=0.05)

    # Seat 4's card shows seat 2 was dealt before it: a slot of unknown face.
    state = wait_state(sub, lambda s: _row(s, 2) == ["3c", UNREAD])
    assert state["seats"][1]["up"] == ["3c"]
    assert _row(state, 1) == ["Kh", "9s"]
    assert _row(state, 4) == ["Qd", "2d"]
    secure = wait_state(sub, lambda s: _row(s, 2) == ["3c", UNREAD],
                        topic=f"{ROOT}/secure/state")
    assert secure["seats"][1]["down"] == ["8h", "5s"]
    wait_until(lambda: any(json.loads(m.payload).get("code") == "card_unread"
                           for m in sub.snapshot() if m.topic == f"{ROOT}/notices"),
               WAIT, "the card_unread notice")

    # Nothing published so far names the card no reader read.
    assert not [m.topic for m in sub.snapshot() if _names_card(m.payload, "Ah")]

    # The console enters it: the slot is filled, marked manual, no alert.
    reply = send_request("127.0.0.1", rig.broker.port, TABLE, "card",
                         json.dumps({"zone": "seat2.up", "card": "Ah"}).encode(),
                         timeout=WAIT)
    assert reply["accepted"] is True, reply
    state = wait_state(sub, lambda s: _row(s, 2) == ["3c", "Ah"])
    assert state["seats"][1]["up"] == ["3c", "Ah"]
    assert state["seats"][1]["showing"] is not None
    ups = events_of(sub, f"{ROOT}/events", "card_dealt_up")
    assert [(e["seat"], e["card"], e["manual"]) for e in ups if e["manual"]] == [
        (2, "Ah", True)]

    # The table is cleared (no muck antenna): the hand ends; its record has the
    # entered card and nothing for a card no one knew.
    gathered: list[TableEvent] = [CardRemoved(e.zone, e.card) for e in cards
                                  if isinstance(e, CardPlaced)]
    rig.deal(gathered, pace=0.03)
    record = sub.wait_topic(f"{ROOT}/hands").json()
    assert record["up_cards"]["2"] == ["3c", "Ah"]
    assert record["up_cards"]["4"] == ["Qd", "2d"]
    assert [m for m in sub.snapshot() if m.topic == f"{ROOT}/alerts"] == []
