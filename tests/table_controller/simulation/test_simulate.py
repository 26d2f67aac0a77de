"""stud-table simulate, fast mode: the plan, the report's attribution, the CLI."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from table_controller.domain.engine.dealing import DealingEngine
from table_controller.domain.events import CardPlaced, CardRemoved, UnknownTag
from table_controller.records.journal import Journal, encode_record
from table_controller.records.replay import replay_file
from table_controller.simulation.errors import ErrorKind
from table_controller.simulation.kinds import DEAL_KINDS, KINDS, READER_KINDS
from table_controller.simulation.live import JournalWatch
from table_controller.simulation.plan import (
    RateError,
    SimHand,
    check_rates,
    parse_rates,
    plan_hand,
    plan_hands,
)
from table_controller.simulation.progress import ProgressBar
from table_controller.simulation.report import DetectionReport, ObservedAlert, render
from table_controller.simulation.runner import FAST_SETTINGS, simulate
from table_controller.tools.cli import main

EVERY_DEAL_KIND = dict.fromkeys(DEAL_KINDS, 0.07)  # 13 kinds: 91% of hands


def test_two_thousand_hands_every_kind_flagged_and_no_false_alert() -> None:
    report = simulate(2000, 2026, EVERY_DEAL_KIND, "fast")
    data = report.as_json()
    assert data["hands"] == 2000
    for kind in DEAL_KINDS:
        row = data["kinds"][kind]
        assert row["injected"] >= 100, (kind, row)
        assert row["flagged"] == row["injected"], (kind, data["missed"])
        assert row["recall"] == 1.0
        assert row["precision"] == 1.0
    assert data["false_alerts"] == {}, data["false_alert_list"]
    assert data["totals"]["recall"] == 1.0
    assert data["totals"]["precision"] == 1.0
    assert data["clean_hands"] == 2000 - data["totals"]["injected"]
    # Consequences are shown, not hidden: a dead hand of two exposed hole cards
    # is also a hole card exposed.
    both = data["kinds"]["both_hole_cards_exposed"]
    assert both["secondary_alerts"]["hole_card_exposed"] == both["injected"]


def test_clean_hands_raise_no_alert_only_rule_15_notices() -> None:
    report = simulate(1500, 7, {}, "fast")
    assert report.clean_hands == 1500
    assert sum(report.false_alerts.values()) == 0, report.false_listed
    # Rule 15's community card is a notice (no action needed), counted apart.
    assert set(report.notices) <= {"community_card"}
    assert report.notices["community_card"] > 0  # eight players reach rule 15


def test_a_run_is_repeatable_from_its_seed() -> None:
    first = simulate(150, 11, {"missing_burn": 0.3, "out_of_order": 0.3}, "fast").as_json()
    again = simulate(150, 11, {"missing_burn": 0.3, "out_of_order": 0.3}, "fast").as_json()
    for data in (first, again):
        del data["seconds"], data["hands_per_second"]
    assert first == again


@settings(max_examples=150)
@given(seed=st.integers(0, 2**31), number=st.integers(1, 10**6),
       kind=st.sampled_from([None, *DEAL_KINDS]))
def test_clearing_leaves_the_table_clear_and_ends_the_hand(
    seed: int, number: int, kind: str | None
) -> None:
    hand = plan_hand(number, seed, {kind: 1.0} if kind else {})
    lying: set[tuple[object, ...]] = set()
    for event in (*hand.events, *hand.clear):
        if isinstance(event, CardPlaced):
            lying.add((event.zone, event.card, event.deck))
        elif isinstance(event, CardRemoved):
            lying.discard((event.zone, event.card, event.deck))
        elif isinstance(event, UnknownTag):
            lying.add((event.zone, event.uid))
        else:
            lying.discard((event.zone, event.uid))
    assert lying == set()
    engine = DealingEngine(FAST_SETTINGS)
    for event in (*hand.events, *hand.clear):
        engine.apply(event)
    assert engine.hand is not None
    assert engine.hand.cleared
    assert engine.hand.finished


@settings(max_examples=200)
@given(seed=st.integers(0, 2**31), number=st.integers(1, 10**6))
def test_card_only_tables_get_out_of_order_only_after_the_first_round(
    seed: int, number: int
) -> None:
    hand = plan_hand(number, seed, {"out_of_order": 1.0})
    assert hand.kind == "out_of_order"
    received: dict[int, int] = {}
    for event in hand.events:
        if isinstance(event, CardPlaced) and event.zone.seat is not None:
            received[event.zone.seat] = received.get(event.zone.seat, 0) + 1
            if event.zone.seat == hand.expected_seat and received[event.zone.seat] >= 2:
                return  # the out-of-turn card comes after the first round
    pytest.fail("the misdealt seat never got a card after the first round")


def test_kinds_registry_names_every_dealing_error() -> None:
    assert set(DEAL_KINDS) == {kind.value for kind in ErrorKind}
    assert set(READER_KINDS) == {"reader_flicker", "wire_noise"}
    assert all(KINDS[name].stands_for for name in KINDS)


def test_rates() -> None:
    assert parse_rates(["0.05"], DEAL_KINDS) == dict.fromkeys(DEAL_KINDS, 0.05)
    assert parse_rates(["0.01", "missing_burn=0.1"], DEAL_KINDS)["missing_burn"] == 0.1
    assert parse_rates(["missing_burn=0.1", "out_of_order=0"], DEAL_KINDS) == {
        "missing_burn": 0.1
    }
    with pytest.raises(RateError, match="unknown error kind"):
        parse_rates(["bad_kind=0.1"], DEAL_KINDS)
    with pytest.raises(RateError, match="daemon"):
        parse_rates(["reader_flicker=0.1"], DEAL_KINDS)
    with pytest.raises(RateError, match="add up to"):
        parse_rates(["0.1"], DEAL_KINDS)  # 13 kinds x 0.1 > one error per hand
    with pytest.raises(RateError, match="between 0 and 1"):
        parse_rates(["missing_burn=1.5"], DEAL_KINDS)
    with pytest.raises(RateError):
        check_rates({"nope": 0.1})
    with pytest.raises(RateError, match="daemon"):
        simulate(10, 1, {"wire_noise": 0.1}, "fast")


def test_rates_draw_each_kind_about_as_often_as_asked() -> None:
    hands = list(plan_hands(3000, 5, {"missing_burn": 0.2, "extra_burn": 0.1}))
    burns = sum(1 for h in hands if h.kind == "missing_burn")
    extra = sum(1 for h in hands if h.kind == "extra_burn")
    assert 500 < burns < 700
    assert 220 < extra < 380
    assert all(h.kind in (None, "missing_burn", "extra_burn") for h in hands)


# ------------------------------------------------------------- attribution


def hand(number: int, kind: str | None = None, seat: int | None = None) -> SimHand:
    return SimHand(number, (1, 2), kind, kind if kind in DEAL_KINDS else None, seat, (), ())


def judge(hands: list[SimHand], alerts: list[ObservedAlert]) -> DetectionReport:
    report = DetectionReport(mode="fast", seed=0, rates={})
    report.judge(hands, alerts)
    return report


def judged(hands: list[SimHand], alerts: list[ObservedAlert]) -> dict[str, Any]:
    return judge(hands, alerts).as_json()


def test_flagged_needs_the_code_at_the_injected_seat() -> None:
    data = judged(
        [hand(1, "out_of_order", 2), hand(2, "out_of_order", 2)],
        [ObservedAlert(1, "out_of_order", 2), ObservedAlert(2, "out_of_order", 1)],
    )
    row = data["kinds"]["out_of_order"]
    assert (row["injected"], row["flagged"], row["recall"]) == (2, 1, 0.5)
    assert data["missed"] == [
        {"hand": 2, "kind": "out_of_order", "seat": 2, "alerts": [["out_of_order", 1]]}
    ]
    # The alert at the wrong seat is a consequence of the same hand's mistake.
    assert row["secondary_alerts"] == {"out_of_order": 1}
    assert data["false_alerts"] == {}


def test_secondary_false_and_notices_are_kept_apart() -> None:
    report = judge(
        [hand(1, "missing_burn"), hand(2), hand(3, "reader_flicker"), hand(4, "wire_noise")],
        [
            ObservedAlert(1, "missing_burn", None),
            ObservedAlert(1, "out_of_order", 3),  # same hand: secondary
            ObservedAlert(2, "missing_burn", None),  # clean hand: false
            ObservedAlert(2, "community_card", None, notice=True),  # rule 15: a notice
            ObservedAlert(2, "beaten_on_board", 3, notice=True),  # rule 19: a notice
            ObservedAlert(None, "community_card", None, notice=True),  # never false
            ObservedAlert(3, "out_of_order", 4),  # flicker must raise nothing: false
            ObservedAlert(4, "out_of_order", 4),  # noise delays a frame: secondary
            ObservedAlert(None, "reader_offline", None),  # between hands: false
        ],
    )
    data = report.as_json()
    burn = data["kinds"]["missing_burn"]
    assert (burn["flagged"], burn["false_alerts"], burn["precision"]) == (1, 1, 0.5)
    assert burn["secondary_alerts"] == {"out_of_order": 1}
    assert data["false_alerts"] == {"missing_burn": 1, "out_of_order": 1, "reader_offline": 1}
    assert data["kinds"]["reader_flicker"]["false_alerts"] == 1
    assert data["kinds"]["reader_flicker"]["recall"] is None
    assert data["kinds"]["wire_noise"]["secondary_alerts"] == {"out_of_order": 1}
    assert data["notices"] == {"beaten_on_board": 1, "community_card": 2}
    assert data["clean_hands"] == 1
    assert data["totals"] == {"injected": 1, "flagged": 1, "recall": 1.0,
                              "false_alerts": 3, "precision": 0.25}
    text = render(report)
    assert "false alerts: missing_burn 1, out_of_order 1, reader_offline 1" in text
    assert "false: hand None reader_offline seat None (clean hand)" in text
    assert "false: hand 3 out_of_order seat 4 (reader_flicker)" in text


def test_not_injectable_hands_are_counted_clean() -> None:
    # card_from_muck needs a fold before a later card: a deal without one is
    # dealt again, and a hand where no deal gives it a place stays clean.
    hands = list(plan_hands(300, 3, {"card_from_muck": 1.0}))
    placed = [h for h in hands if h.kind == "card_from_muck"]
    skipped = [h for h in hands if h.not_injectable == "card_from_muck"]
    assert len(placed) + len(skipped) == 300
    assert all(h.kind is None and h.expected_code is None for h in skipped)
    assert len(placed) > 250


# --------------------------------------------------------------------- CLI


def test_cli_json_report(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["simulate", "--hands", "120", "--seed", "4", "--rate", "0.05",
                 "--rate", "missing_burn=0.2", "--json"])
    assert code == 0
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert set(data) == {
        "mode", "game", "seed", "hands", "seconds", "hands_per_second", "clean_hands", "kinds",
        "totals", "false_alerts", "notices", "missed", "false_alert_list", "wire",
    }
    assert (data["mode"], data["seed"], data["hands"], data["wire"]) == ("fast", 4, 120, None)
    assert data["game"] == "stud"
    assert set(data["kinds"]) == set(DEAL_KINDS)
    assert data["kinds"]["missing_burn"]["rate"] == 0.2
    assert set(data["kinds"]["extra_burn"]) == {
        "level", "rate", "injected", "flagged", "recall", "false_alerts", "precision",
        "secondary_alerts", "not_injectable",
    }
    assert data["totals"]["recall"] == 1.0
    assert data["totals"]["false_alerts"] == 0
    assert "120/120" in captured.err  # the progress bar went to stderr


def test_cli_text_report(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "--hands", "60", "--rate", "missing_burn=0.5"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("stud-table simulate: 60 hands, mode fast, seed 1")
    assert "missing_burn" in out
    assert "recall 100.00%" in out


@pytest.mark.parametrize("rate", ["nope=0.1", "0.5", "reader_flicker=0.1", "x"])
def test_cli_bad_rates_exit_2_with_one_line(
    capsys: pytest.CaptureFixture[str], rate: str
) -> None:
    assert main(["simulate", "--hands", "5", "--rate", rate]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("stud-table simulate: ")
    assert "\n" not in err


def test_progress_bar_plain_and_terminal() -> None:
    ticks = iter(float(i) for i in range(1000))
    plain = io.StringIO()
    bar = ProgressBar(50, plain, interactive=False, clock=lambda: next(ticks))
    for done in range(1, 51):
        bar.update(done)
    bar.close()
    lines = plain.getvalue().splitlines()
    assert len(lines) == 10
    assert lines[-1].startswith("simulate [" + "#" * 30 + "] 50/50 100%")
    term = io.StringIO()
    bar = ProgressBar(4, term, interactive=True, clock=lambda: next(ticks))
    for done in range(1, 5):
        bar.update(done)
    bar.close()
    assert term.getvalue().count("\r") == 5
    assert term.getvalue().endswith("\n")


# ------------------------------------------------------ found by the simulator

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


def test_rule15_pickup_without_the_seventh_street_burn_is_a_missing_burn() -> None:
    name = "rule15-pickup-without-seventh-burn"
    expected = json.loads((SCRIPTS / f"{name}.expected.json").read_text())["alerts"]
    (hand_report,) = replay_file(SCRIPTS / f"{name}.jsonl")["hands"]
    raised = [{key: alert[key] for key in ("code", "seat", "street", "rule")}
              for alert in hand_report["alerts"]]
    for alert in expected:
        assert alert in raised


# ------------------------------------------------------- daemon mode, offline


def test_journal_watch_follows_hands_partial_lines_and_rotation(tmp_path: Path) -> None:
    path = tmp_path / "t.journal.jsonl"
    watch = JournalWatch(path)
    watch.poll()  # no file yet: nothing
    assert watch.hands == 0
    journal = Journal.open(path, fsync="never", max_bytes=4096)
    journal.append({"op": "hand", "players": []}, at=1.0)
    journal.append({"op": "place", "zone": "seat1.down", "card": "As"}, at=1.0)
    journal.append({"op": "place", "zone": "burn", "card": "2c"}, at=1.0)
    watch.poll()
    assert watch.hands == 1
    assert watch.on_table == {("seat1.down", "As"), ("burn", "2c")}
    # A line the daemon is still writing is read once it is whole.
    line = encode_record({"op": "remove", "zone": "burn", "card": "2c"}, 4, 1.0)
    with path.open("ab") as raw:
        raw.write(line[:10])
        raw.flush()
        watch.poll()
        assert ("burn", "2c") in watch.on_table
        raw.write(line[10:])
    watch.poll()
    assert watch.on_table == {("seat1.down", "As")}
    journal.close()
    journal = Journal.open(path, fsync="never", max_bytes=4096)
    journal.append({"op": "remove", "zone": "seat1.down", "card": "As"}, at=2.0)
    for _ in range(60):  # past max_bytes: the next hand record rotates the file
        journal.append({"op": "place", "zone": "muck", "card": "Kd"}, at=2.0)
        journal.append({"op": "remove", "zone": "muck", "card": "Kd"}, at=2.0)
    watch.poll()
    journal.append({"op": "hand", "players": []}, at=3.0)
    journal.append({"op": "place", "zone": "seat2.up", "card": "Qh"}, at=3.0)
    journal.close()
    assert len(list(tmp_path.iterdir())) == 2, "rotated"
    watch.poll()
    assert watch.hands == 2
    assert watch.placed[2] == {("seat2.up", "Qh")}
    assert watch.on_table == {("seat2.up", "Qh")}
