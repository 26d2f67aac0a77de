"""Players' names (``cmd/seat``) and the public showdown result (issue 12)."""

from __future__ import annotations

import json

import pytest

from table_controller.daemon.projection import event_payloads, public_state, secure_state
from table_controller.domain.cards import parse_cards
from table_controller.domain.engine.dealing import DealingEngine
from table_controller.domain.engine.outputs import (
    ConsoleResult,
    GameEvent,
    GameEventKind,
    ShownHand,
)
from table_controller.domain.events import SeatName
from table_controller.mqtt.console_commands import COMMANDS, CommandError, parse_command
from table_controller.records.journal import current_hand_records
from table_controller.records.ops import MAX_NAME_CHARS
from table_controller.records.script import event_to_op, op_to_event


def test_seat_command_parses_journals_and_round_trips() -> None:
    """cmd/seat -> SeatName -> journal op -> the same SeatName (one parser, ops.py)."""
    assert "seat" in COMMANDS
    event = parse_command("seat", b'{"seat": 3, "name": "  Ann\\tLee ", "country": "FR"}', 8)
    assert event == SeatName(3, "Ann Lee", "FR", 0.0)
    op = event_to_op(event)
    assert op == {"op": "seat", "seat": 3, "name": "Ann Lee", "country": "FR"}
    assert op_to_event(op, 8) == event


@pytest.mark.parametrize(("payload", "words"), [
    (b'{"seat": 9, "name": "x"}', "seat 9 is not a seat"),
    (b'{"seat": 1}', "seat: name: must be a string"),
    (b'{"seat": 1, "name": "' + b"x" * (MAX_NAME_CHARS + 1) + b'"}', "longer than"),
    (b'{"seat": 1, "name": "a", "country": "fr"}', "seat: country: must be an ISO 3166"),
    (b'{"seat": 1, "name": "a", "colour": 1}', "unexpected field"),
    (b'{"seat": 1, "name": "a\\u0000b"}', "cannot be shown"),
])
def test_bad_seat_commands_are_refused_with_what_where_why(payload: bytes, words: str) -> None:
    """A bad cmd/seat is refused before the engine and journal, naming the field."""
    with pytest.raises(CommandError) as info:
        parse_command("seat", payload, 8)
    assert words in info.value.reason


def test_names_reach_public_and_secure_state_and_survive_a_hand() -> None:
    """The engine keeps the roster across hands; state carries name and country."""
    engine = DealingEngine()
    out = engine.apply(SeatName(2, "Bo", "SE"))
    assert isinstance(out[0], ConsoleResult)
    assert out[0].accepted
    engine.apply(SeatName(5, "Cy"))
    engine.apply(SeatName(5, ""))  # cleared
    for state in (public_state("t1", 8, engine.hand, names=engine.names),
                  secure_state("t1", 8, engine.hand, names=engine.names)):
        rows = {row.seat: row for row in state.seats}
        assert (rows[2].name, rows[2].country) == ("Bo", "SE")
        assert rows[5].name is None


def test_restart_keeps_the_names_given_before_the_current_hand() -> None:
    """The daemon replays the current hand at start; seat lines before it are kept."""
    records = [{"op": "seat", "seat": 1, "name": "A"}, {"op": "hand", "players": []},
               {"op": "seat", "seat": 2, "name": "B"}, {"op": "hand", "players": []}]
    kept = current_hand_records(records)
    assert {"op": "seat", "seat": 1, "name": "A"} in kept
    assert {"op": "seat", "seat": 2, "name": "B"} in kept


def test_public_result_lists_every_hand_shown_down() -> None:
    """Rule "others may show or muck": every hand that reached showdown was turned up
    and is listed publicly, winners first; folded hands never are."""
    shown = tuple(ShownHand(seat, tuple(parse_cards(cards)), text)
                  for seat, cards, text in [(4, "Ah Ad", "pair of aces"),
                                            (2, "Kh Kd", "pair of kings")])
    event = GameEvent(GameEventKind.HAND_RESULT, winners=(4,), shown=shown)
    payloads = event_payloads("t1", None, event)
    assert payloads is not None
    public = json.loads(payloads[0].model_dump_json())
    assert [h["seat"] for h in public["shown"]] == [4, 2]
