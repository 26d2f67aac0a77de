"""stud-table simulate --mode daemon --rf: the emulated readers read through the RF
channel, the real daemon decides; the same hands as fast mode on the same channel."""

from __future__ import annotations

from firmware_bridge.rf_channel import profile
from table_controller.simulation.report import DetectionReport, HandRF
from table_controller.simulation.runner import run_fast, simulate

SEED = 9
RATES = {"missing_burn": 0.25, "upcard_dealt_down": 0.25, "reader_flicker": 0.2}
SPEED = 8.0

READ_CHANNEL = profile("good", ["muck_depth=all", "cross_read=0", "peek_rate=1.0",
                                "peek_max=3.0", "flicker=0.01", "hand_pass=0.3"])
"""A good table whose every card is read (the inference-free part of the channel), with
players peeking in every hand, flicker and the dealer's hand over the antennas."""


def test_hands_through_the_daemon_on_the_channel_flagged_with_no_false_alert() -> None:
    report = simulate(5, SEED, RATES, "daemon", speed=SPEED, rf=READ_CHANNEL, rf_name="good")
    data = report.as_json()
    assert data["mode"] == "daemon"
    for kind in ("missing_burn", "upcard_dealt_down"):
        row = data["kinds"][kind]
        assert row["flagged"] == row["injected"], data["missed"]
    assert data["false_alerts"] == {}, data["false_alert_list"]
    assert data["wire"] == {"wrong_cards": 0, "missed_cards": 0}
    assert data["rf"]["peeks"] >= 3  # peeks of up to 3 s / speed 8 stay under the hold
    # The same hands on the same channel in fast mode: the same judgement.
    facts: dict[int, HandRF] = {}
    fast = DetectionReport(mode="fast", seed=SEED, rates=RATES)
    fast.set_rf("good", READ_CHANNEL)
    fast.judge(*run_fast(5, SEED, RATES, rf=READ_CHANNEL, facts=facts), facts)
    expected = fast.as_json()
    for kind in ("missing_burn", "upcard_dealt_down"):
        for key in ("injected", "flagged", "false_alerts"):
            assert data["kinds"][kind][key] == expected["kinds"][kind][key], (kind, key)
