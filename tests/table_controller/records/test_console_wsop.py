"""The 13 real WSOP Seven Card Stud hands replayed with their betting through the
whole engine (cards and console together) end with exactly their finishing stacks."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from table_controller.domain.engine.dealing import DealingEngine
from table_controller.domain.engine.outputs import ConsoleResult
from table_controller.handhistory import import_hand, read_phh
from table_controller.records.script import parse_script

DATA = Path(__file__).resolve().parents[3] / "tests" / "data" / "phh-wsop-2023-event43"
HANDS = sorted(DATA.glob("stud-hand-*.phh"))


def test_the_wsop_hands_are_there() -> None:
    assert len(HANDS) == 13, f"expected the 13 WSOP stud hands in {DATA}"


@pytest.mark.parametrize("path", HANDS, ids=lambda p: p.stem)
def test_replayed_with_betting_ends_with_the_finishing_stacks(path: Path) -> None:
    phh = tomllib.loads(path.read_text(encoding="utf-8"))
    imported = import_hand(read_phh(path.read_text(encoding="utf-8")))
    script = parse_script(imported.script_lines())
    engine = DealingEngine(script.settings)
    results: list[ConsoleResult] = []
    for _, event in script.events:
        results += [o for o in engine.apply(event) if isinstance(o, ConsoleResult)]
    engine.finish_hand()
    hand = engine.hand
    assert hand is not None
    assert hand.alerts == [], [a.message for a in hand.alerts]
    assert all(r.accepted for r in results), [r for r in results if not r.accepted]
    assert hand.console is not None
    stacks = hand.console.betting.stacks
    finishing = dict(enumerate(phh["finishing_stacks"], start=1))
    assert stacks == finishing
    grew = sorted(
        seat for seat, chips in finishing.items() if chips > phh["starting_stacks"][seat - 1]
    )
    assert hand.winners == grew
