"""PHH export of a public hand record: the handhistory writer's text, read back by the
project's own PHH reader; unknown down cards stand in as ``_filled_cards``."""

from __future__ import annotations

from typing import Any

import pytest

from table_controller.domain.cards import Card
from table_controller.floor.phh import ExportError, record_to_hand
from table_controller.handhistory.reader import read_phh
from table_controller.handhistory.writer import write_phh


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
