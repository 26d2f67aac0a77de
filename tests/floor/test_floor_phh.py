"""PHH export of a public hand record: the handhistory writer's text, read back by the
project's own PHH reader; unknown down cards stand in as ``_filled_cards``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from table_controller.domain.cards import Card
from table_controller.floor.phh import ExportError, record_to_hand
from table_controller.handhistory.importer import import_hand
from table_controller.handhistory.reader import read_phh
from table_controller.handhistory.writer import write_phh
from table_controller.records.replay import replay_file


def record() -> dict[str, Any]:
    """A public record: seat 3 folds on 4th street, seats 1 and 5 show down."""
    return {
        "table": "t1", "hand_id": "t1:57:1795958400000", "game": "stud",
        "dealer": {"id": "D17", "name": "Ann Lee"},
        "players": [{"seat": 1, "name": "Ada", "stack_start": 99, "stack_end": 120},
                    {"seat": 3, "name": "Bo", "stack_start": 99, "stack_end": 97},
                    {"seat": 5, "name": "Chen", "stack_start": 99, "stack_end": 80}],
        "actions": [
            {"street": 3, "seat": 3, "action": "bring_in", "amount": 1},
            {"street": 3, "seat": 5, "action": "complete", "amount": 5},
            {"street": 3, "seat": 1, "action": "call", "amount": 5},
            {"street": 3, "seat": 3, "action": "call", "amount": 5},
            {"street": 4, "seat": 1, "action": "bet", "amount": 5},
            {"street": 4, "seat": 3, "action": "fold", "amount": None},
            {"street": 4, "seat": 5, "action": "call", "amount": 5},
            {"street": 5, "seat": 1, "action": "bet", "amount": 10},
            {"street": 5, "seat": 5, "action": "call", "amount": 10},
            {"street": 6, "seat": 1, "action": "check", "amount": None},
            {"street": 6, "seat": 5, "action": "check", "amount": None},
            {"street": 7, "seat": 1, "action": "check", "amount": None},
            {"street": 7, "seat": 5, "action": "check", "amount": None},
        ],
        "up_cards": {"1": ["Ks", "Kd", "7c", "2h"], "3": ["3c", "9d"],
                     "5": ["Qh", "Jh", "5s", "4d"]},
        "shown": {"1": ["Ah", "Ad", "Ks", "Kd", "7c", "2h", "8s"],
                  "5": ["Th", "9h", "Qh", "Jh", "5s", "4d", "6c"]},
        "down_cards": None, "pot": 63, "winners": [1], "winners_high": [1],
        "winners_low": [], "alerts": [], "notices": [], "ended": "showdown",
    }


def test_a_showdown_hand_round_trips_through_the_phh_reader() -> None:
    """Every shown card is where it was dealt; the folded seat's two unseen down cards
    are stand-ins, listed in ``_filled_cards``; no card appears twice."""
    hand = record_to_hand(record())
    text = write_phh(hand)
    again = read_phh(text)
    assert again.seats == (1, 3, 5)
    assert again.cards_of(1) == tuple(Card.parse(c) for c in record()["shown"]["1"])
    assert again.cards_of(5) == tuple(Card.parse(c) for c in record()["shown"]["5"])
    seat3 = again.cards_of(3)
    assert seat3[2:] == (Card.parse("3c"), Card.parse("9d"))
    assert len(hand.filled) == 2
    assert set(hand.filled) == set(seat3[:2])
    assert "_filled_cards" in text
    every = [c for s in (1, 3, 5) for c in again.cards_of(s)]
    assert len(every) == len(set(every))
    assert (again.bring_in, again.small_bet, again.big_bet) == (1, 5, 10)
    assert again.folds() == {3: 4}
    assert 'table = "t1"' in text
    assert "hand = 57" in text


def test_an_unshown_down_card_is_never_exported() -> None:
    """Even a secure record's down cards stay out: the service drops them first, and the
    converter reads only up cards and shown cards."""
    rec = {**record(), "shown": {}, "ended": "fold",
           "down_cards": {"1": ["Ah", "Ad", "8s"], "5": ["Th", "9h", "6c"]}}
    again = read_phh(write_phh(record_to_hand(rec)))
    dealt = {c.code for s in (1, 3, 5) for c in again.cards_of(s)}
    assert not dealt & {"Ah", "Ad", "8s", "Th", "9h", "6c"}


def test_a_record_without_two_players_is_refused() -> None:
    """A clear reason, no file."""
    with pytest.raises(ExportError, match="two players"):
        record_to_hand({**record(), "players": [{"seat": 1}]})


def card_only(**over: Any) -> dict[str, Any]:
    """A card-only hand's public record (no console: the only actions are the folds the
    engine saw from the cards): seat 1 folds on 4th; seats 3 and 5 show down, seat 3
    wins with three queens against a pair of jacks."""
    rec = {
        "table": "t1", "hand_id": "t1:12:1795958400000", "game": "stud",
        "dealer": None,
        "players": [{"seat": s, "name": n, "stack_start": None, "stack_end": None}
                    for s, n in ((1, "Ada"), (3, "Bo"), (5, "Chen"))],
        "actions": [{"street": 4, "seat": 1, "action": "fold", "amount": None}],
        "up_cards": {"1": ["2c", "9d"], "3": ["Qs", "4h", "7c", "8d"],
                     "5": ["Jh", "3s", "5c", "Td"]},
        "shown": {"3": ["Qh", "Qd", "Qs", "4h", "7c", "8d", "2s"],
                  "5": ["Jc", "6d", "Jh", "3s", "5c", "Td", "9s"]},
        "down_cards": None, "pot": None, "winners": [3], "winners_high": [3],
        "winners_low": [], "alerts": [], "notices": [], "ended": "showdown",
    }
    return {**rec, **over}


def replayed(text: str, tmp: Path) -> dict[str, Any]:
    """The PHH text imported as a table script and replayed (the CONFORMANCE report of
    its one hand)."""
    script = tmp / "hand.jsonl"
    script.write_text(import_hand(read_phh(text)).script_text())
    [hand] = replay_file(script)["hands"]
    return dict(hand)


def test_a_card_only_hand_round_trips_with_its_stakes_folds_and_winner(tmp_path: Path
                                                                       ) -> None:
    """Issue 22: a card-only hand with a fold exported with invented stakes and no marker,
    and replayed with no winner, an out_of_turn and premature_deals. Now: the table's
    stakes, ``_betting = "unknown"``, the winner listed, and the import is a card-only
    script whose replay has the same fold, the same winner and no alert."""
    text = write_phh(record_to_hand(card_only(), stakes=(1, 2, 5, 10)))
    assert '_betting = "unknown"' in text
    assert '_stakes = "table"' in text
    assert "_winners = [3]" in text
    back = read_phh(text)
    assert (back.antes, back.bring_in, back.small_bet, back.big_bet) == ((1, 1, 1), 2, 5, 10)
    assert [b.verb for b in back.bets if b.verb != "sm"] == ["f"]  # nothing made up
    script = import_hand(back).script_text()
    assert '"op": "act"' not in script  # a card-only table script
    assert '"small_bet": 5' in script
    hand = replayed(text, tmp_path)
    assert hand["winners"] == [3]
    assert hand["alerts"] == []
    assert {s: p["status"] for s, p in hand["players"].items()} == {
        "1": "folded", "3": "active", "5": "active"}
    assert hand["players"]["3"]["up"] == ["Qs", "4h", "7c", "8d"]


def test_a_card_only_hand_won_by_folds_round_trips(tmp_path: Path) -> None:
    """Everybody else folds (seat 5 on 6th street): the last seat standing wins the
    replay too, its unseen down cards stand-ins listed in ``_filled_cards``."""
    rec = card_only(
        actions=[{"street": 4, "seat": 1, "action": "fold", "amount": None},
                 {"street": 6, "seat": 5, "action": "fold", "amount": None}],
        up_cards={"1": ["2c", "9d"], "3": ["Qs", "4h", "7c", "8d"],
                  "5": ["Jh", "3s", "5c", "Td"]},
        shown={}, ended="fold")
    text = write_phh(record_to_hand(rec, stakes=(0, 2, 5, 10)))
    assert "_filled_cards" in text
    hand = replayed(text, tmp_path)
    assert hand["winners"] == [3]
    assert hand["alerts"] == []
    assert hand["players"]["5"]["status"] == "folded"


def test_stakes_that_nothing_shows_are_flagged_not_invented() -> None:
    """Without configured stakes and without a single amount in the record, the file says
    ``_stakes = "unknown"``; with bets, ``from the bets``."""
    assert '_stakes = "unknown"' in write_phh(record_to_hand(card_only()))
    assert '_stakes = "from the bets"' in write_phh(record_to_hand(record()))
    assert "_betting" not in write_phh(record_to_hand(record()))
