"""The real WSOP Razz and Stud Hi-Lo hands: import, replay, export, PokerKit
(docs/rules.md "Variants").

Data: tests/data/phh-wsop-2023-event43/ (2023 WSOP Event #43 final table, PHH,
published with PokerKit): 10 razz hands (``FR``) and 7 hi-lo hands (``F7S/8``). Each
hand is imported (``phh import``: dealt physically, round by round, burns from unused
cards, act lines between the streets, folds pushed to the muck; unknown ``??`` cards
filled with unused ones that keep the recorded bring-in) and checked:

* the script's ``table`` line says the game, and the replay raises **no alert**;
* the bring-in is the ``pN pb`` player (razz: the highest upcard);
* the seats that win chips are exactly the players whose stack grew, and the
  engine's final stacks are the recorded ``finishing_stacks``;
* stud8 showdowns name the halves (``winners_high``/``winners_low``) as PokerKit
  pays them;
* the hand exported back (``phh export``) keeps its variant, and PokerKit plays the
  exported file to the recorded ``finishing_stacks``.

razz-hand-85 is the exception PokerKit makes itself: the installed PokerKit cannot
play the *original* file ("Unable to repair the hand history": p1 is all-in on 6th
street and the file shows the hands before 7th street is dealt). Its export is
checked against the original's action list instead, and its chips by our engine.
"""

from __future__ import annotations

import json
import random
import warnings
from pathlib import Path
from typing import Any

import pytest

from table_controller.domain.engine.report import hand_report
from table_controller.domain.engine.variants import Game
from table_controller.handhistory import export_script, import_hand, read_phh, write_phh
from table_controller.records.replay import replay_hands
from table_controller.records.script import parse_script

pokerkit = pytest.importorskip("pokerkit")

REPO = Path(__file__).resolve().parents[3]
DATA = REPO / "tests" / "data" / "phh-wsop-2023-event43"
RAZZ = ("20", "21", "22", "23", "24", "25", "26", "83", "84", "85")
HILO = ("48", "49", "50", "51", "52", "53", "54")
POKERKIT_CANNOT_PLAY = {"razz-hand-85.phh"}
"""Files the installed PokerKit refuses as recorded (module docstring)."""
FILES = [f"razz-hand-{n}.phh" for n in RAZZ] + [f"stud-hi-lo-hand-{n}.phh" for n in HILO]


def text_of(name: str) -> str:
    """A file of the WSOP data set (tests/data); fails (never skips) when it is missing."""
    path = DATA / name
    if not path.is_file():
        pytest.fail(f"WSOP PHH data missing: {path.resolve()} (tests/data/ of the repository)")
    return path.read_text(encoding="utf-8")


def pokerkit_final(text: str) -> tuple[Any, Any]:
    """(hand history, final state) of PHH ``text`` as PokerKit plays it."""
    history = pokerkit.HandHistory.loads(text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        states = list(history)
    return history, states[-1]


def pokerkit_halves(state: Any) -> tuple[list[int], list[int]]:
    """Players (1-based) PokerKit paid a high half / a low half."""
    halves: tuple[set[int], set[int]] = (set(), set())
    for op in state.operations:
        if isinstance(op, pokerkit.ChipsPushing) and op.hand_type_index is not None:
            halves[op.hand_type_index].update(
                i + 1 for i, amount in enumerate(op.amounts) if amount > 0)
    return sorted(halves[0]), sorted(halves[1])


def test_data_set_has_the_razz_and_hilo_hands() -> None:
    found = sorted(p.name for p in DATA.glob("*.phh") if not p.name.startswith("stud-hand"))
    assert found == sorted(FILES), "tests/data hands changed"


@pytest.mark.parametrize("name", FILES)
def test_wsop_variant_hand_imports_replays_clean_and_exports_to_the_same_stacks(
    name: str,
) -> None:
    original = text_of(name)
    hand = read_phh(original, fill_unknown=random.Random(0))
    game = Game.RAZZ if name.startswith("razz") else Game.STUD8
    assert hand.game is game
    lines = import_hand(hand).script_lines()
    assert json.loads(lines[0])["game"] == game.value
    script = parse_script(lines)
    assert script.settings.game is game
    [state] = replay_hands(script)
    assert state.alerts == [], [a.message for a in state.alerts]
    assert state.bring_in == hand.bring_in_seat()
    finishing = hand.finishing_stacks
    assert finishing is not None
    grew = [hand.seats[i] for i, (a, b) in enumerate(
        zip(hand.starting_stacks, finishing, strict=True)) if b > a]
    assert sorted(state.winners) == grew
    assert state.console is not None
    assert [state.console.betting.stacks[s] for s in hand.seats] == list(finishing)
    report = hand_report(state)
    if name in POKERKIT_CANNOT_PLAY:
        with pytest.raises(ValueError, match="repair"):
            pokerkit_final(original)
        [exported] = export_script(script)
        assert exported.game is game
        assert read_phh(write_phh(exported)).items == hand.items
        return
    _, recorded = pokerkit_final(original)
    assert list(recorded.stacks) == list(finishing)
    if game is Game.STUD8:
        high, low = pokerkit_halves(recorded)
        if high:  # a showdown PokerKit paid by halves (not a pot won by folds)
            assert report["winners_high"] == [hand.seats[p - 1] for p in high]
            assert report["winners_low"] == [hand.seats[p - 1] for p in low]
    else:
        assert "winners_high" not in report
        assert "winners_low" not in report
    # Export back: the variant and the chips survive, PokerKit agrees.
    [exported] = export_script(script)
    assert exported.game is game
    text = write_phh(exported)
    assert text.startswith(f"variant = \"{'FR' if game is Game.RAZZ else 'F7S/8'}\"")
    _, final = pokerkit_final(text)
    assert list(final.stacks) == list(finishing)


def test_filled_unknown_cards_keep_the_recorded_bring_in() -> None:
    """Regression: stud-hi-lo-hand-53's p5 has three ``??`` cards; a filled deuce up
    card made p5 the low card, so the recorded ``p4 pb`` alerted ``wrong_bring_in``."""
    original = text_of("stud-hi-lo-hand-53.phh")
    for seed in range(20):
        hand = read_phh(original, fill_unknown=random.Random(seed))
        [state] = replay_hands(parse_script(import_hand(hand).script_lines()))
        assert state.bring_in == hand.bring_in_seat() == 4
        assert state.alerts == []


def test_a_raise_capped_at_the_callers_stack_imports_as_the_fixed_raise() -> None:
    """Regression: razz-hand-85 records ``p2 cbr 750000`` on 6th street, a raise capped
    at what p1 has left (the fixed raise is to 1200000); the console refused it as
    ``illegal_bet``. It imports as the fixed raise: the same chips once the uncalled
    part comes back."""
    hand = read_phh(text_of("razz-hand-85.phh"))
    ops = import_hand(hand).ops
    raises = [op for op in ops if op["op"] == "act" and op["action"] == "raise"]
    assert {"op": "act", "seat": 2, "action": "raise"} in [
        {k: v for k, v in op.items() if k != "at"} for op in raises]
    [state] = replay_hands(parse_script(import_hand(hand).script_lines()))
    assert state.alerts == []
    assert state.console is not None
    assert state.console.betting.stacks == {1: 0, 2: 29700000}
