"""``stud-table deck check``: the pure check (examples and a hypothesis property), then the
real command against a reader emulated on a pty: a clean deck, and a deck with a missing,
an extra and foreign cards (text and ``--json``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from deck_rig import BLUE, READER, RED, ZONE, Command, Table
from hypothesis import given, settings
from hypothesis import strategies as st

from table_controller.domain.cards import Card
from table_controller.table.deck import load_deck, load_decks
from table_controller.tools.deck_check import DeckCheck, render_report
from table_controller.tools.deck_register import REGISTRATION_ORDER, Line

REGISTRY = load_decks([RED, BLUE])
RED_DECK = load_deck(RED)
RED_TAGS = {card: REGISTRY.uid_for(card, "red") for card in REGISTRATION_ORDER}
BLUE_TAGS = {card: REGISTRY.uid_for(card, "blue") for card in REGISTRATION_ORDER}
STRANGER = "04DEADBEEF0102"


def test_a_whole_deck_passed_once_is_complete_and_clean() -> None:
    check = DeckCheck(RED_DECK)
    for number, card in enumerate(REGISTRATION_ORDER, start=1):
        assert check.snapshot([RED_TAGS[card]]) == [Line("ok", f"{card.code} ({number}/52)")]
        check.snapshot([])
    assert check.complete
    assert check.clean
    report = check.report()
    assert report == {"deck": "red", "complete": True, "clean": True, "seen": 52,
                      "missing": [], "extra": [], "foreign": [], "foreign_unknown": 0}
    assert render_report(report) == ["deck red: 52/52 cards read, complete and clean"]


def test_missing_extra_and_foreign_are_named_without_a_uid() -> None:
    check = DeckCheck(RED_DECK, known=REGISTRY.lookup)
    for card in REGISTRATION_ORDER:
        if card.code != "7h":
            check.snapshot([RED_TAGS[card]])
            check.snapshot([])
    lines = check.snapshot([RED_TAGS[Card.parse("Kd")]])  # passed a second time
    assert lines == [Line("refused", "extra: Kd read 2 times (passed twice?)")]
    check.snapshot([])
    lines = check.snapshot([BLUE_TAGS[Card.parse("As")], STRANGER])
    assert sorted(lines) == [
        Line("refused", "foreign: As of deck 'blue': set the card aside"),
        Line("refused", "foreign: a tag in no known deck: set the card aside")]
    report = check.report()
    assert not report["clean"]
    assert report["missing"] == ["7h"]
    assert report["extra"] == [{"card": "Kd", "reads": 2}]
    assert report["foreign"] == [{"deck": "blue", "card": "As"}]
    assert report["foreign_unknown"] == 1
    assert render_report(report) == [
        "deck red: 51/52 cards read, NOT clean",
        "missing 1: 7h",
        "extra: Kd x2",
        "foreign: As of deck 'blue'",
        "foreign: 1 tag(s) in no known deck",
    ]
    shown = json.dumps(report) + "\n".join(render_report(report))
    assert not any(uid in shown for uid in [*RED_TAGS.values(), *BLUE_TAGS.values(), STRANGER])


def test_a_card_lying_still_is_one_read() -> None:
    check = DeckCheck(RED_DECK)
    tag = RED_TAGS[Card.parse("2c")]
    check.snapshot([tag])
    assert check.snapshot([tag, RED_TAGS[Card.parse("3c")]]) == [Line("ok", "3c (2/52)")]
    assert check.snapshot([tag]) == []
    assert check.report()["extra"] == []


@settings(max_examples=150)
@given(st.lists(st.frozensets(st.sampled_from(
    [*list(RED_TAGS.values())[:10], *list(BLUE_TAGS.values())[:3], STRANGER]), max_size=4),
    max_size=40))
def test_the_report_adds_up(snapshots: list[frozenset[str]]) -> None:
    """Any sequence of antenna snapshots: every card is either seen or missing, reads
    count arrivals exactly, clean means complete and nothing extra or foreign."""
    check = DeckCheck(RED_DECK, known=REGISTRY.lookup)
    arrivals: dict[str, int] = {}
    before: frozenset[str] = frozenset()
    for snapshot in snapshots:
        check.snapshot(snapshot)
        for uid in snapshot - before:
            arrivals[uid] = arrivals.get(uid, 0) + 1
        before = snapshot
    report = check.report()
    assert report["seen"] + len(report["missing"]) == 52
    for item in report["extra"]:
        assert arrivals[RED_TAGS[Card.parse(item["card"])]] == item["reads"] > 1
    assert len(report["foreign"]) == len({uid for uid in arrivals if uid in BLUE_TAGS.values()})
    assert report["foreign_unknown"] == (1 if STRANGER in arrivals else 0)
    assert report["clean"] == (report["complete"] and not report["extra"]
                               and not report["foreign"] and not report["foreign_unknown"])


# -- end to end --------------------------------------------------------------------------


def check_command(table: Table, tmp_path: Path, *extra: str) -> Command:
    return Command(["deck", "check", "--layout", str(table.layout_path), "--reader",
                    str(READER), "--zone", ZONE, "--deck", str(RED), "--settle", "0.05",
                    *extra], tmp_path)


def test_check_a_clean_deck_end_to_end(table: Table, tmp_path: Path) -> None:
    command = check_command(table, tmp_path, "--existing", str(BLUE))
    try:
        seen = command.wait_for("reader 10 online")
        for card in REGISTRATION_ORDER:  # the whole deck laid on the antenna, card by card
            table.place(RED_TAGS[card])
            seen = command.wait_for(f"+ {card.code} (", after=seen)
        assert command.finish() == 0
    finally:
        command.kill()
    assert command.output()[-1] == "deck red: 52/52 cards read, complete and clean"


def test_check_names_missing_extra_and_foreign_end_to_end(table: Table, tmp_path: Path) -> None:
    command = check_command(table, tmp_path, "--existing", str(BLUE), "--json",
                            "--timeout", "3")
    try:
        table.wait_inventory_requested()  # the command's link is online
        for card in REGISTRATION_ORDER:
            if card.code == "Qs":
                continue  # lost from the box
            table.place(RED_TAGS[card])
        table.remove(RED_TAGS[Card.parse("Kd")])
        table.place(RED_TAGS[Card.parse("Kd")])  # passed twice
        table.place(BLUE_TAGS[Card.parse("2h")])  # a blue card in the red box
        table.place(STRANGER)
        assert command.finish() == 1  # three quiet seconds: the check ends
    finally:
        command.kill()
    report = json.loads("\n".join(command.output()))
    assert report == {"deck": "red", "complete": False, "clean": False, "seen": 51,
                      "missing": ["Qs"], "extra": [{"card": "Kd", "reads": 2}],
                      "foreign": [{"deck": "blue", "card": "2h"}], "foreign_unknown": 1}


def test_check_of_a_malformed_deck_is_one_line_and_exit_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from table_controller.tools.cli import main

    bad = tmp_path / "red.toml"
    uid = RED_TAGS[Card.parse("9s")]
    bad.write_text(RED.read_text().replace(uid, uid[:6]))
    layout = RED.parents[1] / "layouts" / "table-8.toml"
    code = main(["deck", "check", "--layout", str(layout), "--reader", "10", "--zone",
                 "burn", "--deck", str(bad)])
    err = capsys.readouterr().err
    assert code == 2
    assert err == (f"stud-table deck check: {bad}: cards.9s: UID must be 4, 7, 8 or 10 bytes"
                   " (8, 14, 16 or 20 hex digits), got 6 digits\n")
