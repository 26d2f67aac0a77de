"""The simulator on the RF channel (simulation/rf.py, ``--rf``): timeline, reads, report."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from firmware_bridge.emulator import FirmwareModel
from firmware_bridge.messages import TagArrived
from firmware_bridge.rf_channel import PROFILES, RFParams, leaves_cards_unread, profile
from table_controller.domain.cards import DECK
from table_controller.domain.engine.dealing import SeatStatus, replay_events
from table_controller.domain.engine.settings import TableSettings
from table_controller.domain.events import CardPlaced, CardRemoved
from table_controller.domain.zones import MUCK, Zone
from table_controller.simulation.emulated_table import EmulatedTable
from table_controller.simulation.kinds import DEAL_KINDS, READER_FLICKER, Level
from table_controller.simulation.plan import plan_hand
from table_controller.simulation.report import DetectionReport, HandRF, ObservedAlert
from table_controller.simulation.rf import ROUND_PAUSE, timeline, undetectable_kinds
from table_controller.simulation.runner import rf_table, simulate
from table_controller.simulation.session import DECK_FILE, LAYOUT_FILE
from table_controller.table.deck import load_decks
from table_controller.table.layout import load_layout
from table_controller.table.presence import (
    DEFAULT_SETTLE_TIME,
    PresenceTracker,
    may_cross_read,
)

ROOT = Path(__file__).resolve().parents[3]

READS_ONLY = profile("good", ["muck_depth=all", "cross_read=0", "peek_rate=0",
                              "flicker=0.02", "hand_pass=0.2"])
"""What the engine needs no inference for: every card read once down (flicker and the
dealer's hand over the antennas are bridged by the presence hold)."""


def test_flicker_and_the_dealers_hand_raise_nothing_and_hide_no_error() -> None:
    rates = dict.fromkeys(DEAL_KINDS, 0.05)
    report = simulate(400, 5, rates, rf=READS_ONLY, rf_name="good")
    data = report.as_json()
    assert data["totals"]["false_alerts"] == 0, data["false_alert_list"]
    assert data["totals"]["recall"] == 1.0, data["missed"]
    assert data["totals"]["injected"] > 200
    assert data["rf"]["profile"] == "good"
    assert data["rf"]["unread_placements"] == {}
    assert data["rf"]["masked"] == 0


@settings(max_examples=8)
@given(st.floats(0.0, 0.02), st.floats(0.0, 0.5), st.sampled_from([0.05, 0.1, 0.15]),
       st.integers(0, 10_000))
def test_any_flicker_and_hand_pass_of_a_good_table_raise_no_alert(
        flicker: float, hand_pass: float, scan: float, seed: int) -> None:
    rf = replace(READS_ONLY, flicker=flicker, hand_pass=hand_pass, scan_period=scan)
    report = simulate(25, seed, {}, rf=rf, rf_name="good")
    assert sum(report.false_alerts.values()) == 0, report.false_listed


def test_a_table_without_muck_antenna_never_reads_a_fold_in_the_muck() -> None:
    rf = profile("no-muck", ["stack_loss=0", "dead_tag=0", "cross_read=0"])
    table = rf_table(rf, 3)
    mucked = 0
    for number in range(1, 40):
        hand = plan_hand(number, 3, {})
        events, facts = table.deal(hand)
        assert not any(isinstance(e, CardPlaced) and e.zone == MUCK for e in events)
        muck_moves = [i for i, e in enumerate(hand.events)
                      if isinstance(e, CardPlaced) and e.zone == MUCK]
        mucked += len(muck_moves)
        assert {i for i, _z, why in facts.unread if why == "pile"} == set(muck_moves)
        # The fold is still seen: the cards leave the seat.
        removed = {(e.zone, e.card) for e in events if isinstance(e, CardRemoved)}
        for index in muck_moves:
            leaving = hand.events[index - 1]
            assert isinstance(leaving, CardRemoved)
            assert (leaving.zone, leaving.card) in removed
    assert mucked > 50


@settings(max_examples=40)
@given(st.integers(1, 5_000), st.floats(0.5, 10.0))
def test_a_peek_is_a_hole_card_lifted_and_put_back_before_the_seat_moves_again(
        number: int, peek_max: float) -> None:
    rf = replace(PROFILES["good"], peek_rate=1.0, peek_max=peek_max)
    registry = load_decks([DECK_FILE])
    hand = plan_hand(number, 9, {})
    actions, _console = timeline(hand, registry, rf, random.Random(number))
    peeks = [a for a in actions if a.peek]
    assert len(peeks) in (0, 2)
    if peeks:
        lift, back = sorted(peeks, key=lambda a: a.at)
        assert not lift.place
        assert back.place
        assert lift.uid == back.uid
        assert lift.zone == back.zone
        assert lift.zone.seat is not None
        assert back.at - lift.at <= peek_max + 1e-9
        seat_moves = [a.at for a in actions if not a.peek and a.zone.seat == lift.zone.seat
                      and lift.at < a.at and not a.place]
        assert all(back.at < at for at in seat_moves)
    assert [a.at for a in actions] == sorted(a.at for a in actions)


def test_a_betting_pause_comes_before_every_burn_of_a_new_street() -> None:
    registry = load_decks([DECK_FILE])
    hand = plan_hand(4, 2, {})
    actions, _console = timeline(hand, registry, replace(PROFILES["good"], peek_rate=0.0),
                                 random.Random(0))
    burns = [i for i, a in enumerate(actions) if a.place and a.zone.name == "burn"]
    assert burns
    for index in burns:
        if index and actions[index - 1].zone.name != "burn":
            assert actions[index].at - actions[index - 1].at >= ROUND_PAUSE


def test_masked_injections_and_dead_tag_alerts_are_counted_apart() -> None:
    rf = PROFILES["no-muck"]
    report = DetectionReport(mode="fast", seed=1, rates={"missing_burn": 0.5,
                                                         "hole_card_exposed": 0.5})
    report.set_rf("no-muck", rf)
    hands = [replace(plan_hand(n, 1, {}), number=n) for n in (1, 2, 3, 4, 5)]
    hands[4] = replace(hands[4], kind="hole_card_exposed", expected_code="hole_card_exposed",
                       expected_seat=1)
    hands[0] = replace(hands[0], kind="hole_card_exposed", expected_code="hole_card_exposed",
                       expected_seat=2)
    hands[1] = replace(hands[1], kind="hole_card_exposed", expected_code="hole_card_exposed",
                       expected_seat=3)
    alerts = [ObservedAlert(1, "hole_card_exposed", 2), ObservedAlert(3, "out_of_order", 1),
              ObservedAlert(4, "out_of_order", 5)]
    facts = {1: HandRF(), 2: HandRF(masked="stack"), 3: HandRF(dead=1), 4: HandRF(),
             5: HandRF(dead=1)}
    report.judge(hands, alerts, facts)
    tally = report.kinds["hole_card_exposed"]
    assert (tally.injected, tally.flagged) == (3, 1)
    assert dict(tally.masked) == {"stack": 1, "dead tag in the hand": 1}
    assert tally.recall(Level.DEAL) == 1.0
    assert dict(report.dead_tag_alerts) == {"out_of_order": 1}
    assert dict(report.false_alerts) == {"out_of_order": 1}
    data = report.as_json()
    assert data["rf"]["dead_tag_hands"] == 2
    assert data["rf"]["masked"] == 2
    assert "short_hand" in data["rf"]["undetectable"]


def test_kinds_the_conditions_make_undetectable_are_named_with_the_reason() -> None:
    assert undetectable_kinds(RFParams()) == {}
    named = undetectable_kinds(PROFILES["no-muck"])
    assert set(named) == {"short_hand"}
    assert "15.4%" in named["short_hand"]
    assert "missing_burn" in undetectable_kinds(RFParams(burn_depth=3))
    # Dead tags alone: the table infers unread cards, a 7th card not dealt among them.
    dead = undetectable_kinds(RFParams(dead_tag=0.005))
    assert set(dead) == {"short_hand"}
    assert "0.5% (a dead tag)" in dead["short_hand"]


def test_the_table_infers_unread_cards_when_a_stack_or_a_dead_tag_can_hide_one() -> None:
    assert not leaves_cards_unread(RFParams())
    assert not leaves_cards_unread(PROFILES["good"])
    assert leaves_cards_unread(PROFILES["no-muck"])
    assert leaves_cards_unread(RFParams(dead_tag=0.005))
    assert leaves_cards_unread(RFParams(stack_loss=0.05))
    assert leaves_cards_unread(RFParams(max_stack=1))
    # Piles read to a depth hide no seat card: no inference.
    assert not leaves_cards_unread(RFParams(muck_depth=0, burn_depth=2, pile_loss=0.5))


def test_dead_tags_on_a_table_that_reads_every_stack_are_inferred_not_alerted() -> None:
    # With stack loss 0 the engine used to trust every read, and a dead seat card
    # raised out_of_order, short_hand, card_to_inactive_seat... (this run: 1,780
    # alerts in 133 hands with a dead tag; docs/simulation.md "Dead tags infer too").
    # Now the cards never read are inferred; what is left is a dead burn card's one
    # documented alert, missing_burn.
    rf = profile("no-muck", ["stack_loss=0", "cross_read=0", "dead_tag=0.02"])
    report = simulate(300, 23, {}, rf=rf, rf_name="no-muck")
    data = report.as_json()
    assert data["rf"]["dead_tag_hands"] > 100
    alerts = data["rf"]["dead_tag_alerts"]
    assert set(alerts) <= {"missing_burn"}, alerts
    assert sum(alerts.values()) <= data["rf"]["dead_tag_hands"] // 5, alerts
    assert data["totals"]["false_alerts"] == 0, data["false_alert_list"]


def test_the_emulated_readers_read_through_the_channel(tmp_path: Path) -> None:
    layout = load_layout(LAYOUT_FILE)
    registry = load_decks([DECK_FILE])
    rf = profile("no-muck", ["flicker=0", "hand_pass=0", "cross_read=0", "dead_tag=0"])
    table = EmulatedTable(layout, registry, tmp_path, rf=rf)
    try:
        down = Zone.parse("seat1.down")
        seat = layout.antennas_of(down)[0]
        muck = layout.antennas_of(MUCK)[0]
        table.apply(CardPlaced(down, DECK[0]))
        table.apply(CardPlaced(MUCK, DECK[1]))
        seat_reader = table.readers[seat[0]].model
        muck_reader = table.readers[muck[0]].model
        arrived = [m for m in seat_reader.scan(1e9) if isinstance(m, TagArrived)]
        assert [m.antenna for m in arrived] == [seat[1]]
        assert not [m for m in muck_reader.scan(1e9) if isinstance(m, TagArrived)]
        assert muck_reader.placed(muck[1])  # the card lies there, unread: no muck antenna
    finally:
        table.stop()


def test_the_firmware_reports_what_its_reads_hook_says() -> None:
    seen: dict[int, list[str]] = {0: ["04AABBCC"], 1: []}
    model = FirmwareModel(1, antenna_count=2, reads=lambda antenna, now: seen[antenna])
    model.place(1, "04BBCCDD")  # lies there, but the channel does not read it
    assert model.scan(0.0) == [TagArrived(0, "04AABBCC")]
    seen[0] = []
    assert [type(m).__name__ for m in model.scan(0.1)] == ["TagLeft"]


def test_cli_rf_json_and_flicker_on_the_channel() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "table_controller", "simulate", "--hands", "30", "--json",
         "--rf", "good", "--rf-param", "muck_depth=all", "--rate", f"{READER_FLICKER}=0.3",
         "--rate", "missing_burn=0.2"],
        capture_output=True, text=True, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["rf"]["params"]["muck_depth"] == "all"
    assert data["kinds"][READER_FLICKER]["injected"] > 0
    bad = subprocess.run(
        [sys.executable, "-m", "table_controller", "simulate", "--hands", "3",
         "--rf-param", "muck_depth=0"], capture_output=True, text=True, cwd=ROOT, check=False)
    assert bad.returncode == 2
    assert "needs --rf" in bad.stderr


def test_a_second_hole_card_the_readers_never_saw_raises_no_alert(tmp_path: Path) -> None:
    # Three players; seat 2's second hole card lies on its first and is never read. A
    # table whose readers miss stacked cards says so (`unread_stacks`, docs/engine.md
    # "Reads that fail"); the script itself is the contract's strict reading.
    script = ROOT / "tests" / "scripts" / "unread-second-hole-card.jsonl"
    table = tmp_path / "unread.jsonl"
    table.write_text('{"op":"table","unread_stacks":true}\n' + script.read_text())
    done = subprocess.run([sys.executable, "-m", "table_controller", "replay", str(table),
                           "--json"], capture_output=True, text=True, cwd=ROOT, check=True)
    [hand] = json.loads(done.stdout)["hands"]
    assert hand["alerts"] == []
    assert [(n["code"], n["seat"]) for n in hand["notices"]] == [("card_unread", 2)]


def _cross_read(first: str, second: str) -> list[tuple[str, str]]:
    """A hole card of seat 1 read by its own (down) antenna and cross-read by the seat's
    up antenna 10 dB weaker, ``first`` reporting it 30 ms before ``second``, through the
    daemon's and fast mode's tracker (settle window, strengths on the wire): the zone
    events."""
    layout = load_layout(LAYOUT_FILE)
    registry = load_decks([DECK_FILE])
    tracker = PresenceTracker(layout, registry, settle_time=DEFAULT_SETTLE_TIME)
    antennas = {name: layout.antennas_of(Zone.parse(f"seat1.{name}"))[0]
                for name in ("down", "up")}
    strength = {"down": -45.0, "up": -55.0}
    uid = registry.uid_for(DECK[0], "red")
    events = tracker.tag_arrived(*antennas[first], uid, 1.00, strength[first])
    events += tracker.tag_arrived(*antennas[second], uid, 1.03, strength[second])
    events += tracker.tick(5.0)
    return [(type(e).__name__, e.zone.name) for e in events]


def test_a_cross_read_after_the_own_read_stays_a_card_in_its_own_zone() -> None:
    assert _cross_read("down", "up") == [("CardPlaced", "seat1.down")]


def test_a_cross_read_before_the_own_read_stays_a_card_in_its_own_zone() -> None:
    # Both antennas see the card from the moment it lands; whichever reader scans
    # first reports first (the simulator: half the time). The stronger read decides
    # within the settle window (docs/presence.md rule 1).
    assert _cross_read("up", "down") == [("CardPlaced", "seat1.down")]


CROSS_READ_CHANNELS = st.builds(
    lambda name, muck, cross, flicker, hand: (name, [
        f"muck_depth={muck}", "stack_loss=0", "dead_tag=0", f"cross_read={cross}",
        "cross_tie=0", f"flicker={flicker}", f"hand_pass={hand}"]),
    st.sampled_from(["good", "diy"]), st.sampled_from(["0", "2", "5", "all"]),
    st.floats(0.0, 0.3), st.floats(0.0, 0.01), st.floats(0.0, 0.3))
"""The good and diy profiles with any cross-read rate (up to 30 %) and muck depth;
every card read (no stack loss, no dead tag: those are the engine's). Ties: the test
after the property."""


@settings(max_examples=25)
@given(st.integers(1, 100_000), CROSS_READ_CHANNELS)
def test_cross_reads_never_put_a_card_in_a_second_zone_nor_raise_an_alert(
        number: int, channel: tuple[str, list[str]]) -> None:
    name, overrides = channel
    rf = profile(name, overrides)
    hand = replace(plan_hand(number, 77, {}), number=1)
    table = rf_table(rf, number)
    inputs, facts = table.deal(replace(hand, clear=()))
    [state] = replay_events(inputs, TableSettings(auto_hands=True))
    assert state.alerts == [], [a.message for a in state.alerts]
    lying = _lying(hand.events)
    where = {code: zone for zone, cards in lying.items() for code in cards}
    placed = {p.card.code: p.zone.name for p in table.tracker.present() if p.card is not None}
    # Every card presence places lies in that very zone (never the neighbour's) ...
    assert {code: where.get(code) for code in placed} == placed, facts.cross_reads
    # ... and every card on the felt is placed, but in a muck read to its depth only.
    assert {code for code, zone in where.items()
            if zone != "muck" or rf.muck_depth is None} <= placed.keys()


def _lying(hand_events: tuple[object, ...]) -> dict[str, set[str]]:
    """What the dealer left in each zone (before the clear)."""
    lying: dict[str, set[str]] = {}
    for event in hand_events:
        if isinstance(event, CardPlaced):
            lying.setdefault(event.zone.name, set()).add(event.card.code)
        elif isinstance(event, CardRemoved):
            lying.get(event.zone.name, set()).discard(event.card.code)
    return lying


GOOD_CHANNELS = st.builds(
    lambda muck, rate, peek, flicker, hand: [
        f"muck_depth={muck}", "cross_read=0", f"peek_rate={rate}", f"peek_max={peek}",
        f"flicker={flicker}", f"hand_pass={hand}"],
    st.sampled_from(["0", "1", "3", "5", "all"]), st.floats(0.0, 1.0), st.floats(0.5, 10.0),
    st.floats(0.0, 0.01), st.floats(0.0, 0.3))
"""The good profile with any muck depth, peeks, flicker and hand passes (cross-reads:
the property after the next test)."""


def test_a_tie_is_named_and_the_card_lies_in_one_of_the_two_zones() -> None:
    rf = profile("good", ["cross_read=0.5", "cross_tie=1", "flicker=0", "hand_pass=0"])
    hand = replace(plan_hand(5, 77, {}), number=1)
    table = rf_table(rf, 5)
    table.deal(replace(hand, clear=()))
    ties = table.tracker.ties()
    assert ties, "half the cards cross-read, every cross-read a tie"
    put: dict[str, set[str]] = {}  # every zone the dealer put each card in
    for event in hand.events:
        if isinstance(event, CardPlaced):
            put.setdefault(event.card.code, set()).add(event.zone.name)
    for tie in ties:
        assert tie.card is not None
        # Named with both zones, neighbours, one of them where the card was put.
        assert may_cross_read(tie.kept, tie.other)
        assert put[tie.card.code] & {tie.kept.name, tie.other.name}


def _left_after_last_card(events: tuple[object, ...], seat: int) -> bool:
    """Whether ``seat``'s cards left after the hand's last card dealt to a seat."""
    last_dealt = max(i for i, e in enumerate(events)
                     if isinstance(e, CardPlaced) and e.zone.seat is not None)
    left = [i for i, e in enumerate(events) if isinstance(e, CardRemoved) and e.zone.seat == seat]
    return bool(left) and min(left) > last_dealt


@settings(max_examples=25)
@given(st.integers(1, 100_000), GOOD_CHANNELS)
def test_a_good_table_without_cross_reads_reconstructs_every_seat_and_raises_nothing(
        number: int, overrides: list[str]) -> None:
    rf = profile("good", overrides)
    hand = replace(plan_hand(number, 77, {}), number=1)
    table = rf_table(rf, number)
    inputs, facts = table.deal(replace(hand, clear=()))  # the hand as it lies at its end
    assert [why for _i, _z, why in facts.unread if why != "pile"] == []
    [state] = replay_events(inputs, TableSettings(auto_hands=True))
    assert state.alerts == [], [a.message for a in state.alerts]
    lying = _lying(hand.events)
    for seat in hand.seats:
        got = state.seats[seat]
        down, up = lying.get(f"seat{seat}.down", set()), lying.get(f"seat{seat}.up", set())
        if not down and not up:
            # Mucked after the last card was dealt: to a card-only table that is the
            # showdown's gathering (rule 10), which the engine may not call a fold.
            if not _left_after_last_card(hand.events, seat):
                assert got.status is SeatStatus.FOLDED, seat
            continue
        assert got.status is SeatStatus.ACTIVE, seat
        assert {c.code for c in got.down} == down, seat
        assert {c.code for c in got.up} == up, seat


def test_a_folded_card_dealt_again_from_an_unread_muck_is_card_from_muck() -> None:
    # Seat 1 folds (its cards leave, the muck reads nothing); its As comes back at seat 2.
    script = ROOT / "tests" / "scripts" / "card-from-unread-muck.jsonl"
    done = subprocess.run([sys.executable, "-m", "table_controller", "replay", str(script),
                           "--json"], capture_output=True, text=True, cwd=ROOT, check=True)
    [hand] = json.loads(done.stdout)["hands"]
    assert ["card_from_muck", 2] in [[a["code"], a["seat"]] for a in hand["alerts"]]


def test_alerts_of_a_hand_the_reads_split_in_two_stay_with_the_planned_hand() -> None:
    from table_controller.simulation.runner import _renumbered

    # The engine's hand 5 began while planned hand 4 was dealt (the seats looked
    # clear mid-hand): its alerts, and every later hand's, keep their planned number.
    started_in = {1: 1, 2: 2, 3: 3, 4: 4, 5: 4, 6: 5}
    raised = [ObservedAlert(5, "out_of_order", 2), ObservedAlert(6, "missing_burn", None),
              ObservedAlert(None, "unknown_card", 1)]
    assert [a.hand for a in _renumbered(raised, started_in)] == [4, 5, None]


# ----------------------------------------- masked: the witness rule (docs/simulation.md)

def _injected(kind: str, seed: int = 3) -> tuple[Any, Any]:
    """A clean card-only deal and ``kind`` injected into it."""
    from table_controller.simulation.errors import ErrorKind, inject
    from table_controller.simulation.physical import deal_random

    for attempt in range(200):
        rng = random.Random(f"{seed}:{attempt}")
        deal = deal_random([1, 3, 4, 6], rng, fold_chance=0.0)
        injection = inject(deal, ErrorKind(kind), rng)
        if injection is not None and (kind != "extra_burn" or 4 <= (injection.street or 0) <= 6):
            return deal, injection
    raise AssertionError(kind)


@pytest.mark.parametrize(("kind", "number"), [
    ("too_many_cards", 7), ("duplicate_card", None), ("both_hole_cards_exposed", None),
    ("out_of_order", None), ("extra_burn", 6)])
def test_each_kind_names_its_witness_cards(kind: str, number: int | None) -> None:
    """The cards a mistake is judged against: the down cards of the seat given an
    8th card (its river; an unread hole card, which the 8th would be read late), the
    first copy of a duplicate, the other exposed hole card, both swapped cards, the
    6th street's cards after a second burn on 4th-6th street."""
    _deal, injection = _injected(kind)
    assert injection.witnesses
    for group in injection.witnesses:
        assert group
        for index in group:
            event = injection.events[index]
            assert isinstance(event, CardPlaced)
            assert event.zone.seat is not None
    if kind == "too_many_cards":  # the seat's down cards: its hole cards and river
        seat_cards = [i for i, e in enumerate(injection.events)
                      if isinstance(e, CardPlaced) and e.zone.seat == injection.seat]
        assert [group[0] for group in injection.witnesses] == [
            seat_cards[0], seat_cards[1], seat_cards[number - 1]]
    if kind == "duplicate_card":
        (first,), = injection.witnesses
        assert injection.events[first].card == injection.events[-1].card


def test_a_hand_is_masked_when_a_witness_was_never_read_and_only_then() -> None:
    """``SimHand.hidden``: the card put down differently, or every card of a witness
    group, never read; a witness group never dealt only where the table infers
    unread cards (stack loss)."""
    from table_controller.simulation.plan import SimHand

    hand = SimHand(1, (1, 2), "duplicate_card", "duplicate_card", 2, (), (), evidence=9,
                   witnesses=((4,),))
    assert hand.hidden({}, rounds_unread=True) is None
    assert hand.hidden({9: "stack"}, rounds_unread=True) == "stack"
    assert hand.hidden({4: "dead"}, rounds_unread=False) == "witness dead"
    assert hand.hidden({5: "stack"}, rounds_unread=True) is None
    burn = SimHand(2, (1, 2), "extra_burn", "extra_burn", None, (), (), evidence=7,
                   witnesses=((20, 21),))
    assert burn.hidden({20: "stack"}, rounds_unread=True) is None  # 21 read: it decides
    assert burn.hidden({20: "stack", 21: "stack"}, rounds_unread=True) == "witness stack"
    ended = SimHand(3, (1, 2), "extra_burn", "extra_burn", None, (), (), evidence=7,
                    witnesses=((),))
    assert ended.hidden({}, rounds_unread=True) == "witness never dealt"
    assert ended.hidden({}, rounds_unread=False) is None
