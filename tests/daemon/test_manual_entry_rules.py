"""The daemon's pure check of a manual card against the hand (issue 19,
``table_controller/daemon/manual_entry.py``): the pure engine deals, the check answers.
The real daemon over MQTT: tests/daemon/test_manual_card.py."""

from __future__ import annotations

from table_controller.daemon.manual_entry import manual_contradiction
from table_controller.domain.cards import Card
from table_controller.domain.engine.dealing import DealingEngine
from table_controller.domain.engine.settings import TableSettings
from table_controller.domain.events import CardPlaced, HandStarted
from table_controller.domain.zones import Zone

THIRD = {1: ("Jc", "Td", "Kh"), 2: ("8h", "5s", "3c"), 4: ("6d", "4s", "Qd")}


def _deal(engine: DealingEngine, zone: str, code: str) -> None:
    engine.apply(CardPlaced(Zone.parse(zone), Card.parse(code)))


def _third(engine: DealingEngine, skip: tuple[str, str] | None = None) -> None:
    for n in range(3):
        for seat in (1, 2, 4):
            zone, code = f"seat{seat}.{'up' if n == 2 else 'down'}", THIRD[seat][n]
            if (zone, code) != skip:
                _deal(engine, zone, code)


def _code(engine: DealingEngine, zone: str) -> str | None:
    refusal = manual_contradiction(engine.hand, Zone.parse(zone))
    return None if refusal is None else refusal.code


def test_no_hand_or_not_a_seat_is_never_refused_here() -> None:
    engine = DealingEngine()
    assert _code(engine, "seat5.down") is None  # the entry may start a card-only hand
    engine.apply(HandStarted(players=(1, 2, 4)))
    assert _code(engine, "burn") is None
    assert _code(engine, "board") is None


def test_a_seat_not_in_a_console_hand_is_refused_rule_9() -> None:
    engine = DealingEngine()
    engine.apply(HandStarted(players=(1, 2, 4)))
    assert _code(engine, "seat5.down") == "unknown_seat"
    assert _code(engine, "seat4.down") is None


def test_a_card_only_hand_learns_its_players_in_its_first_round() -> None:
    engine = DealingEngine(TableSettings(auto_hands=True))  # the daemon's card-only mode
    _deal(engine, "seat1.down", "Jc")
    assert _code(engine, "seat5.down") is None  # seat 5 may be a player with a dead tag
    _deal(engine, "seat2.down", "8h")
    _deal(engine, "seat1.down", "Td")  # seat 1's second card: the first round is over
    assert _code(engine, "seat5.down") == "unknown_seat"


def test_one_card_too_many_for_a_street_all_read() -> None:
    engine = DealingEngine()
    engine.apply(HandStarted(players=(1, 2, 4)))
    _third(engine, skip=("seat4.up", "Qd"))
    assert _code(engine, "seat1.up") == "card_seen"  # its three cards are read
    assert _code(engine, "seat1.down") == "card_seen"
    assert _code(engine, "seat4.up") is None  # the dead tag: seat 4 has two cards
    # The burn of 4th street is read: a dead first card of 4th street may come.
    _deal(engine, "seat4.up", "Qd")
    _deal(engine, "burn", "2h")
    assert _code(engine, "seat1.up") is None
