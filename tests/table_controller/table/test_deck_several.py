"""Several decks per table (issue 13): the daemon's config names several deck files
(decks are swapped during a session); two decks sharing a tag, or a deck file with a
duplicate or malformed UID, is a start error: one line ``file: key: problem`` on
stderr naming the decks and the faces (never the UID), exit 2. Run as the real
``stud-table run`` subprocess.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from table_controller.daemon.config import load_config
from table_controller.domain.cards import Card
from table_controller.simulation.session import table_config_toml
from table_controller.table.deck import load_decks
from table_controller.tools.cli import main

ROOT = Path(__file__).resolve().parents[3]
LAYOUT = ROOT / "hardware" / "layouts" / "table-8.toml"
RED = ROOT / "hardware" / "decks" / "example-deck.toml"
BLUE = ROOT / "hardware" / "decks" / "example-deck-blue.toml"
REGISTRY = load_decks([RED, BLUE])
RED_KD = REGISTRY.uid_for(Card.parse("Kd"), "red")
BLUE_7H = REGISTRY.uid_for(Card.parse("7h"), "blue")


def write_config(tmp_path: Path, decks: list[Path]) -> Path:
    config = tmp_path / "table.toml"
    # port 1 is never reached: the decks are refused first
    config.write_text(
        table_config_toml(
            table_id="t1", layout=str(LAYOUT), decks=[str(deck) for deck in decks], port=1
        )
    )
    return config


def run_daemon(config: Path) -> tuple[int, str, str]:
    """Exit code, the one error line, and everything the daemon wrote (its info log
    lines, "deck loaded", come before the error)."""
    result = subprocess.run(
        [sys.executable, "-m", "table_controller", "run", "--config", str(config)],
        capture_output=True, text=True, timeout=120, check=False)
    errors = [line for line in result.stderr.splitlines()
              if line.startswith("stud-table run:")]
    assert len(errors) == 1, result.stderr
    return result.returncode, errors[0] + "\n", result.stdout + result.stderr


def test_a_config_names_several_decks(tmp_path: Path) -> None:
    config = load_config(write_config(tmp_path, [RED, BLUE]))
    registry = load_decks(config.table.decks)
    assert registry.decks == ("red", "blue")
    assert registry.lookup(RED_KD) == (Card.parse("Kd"), "red")
    assert registry.lookup(BLUE_7H) == (Card.parse("7h"), "blue")


def test_two_decks_sharing_a_tag_stop_the_daemon_with_one_line(tmp_path: Path) -> None:
    """The blue deck's 7h was glued with the red Kd's tag: both decks and both faces
    are named, the UID is not."""
    shared = tmp_path / "blue.toml"
    shared.write_text(BLUE.read_text().replace(BLUE_7H, RED_KD))
    code, error, everything = run_daemon(write_config(tmp_path, [RED, shared]))
    assert code == 2
    assert error == (
        f"stud-table run: {shared}: cards.7h: deck 'blue' shares this card's tag with"
        f" cards.Kd of deck 'red' ({RED}): a tag can be in one deck only\n")
    assert RED_KD not in everything
    assert not (tmp_path / "journal").exists()  # refused before anything was created


@pytest.mark.parametrize(("change", "problem"), [
    ("duplicate", "cards.Kd: same UID as cards.7h"),
    ("malformed", "cards.7h: UID has a non-hex character at position 3"),
    ("short", "cards.7h: UID must be 4, 7, 8 or 10 bytes (8, 14, 16 or 20 hex digits),"
              " got 12 digits"),
])
def test_a_deck_file_with_a_bad_uid_stops_the_daemon_with_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], change: str, problem: str) -> None:
    """The same start as the subprocess above, in this process (quicker)."""
    blue_kd = REGISTRY.uid_for(Card.parse("Kd"), "blue")
    text = BLUE.read_text()
    if change == "duplicate":
        text = text.replace(blue_kd, BLUE_7H)
    elif change == "malformed":
        text = text.replace(BLUE_7H, BLUE_7H[:2] + "Z" + BLUE_7H[3:])
    else:
        text = text.replace(BLUE_7H, BLUE_7H[:12])
    bad = tmp_path / "blue.toml"
    bad.write_text(text)
    code = main(["run", "--config", str(write_config(tmp_path, [RED, bad]))])
    captured = capsys.readouterr()
    errors = [line for line in captured.err.splitlines() if line.startswith("stud-table run:")]
    assert code == 2
    assert errors == [f"stud-table run: {bad}: {problem}"]
    assert BLUE_7H[:8] not in captured.out + captured.err
