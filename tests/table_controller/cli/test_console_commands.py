"""Console command parsing (pure): JSON -> table events, or a coded rejection."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from table_controller.domain.events import (
    AlertAck,
    AlertResolve,
    ConsoleAction,
    DealerChange,
    FloorRuling,
    HandEnded,
    HandStarted,
)
from table_controller.mqtt.console_commands import (
    BAD_JSON,
    COMMANDS,
    FLOOR_COMMANDS,
    INVALID_COMMAND,
    REGISTRY,
    UNKNOWN_COMMAND,
    UNKNOWN_SEAT,
    CommandError,
    parse_command,
)
from table_controller.records.ops import floor_op
from table_controller.records.script import event_to_op, op_to_event
from table_controller.tools.cli import build_parser
from table_controller.tools.console_client import command_payload


def test_each_command_becomes_its_event_and_journals_as_its_op() -> None:
    cases = [
        ("hand", {"players": [4, 1, 2], "stacks": {"1": 100, "2": 100, "4": 80}},
         HandStarted((1, 2, 4), {1: 100, 2: 100, 4: 80}, 5.0, console=True)),
        ("act", {"seat": 4, "action": "call", "amount": None}, ConsoleAction(4, "call", None, 5.0)),
        ("act", {"seat": 4, "action": "raise", "amount": 20}, ConsoleAction(4, "raise", 20, 5.0)),
        ("kill", {"seat": 3, "reason": "absent (rule 6)"},
         FloorRuling(3, "kill", "absent (rule 6)", 5.0)),
        ("live", {"seat": 3}, FloorRuling(3, "live", "", 5.0)),
        ("end", {}, HandEnded(5.0)),
    ]
    for name, body, expected in cases:
        event = parse_command(name, json.dumps(body).encode(), seats=8, at=5.0)
        assert event == expected
        # What the journal stores replays to the same event.
        assert op_to_event({**event_to_op(event), "at": 5.0}) == expected
    assert parse_command("end", b"", seats=8) == HandEnded()


@pytest.mark.parametrize(
    ("name", "payload", "code", "words"),
    [
        ("act", b"{\"seat\": 4,", BAD_JSON, "not valid JSON"),
        ("act", b"\xff\xfe", BAD_JSON, "not valid JSON"),
        ("fold", b"{}", UNKNOWN_COMMAND, "unknown command 'fold'"),
        ("act", b"{\"seat\": 9, \"action\": \"call\"}", UNKNOWN_SEAT, "seat 9"),
        ("act", b"{\"seat\": 0, \"action\": \"call\"}", UNKNOWN_SEAT, "seat 0"),
        ("kill", b"{\"seat\": 7}", UNKNOWN_SEAT, "6-seat table"),
        ("act", b"{\"seat\": 4}", INVALID_COMMAND, "act: action: is missing"),
        ("act", b"{\"seat\": 4, \"action\": \"shove\"}", INVALID_COMMAND, "action"),
        ("act", b"{\"seat\": 4, \"action\": \"call\", \"x\": 1}", INVALID_COMMAND,
         "act: x: unexpected field"),
        ("act", b"{\"seat\": \"4\", \"action\": \"call\"}", INVALID_COMMAND, "seat"),
        ("act", b"{\"seat\": true, \"action\": \"call\"}", INVALID_COMMAND, "seat"),
        ("act", b"{\"seat\": 4, \"action\": \"bet\", \"amount\": -5}", INVALID_COMMAND,
         "amount"),
        ("act", b"[4, \"call\"]", INVALID_COMMAND, "object"),
        ("hand", b"{\"players\": [1]}", INVALID_COMMAND, "players"),
        ("hand", b"{\"players\": [1, 1]}", INVALID_COMMAND, "twice"),
        ("hand", b"{\"players\": [1, 2], \"stacks\": {\"3\": 5, \"1\": 5, \"2\": 5}}",
         INVALID_COMMAND, "seat 3"),
        ("hand", b"{\"players\": [1, 2], \"stacks\": {\"1\": 5, \"2\": -1}}", INVALID_COMMAND,
         "hand: stacks.2: must be a whole number from 0"),
        ("end", b"{\"now\": true}", INVALID_COMMAND, "now"),
    ],
)
def test_bad_commands_are_refused_with_a_code_and_a_reason(
    name: str, payload: bytes, code: str, words: str
) -> None:
    with pytest.raises(CommandError) as caught:
        parse_command(name, payload, seats=6)
    assert caught.value.code == code
    assert words in caught.value.reason


@given(st.sampled_from(["hand", "act", "kill", "live", "end", "x"]), st.binary(max_size=80))
def test_any_bytes_give_an_event_or_a_command_error(name: str, payload: bytes) -> None:
    error: CommandError | None = None
    try:
        parse_command(name, payload, seats=8)
    except CommandError as exc:
        error = exc
    if error is not None:
        assert error.code in (BAD_JSON, UNKNOWN_COMMAND, INVALID_COMMAND, UNKNOWN_SEAT)
        assert error.reason


@given(
    st.sampled_from(["hand", "act", "kill", "live", "end"]),
    st.dictionaries(st.sampled_from(["seat", "action", "amount", "players", "stacks",
                                     "reason", "hand_id", "other"]),
                    st.one_of(st.none(), st.integers(-3, 12), st.text(max_size=5),
                              st.lists(st.integers(0, 9), max_size=4),
                              st.dictionaries(st.sampled_from(["1", "2", "x"]),
                                              st.integers(-2, 5), max_size=3)),
                    max_size=4),
)
def test_json_objects_give_an_event_that_journals_or_a_command_error(
    name: str, body: dict[str, object]
) -> None:
    try:
        event = parse_command(name, json.dumps(body).encode(), seats=8)
    except CommandError:
        return
    # Whatever the daemon accepts, the journal can store and replay.
    assert op_to_event(event_to_op(event)) == event


def test_cli_arguments_build_the_command_json() -> None:
    parser = build_parser()
    cases = [
        (["hand", "1", "2", "4", "--stacks", "1=100", "2=100", "4=80"],
         ("hand", {"players": [1, 2, 4], "stacks": {"1": 100, "2": 100, "4": 80}})),
        (["act", "4", "call"], ("act", {"seat": 4, "action": "call", "amount": None})),
        (["act", "4", "raise", "20"], ("act", {"seat": 4, "action": "raise", "amount": 20})),
        (["kill", "3", "--reason", "absent"], ("kill", {"seat": 3, "reason": "absent"})),
        (["end"], ("end", {})),
        (["seat", "3", "Ann Lee"], ("seat", {"seat": 3, "name": "Ann Lee"})),
        (["seat", "3", "Ann Lee", "--country", "FR"],
         ("seat", {"seat": 3, "name": "Ann Lee", "country": "FR"})),
        (["seat", "3", ""], ("seat", {"seat": 3, "name": ""})),
    ]
    for argv, (name, body) in cases:
        args = parser.parse_args(["console", "--table", "t1", *argv])
        got_name, payload = command_payload(args)
        assert (got_name, json.loads(payload)) == (name, body)
        parse_command(got_name, payload, seats=8)  # the daemon accepts what the CLI sends
    args = parser.parse_args(["console", "--table", "t1", "raw", "act", "{oops"])
    assert command_payload(args) == ("act", b"{oops")
    for bad in (["act", "x", "call"], ["act", "4", "shove"], ["act", "4", "bet", "-1"],
                ["hand", "1", "--stacks", "1"], ["kill"], ["seat", "0", "Ann"], ["seat", "3"]):
        with pytest.raises(SystemExit) as exited:
            parser.parse_args(["console", "--table", "t1", *bad])
        assert exited.value.code == 2


# ------------------------------------------------------- issue 21 item 7


UNSHOWABLE = ["\ud800", "\x1b[2J", "a\x00b", "\u202eevil", "\u200bzero"]
"""A lone surrogate (cannot even be encoded), ESC, NUL, a bidi override, a zero-width
space: none can be shown on an overlay or published as sent."""

TEXT_FIELDS = [
    ("kill", {"seat": 3}, "reason"),
    ("live", {"seat": 3}, "reason"),
    ("seat", {"seat": 3}, "name"),
    ("ack", {"alert": "t1:5"}, "by"),
    ("ack", {"by": "Floor"}, "alert"),
    ("resolve", {"alert": "t1:5", "by": "Floor"}, "note"),
    ("dealer", {"action": "in", "id": "D17"}, "name"),
    ("dealer", {"action": "in", "name": "Sam"}, "id"),
]


@pytest.mark.parametrize("bad", UNSHOWABLE, ids=["surrogate", "esc", "nul", "rlo", "zwsp"])
@pytest.mark.parametrize(("name", "rest", "field"), TEXT_FIELDS,
                         ids=[f"{n}.{f}" for n, _, f in TEXT_FIELDS])
def test_issue21_item7_every_text_field_is_checked_like_seat_names(
    name: str, rest: dict[str, object], field: str, bad: str
) -> None:
    """A ``kill`` reason "\\ud800" was journaled and applied, then the state could not
    be serialised; ESC, NUL and U+202E went out in the public announcement."""
    payload = json.dumps({**rest, field: "ok " + bad}).encode()
    with pytest.raises(CommandError) as caught:
        parse_command(name, payload, seats=8)
    assert caught.value.code == INVALID_COMMAND
    assert field in caught.value.reason
    assert "cannot be shown" in caught.value.reason


def test_issue21_item7_a_plain_reason_still_passes_squeezed_to_one_line() -> None:
    event = parse_command("kill", b'{"seat": 3, "reason": "absent\\n (rule 6)"}', seats=8)
    assert event == FloorRuling(3, "kill", "absent (rule 6)", 0.0)


def test_issue21_item9_a_console_command_with_a_duplicate_key_is_refused() -> None:
    """Duplicate keys were silently last-wins (``{"op":"place","op":"remove"}``); for
    console commands they are refused naming the key (scripts: another change)."""
    with pytest.raises(CommandError) as caught:
        parse_command("kill", b'{"seat": 3, "seat": 4, "reason": "x"}', seats=8)
    assert caught.value.code == INVALID_COMMAND
    assert "duplicate key 'seat'" in caught.value.reason
    with pytest.raises(CommandError, match="duplicate key 'n'"):
        parse_command("hand", b'{"players": [1, 2], "stacks": {"n": 1, "n": 2}}', seats=8)


def test_the_registry_is_the_one_vocabulary() -> None:
    """Issue 20: one console-command registry. Every command the parser knows is in
    it, its fields are the only ones accepted, a floor command becomes a floor
    command (journaled by its own op, named as the command), the others a table
    event whose journal op is named as the command too (``card``: the card placed,
    journaled as a manual ``place``)."""
    bodies = {
        "hand": {"players": [1, 2]}, "act": {"seat": 1, "action": "call"},
        "kill": {"seat": 1}, "live": {"seat": 1}, "end": {},
        "seat": {"seat": 1, "name": "Ann"}, "card": {"zone": "seat3.down", "card": "As"},
        "ack": {"alert": "t1:1", "by": "floor"},
        "resolve": {"alert": "t1:1", "by": "floor", "note": "fixed"},
        "dealer": {"action": "in", "id": "d7", "name": "Ann"},
    }
    assert set(COMMANDS) == set(REGISTRY) == set(bodies)
    assert FLOOR_COMMANDS == ("ack", "resolve", "dealer")
    for name, spec in REGISTRY.items():
        event = parse_command(name, json.dumps(bodies[name]).encode(), seats=8)
        if spec.floor:
            assert isinstance(event, AlertAck | AlertResolve | DealerChange)
            assert floor_op(event)["op"] == name
        else:
            op = event_to_op(event)  # type: ignore[arg-type]
            assert op["op"] == ("place" if name == "card" else name), op
        with pytest.raises(CommandError) as refused:
            parse_command(name, json.dumps({**bodies[name], "zz": 1}).encode(), seats=8)
        assert refused.value.code == INVALID_COMMAND
