"""Issue 19: a restart mid-hand with the last hand's piles still on the felt.

Dealers often leave the burn pile (and the muck) of the last hand lying while the
next hand is dealt. At a restart the readers' first inventories report those
cards beside the current hand's; fed to the engine they read as extra burns
(three false ``extra_burn`` before the fix). The journal knows where the earlier
hands left them (``reconcile.leftover_piles``), so they net out.

Real parts: the ``stud-table run`` subprocess, emulated readers on ptys, Mosquitto.
"""

from __future__ import annotations

import random

from fault_rig import (
    Mirror,
    alert_codes,
    restart_and_wait_ready,
    wait_caught_up,
    wait_status,
)

from table_controller.daemon.reconcile import leftover_piles
from table_controller.domain.cards import Card
from table_controller.domain.events import CardPlaced, CardRemoved
from table_controller.domain.zones import BURN, MUCK, Zone
from table_controller.simulation import deal_random
from table_controller.simulation.physical import PhysicalDeal
from table_controller.testing.daemon_rig import TableRig, subscribe, wait_state


def _deal_events(deal: PhysicalDeal) -> list[CardPlaced | CardRemoved]:
    return [e for e in deal.events if isinstance(e, CardPlaced | CardRemoved)]


def _two_hands() -> tuple[PhysicalDeal, PhysicalDeal]:
    """Hand 1, and a hand 2 dealt from the cards hand 1's piles do not hold."""
    first = deal_random([1, 3, 5], random.Random(31), fold_chance=0.0)
    piles = {e.card for e in _deal_events(first) if isinstance(e, CardPlaced)
             and e.zone.seat is None}
    for seed in range(1000):
        second = deal_random([2, 4, 6], random.Random(seed), fold_chance=0.0)
        if not piles & {e.card for e in _deal_events(second)}:
            return first, second
    raise AssertionError("no second hand avoids the first hand's piles")


def test_the_last_hands_burn_pile_at_a_restart_is_not_this_hands(rig: TableRig) -> None:
    sub = subscribe(rig.broker.port)
    mirror = Mirror(rig)
    first, second = _two_hands()
    rig.start_process()
    wait_status(sub, "online")
    one = _deal_events(first)
    mirror.run(one)
    # The showdown: the seats' cards picked up; the burn pile stays on the felt.
    mirror.run([CardRemoved(zone, card) for card, zone in sorted(
        mirror.where.items(), key=lambda cz: cz[1].name) if zone.seat is not None])
    two = _deal_events(second)
    burns = [i for i, e in enumerate(two) if isinstance(e, CardPlaced) and e.zone == BURN]
    mirror.run(two[:burns[1]])  # hand 2 dealt to 4th street
    wait_caught_up(rig, mirror)
    rig.kill9()
    restart_and_wait_ready(rig, sub)
    wait_caught_up(rig, mirror)
    mirror.run(two[burns[1]:])  # 5th to 7th street
    wait_caught_up(rig, mirror)
    wait_state(sub, lambda s: s["hand"] == 2 and s["street"] == 7)
    assert alert_codes(sub) == [], rig.daemon_log()[-3000:]


def test_leftover_piles_follow_the_journal() -> None:
    """The pure part: a pile card of an earlier hand lies where it was left until a
    record takes it away or the current hand deals it."""
    def place(zone: str, card: str, deck: str = "d1") -> dict[str, object]:
        return {"op": "place", "zone": zone, "card": card, "deck": deck}

    def remove(zone: str, card: str) -> dict[str, object]:
        return {"op": "remove", "zone": zone, "card": card}

    records = [
        {"op": "hand", "players": []},
        place("seat1.down", "As"), place("burn", "2c"), place("burn", "3c"),
        place("muck", "4c"), place("board", "5c"), remove("burn", "3c"),
        {"op": "hand", "players": []},
        place("seat2.down", "4c"),  # dealt again in this hand: the engine knows it
        place("burn", "6c"),  # this hand's own burn: the engine knows it
    ]
    left = leftover_piles(records)
    board = Zone.parse("board")
    assert left == {Card.parse("2c"): [(BURN, "d1")], Card.parse("5c"): [(board, "d1")]}
    assert MUCK not in {zone for places in left.values() for zone, _ in places}
