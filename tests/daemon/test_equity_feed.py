"""Live equity in the daemon, in process: the core with a recording publisher.

Proves (docs/equity.md "Live equity"): after every card the card's event and the
state go out first and the secure equity for that very position follows on
``secure/state`` alone; a newer card cancels or discards an older computation
(the worker held deterministically, never a timing); public payloads carry
nothing computed from a down card (the same deal with other hidden cards gives
the same public stream, byte for byte, until the showdown); and replaying the
journal yields the same numbers (nothing new is journaled).
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import signal
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from table_controller.daemon.core import TableCore
from table_controller.daemon.equity_feed import ChildProcess, EquityReady, EquityWorker
from table_controller.daemon.projection import public_state, secure_state
from table_controller.domain.cards import DECK as ALL_CARDS
from table_controller.domain.cards import Card
from table_controller.domain.engine.dealing import DealingEngine, expected_face
from table_controller.domain.engine.settings import TableSettings
from table_controller.domain.equity import Game, hand_reading
from table_controller.domain.equity.live import EquitySpot, LiveEquity, compute_live, equity_spot
from table_controller.domain.events import CardPlaced, CardRemoved
from table_controller.domain.zones import ZoneKind
from table_controller.mqtt.broker_config import BrokerConfig
from table_controller.mqtt.payloads import (
    EquityInfo,
    PublicState,
    SecureState,
)
from table_controller.mqtt.publisher import MqttPublisher
from table_controller.mqtt.sequence import SequenceCounter
from table_controller.mqtt.topics import TableTopics
from table_controller.records.journal import Journal
from table_controller.records.replay import load_script
from table_controller.simulation.physical import PhysicalDeal, deal_random
from table_controller.table.deck import load_decks
from table_controller.table.layout import load_layout
from table_controller.table.presence import PresenceTracker
from table_controller.testing.broker import WAIT, MosquittoBroker, RecordingSubscriber
from table_controller.testing.core_rig import RecordingPublisher
from table_controller.testing.daemon_rig import DECK, LAYOUT

SECRET_KEYS = {"down", "reading", "equity", "win", "tie", "stderr", "outs", "equity_info"}
"""Keys that only a secure payload may carry."""


class SyncSink:
    """An equity sink that remembers the spots; the test delivers results itself."""

    def __init__(self) -> None:
        self.spots: list[EquitySpot | None] = []

    def submit(self, spot: EquitySpot | None) -> None:
        """Remember ``spot``."""
        self.spots.append(spot)


def make_core(tmp: Path, sink: Any) -> tuple[TableCore, RecordingPublisher, Journal]:
    layout = load_layout(LAYOUT)
    registry = load_decks([DECK])
    journal = Journal.open(tmp / "t.journal.jsonl", fsync="never")
    recorder = RecordingPublisher()
    core = TableCore(
        table_id="t1", settings=TableSettings(seats=layout.seats, auto_hands=True),
        layout=layout, presence=PresenceTracker(layout, registry, 0.3), journal=journal,
        publisher=recorder, registry=registry, equity=sink,
        wall_clock=lambda: 1.7e9, mono_clock=lambda: 100.0,
    )
    return core, recorder, journal


def zone_events(deal: PhysicalDeal) -> list[CardPlaced | CardRemoved]:
    """The deal's card movements (a card-only table learns the players from them)."""
    return [e for e in deal.events if isinstance(e, CardPlaced | CardRemoved)]


def feed(core: TableCore, event: CardPlaced | CardRemoved) -> None:
    """Feed one card movement as if its arrival window had passed: a card-only hand's
    second round waits for it (daemon/arrival_order.py; no clock runs here)."""
    core.feed([event])
    core.feed_held()


def play(core: TableCore, sink: SyncSink, events: list[CardPlaced | CardRemoved]) -> None:
    """Feed each event; deliver the equity of each new spot at once (a fast worker)."""
    for event in events:
        before = len(sink.spots)
        feed(core, event)
        for spot in sink.spots[before:]:
            if spot is not None:
                core.handle(EquityReady(compute_live(spot)))


def test_card_event_first_then_state_then_secure_equity(tmp_path: Path) -> None:
    sink = SyncSink()
    core, recorder, journal = make_core(tmp_path, sink)
    deal = deal_random((1, 2, 3), random.Random(5), fold_chance=0.0)
    dealt = 0
    for event in zone_events(deal):
        start = len(recorder.messages)
        before = len(sink.spots)
        feed(core, event)
        new_spots = [s for s in sink.spots[before:] if s is not None]
        for spot in new_spots:
            core.handle(EquityReady(compute_live(spot)))
        out = recorder.messages[start:]
        if not new_spots:
            continue
        dealt += 1
        topics = [t for t, _ in out]
        # The card's event, then both states, then the equity update (secure only).
        assert topics[-3:] == ["state", "secure/state", "secure/state"], topics
        assert any(t == "secure/events" for t in topics[:-3])
        assert out[-2][1]["equity_info"] == {"ready": False, "exact": None, "runouts": None,
                                             "seed": None, "community": None, "problem": None}
        final = out[-1][1]
        spot = new_spots[-1]
        expected = compute_live(spot)
        assert final["equity_info"]["ready"] is True
        assert final["equity_info"]["seed"] == expected.seed
        for row in final["seats"]:
            share = expected.seats.get(row["seat"])
            assert row["equity"] == (share.equity if share else None)
            assert row["win"] == (share.win if share else None)
            # Each live seat's hand in words comes with its numbers (secure only).
            cards = dict(spot.seats).get(row["seat"])
            assert row["reading"] == (hand_reading(cards, Game.STUD) if cards else None)
        assert abs(sum(r["equity"] or 0 for r in final["seats"]) - 1) < 1e-9
    assert dealt >= 5  # 3rd (complete) to 7th street, each card after that
    assert core.equity_published == dealt
    journal.close()


def test_newer_card_makes_an_older_result_stale(tmp_path: Path) -> None:
    """The engine thread's check: a result for an older position is not published."""
    sink = SyncSink()
    core, recorder, journal = make_core(tmp_path, sink)
    events = zone_events(deal_random((1, 2), random.Random(2), fold_chance=0.0))
    spots: list[EquitySpot] = []
    for event in events:
        before = len(sink.spots)
        feed(core, event)
        spots += [s for s in sink.spots[before:] if s is not None]
        if len(spots) >= 2:
            break
    old, new = spots[-2], spots[-1]
    count = len(recorder.messages)
    core.handle(EquityReady(compute_live(old)))  # finished after the newer card
    assert core.equity_stale == 1
    assert len(recorder.messages) == count  # nothing published
    core.handle(EquityReady(compute_live(new)))
    assert core.equity_published == 1
    assert recorder.messages[-1][1]["equity_info"]["ready"] is True
    journal.close()


def test_worker_cancels_waiting_and_discards_running_older_spots() -> None:
    """Deterministic: the first computation is held until two newer spots came."""
    entered, release = threading.Event(), threading.Event()
    computed: list[int] = []

    def compute(spot: EquitySpot) -> LiveEquity:
        computed.append(spot.seed)
        if spot.seed == 1:
            entered.set()
            assert release.wait(60)
        return LiveEquity(spot, {}, True, 0, None, False, None)

    posted: list[EquityReady] = []
    done = threading.Event()

    def post(ready: EquityReady) -> None:
        posted.append(ready)
        done.set()

    def spot(seed: int) -> EquitySpot:
        return EquitySpot(1, Game.STUD, (), (), None, seed)

    worker = EquityWorker(post, compute)
    worker.start()
    try:
        worker.submit(spot(1))
        assert entered.wait(60)  # seed 1 is being computed
        worker.submit(spot(2))   # waits...
        worker.submit(spot(3))   # ...and is replaced: seed 2 is never computed
        release.set()
        assert done.wait(60)
    finally:
        worker.stop()
    assert computed == [1, 3]
    assert [ready.result.spot.seed for ready in posted] == [3]
    counters = worker.counters
    assert (counters.submitted, counters.computed, counters.cancelled,
            counters.discarded) == (3, 2, 1, 1)


def test_worker_survives_a_failing_computation() -> None:
    posted: list[EquityReady] = []
    done = threading.Event()

    def compute(spot: EquitySpot) -> LiveEquity:
        if spot.seed == 1:
            raise ValueError("boom")
        return LiveEquity(spot, {}, True, 0, None, False, None)

    def post(ready: EquityReady) -> None:
        posted.append(ready)
        done.set()

    worker = EquityWorker(post, compute)
    worker.start()
    try:
        worker.submit(EquitySpot(1, Game.STUD, (), (), None, 1))
        worker.submit(EquitySpot(1, Game.STUD, (), (), None, 2))
        assert done.wait(60)
    finally:
        worker.stop()
    assert [r.result.spot.seed for r in posted] == [2]


def hidden_relabelling(deal: PhysicalDeal, rng: random.Random) -> dict[Card, Card]:
    """A permutation of every card the public never sees (down cards, burns, the
    undealt deck) that keeps every up card and the community card."""
    up = {card for seat, cards in deal.cards.items() for number, card in
          enumerate(cards, start=1) if expected_face(number) is ZoneKind.UP}
    if deal.community is not None:
        up.add(deal.community)
    hidden = sorted(set(ALL_CARDS) - up)
    shuffled = hidden[:]
    rng.shuffle(shuffled)
    return {**{card: card for card in up}, **dict(zip(hidden, shuffled, strict=True))}


def relabel(events: list[CardPlaced | CardRemoved], mapping: dict[Card, Card],
            ) -> list[CardPlaced | CardRemoved]:
    return [dataclasses.replace(event, card=mapping[event.card]) for event in events]


def public_until_result(recorder: RecordingPublisher) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for topic, payload in recorder.public():
        if payload.get("kind") == "hand_result":
            break  # the winners show their cards: public from then on
        out.append((topic, payload))
    return out


def non_interference(workdir: pytest.TempPathFactory, seed: int, players: int) -> None:
    """Play one random hand and its hidden-card relabelling; compare the public streams."""
    rng = random.Random(seed)
    deal = deal_random(tuple(range(1, players + 1)), rng, fold_chance=0.15)
    events = zone_events(deal)
    other = relabel(events, hidden_relabelling(deal, rng))
    streams = []
    for run in (events, other):
        sink = SyncSink()
        core, recorder, journal = make_core(workdir.mktemp("leak"), sink)
        play(core, sink, run)
        journal.close()
        for _topic, payload in recorder.public():
            for row in payload.get("seats", []):
                assert not SECRET_KEYS & set(row)
            assert not SECRET_KEYS & set(payload)
        streams.append(public_until_result(recorder))
        assert core.equity_published > 0
    assert streams[0] == streams[1]


@settings(max_examples=20)
@given(seed=st.integers(0, 2**32), players=st.integers(2, 8))
def test_no_public_payload_depends_on_a_down_card(
    tmp_path_factory: pytest.TempPathFactory, seed: int, players: int
) -> None:
    """Non-interference: the same deal with every hidden card swapped for another
    gives the same public stream (until the showdown), while the secure equity is
    computed and published for both; no public payload has a secure key."""
    non_interference(tmp_path_factory, seed, players)


@pytest.mark.soak
def test_no_public_payload_depends_on_a_down_card_soak(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """The same over 300 seeded hands (2 to 8 players)."""
    for seed in range(300):
        non_interference(tmp_path_factory, seed, 2 + seed % 7)


def test_replaying_the_journal_gives_the_same_numbers(tmp_path: Path) -> None:
    """Equity is derived: nothing new in the journal, and the journal's replay
    derives the same spots (seeds included), hence the same numbers."""
    sink = SyncSink()
    core, recorder, journal = make_core(tmp_path, sink)
    deal = deal_random((1, 2, 3, 4, 5, 6), random.Random(11), fold_chance=0.1)
    play(core, sink, zone_events(deal))
    journal.close()
    published = recorder.equity_updates
    assert published
    ops = {json.loads(line)["op"] for line in
           (tmp_path / "t.journal.jsonl").read_text().splitlines()}
    assert ops <= {"table", "hand", "place", "remove", "end"}, ops  # no equity record
    script = load_script(tmp_path / "t.journal.jsonl")
    engine = DealingEngine(script.settings)
    replayed: list[LiveEquity] = []
    last = None
    for _, event in script.events:
        engine.apply(event)
        spot = equity_spot(engine.hand, Game.STUD)
        if spot is not None and spot != last:
            replayed.append(compute_live(spot))
        last = spot
    assert len(replayed) == len(published)
    for payload, result in zip(published, replayed, strict=True):
        assert payload["equity_info"]["seed"] == result.seed
        assert {row["seat"]: row["equity"] for row in payload["seats"]
                if row["equity"] is not None} == {
            seat: share.equity for seat, share in result.seats.items()}


def test_child_process_computes_the_same_and_comes_back_after_a_kill() -> None:
    """The daemon's default compute: a real child process (nice 19). Killed, it is
    started again for the next spot; that spot's numbers are the same."""
    deal = deal_random((1, 2, 3), random.Random(4), fold_chance=0.0)
    engine = DealingEngine(TableSettings(seats=8))
    spots = []
    for event in deal.events:
        engine.apply(event)
        spot = equity_spot(engine.hand, Game.STUD)
        if spot is not None:
            spots.append(spot)
    child = ChildProcess(Game.STUD)
    child.start()
    try:
        assert child(spots[0]) == compute_live(spots[0])
        pid = child.pid
        assert pid is not None
        assert int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[16]) == 19
        os.kill(pid, signal.SIGKILL)
        died: list[str] = []
        try:  # a spot sent before the death shows fails (that position gets no numbers)
            result = child(spots[-1])
        except RuntimeError as exc:
            died.append(str(exc))
            result = child(spots[-1])
        assert all("died" in text for text in died)
        assert result == compute_live(spots[-1])
        assert child.starts == 2
        assert child.pid != pid
    finally:
        child.close()


def test_publisher_sends_the_equity_update_on_secure_state_alone(
    mosquitto: MosquittoBroker, tmp_path: Path
) -> None:
    """MqttPublisher against a real Mosquitto: the update goes to secure/state only,
    with a seq of its own, is retained, and a rebirth republishes it beside the
    public state under one seq again."""
    topics = TableTopics("t1")
    sub = RecordingSubscriber(mosquitto.port, [topics.all_filter])
    sub.wait_subscribed()
    publisher = MqttPublisher("t1", BrokerConfig(host="127.0.0.1", port=mosquitto.port),
                              SequenceCounter(tmp_path / "seq"))
    publisher.start()
    try:
        assert publisher.wait_online(WAIT)
        public, secure = sample_states()
        publisher.publish_state(public, secure)
        update = secure.model_copy(update={"equity_info": EquityInfo(ready=True, exact=True)})
        publisher.publish_secure_state(update)
        got = sub.wait_topic(topics.secure_state,
                             lambda p: (p.get("equity_info") or {}).get("ready") is True)
        states = [m.json() for m in sub.on_topic(topics.state)]
        assert len(states) == 1  # the public state was not sent again
        assert got.json()["seq"] > states[0]["seq"]
        publisher.republish_retained()
        again = sub.wait_topic(topics.secure_state, lambda p: p["seq"] > got.json()["seq"])
        assert again.json()["equity_info"]["ready"] is True
        public_again = sub.wait_topic(topics.state, lambda p: p["seq"] == again.json()["seq"])
        assert "equity_info" not in public_again.json()
        late = RecordingSubscriber(mosquitto.port, [topics.secure_state])
        try:
            late.wait_subscribed()
            retained = late.wait_topic(topics.secure_state)
            assert retained.retain
            assert retained.json()["equity_info"]["ready"] is True
        finally:
            late.close()
    finally:
        publisher.stop(timeout=1)
        sub.close()


def sample_states() -> tuple[PublicState, SecureState]:
    """A public and a secure state of one seat, as the projection makes them."""
    engine = DealingEngine(TableSettings(seats=8))
    deal = deal_random((1, 2), random.Random(1), fold_chance=0.0)
    for event in deal.events[:8]:
        engine.apply(event)
    return public_state("t1", 8, engine.hand), secure_state("t1", 8, engine.hand)
