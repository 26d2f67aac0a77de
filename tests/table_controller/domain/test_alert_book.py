"""Issue 14, the pure parts: the floor's commands (one parser), the alert book
(lifecycle, refusals, restore from the journal's records) and the finished-hand
record (no unshown down card in the public one)."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from table_controller.daemon.floor import (
    ALERT_ACKNOWLEDGED,
    ALERT_RESOLVED,
    MAX_OPEN_ALERTS,
    NO_DEALER,
    UNKNOWN_ALERT,
    AlertBook,
    BookAlert,
    Dealer,
)
from table_controller.daemon.projection import HandFacts, hand_id, hand_records
from table_controller.domain.engine.alerts import AlertCode
from table_controller.domain.engine.dealing import DealingEngine, expected_face
from table_controller.domain.events import AlertAck, AlertResolve, DealerChange, FloorCommand
from table_controller.domain.zones import ZoneKind
from table_controller.mqtt.console_commands import (
    BAD_JSON,
    INVALID_COMMAND,
    CommandError,
    parse_command,
)
from table_controller.records.journal import current_hand_records
from table_controller.records.ops import MAX_NOTE_CHARS, floor_op, parse_floor
from table_controller.records.script import ScriptParser
from table_controller.simulation import PhysicalDeal, deal_random
from table_controller.tools.cli import build_parser
from table_controller.tools.console_client import command_payload

# ------------------------------------------------------------------ parsing


def cmd(name: str, body: Any) -> Any:
    return parse_command(name, json.dumps(body).encode(), seats=8, at=5.0)


def test_floor_commands_parse() -> None:
    assert cmd("ack", {"alert": "t1:7", "by": "Bob"}) == AlertAck("t1:7", "Bob", 5.0)
    assert cmd("resolve", {"alert": "t1:7", "by": "Bob", "note": "misdeal  called"}) == \
        AlertResolve("t1:7", "Bob", "misdeal called", 5.0)
    assert cmd("dealer", {"action": "in", "id": "D17", "name": "Ann"}) == \
        DealerChange("D17", "Ann", 5.0)
    assert cmd("dealer", {"action": "out"}) == DealerChange(None, None, 5.0)


@pytest.mark.parametrize(("name", "body", "words"), [
    ("ack", {"alert": "t1:7"}, "ack: by: is missing"),
    ("ack", {"alert": "", "by": "Bob"}, "ack: alert: must not be empty"),
    ("ack", {"alert": 7, "by": "Bob"}, "ack: alert: must be a string"),
    ("ack", {"alert": "t1:7", "by": "Bob", "note": "x"}, "ack: note: unexpected field"),
    ("resolve", {"alert": "t1:7", "by": "Bob"}, "resolve: note: is missing"),
    ("resolve", {"alert": "t1:7", "by": "Bob", "note": "  "}, "resolve: note: must not be"),
    ("resolve", {"alert": "t1:7", "by": "Bob", "note": "x" * (MAX_NOTE_CHARS + 1)},
     "resolve: note: is longer than 200 characters"),
    ("resolve", {"alert": "t1:7", "by": "Bob", "note": "a\u0000b"}, "cannot be shown"),
    ("dealer", {"action": "on"}, "dealer: action: must be \"in\" or \"out\""),
    ("dealer", {"action": "in", "name": "Ann"}, "dealer: id: is missing"),
    ("dealer", {"action": "in", "id": "D 17", "name": "Ann"}, "dealer: id: must be one word"),
    ("dealer", {"action": "out", "id": "D17"}, "dealer: id: is not given"),
])
def test_malformed_floor_commands_say_what_where_why(name: str, body: Any, words: str) -> None:
    with pytest.raises(CommandError) as caught:
        cmd(name, body)
    assert caught.value.code == INVALID_COMMAND
    assert words in caught.value.reason


def test_floor_command_not_json() -> None:
    with pytest.raises(CommandError) as caught:
        parse_command("resolve", b"{oops", seats=8)
    assert caught.value.code == BAD_JSON


@given(st.sampled_from([AlertAck("t1:3", "Bob"), AlertResolve("t1:3", "Bob", "ruled live"),
                        DealerChange("D1", "Ann"), DealerChange(None, None)]))
def test_floor_op_round_trips(command: FloorCommand) -> None:
    op = floor_op(command)
    assert parse_floor(op["op"], op) == command


@settings(max_examples=300)
@given(
    st.sampled_from(["ack", "resolve", "dealer"]),
    st.dictionaries(st.sampled_from(["alert", "by", "note", "action", "id", "name", "x"]),
                    st.one_of(st.none(), st.integers(-3, 3), st.text(max_size=8),
                              st.sampled_from(["in", "out", "t1:5", "Ann"]),
                              st.text(min_size=199, max_size=202)),
                    max_size=4),
)
def test_any_json_object_is_a_floor_command_that_journals_or_a_clear_refusal(
    name: str, body: dict[str, object]
) -> None:
    """Fuzzed payloads: a refusal with a stable code and a reason, or a command whose
    journal op parses back to the same command (what a restart replays)."""
    error: CommandError | None = None
    try:
        command = parse_command(name, json.dumps(body).encode(), seats=8)
    except CommandError as exc:
        error = exc
    if error is not None:
        assert error.code in (BAD_JSON, INVALID_COMMAND)
        assert error.reason.startswith(f"{name}: ")
        return
    assert isinstance(command, AlertAck | AlertResolve | DealerChange)
    op = floor_op(command)
    assert parse_floor(op["op"], op) == command


def test_cli_arguments_build_the_floor_commands() -> None:
    parser = build_parser()
    cases = [
        (["ack", "t1:5", "--by", "Bob"], ("ack", {"alert": "t1:5", "by": "Bob"})),
        (["resolve", "t1:5", "--by", "Bob", "--note", "misdeal called"],
         ("resolve", {"alert": "t1:5", "by": "Bob", "note": "misdeal called"})),
        (["dealer", "in", "D17", "Ann Lee"],
         ("dealer", {"action": "in", "id": "D17", "name": "Ann Lee"})),
        (["dealer", "out"], ("dealer", {"action": "out"})),
    ]
    for argv, (name, body) in cases:
        args = parser.parse_args(["console", "--table", "t1", *argv])
        got_name, payload = command_payload(args)
        assert (got_name, json.loads(payload)) == (name, body)
        parse_command(got_name, payload, seats=8)  # the daemon accepts what the CLI sends
    for bad in (["ack", "t1:5"], ["resolve", "t1:5", "--by", "Bob"], ["dealer", "in", "D1"],
                ["dealer"]):
        with pytest.raises(SystemExit) as exited:
            parser.parse_args(["console", "--table", "t1", *bad])
        assert exited.value.code == 2


# ------------------------------------------------------------------ the book


def raised(number: int, ts: float = 0.0, hand: int | None = 1) -> BookAlert:
    return BookAlert(id=f"t1:{number}", code=AlertCode.MISSING_BURN, message="no burn",
                     hand=hand, raised_ts=ts or float(number))


def test_lifecycle_and_refusals() -> None:
    book = AlertBook()
    book.raise_alert(raised(1))
    assert book.refusal(AlertAck("t1:2", "Bob")) == (
        UNKNOWN_ALERT, "ack: no open alert of this table has the id 't1:2'")
    assert book.refusal(AlertAck("t1:1", "Bob")) is None
    change = book.apply(AlertAck("t1:1", "Bob"), 10.0)
    assert change is not None
    assert (change.state, change.by, change.at_ts) == ("acknowledged", "Bob", 10.0)
    entry = book.open_alerts()[0].as_open()
    assert (entry["state"], entry["acknowledged_by"], entry["acknowledged_ts"]) == (
        "acknowledged", "Bob", 10.0)
    refused = book.refusal(AlertAck("t1:1", "Eve"))
    assert refused is not None
    assert refused[0] == ALERT_ACKNOWLEDGED
    change = book.apply(AlertResolve("t1:1", "Eve", "misdeal called"), 11.0)
    assert change is not None
    assert (change.state, change.note) == ("resolved", "misdeal called")
    assert book.open_alerts() == []
    for again in (AlertAck("t1:1", "Bob"), AlertResolve("t1:1", "Bob", "x")):
        refused = book.refusal(again)
        assert refused is not None
        assert refused[0] == ALERT_RESOLVED
    # Resolving an open alert directly is allowed (the acknowledgement is implied).
    book.raise_alert(raised(2))
    assert book.refusal(AlertResolve("t1:2", "Bob", "fixed")) is None
    assert book.refusal(DealerChange(None, None)) == (
        NO_DEALER, "dealer: nobody is signed in at this table")
    book.apply(DealerChange("D1", "Ann"), 3.0)
    assert (book.dealer, book.dealer_since) == (Dealer("D1", "Ann"), 3.0)


def test_open_set_is_bounded_and_says_which_it_pushes_out() -> None:
    book = AlertBook()
    closed = []
    for number in range(1, MAX_OPEN_ALERTS + 3):
        for old in book.raise_alert(raised(number)):
            # What the daemon does with them: close them visibly (journaled, published).
            closed.append(old.id)
            book.apply(AlertResolve(old.id, "table", "too many open"), 0.0)
    assert closed == ["t1:1", "t1:2"]  # the oldest first
    assert len(book.open_alerts()) == MAX_OPEN_ALERTS
    assert book.open_alerts()[0].id == "t1:3"


commands = st.one_of(
    st.tuples(st.just("raise"), st.integers(1, 12)),
    st.tuples(st.just("ack"), st.integers(1, 12), st.sampled_from(["Bob", "Eve"])),
    st.tuples(st.just("resolve"), st.integers(1, 12), st.sampled_from(["a note", "ruled"])),
    st.tuples(st.just("dealer"), st.sampled_from([None, "D1", "D2"])),
    st.tuples(st.just("hand"), st.integers(1, 5)),
)


@settings(max_examples=200)
@given(st.lists(commands, max_size=40))
def test_restore_from_the_journal_rebuilds_the_same_book(script: list[tuple[Any, ...]]) -> None:
    """What the daemon journals (``alert`` when raised; accepted ``ack``/``resolve``/
    ``dealer``) fed again in order, or only what current_hand_records keeps of it,
    or a rotated file's header alone, gives the same open set and dealer."""
    live = AlertBook()
    records: list[dict[str, Any]] = []
    used: set[str] = set()
    at = 100.0
    for step in script:
        at += 1.0
        kind = step[0]
        command: FloorCommand
        if kind == "raise":
            alert = raised(step[1], ts=at)
            if alert.id in used:
                continue  # ids are never reused
            used.add(alert.id)
            live.raise_alert(alert)
            records.append({**alert.as_op(), "at": at})
            continue
        if kind == "hand":
            records.append({"op": "hand", "players": [], "hand_id": step[1], "at": at})
            continue
        if kind == "ack":
            command = AlertAck(f"t1:{step[1]}", step[2])
        elif kind == "resolve":
            command = AlertResolve(f"t1:{step[1]}", "Bob", step[2])
        else:
            command = DealerChange(step[1], "Dealer" if step[1] else None)
        if live.refusal(command) is None:  # refused commands are never journaled
            live.apply(command, at)
            records.append({**floor_op(command), "at": at})

    def restored(from_records: list[dict[str, Any]]) -> AlertBook:
        book = AlertBook()
        for record in from_records:
            if record["op"] != "hand":
                book.restore_op({k: v for k, v in record.items() if k != "at"}, record["at"])
        return book

    def view(book: AlertBook) -> Any:
        return [a.as_open() for a in book.open_alerts()], book.dealer, book.dealer_since

    assert view(restored(records)) == view(live)
    assert view(restored([dict(r) for r in current_hand_records(records)])) == view(live)
    header = [{**op, "at": 999.0} for op in live.header_ops()]
    assert view(restored(header)) == view(live)


def test_replay_of_a_journal_skips_the_floor_records() -> None:
    parser = ScriptParser(journal=True)
    assert parser.feed_object(1, {"op": "hand", "players": [1, 2]}) is not None
    for op in ({"op": "dealer", "action": "in", "id": "D1", "name": "Ann"},
               {"op": "ack", "alert": "t1:1", "by": "Bob"},
               raised(1).as_op()):
        assert parser.feed_object(2, op) is None
    with pytest.raises(ValueError, match="unknown op 'dealer'"):
        ScriptParser().feed_object(1, {"op": "dealer", "action": "out"})


# ------------------------------------------------------------------ the hand record

seat_sets = st.lists(st.integers(1, 8), min_size=2, max_size=8, unique=True).map(sorted)


def dealt(deal: PhysicalDeal, seat: int, face: ZoneKind) -> list[str]:
    """The cards ``seat`` was dealt with ``face`` (folded hands too), in order."""
    return [card.code for number, card in enumerate(deal.cards[seat], start=1)
            if expected_face(number) is face]


@settings(max_examples=150)
@given(seat_sets, st.dictionaries(st.integers(1, 8), st.integers(3, 7)),
       st.integers(0, 2**32 - 1))
def test_public_record_has_no_unshown_down_card(
    seats: list[int], folds: dict[int, int], seed: int,
) -> None:
    """Random hands (the simulator's physical deals, random folds): the public record
    shows a down card only for a seat that showed it down; the secure record has
    every seat's down cards as dealt."""
    folds = {s: street for s, street in folds.items() if s in seats}
    if len(folds) == len(seats):
        del folds[seats[0]]
    deal = deal_random(seats, random.Random(seed), folds=folds)
    engine = DealingEngine()
    facts: HandFacts | None = None
    for event in deal.events:
        outputs = engine.apply(event)
        if facts is None and engine.hand is not None:
            facts = HandFacts(number=engine.hand.number, started_ts=1.5)
        if facts is not None:
            facts.note_outputs(outputs)
    assert facts is not None
    facts.note_outputs(engine.finish_hand())
    hand = engine.hand
    assert hand is not None
    assert hand.finished
    public, secure = hand_records("t1", hand, facts, 9.0)
    text = public.model_dump_json()
    assert public.down_cards is None
    shown = {int(seat) for seat in public.shown}
    assert shown <= set(deal.live_seats)  # folded hands are never shown
    dealt_down = {s: dealt(deal, s, ZoneKind.DOWN) for s in seats}
    for seat in seats:
        for code in dealt_down[seat]:
            assert (f'"{code}"' in text) == (seat in shown), (seat, code)
    # Every down card as dealt, folded hands' too, is in the secure record only.
    assert secure.down_cards == {str(s): dealt_down[s] for s in seats}
    assert public.up_cards == {str(s): dealt(deal, s, ZoneKind.UP) for s in seats}
    assert public.hand_id == hand_id("t1", hand.number, 1.5) == f"t1:{hand.number}:1500"
    assert public.ended == ("showdown" if shown else "fold" if hand.winners else "killed")
    # No console, so no notice computed from down cards: the rest is the same.
    assert secure.model_dump(exclude={"down_cards"}) == public.model_dump(
        exclude={"down_cards"})
