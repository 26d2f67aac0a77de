"""Live equity end to end: emulated readers on ptys -> the real daemon (its own
process, equity in its child process) -> real Mosquitto -> a subscriber.

Proves over the real parts (docs/equity.md "Live equity"): secure equity arrives
after the cards (after each card's own event), every equity published is the one
the journal's replay derives for a position the hand really passed through, in
the order the hand passed through them (so never a stale one after a newer card),
and the public topics never carry equity, outs or a private reading.
"""

from __future__ import annotations

import json
import random
from typing import Any

from table_controller.domain.engine.dealing import DealingEngine
from table_controller.domain.equity import Game
from table_controller.domain.equity.live import LiveEquity, compute_live, equity_spot
from table_controller.records.replay import load_script
from table_controller.simulation import deal_random
from table_controller.testing.broker import wait_until
from table_controller.testing.daemon_rig import ROOT, TableRig, clear_table, subscribe, wait_state

SECRET_KEYS = {"down", "reading", "equity", "win", "tie", "stderr", "outs", "equity_info"}


def cards_of(state: dict[str, Any]) -> dict[int, tuple[list[str], list[str]]]:
    return {row["seat"]: (row["down"], row["up"]) for row in state["seats"]}


def test_secure_equity_follows_every_card_and_never_reaches_the_public(rig: TableRig) -> None:
    sub = subscribe(rig.broker.port)
    rig.start_process()
    wait_state(sub, lambda s: s["hand"] is None)
    deal = deal_random([2, 5, 7], random.Random(23), fold_chance=0.0)
    rig.deal(deal.events, pace=0.15)
    final = {seat: ([c.code for c in deal.down(seat)], [c.code for c in deal.up(seat)])
             for seat in deal.seats}
    # The last position's equity arrives (7th street dealt: heads-up-like exact count).
    wait_state(sub, lambda s: (s.get("equity_info") or {}).get("ready") is True
               and all(cards_of(s)[seat] == final[seat] for seat in final),
               topic=f"{ROOT}/secure/state", timeout=60)
    rig.deal(clear_table(deal), pace=0.15)
    wait_until(lambda: any(json.loads(m.payload).get("kind") == "hand_result"
                           for m in sub.snapshot() if m.topic == f"{ROOT}/events"), 30,
               "the hand result")
    messages = [(m.topic, json.loads(m.payload)) for m in sub.snapshot()]

    # Public topics: no equity, outs or private reading, anywhere in any payload.
    public = [(t, p) for t, p in messages if "/secure/" not in t]
    assert public
    for topic, payload in public:
        assert not SECRET_KEYS & set(payload), topic
        for row in payload.get("seats", []):
            assert not SECRET_KEYS & set(row), topic
            assert row["showing"] is None or row["showing"].endswith("showing")

    # Every equity update (a secure/state alone: no public state shares its seq)
    # comes after the card event and the state of its position.
    public_seqs = {p["seq"] for t, p in public if t == f"{ROOT}/state"}
    updates: list[dict[str, Any]] = []
    last_secure_cards: dict[int, tuple[list[str], list[str]]] | None = None
    card_events = 0
    for topic, payload in messages:
        if topic == f"{ROOT}/secure/events" and payload["kind"].startswith("card_dealt"):
            card_events += 1
        if topic != f"{ROOT}/secure/state":
            continue
        if payload["seq"] not in public_seqs:
            assert payload["equity_info"]["ready"] is True
            assert last_secure_cards == cards_of(payload)
            updates.append(payload)
        else:
            last_secure_cards = cards_of(payload)
    assert card_events == 7 * len(deal.seats)
    assert updates

    # Each update is the replay's equity of a position the hand passed through, in order.
    rig.stop()
    journal = rig.tmp / "journal" / "t1.journal.jsonl"
    script = load_script(journal)
    engine = DealingEngine(script.settings)
    replayed: list[LiveEquity] = []
    for _, event in script.events:
        engine.apply(event)
        spot = equity_spot(engine.hand, Game.STUD)
        if spot is not None and (not replayed or replayed[-1].spot != spot):
            replayed.append(compute_live(spot))
    position = 0
    for update in updates:
        while position < len(replayed) and not _same(replayed[position], update):
            position += 1
        assert position < len(replayed), f"no replayed position for {update}"
        assert _same(replayed[position], update)
        position += 1
    # Most positions got their numbers (a card every 0.15 s); some may have been
    # overtaken by the next card on a loaded machine, which is the point.
    assert len(updates) >= 1


def _same(result: LiveEquity, update: dict[str, Any]) -> bool:
    shown = {row["seat"]: row["equity"] for row in update["seats"] if row["equity"] is not None}
    return result.seed == update["equity_info"]["seed"] and shown == {
        seat: share.equity for seat, share in result.seats.items()}
