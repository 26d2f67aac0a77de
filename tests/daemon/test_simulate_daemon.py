"""stud-table simulate --mode daemon: emulated readers on ptys, the real daemon as a
process, a private mosquitto; alerts read back from MQTT and matched per hand."""

from __future__ import annotations

import itertools
from dataclasses import replace

from table_controller.domain.events import CardPlaced, CardRemoved
from table_controller.domain.zones import BURN
from table_controller.simulation.live import deal_through_daemon
from table_controller.simulation.plan import plan_hand, plan_hands
from table_controller.simulation.report import DetectionReport
from table_controller.simulation.runner import run_fast, simulate

SEED = 9
RATES = {"missing_burn": 0.25, "upcard_dealt_down": 0.25, "reader_flicker": 0.3}
SPEED = 8.0
"""0.06 s between cards: three times the readers' scan cycle, so cards reach the
daemon in the order dealt even on a loaded machine."""


def test_six_hands_through_the_daemon_all_flagged_no_false_alert() -> None:
    kinds = [hand.kind for hand in plan_hands(6, SEED, RATES)]
    assert set(kinds) == {None, *RATES}, "the seed deals every kind and a clean hand"
    report = simulate(6, SEED, RATES, "daemon", speed=SPEED)
    data = report.as_json()
    assert data["mode"] == "daemon"
    assert data["hands"] == 6
    for kind in ("missing_burn", "upcard_dealt_down"):
        row = data["kinds"][kind]
        assert row["injected"] == kinds.count(kind)
        assert row["flagged"] == row["injected"], data["missed"]
        assert row["recall"] == 1.0
    # Reader flicker (one scan in five misses each tag) raises nothing: the
    # presence hold hides every gap.
    assert data["kinds"]["reader_flicker"]["injected"] == kinds.count("reader_flicker")
    assert data["kinds"]["reader_flicker"]["false_alerts"] == 0
    assert data["false_alerts"] == {}, data["false_alert_list"]
    assert data["totals"]["precision"] == 1.0
    assert data["wire"] == {"wrong_cards": 0, "missed_cards": 0}
    # The daemon path judges the hands exactly as the engine alone does.
    fast = DetectionReport(mode="fast", seed=SEED, rates=RATES)
    fast.judge(*run_fast(6, SEED, RATES))
    expected = fast.as_json()
    for kind in RATES:
        for key in ("injected", "flagged", "false_alerts", "secondary_alerts"):
            assert data["kinds"][kind][key] == expected["kinds"][kind][key], (kind, key)
    assert data["notices"] == expected["notices"]  # read from secure/notices


def test_a_burn_card_scrambled_back_onto_the_burn_pile_is_seen_leaving_and_coming_back() -> None:
    # Hand 154 of seed 2026 (clean, eight players): at 7th street the dealer picks
    # up the burn pile for the rule-15 scramble and re-burns one of those cards.
    # Put back at once, the readers and the presence hold would never see it
    # leave: the dealer waits for the table to show the pickup, as the scramble's
    # seconds would.
    hand = replace(plan_hand(154, 2026, {}), number=1)
    returns = [
        (a, b) for a, b in itertools.pairwise(hand.events)
        if isinstance(a, CardRemoved) and isinstance(b, CardPlaced)
        and a.card == b.card and a.zone == b.zone == BURN
    ]
    assert returns, "the hand re-burns a card it picked up"
    planned, alerts, wire = deal_through_daemon([hand], speed=SPEED)
    report = DetectionReport(mode="daemon", seed=2026, rates={})
    report.judge(planned, alerts)
    assert report.false_alerts == {}, report.false_listed
    assert wire == {"wrong_cards": 0, "missed_cards": 0}
