"""``stud-table emulate``: the command language (unit), a bad script (exit 2, one line),
and the emulated readers driven by a script and by hand with the real daemon reading
them over the ptys (Mosquitto, ``stud-table run`` subprocess).
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from deck_rig import LAYOUT, RED, WAIT, Command
from hypothesis import given, settings
from hypothesis import strategies as st

from table_controller.domain.cards import Card
from table_controller.domain.zones import Zone
from table_controller.records.journal import read_journal
from table_controller.table.layout import load_layout
from table_controller.testing.broker import MosquittoBroker
from table_controller.tools.cli import main
from table_controller.tools.emulate import Command as EmulatorCommand
from table_controller.tools.emulate import EmulateError, parse_command

TABLE_LAYOUT = load_layout(LAYOUT)
DECKS = ("red", "blue")


def parse(text: str) -> EmulatorCommand | None:
    return parse_command(text, TABLE_LAYOUT, DECKS)


def test_the_command_language() -> None:
    assert parse("place seat3.up Ah") == EmulatorCommand(
        "place", zone=Zone.parse("seat3.up"), card=Card.parse("Ah"))
    assert parse("REMOVE burn 10h blue  # a comment") == EmulatorCommand(
        "remove", zone=Zone.parse("burn"), card=Card.parse("Th"), deck="blue")
    assert parse("tag muck 04a1b2c3") == EmulatorCommand(
        "tag", zone=Zone.parse("muck"), uid="04A1B2C3")
    assert parse("clear") == EmulatorCommand("clear")
    assert parse("offline 2") == EmulatorCommand("offline", reader=2)
    assert parse("wait 0.5") == EmulatorCommand("wait", seconds=0.5)
    assert parse("wait connected") == EmulatorCommand("wait")
    assert parse("   # only a comment") is None
    assert parse("") is None


@pytest.mark.parametrize(("line", "problem"), [
    ("plce seat3.up Ah", "unknown command 'plce'"),
    ("place seat3.up", "place: expected 2 to 3 argument(s), got 1"),
    ("place seat9.up Ah", "unknown zone 'seat9.up'"),
    ("place seat3.up Zz", "bad card code 'Zz'"),
    ("place seat3.up Ah green", "place: no deck 'green' (decks: red, blue)"),
    ("tag burn 12345", "tag: tag UID '12345' is not hex"),
    ("offline 7", "offline: no reader '7' (readers: 1, 2, 3, 4, 10)"),
    ("wait soon", "wait: expected seconds or 'connected', got 'soon'"),
    ("wait 99999", "wait: 99999.0 s is outside 0..3600"),
])
def test_bad_commands_say_why(line: str, problem: str) -> None:
    with pytest.raises(EmulateError) as caught:
        parse(line)
    assert str(caught.value).startswith(problem)


@settings(max_examples=300)
@given(st.text(max_size=60) | st.lists(st.sampled_from(
    ["place", "remove", "tag", "clear", "offline", "wait", "seat3.up", "burn", "Ah", "10h",
     "red", "2", "99", "connected", "-1", "nan", "inf", "04A1B2C3", "#", "show"]),
    max_size=5).map(" ".join))
def test_any_line_parses_or_says_why(line: str) -> None:
    """Whatever is typed, a command or an EmulateError: never another exception."""
    with contextlib.suppress(EmulateError):
        parse(line)


def test_a_bad_script_is_one_line_and_exit_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "deal.txt"
    script.write_text("# deal\nplace seat1.down As\nplace seat2.down Kx\n")
    code = main(["emulate", "--layout", str(LAYOUT), "--dir", str(tmp_path / "dev"),
                 "--deck", str(RED), "--script", str(script)])
    assert code == 2
    assert capsys.readouterr().err == (
        f"stud-table emulate: {script}:3: bad card code 'Kx': expected a rank (2-9 T J Q K A)"
        " then a suit (c d h s)\n")
    assert not (tmp_path / "dev").exists()  # nothing started


def placed_in_journal(journal: Path) -> list[tuple[str, str]]:
    if not journal.exists():
        return []
    return [(record["zone"], record["card"]) for record in read_journal(journal).records
            if record.get("op") == "place"]


def wait_journal(journal: Path, expected: list[tuple[str, str]]) -> None:
    deadline = time.monotonic() + WAIT
    while not set(expected) <= set(placed_in_journal(journal)):
        assert time.monotonic() < deadline, f"journal: {placed_in_journal(journal)}"
        time.sleep(0.05)


def test_emulate_driven_by_a_script_and_by_hand_feeds_the_real_daemon(
        tmp_path: Path, mosquitto: MosquittoBroker) -> None:
    script = tmp_path / "deal.txt"
    script.write_text("wait connected   # until the daemon has opened every reader\n"
                      "place seat1.down As\nplace seat2.down Kd\nplace seat1.up 9c\n")
    emulator = Command(["emulate", "--layout", str(LAYOUT), "--dir", str(tmp_path / "dev"),
                        "--deck", str(RED), "--script", str(script)], tmp_path)
    daemon: subprocess.Popen[bytes] | None = None
    try:
        emulator.wait_for("ready (type 'help')")
        output = "\n".join(emulator.output())
        copy = tmp_path / "dev" / "layout.toml"
        assert f"layout: {copy}" in output
        assert f"reader 10: {tmp_path / 'dev' / 'reader-10'} -> /dev/pts/" in output
        config = tmp_path / "table.toml"
        config.write_text("\n".join([
            "[table]", 'id = "t1"', f'layout = "{copy}"', f'decks = ["{RED}"]',
            "heartbeat_period = 0.5",
            "[stakes]", "ante = 1", "bring_in = 2", "small_bet = 5", "big_bet = 10",
            "[broker]", 'host = "127.0.0.1"', f"port = {mosquitto.port}",
            "[journal]", 'directory = "journal"',
            "[log]", 'format = "console"', 'level = "warning"',
        ]) + "\n")
        with (tmp_path / "daemon.log").open("wb") as log:
            daemon = subprocess.Popen(
                [sys.executable, "-m", "table_controller", "run", "--config", str(config)],
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        seen = emulator.wait_for("ok every reader opened by a host")
        journal = tmp_path / "journal" / "t1.journal.jsonl"
        wait_journal(journal, [("seat1.down", "As"), ("seat2.down", "Kd"), ("seat1.up", "9c")])
        emulator.send("place seat3.up 5h")  # by hand, after the script
        emulator.wait_for("ok place seat3.up 5h", after=seen)
        wait_journal(journal, [("seat3.up", "5h")])
        emulator.send("show")
        emulator.wait_for(lambda line: "seat3.up: 5h(red)" in line, after=seen)
        emulator.send("bogus")
        emulator.wait_for("error: unknown command 'bogus'", after=seen)
        emulator.process.send_signal(signal.SIGTERM)
        assert emulator.finish() == 0
        assert not (tmp_path / "dev" / "reader-10").exists()  # links removed on exit
    finally:
        if daemon is not None:
            daemon.send_signal(signal.SIGTERM)
            daemon.wait(WAIT)
        emulator.kill()
