"""Table scripts are as strict as the config files (issue 24 item 7, issue 21 item 9).

A key written twice, a key the op does not know, a hand with no players (outside an
``auto_hands`` table) and a card code in the wrong case are refused with one
``FILE:LINE: problem`` line and exit 2; every line of the contract (docs/conformance.md)
still replays. Console commands refuse duplicate keys the same way.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from table_controller.mqtt.console_commands import CommandError, parse_command
from table_controller.tools.cli import main

HAND = '{"op":"hand","players":[1,2]}'


def replay(capsys: pytest.CaptureFixture[str], path: Path) -> tuple[int, str, str]:
    code = main(["replay", str(path), "--json"])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(("line", "problem"), [
    ('{"op":"place","op":"remove","zone":"seat1.up","card":"As"}', "duplicate key 'op'"),
    ('{"op":"place","zone":"seat1.up","zone":"seat2.up","card":"As"}',
     "duplicate key 'zone'"),
    ('{"op":"act","seat":1,"action":"bet","amout":10}',
     "act: amout: unexpected field (the fields of act are: action, amount, seat)"),
    ('{"op":"place","zone":"seat1.up","card":"as"}', "bad card code 'as'"),
    ('{"op":"place","zone":"seat1.up","card":"AS"}', "bad card code 'AS'"),
    ('{"op":"remove","zone":"seat1.up","card":"tD"}', "bad card code 'tD'"),
    ('{"op":"remove","zone":"seat1.up","card":"As","manual":true}',
     "remove: manual: unexpected field"),
    ('{"op":"end","why":"x"}', "end: why: unexpected field"),
    ('{"op":"hand","players":[]}', "hand: players: is empty"),
    ('{"op":"hand","players":[1,2],"stacks":{"1":5,"1":6}}', "duplicate key '1'"),
])
def test_a_strict_script_refuses_the_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          line: str, problem: str) -> None:
    script = tmp_path / "bad.jsonl"
    script.write_text(HAND + "\n" + line + "\n")
    code, out, err = replay(capsys, script)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1
    assert err.startswith(f"stud-table replay: {script}:2: ")
    assert problem in err


def test_a_duplicate_key_on_the_table_line_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "bad.jsonl"
    script.write_text('{"op":"table","ante":1,"ante":2}\n' + HAND + "\n")
    code, _out, err = replay(capsys, script)
    assert code == 2
    assert f"{script}:1: duplicate key 'ante'" in err


CONTRACT_LINES = (
    '{"op":"table","seats":8,"ante":1,"bring_in":2,"small_bet":5,"big_bet":10,'
    '"rules":{"bring_in_tiebreak":"suit","burn_before_third":false,"raise_cap":3},'
    '"game":"stud"}',
    '{"op":"hand","players":[1,2,4,7],"stacks":{"1":100,"2":100,"4":80,"7":60}}',
    '{"op":"place","zone":"seat1.down","card":"As"}',
    '{"op":"place","zone":"seat2.down","card":"Td","manual":true}',
    '{"op":"place","zone":"seat4.up","uid":"E0040150A1B2C3D4"}',
    '{"op":"remove","zone":"seat4.up","uid":"E0040150A1B2C3D4"}',
    '{"op":"place","zone":"seat4.down","card":"2c"}',
    '{"op":"remove","zone":"seat4.down","card":"2c"}',
    '{"op":"act","seat":4,"action":"bet","amount":10}',
    '{"op":"act","seat":7,"action":"fold"}',
)
"""Every line shape of the contract, with every optional key it names."""


def test_every_line_of_the_contract_still_replays(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "contract.jsonl"
    script.write_text("\n".join(CONTRACT_LINES) + "\n")
    code, out, err = replay(capsys, script)
    assert (code, err) == (0, "")
    assert len(json.loads(out)["hands"]) == 1


def test_an_auto_hands_table_may_start_a_hand_with_no_players(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "auto.jsonl"
    script.write_text('{"op":"table","auto_hands":true}\n{"op":"hand","players":[]}\n')
    code, _out, err = replay(capsys, script)
    assert (code, err) == (0, "")


def test_a_console_command_with_a_key_twice_is_refused() -> None:
    with pytest.raises(CommandError, match="act: duplicate key 'seat'"):
        parse_command("act", b'{"seat":1,"seat":2,"action":"call"}', 8)


def test_an_equity_spec_with_a_seat_twice_is_refused(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    spec = '{"seats": {"1": ["As","Kd","Qh"], "1": ["9h","9d","2s"], "4": ["2h","3h","4h"]}}'
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(spec.encode())))
    code = main(["equity", "-", "--json"])
    _out, err = capsys.readouterr()
    assert code == 2
    assert "spec has the key '1' twice" in err
