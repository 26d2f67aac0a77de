"""Crash loops: ``kill -9`` the real daemon while a table deals, restart it, and
compare the hands with a run that never stopped (issue 9 item 10 and the
reliability suite).

Everything is real: the daemon is a ``stud-table run`` subprocess, the readers
are emulated on ptys, the broker is Mosquitto. The dealer deals seeded hands
(deal, showdown pick-up, gathering the muck, burn pile and board) and keeps
dealing while the daemon is down.

What is compared with the run without kills (the same physical events through
the engine in card-only mode, as the daemon runs it):

* hand numbers: the results arrive for hands 1..N, each once, in order;
* each hand's winners, and the cards each winner shows;
* alerts: exactly the alerts of the run without kills (none: the hands are
  dealt correctly) plus ``hand_interrupted`` alerts, at most one per hand and
  only for hands whose clearing (a seat card leaving the table) fell in a
  downtime. An interrupted hand's result comes from the cards as last seen
  (what the downtime hid is unknown); it is counted (``interrupted_same_result``)
  but not asserted;
* nothing lost: the journal finally accounts for every card where the table has it.

The dealer waits, before each kill and after each restart, until the journal
has caught up with the table, so that which hand a downtime interrupts is
known exactly. Kill moments and downtime lengths are seeded.
"""

from __future__ import annotations

import itertools
import random
import time
from collections import Counter
from dataclasses import dataclass

import pytest
from fault_rig import (
    Mirror,
    alert_codes,
    hand_events,
    payloads,
    reference_hands,
    restart_and_wait_ready,
    wait_caught_up,
    wait_status,
)
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from table_controller.daemon.reconcile import net_difference, reconcile
from table_controller.domain.cards import Card
from table_controller.domain.engine.alerts import Alert
from table_controller.domain.engine.dealing import DealingEngine, HandState
from table_controller.domain.engine.settings import TableSettings
from table_controller.domain.events import CardPlaced, CardRemoved, HandEnded, TableEvent
from table_controller.domain.zones import Zone
from table_controller.simulation import deal_random, random_hands
from table_controller.testing.broker import WAIT, wait_until
from table_controller.testing.daemon_rig import TableRig, subscribe, wait_state

SHUFFLE = 0.7
"""Seconds the dealer shuffles between hands (the rig's presence hold is 0.3 s)."""


@dataclass
class CrashLoopFigures:
    """What one crash-loop run measured (printed for docs/reliability.md)."""

    hands: int = 0
    kills: int = 0
    events: int = 0
    downtime_events: int = 0
    interrupted: int = 0
    interrupted_same_result: int = 0
    compared: int = 0
    alerts_extra: int = 0


def _settings() -> TableSettings:
    return TableSettings(seats=8, ante=1, bring_in=2, small_bet=5, big_bet=10, auto_hands=True)


def crash_loop(rig: TableRig, hands: int, kills: int, seed: int,
               max_downtime: int = 12) -> CrashLoopFigures:
    """Deal ``hands`` seeded hands with ``kills`` seeded ``kill -9``s; compare.

    A downtime is 1 to ``max_downtime`` table events (a restart takes about two
    seconds; a dealer moves a card about every half second).
    """
    figures = CrashLoopFigures(hands=hands)
    deals = random_hands(hands, seed)
    events = [e for deal in deals for e in hand_events(deal)]
    ends = set(itertools.accumulate(len(hand_events(deal)) for deal in deals))
    figures.events = len(events)
    rng = random.Random(seed * 7919 + 1)
    span = max(4, len(events) // (kills + 1))
    sub = subscribe(rig.broker.port)
    mirror = Mirror(rig)
    ref = DealingEngine(_settings())  # steps with the dealer: which hand is open
    cleared_in_downtime: set[int] = set()  # hands whose clearing a downtime held
    rig.start_process()
    wait_status(sub, "online")
    done = 0

    def deal_until(index: int) -> None:
        nonlocal done
        for position in range(done, index):
            mirror.run([events[position]])
            ref.apply(events[position])
            if position + 1 in ends:
                # The dealer shuffles before the next deal, longer than the
                # presence hold: the gathered cards are gone before it (as the
                # demo's dealer does; without the pause a card-only table merges
                # the hands even without any kill).
                time.sleep(SHUFFLE)
        done = max(done, index)

    for _ in range(kills):
        point = done + rng.randint(1, span)
        if point >= len(events):
            break
        deal_until(point)
        wait_caught_up(rig, mirror)
        hand = ref.hand
        number = hand.number if hand is not None and not hand.finished else None
        rig.kill9()
        figures.kills += 1
        start = done
        deal_until(min(len(events), done + rng.randint(1, max_downtime)))
        figures.downtime_events += done - start
        if number is not None and any(
            isinstance(e, CardRemoved) and e.zone.seat is not None for e in events[start:done]
        ):
            cleared_in_downtime.add(number)
        restart_and_wait_ready(rig, sub)
        wait_caught_up(rig, mirror)
    deal_until(len(events))
    wait_caught_up(rig, mirror)

    expected = reference_hands(events)
    results = [p for p in payloads(sub, "events") if p["kind"] == "hand_result"]
    log = rig.daemon_log()[-4000:]
    assert [r["hand"] for r in results] == list(range(1, hands + 1)), log
    interrupted = [a["hand"] for a in payloads(sub, "alerts") if a["code"] == "hand_interrupted"]
    figures.interrupted = len(interrupted)
    # An "interrupted" alert only for a hand whose clearing fell in a downtime, once.
    assert len(set(interrupted)) == len(interrupted), interrupted
    assert set(interrupted) <= cleared_in_downtime, (interrupted, cleared_in_downtime)
    for reference, result in zip(expected, results, strict=True):
        same = result["winners"] == sorted(reference.winners) and all(
            sorted(s["cards"]) == _showdown_cards(reference, s["seat"]) for s in result["shown"]
        )
        if reference.number in interrupted:
            figures.interrupted_same_result += same
            continue  # its downtime is unknown: the result is from the cards last seen
        figures.compared += 1
        assert same, (reference.number, result, sorted(reference.winners))
    wanted = Counter(a.code.value for hand in expected for a in hand.alerts)
    wanted["hand_interrupted"] += figures.interrupted
    got = Counter(alert_codes(sub))
    figures.alerts_extra = sum((got - wanted).values())
    sub.close()
    print(f"crash loop seed {seed}: {figures}")
    assert got == wanted, log
    return figures


def _showdown_cards(hand: HandState, seat: int) -> list[str]:
    """The cards a seat shows: its own plus the rule-15 community card, if any."""
    cards = [c.code for c in hand.seats[seat].all_cards]
    if hand.community is not None:
        cards.append(hand.community.code)
    return sorted(set(cards))


@pytest.mark.slow
def test_crash_loop_kill_9_while_dealing_same_hands_as_without_kills(rig: TableRig) -> None:
    figures = crash_loop(rig, hands=4, kills=4, seed=9)
    assert figures.kills == 4


@pytest.mark.soak
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_crash_loop_soak(rig: TableRig, seed: int) -> None:
    figures = crash_loop(rig, hands=30, kills=30, seed=seed)
    assert figures.kills >= 25


def test_kill_9_across_a_hand_boundary_ends_the_old_hand_as_interrupted(rig: TableRig) -> None:
    """Issue 9 item 10: the downtime spans the end of hand 1 and the deal of hand 2."""
    sub = subscribe(rig.broker.port)
    mirror = Mirror(rig)
    first = deal_random([1, 3, 5, 7], random.Random(21), fold_chance=0.0)
    second = deal_random([2, 4, 6, 8], random.Random(22), fold_chance=0.0)
    rig.start_process()
    wait_status(sub, "online")
    one = hand_events(first)
    dealt = [e for e in one if isinstance(e, CardPlaced)]
    mirror.run(dealt)
    wait_caught_up(rig, mirror)
    rig.kill9()
    # While the daemon is down: hand 1 is picked up and gathered, hand 2 dealt
    # to 4th street (many of its cards were in hand 1 too, at other seats).
    mirror.run([e for e in one if isinstance(e, CardRemoved)])
    time.sleep(SHUFFLE)
    two = hand_events(second)
    mirror.run(two[:14])
    restart_and_wait_ready(rig, sub)
    wait_caught_up(rig, mirror)
    state = wait_state(sub, lambda s: s["hand"] == 2)
    codes = alert_codes(sub)
    assert codes.count("hand_interrupted") == 1, codes
    assert set(codes) == {"hand_interrupted"}, codes  # no card_from_muck, inactive seat...
    (alert,) = [a for a in payloads(sub, "alerts") if a["code"] == "hand_interrupted"]
    assert alert["hand"] == 1
    # Hand 1's result is published (from the cards as last seen), hand 2 is hand 2.
    results = [p for p in payloads(sub, "events") if p["kind"] == "hand_result"]
    (expected_one, *_rest) = reference_hands([*one, *two])
    assert [(r["hand"], r["winners"]) for r in results] == [(1, sorted(expected_one.winners))]
    # Issue 14: hand 1's record (hands) says how it ended: while the daemon was down.
    (record,) = [p for p in payloads(sub, "hands") if p["hand"] == 1]
    assert record["ended"] == "interrupted"
    assert record["winners"] == sorted(expected_one.winners)
    seated = {s["seat"] for s in state["seats"] if s["status"] == "active"}
    assert seated == {2, 4, 6, 8}
    assert state["alerts"] == []
    # The rest of hand 2 goes on as if nothing happened.
    mirror.run(two[14:])
    wait_caught_up(rig, mirror)
    assert set(alert_codes(sub)) == {"hand_interrupted"}
    results = [p for p in payloads(sub, "events") if p["kind"] == "hand_result"]
    assert [r["hand"] for r in results] == [1, 2]


# ------------------------------------------------------- the reconciliation alone


def _downtime_run(seed: int, kills: int, max_downtime: int) -> tuple[list[str], list[str], bool]:
    """Deal 8 seeded hands through an engine, with ``kills`` downtimes whose
    events reach it only as the start-up difference, reconciled as the daemon
    does. Return (alerts raised, alerts of the run without downtimes, whether
    some downtime hid a card: placed and removed again before the restart)."""
    deals = random_hands(8, seed)
    events = [e for deal in deals for e in hand_events(deal)]
    rng = random.Random(seed)
    span = max(4, len(events) // (kills + 1))
    engine = DealingEngine(_settings())
    alerts: list[str] = []
    hidden = False
    done = 0

    def apply(event: TableEvent, quiet: bool = False) -> None:
        raised = [o.code.value for o in engine.apply(event) if isinstance(o, Alert)]
        if not quiet:
            alerts.extend(raised)

    for _ in range(kills):
        point = done + rng.randint(1, span)
        if point >= len(events):
            break
        for event in events[done:point]:
            apply(event)
        down = events[point:point + rng.randint(1, max_downtime)]
        done = point + len(down)
        placed = {(e.card, e.zone) for e in down if isinstance(e, CardPlaced)}
        hidden |= any(isinstance(e, CardRemoved) and (e.card, e.zone) in placed for e in down)
        start: dict[Card, list[tuple[Zone, str | None]]] = {}
        if engine.hand is not None:
            for card, zones in engine.hand.where.items():
                start[card] = [(zone, None) for zone in zones]
        plan = reconcile(engine, *net_difference(start, down))
        for event in plan.before_end:
            apply(event, quiet=plan.interrupted)
        if plan.interrupted:
            alerts.append("hand_interrupted")
            if engine.hand is not None and not engine.hand.finished:
                apply(HandEnded(), quiet=True)
        for event in plan.after:
            apply(event)
    for event in events[done:]:
        apply(event)
    reference = [a.code.value for hand in reference_hands(events) for a in hand.alerts]
    return alerts, reference, hidden


@settings(max_examples=40)
@given(seed=st.integers(1, 10**6), max_downtime=st.integers(1, 12))
def test_reconciled_downtimes_raise_no_false_alert(seed: int, max_downtime: int) -> None:
    """Item 10, in the engine: however the downtimes fall (within hands, across
    boundaries), the reconciled start-up raises exactly the alerts of the run
    without downtimes plus ``hand_interrupted`` ones, unless a downtime hid a
    card altogether (then the order of the table is unknowable; measured in
    docs/reliability.md: 92 of 3,000 downtimes of up to 12 events)."""
    alerts, reference, hidden = _downtime_run(seed, kills=6, max_downtime=max_downtime)
    assume(not hidden)
    assert sorted(a for a in alerts if a != "hand_interrupted") == sorted(reference)


def test_short_hand_killed_at_showdown_leaving_one_seat_gives_one_result() -> None:
    """Regression (found by the crash-loop soak): a hand closed while one of two
    live seats is short (rule 18: dead) was paid twice, once to the last seat
    standing and once more by the showdown, so its result was published twice."""
    engine = DealingEngine(_settings())
    deal = deal_random([3, 8], random.Random(4), fold_chance=0.0)
    results = []
    last = deal.cards[3][-1]  # seat 3's 7th card never arrives: a short hand
    for event in [e for e in deal.events if isinstance(e, CardPlaced) and e.card != last]:
        engine.apply(event)
    for output in engine.apply(HandEnded()):
        if getattr(output, "kind", None) is not None and output.kind.value == "hand_result":
            results.append(output)
    assert len(results) == 1
    assert engine.hand is not None
    assert engine.hand.winners == [8]


def test_issue21_item10_an_interrupted_hand_gets_a_hand_result_event(rig: TableRig) -> None:
    """Across 70 kills each run had one interrupted hand with only its ``hands`` record
    ("interrupted", winners []) and the alert: consumers of ``events`` never learnt
    that the hand was over. Hand 1 is cleared at 4th street while the daemon is down
    (no showdown: the engine closes it without winners)."""
    sub = subscribe(rig.broker.port)
    mirror = Mirror(rig)
    first = deal_random([1, 3, 5], random.Random(31), fold_chance=0.0)
    second = deal_random([2, 4, 6], random.Random(32), fold_chance=0.0)
    rig.start_process()
    wait_status(sub, "online")
    one = hand_events(first)
    dealt = [e for e in one if isinstance(e, CardPlaced)]
    mirror.run(dealt[:13])  # burn + 3 rounds of 3rd street, burn + 4th street
    wait_caught_up(rig, mirror)
    rig.kill9()
    for card, zone in list(mirror.where.items()):  # the table cleared by hand
        mirror.run([CardRemoved(zone, card)])
    time.sleep(SHUFFLE)
    mirror.run(hand_events(second)[:8])
    restart_and_wait_ready(rig, sub)
    wait_caught_up(rig, mirror)
    wait_state(sub, lambda s: s["hand"] == 2)
    interrupted = [a["hand"] for a in payloads(sub, "alerts") if a["code"] == "hand_interrupted"]
    assert interrupted == [1]
    wait_until(lambda: [p for p in payloads(sub, "hands") if p["hand"] == 1], WAIT,
               "hand 1's record")
    (record,) = [p for p in payloads(sub, "hands") if p["hand"] == 1]
    assert record["ended"] == "interrupted"
    results = [p for p in payloads(sub, "events") if p["kind"] == "hand_result"]
    assert [r["hand"] for r in results] == [1]
    assert results[0]["winners"] == record["winners"]
