"""The conformance door: ``stud-table replay SCRIPT --json`` (CONFORMANCE.md).

Run as a real subprocess, exactly as outside acceptance suites drive it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"


def replay(path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "table_controller", "replay", str(path), *extra],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def test_hand_written_script_reports_as_the_contract_says() -> None:
    result = replay(SCRIPTS / "clean-hand.jsonl", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    (hand,) = report["hands"]
    assert set(hand) >= {"players", "community", "bring_in", "first_to_act", "winners",
                         "alerts"}
    assert hand["players"]["5"] == {"down": [], "up": [], "status": "folded"}
    assert hand["players"]["4"]["down"] == ["Kd", "Kc", "Kh"]
    assert hand["bring_in"] == 4
    assert hand["first_to_act"] == {"4": 4, "5": 4, "6": 4, "7": 4}
    assert hand["winners"] == [4]
    assert hand["alerts"] == []


def test_dealing_errors_are_alerts_not_failures(tmp_path: Path) -> None:
    script = tmp_path / "errors.jsonl"
    script.write_text(
        '{"op":"hand","players":[1,2]}\n'
        '{"op":"place","zone":"seat2.down","card":"As"}\n'
        '{"op":"place","zone":"seat1.up","uid":"E0040150A1B2C3D4"}\n'
        '{"op":"act","seat":1,"action":"bring_in"}\n'
    )
    result = replay(script, "--json")
    assert result.returncode == 0, result.stderr
    codes = [a["code"] for a in json.loads(result.stdout)["hands"][0]["alerts"]]
    assert codes == ["out_of_order", "unknown_card"]
    assert "E0040150A1B2C3D4" not in result.stdout.split('"alerts"')[1]


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ('{"op":"place","zone":"seat1.down","card":"As"', "bad JSON"),
        ('{"op":"deal","zone":"seat1.down","card":"As"}', "unknown op 'deal'"),
        ('{"op":"place","zone":"seat9.down","card":"As"}', "unknown zone 'seat9.down'"),
        ('{"op":"place","zone":"table","card":"As"}', "unknown zone 'table'"),
        ('{"op":"place","zone":"seat1.down","card":"1s"}', "bad card code '1s'"),
        ('{"op":"place","zone":"seat1.down","card":"Ax"}', "bad card code 'Ax'"),
        ('{"op":"act","seat":1,"action":"shove"}', "unknown action 'shove'"),
        ('["place"]', "JSON object"),
        ('{"zone":"burn","card":"As"}', 'missing "op"'),
    ],
)
def test_malformed_script_fails_with_one_line_naming_the_line(
    tmp_path: Path, line: str, problem: str
) -> None:
    script = tmp_path / "bad.jsonl"
    script.write_text('{"op":"hand","players":[1,2]}\n\n' + line + "\n")
    result = replay(script, "--json")
    assert result.returncode != 0
    assert result.stdout == ""
    message = result.stderr.strip()
    assert "\n" not in message
    assert f"{script}:3:" in message
    assert problem in message


def test_table_line_must_come_first(tmp_path: Path) -> None:
    script = tmp_path / "late-table.jsonl"
    script.write_text('{"op":"hand","players":[1,2]}\n{"op":"table","seats":6}\n')
    result = replay(script, "--json")
    assert result.returncode != 0
    assert ":2:" in result.stderr


def test_bad_table_setting_names_the_key(tmp_path: Path) -> None:
    script = tmp_path / "bad-rules.jsonl"
    script.write_text('{"op":"table","rules":{"bring_in_tiebreak":"colour"}}\n')
    result = replay(script, "--json")
    assert result.returncode != 0
    assert "rules.bring_in_tiebreak" in result.stderr


def test_missing_file_is_a_one_line_error(tmp_path: Path) -> None:
    result = replay(tmp_path / "nope.jsonl", "--json")
    assert result.returncode != 0
    assert "cannot read" in result.stderr


def test_text_report_without_json() -> None:
    result = replay(SCRIPTS / "clean-hand.jsonl")
    assert result.returncode == 0
    assert "winners [4]" in result.stdout
