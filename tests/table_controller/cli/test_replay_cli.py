"""The conformance door: ``stud-table replay SCRIPT --json`` (docs/conformance.md).

Run as a real subprocess, exactly as outside acceptance suites drive it.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
import sys
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from table_controller.records.journal import Journal
from table_controller.records.replay import replay_path
from table_controller.tools.cli import main

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


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
    assert "hand 1: winners 4, bring-in seat 4" in result.stdout
    assert "None" not in result.stdout


# ------------------------------------------------------ issue 9: the door never crashes
#
# Named regression tests, one per bug of issue 9 (items 13, 15-18). Most run main()
# in process (fast, exact capture); the few that need a real process (broken pipe,
# the daemon's start) use one. test_replay_fuzz.py throws thousands more at the door.

CLEAN = SCRIPTS / "clean-hand.jsonl"
ONE_LINE_ERROR = re.compile(r"^stud-table replay: (?P<file>.+):(?P<line>\d+): (?P<problem>.+)\n$")


def run_main(path: Path, *extra: str) -> tuple[int, str, str]:
    """``stud-table replay PATH --json`` through main(), stdout and stderr captured."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["replay", str(path), "--json", *extra])
    return code, out.getvalue(), err.getvalue()


def bad_line(path: Path) -> tuple[int, str]:
    """Replay ``path``, expect exit 2 with one ``FILE:LINE: problem``; return both."""
    code, out, err = run_main(path)
    assert code == 2, (code, err)
    assert out == ""
    match = ONE_LINE_ERROR.match(err)
    assert match is not None, err
    assert match["file"] == str(path)
    assert "internal error" not in err
    return int(match["line"]), match["problem"]


def good_report(path: Path) -> dict[str, Any]:
    code, out, err = run_main(path)
    assert (code, err) == (0, ""), err
    report: dict[str, Any] = json.loads(out)
    return report


def write(tmp_path: Path, text: str, name: str = "s.jsonl") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    return path


HAND = '{"op":"hand","players":[1,2]}\n'
BIG = "1" + "0" * 400


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        # Item 15: an integer of hundreds of digits in any field (the "at" one overflowed
        # float() into an OverflowError traceback).
        (f'{{"op":"hand","players":[1,2],"at":{BIG}}}\n', 1, "out of range"),
        (f'{{"op":"hand","players":[1,{BIG}]}}\n', 1, "out of range"),
        (f'{{"op":"hand","players":[1,2],"stacks":{{"1":{BIG}}}}}\n', 1, "out of range"),
        (f'{{"op":"hand","players":[1,2],"hand_id":{BIG}}}\n', 1, "out of range"),
        (HAND + f'{{"op":"act","seat":1,"action":"bet","amount":{BIG}}}\n', 2, "out of range"),
        (f'{{"op":"table","ante":{BIG}}}\n', 1, "out of range"),
        (f'{{"op":"table","rules":{{"raise_cap":{BIG}}}}}\n', 1, "out of range"),
        (HAND + f'{{"op":"place","zone":"burn","card":"As","at":{BIG}.5}}\n', 2, "out of range"),
        (HAND + '{"op":"place","zone":"burn","card":"As","at":1e999}\n', 2, "out of range"),
        (HAND + '{"op":"place","zone":"burn","card":"As","at":NaN}\n', 2, "not a JSON value"),
        # ... one over Python's 4,300-digit int-str limit (a ValueError json does not wrap)
        (HAND + '{"op":"act","seat":1,"action":"bet","amount":1' + "0" * 4300 + "}\n", 2,
         "4301 digits"),
        # ... "[" nested 100,000 deep (RecursionError)
        (HAND + "[" * 100_000 + "\n", 2, "nested too deeply"),
        (HAND + '{"op":"kill","seat":1,"reason":' + "[" * 100_000 + "\n", 2, "nested too deeply"),
        # ... stakes the betting engine refuses, then an act (ValueError at the act)
        ('{"op":"table","bring_in":5,"small_bet":5}\n' + HAND
         + '{"op":"act","seat":1,"action":"fold"}\n', 1,
         "bring_in: must be smaller than small_bet"),
        ('{"op":"table","small_bet":5,"big_bet":4}\n' + HAND
         + '{"op":"act","seat":1,"action":"fold"}\n', 1, "big_bet: must be at least small_bet"),
        # ... ante 0 and a stack of 0, then an act
        ('{"op":"table","ante":0}\n{"op":"hand","players":[1,2],"stacks":{"1":0,"2":5}}\n'
         '{"op":"act","seat":1,"action":"fold"}\n', 2, "stacks of seat 1 is 0 and the ante is 0"),
        # Item 17: cards before any hand line were silently ignored (a blank report).
        ('{"op":"place","zone":"seat1.down","card":"As"}\n', 1, 'place before the first "hand"'),
        ('{"op":"table","seats":6}\n\n{"op":"act","seat":1,"action":"fold"}\n' + HAND, 3,
         'act before the first "hand"'),
        # Stacks keys: int() also took " 1" and other scripts' digits.
        ('{"op":"hand","players":[1,2],"stacks":{"\u0661":5}}\n', 1, "is not a seat number"),
        # An overlong line is refused without being read whole.
        (HAND + '{"op":"kill","seat":1,"reason":"' + "x" * (1024 * 1024) + '"}\n', 2,
         "line longer than"),
    ],
    ids=lambda value: value[:40] if isinstance(value, str) else str(value),
)
def test_issue9_malformed_input_is_one_line_exit_2_never_a_traceback(
    tmp_path: Path, text: str, line: int, problem: str
) -> None:
    number, message = bad_line(write(tmp_path, text))
    assert number == line
    assert problem in message
    assert len(message) < 500  # a value of 4,301 digits is not quoted whole


def test_issue9_item15_engine_failure_names_the_line_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The last line of defence: an engine bug still answers FILE:LINE (as an internal
    error the fuzz tests look for), never a traceback."""
    from table_controller.domain.engine import dealing

    def broken(self: object, event: object) -> None:
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(dealing.DealingEngine, "apply", broken)
    code, out, err = run_main(write(tmp_path, "\n" + HAND))
    assert (code, out) == (2, "")
    assert ONE_LINE_ERROR.match(err) is not None
    assert ":2: internal error replaying this line (ZeroDivisionError: boom)" in err


@pytest.mark.parametrize("separator", ["\x0c", "\x0b", "\x1c", "\x1d", "\x1e", "\x85",
                                       "\u2028", "\u2029", "\r"])
def test_issue9_item16_line_numbers_count_newlines_only(tmp_path: Path, separator: str) -> None:
    """str.splitlines() also split on these, so every later line number was off."""
    text = HAND.replace("\n", separator + "\n") + separator + "\n" + '{"op":"x"}\n'
    number, problem = bad_line(write(tmp_path, text))
    assert number == 3
    assert "unknown op 'x'" in problem


def test_issue9_item16_raw_line_separator_inside_a_string_is_json(tmp_path: Path) -> None:
    """A raw U+2028 inside a JSON string is legal JSON (it was "Unterminated string")."""
    report = good_report(write(tmp_path, HAND + '{"op":"kill","seat":1,"reason":"a\u2028b"}\n'))
    assert report["hands"][0]["players"]["1"]["status"] == "dead"


def test_issue9_item16_byte_order_mark_and_crlf_are_fine(tmp_path: Path) -> None:
    text = "\ufeff" + CLEAN.read_text().replace("\n", "\r\n")
    assert good_report(write(tmp_path, text)) == good_report(CLEAN)


def test_issue9_item17_no_hand_line_at_all(tmp_path: Path) -> None:
    """An empty script, or one with only a table line, has no hands; nothing is ignored."""
    assert good_report(write(tmp_path, "")) == {"hands": []}
    assert good_report(write(tmp_path, '{"op":"table","seats":6}\n\n')) == {"hands": []}


def test_issue9_item17_card_only_table_needs_no_hand_line(tmp_path: Path) -> None:
    """With "auto_hands" (the daemon's card-only table) cards start the hand."""
    lines = [line for line in CLEAN.read_text().splitlines() if '"hand"' not in line
             and '"act"' not in line]
    lines[0] = '{"op":"table","auto_hands":true}'
    report = good_report(write(tmp_path, "\n".join(lines) + "\n"))
    assert len(report["hands"]) == 1
    assert report["hands"][0]["players"]["4"]["down"] == ["Kd", "Kc", "Kh"]


def test_issue9_item17_readable_summary_never_prints_none(tmp_path: Path) -> None:
    path = write(tmp_path, HAND + '{"op":"place","zone":"seat1.down","card":"As"}\n')
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert main(["replay", str(path)]) == 0
    assert "None" not in out.getvalue()
    assert "bring-in seat -" in out.getvalue()


def test_issue9_item17_json_into_a_closed_pipe_is_quiet(tmp_path: Path) -> None:
    """`replay --json | head -1` printed a BrokenPipeError traceback."""
    hands = "".join(
        line for line in CLEAN.read_text().splitlines(keepends=True) if '"table"' not in line
    )
    path = write(tmp_path, hands * 200)
    with subprocess.Popen(
        [sys.executable, "-m", "table_controller", "replay", str(path), "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    ) as proc:
        assert proc.stdout is not None
        assert proc.stderr is not None
        assert proc.stdout.readline() == b"{\n"
        proc.stdout.close()  # what head does after its line
        err = proc.stderr.read()
        assert proc.wait(timeout=120) == 141  # as a shell shows `cat` killed by SIGPIPE
    assert err == b""


# ------------------------------------------------------------------ item 13: journals

def write_journal(path: Path, script: Path = CLEAN) -> list[bytes]:
    """Journal every op of ``script`` with the real Journal; return the file's lines."""
    path.unlink(missing_ok=True)
    with Journal.open(path, fsync="never") as journal:
        for number, line in enumerate(script.read_text().splitlines()):
            journal.append(json.loads(line), at=1_795_958_400.0 + number)
    return path.read_bytes().splitlines(keepends=True)


def test_issue9_item13_journal_replays_like_its_script_and_says_it_was_checked(
    tmp_path: Path,
) -> None:
    lines = write_journal(tmp_path / "t.jsonl")
    report = good_report(tmp_path / "t.jsonl")
    assert report["hands"] == good_report(CLEAN)["hands"]
    assert report["journal"] == {"records": len(lines), "first_jseq": 1,
                                 "last_jseq": len(lines), "torn_tail": None}
    assert "journal" not in good_report(CLEAN)  # scripts keep the contract's exact shape


def test_issue9_item13_tampered_card_in_a_journal_is_refused(tmp_path: Path) -> None:
    """A card changed in a journal record replayed as if genuine (CRC ignored)."""
    path = tmp_path / "t.jsonl"
    lines = write_journal(path)
    index = next(i for i, line in enumerate(lines) if b'"card":"Kd"' in line)
    lines[index] = lines[index].replace(b'"card":"Kd"', b'"card":"Ad"')
    path.write_bytes(b"".join(lines))
    number, problem = bad_line(path)
    assert (number, problem) == (index + 1, "damaged journal record: crc mismatch")


def test_issue9_item13_deleted_journal_record_is_refused(tmp_path: Path) -> None:
    """A whole record removed (a card's removal hidden) leaves a jseq gap."""
    path = tmp_path / "t.jsonl"
    lines = write_journal(path)
    del lines[5]
    path.write_bytes(b"".join(lines))
    number, problem = bad_line(path)
    assert (number, problem) == (6, "damaged journal record: jseq 7 does not follow 5")
    # ... also on the last line: a crash never skips a number.
    lines = write_journal(path)
    path.write_bytes(b"".join(lines[:-2] + lines[-1:]))
    number, problem = bad_line(path)
    assert number == len(lines) - 1
    assert "does not follow" in problem


def test_issue9_item13_journal_envelope_stripped_from_line_1_is_still_refused(
    tmp_path: Path,
) -> None:
    """Removing line 1's jseq/crc must not turn the rest into an unchecked script."""
    path = tmp_path / "t.jsonl"
    lines = write_journal(path)
    first = json.loads(lines[0])
    lines[0] = (json.dumps({k: v for k, v in first.items() if k not in ("jseq", "crc")})
                + "\n").encode()
    path.write_bytes(b"".join(lines))
    number, problem = bad_line(path)
    assert number == 2
    assert "journal key 'crc' in a table script" in problem


def test_issue9_item13_torn_last_line_is_reported_and_dropped(tmp_path: Path) -> None:
    """What kill -9 leaves (docs/journal.md): exit 0, the torn record not replayed."""
    path = tmp_path / "t.jsonl"
    lines = write_journal(path)
    path.write_bytes(b"".join(lines[:-1]))
    shorter = good_report(path)
    path.write_bytes(b"".join(lines[:-1]) + lines[-1][:-9])
    report = good_report(path)
    assert report["hands"] == shorter["hands"]
    torn = report["journal"]["torn_tail"]
    assert torn["line"] == len(lines)
    assert torn["problem"] == "no newline at the end (an incomplete write)"
    assert report["journal"]["last_jseq"] == len(lines) - 1
    # A bad last line *without* its newline is a torn tail too (docs/journal.md)...
    path.write_bytes(b"".join(lines[:-1]) + lines[-1].replace(b'"op"', b'"oq"')[:-1])
    assert good_report(path)["journal"]["torn_tail"]["line"] == len(lines)
    # ... but the same damage one line earlier is not (nor a complete last line: issue 21).
    path.write_bytes(b"".join(lines[:-2]) + lines[-2].replace(b'"op"', b'"oq"') + lines[-1])
    assert bad_line(path)[0] == len(lines) - 1


def test_issue9_item13_last_record_without_its_newline_is_torn(tmp_path: Path) -> None:
    """Found by the fuzz test: a last record whose JSON and CRC are whole but whose
    newline is missing was replayed; Journal.append writes both at once, so it is torn."""
    path = tmp_path / "t.jsonl"
    lines = write_journal(path)
    path.write_bytes(b"".join(lines)[:-1])
    report = good_report(path)
    assert report["journal"]["torn_tail"] == {
        "line": len(lines), "problem": "no newline at the end (an incomplete write)"}
    assert report["journal"]["last_jseq"] == len(lines) - 1


def test_issue9_item13_a_journal_from_the_daemon_replays(tmp_path: Path) -> None:
    """A card-only journal (the daemon's: table line with auto_hands, empty hand lines)."""
    script = write(tmp_path, '{"op":"table","auto_hands":true}\n{"op":"hand","players":[]}\n'
                   + "".join(line for line in CLEAN.read_text().splitlines(keepends=True)
                             if '"op":"table"' not in line and '"op":"hand"' not in line
                             and '"op":"act"' not in line), "script.jsonl")
    write_journal(tmp_path / "t.jsonl", script)
    report = good_report(tmp_path / "t.jsonl")
    assert report["hands"] == good_report(script)["hands"]
    assert report["hands"][0]["players"]["4"]["down"] == ["Kd", "Kc", "Kh"]


def test_issue9_item15_daemon_refuses_stakes_the_engine_rejects(tmp_path: Path) -> None:
    """bring_in = small_bet passed the config; every cmd/hand then answered internal_error."""
    (tmp_path / "layout.toml").write_text("# layout\n")
    (tmp_path / "deck.toml").write_text("# deck\n")
    config = tmp_path / "table.toml"
    config.write_text('[table]\nid = "t1"\nlayout = "layout.toml"\ndecks = ["deck.toml"]\n'
                      "[stakes]\nante = 1\nbring_in = 5\nsmall_bet = 5\nbig_bet = 10\n"
                      '[journal]\ndirectory = "journal"\n')
    result = subprocess.run(
        [sys.executable, "-m", "table_controller", "run", "--config", str(config)],
        capture_output=True, text=True, check=False, timeout=120,
    )
    assert result.returncode == 2
    assert result.stderr == (f"stud-table run: {config}: stakes.bring_in: must be smaller"
                             " than small_bet (rules 2, 3)\n")


# ------------------------------------------------------------------ item 18: memory

def test_issue9_item18_memory_does_not_grow_with_the_script(tmp_path: Path) -> None:
    """A 100,000-line script held every event (and every hand's engine state) at once.

    Peak traced memory of a 30,000-line hand must stay near that of a 3,000-line one:
    the parser streams and keeps one hand's state (this hand's report is 1 KB).
    """
    def peak(lines: int) -> int:
        body = ('{"op":"place","zone":"seat1.up","card":"As"}\n'
                '{"op":"remove","zone":"seat1.up","card":"As"}\n') * (lines // 2)
        path = write(tmp_path, HAND + body, f"long-{lines}.jsonl")
        tracemalloc.start()
        try:
            replay_path(path)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    small, large = peak(3_000), peak(30_000)
    assert large < small + 256 * 1024, (small, large)


def test_issue9_item13_readable_summary_names_the_journal_check(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    lines = write_journal(path)
    path.write_bytes(b"".join(lines)[:-5])
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert main(["replay", str(path)]) == 0
    text = out.getvalue()
    assert f"journal: {len(lines) - 1} records verified (jseq 1 to {len(lines) - 1})" in text
    assert f"journal: torn last line {len(lines)} dropped" in text


# ------------------------------------------------------- issue 21 items 3 and 8


def test_issue21_item3_complete_last_record_with_a_bad_crc_is_damage(tmp_path: Path) -> None:
    """A newline-terminated last record cannot be torn (one write per line): a wrong CRC
    there is damage to a record that may have been published, exit 2 naming the line."""
    path = tmp_path / "t.jsonl"
    lines = write_journal(path)
    path.write_bytes(b"".join(lines[:-1]) + lines[-1].replace(b'"op"', b'"oq"'))
    assert bad_line(path) == (len(lines), "damaged journal record: crc mismatch")
    index = lines[-1].index(b'"crc":"') + 7
    changed = bytearray(lines[-1])
    changed[index] = ord("0") if changed[index] != ord("0") else ord("1")
    path.write_bytes(b"".join(lines[:-1]) + bytes(changed))
    assert bad_line(path) == (len(lines), "damaged journal record: crc mismatch")


@pytest.mark.parametrize("from_end", [0, 1, 64, 700])
def test_issue21_item3_zero_filled_block_is_damage_naming_the_line(
    tmp_path: Path, from_end: int
) -> None:
    """A 4 kB zero-filled block ending ``from_end`` bytes before the end (the hostile
    tester's case: 64) replayed with exit 0, shown only as a torn tail."""
    path = tmp_path / "t.jsonl"
    ops = [json.loads(line) for line in CLEAN.read_text().splitlines()]
    table, hand = [op for op in ops if op["op"] == "table"], [op for op in ops
                                                              if op["op"] != "table"]
    with Journal.open(path, fsync="never") as journal:  # enough records for a 4 kB hole
        for number, op in enumerate(table + hand * 40):
            journal.append(op, at=1_795_958_400.0 + number)
    data = bytearray(path.read_bytes())
    end = len(data) - from_end
    data[end - 4096:end] = bytes(4096)
    path.write_bytes(bytes(data))
    number = data[: end - 4096].count(b"\n") + 1
    found, problem = bad_line(path)
    assert found == number
    # (zeros to the very end: no newline, but no cut write leaves zeros either)
    assert problem.startswith("damaged journal record: ")


def test_issue21_item8_a_fifo_is_refused_in_one_line_not_waited_for(tmp_path: Path) -> None:
    """``replay`` on a FIFO with no writer hung for ever (open blocks)."""
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    result = replay(fifo, "--json")  # the subprocess timeout (60 s) is the hang guard
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1
    assert f"cannot read {fifo}: not a regular file (a FIFO)" in result.stderr


@pytest.mark.parametrize("target", ["/dev/zero", "/dev/null", "."])
def test_issue21_item8_devices_and_directories_are_refused_in_one_line(target: str) -> None:
    result = replay(Path(target), "--json")
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1
    assert "not a regular file" in result.stderr
