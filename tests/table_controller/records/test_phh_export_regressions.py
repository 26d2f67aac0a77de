"""Issue 9 item 20: ``phh export`` of what the demo's table really records.

* The demo's dealer (like a real one) pushes the winner's cards into the muck
  after a hand won by folds, then scoops the muck off the table. The export took
  the scooped cards as "no longer dealt" and dropped the winner: a heads-up hand
  vanished from the file, a multiway one lost its winner, and PokerKit could not
  read the file (a player with no cards).
* A journal whose last hand was still being dealt was exported as if whole.

PokerKit is the reference: it must read and replay every file we write.
"""

from __future__ import annotations

import random
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from table_controller.demo.dealer import HandPlan, plan_hand
from table_controller.domain.engine.settings import TableSettings
from table_controller.domain.events import HandStarted, TableEvent
from table_controller.handhistory import export_events, read_phh, write_phh, write_phhs
from table_controller.records.journal import Journal
from table_controller.records.script import event_to_op
from table_controller.tools.cli import main

DEMO_TABLE = TableSettings(auto_hands=True)
"""A card-only table like the demo's daemon (hands found from the cards)."""


def recorded(plans: list[HandPlan], *, cut: int | None = None) -> list[TableEvent]:
    """What the daemon journals for ``plans`` dealt in a row: a card-only hand
    start, then every card the dealer moved (the deal, clearing the seats, the
    gathering of the piles). ``cut``: the last hand stops after that many events."""
    events: list[TableEvent] = []
    for index, plan in enumerate(plans):
        moved = [event for motion in plan.all_motions for event in motion.events]
        if cut is not None and index == len(plans) - 1:
            moved = moved[:cut]
        events += [HandStarted((), at=0.0), *moved]
    return events


def fold_won_plan(rng: random.Random, players: int | None = None) -> HandPlan:
    """A random demo hand that ends with every seat but one folded."""
    while True:
        plan = plan_hand(rng, seats=8, fold_chance=0.4, players=players)
        if not plan.showdown:
            return plan


def pokerkit_states(text: str) -> list[Any]:
    """Every state PokerKit goes through replaying PHH ``text`` (folds facing no bet,
    which a card-only export writes, only make it warn)."""
    from pokerkit import HandHistory

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return list(HandHistory.loads(text))


def journal_of(events: list[TableEvent], path: Path) -> Path:
    """Write ``events`` as the daemon's journal would (table record first)."""
    with Journal.open(path, fsync="never") as journal:
        journal.append({"op": "table", **DEMO_TABLE.model_dump(mode="json")}, at=0.0)
        for event in events:
            journal.append(event_to_op(event), at=event.at)
    return path


def test_regression_heads_up_hand_won_by_fold_keeps_its_winner() -> None:
    """Two players, one folds, the winner mucks, the dealer scoops the muck:
    the hand is exported with both players and PokerKit replays it to the end."""
    plan = fold_won_plan(random.Random(11), players=2)
    [winner] = plan.deal.live_seats
    [hand] = export_events(recorded([plan]), DEMO_TABLE)
    assert hand.seats == plan.players
    assert hand.cards_of(winner) == plan.deal.cards[winner]
    final = pokerkit_states(write_phh(hand))[-1]
    assert not final.status  # PokerKit played the hand to its end
    # The winner collects: its stack is the only one that grew.
    grew = [seat for seat, before, after in zip(
        plan.players, final.starting_stacks, final.stacks, strict=True) if after > before]
    assert grew == [winner]


@settings(max_examples=40)
@given(seed=st.integers(0, 2**32 - 1))
def test_regression_every_fold_won_demo_hand_exports_with_its_winner(seed: int) -> None:
    """Any demo hand won by folds (2-8 players) keeps every player dealt in, the
    winner's cards are what it was dealt, and PokerKit replays the file."""
    plan = fold_won_plan(random.Random(seed))
    [hand] = export_events(recorded([plan]), DEMO_TABLE)
    assert hand.seats == plan.players
    for seat in plan.players:
        assert hand.cards_of(seat) == plan.deal.cards[seat][: len(hand.cards_of(seat))]
    [winner] = plan.deal.live_seats
    assert hand.cards_of(winner) == plan.deal.cards[winner]
    assert not hand.unfinished
    pokerkit_states(write_phh(hand))


def test_demo_session_of_mixed_hands_exports_every_hand_pokerkit_reads() -> None:
    """Several demo hands in a row (showdowns and hands won by folds) give one
    PHH table per hand, each read by PokerKit."""
    from pokerkit import HandHistory

    rng = random.Random(2026)
    plans = [plan_hand(rng, seats=8, fold_chance=0.3) for _ in range(12)]
    assert {plan.showdown for plan in plans} == {True, False}
    hands = export_events(recorded(plans), DEMO_TABLE)
    assert [hand.seats for hand in hands] == [plan.players for plan in plans]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for history in HandHistory.loads_all(write_phhs(hands)):
            list(history)


def test_regression_unfinished_last_hand_is_flagged_and_warned(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A journal cut in the middle of its last hand (the daemon still dealing):
    that hand is exported flagged ``_unfinished`` with a warning on stderr; the
    whole hands before it are not."""
    rng = random.Random(7)
    first = plan_hand(rng, seats=8, fold_chance=0.0, players=4)
    last = plan_hand(rng, seats=8, fold_chance=0.0, players=3)
    # 3rd street (9 cards to three seats) and the 4th-street burn and one card.
    path = journal_of(recorded([first, last], cut=11), tmp_path / "demo.journal.jsonl")
    out = tmp_path / "out.phh"
    assert main(["phh", "export", str(path), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "hand 2: unfinished: the recording ends after 4th street" in err
    assert "hand 1: unfinished" not in err
    from pokerkit import HandHistory

    text = out.read_text()
    histories = list(HandHistory.loads_all(text))
    assert len(histories) == 2
    assert [history.user_defined_fields.get("_unfinished") for history in histories] == [
        None, True]


def test_last_hand_dealt_to_its_end_is_not_unfinished(tmp_path: Path) -> None:
    """A last hand dealt through 7th street but not yet cleared is a whole hand
    (the file shows its showdown): no flag."""
    plan = plan_hand(random.Random(3), seats=8, fold_chance=0.0, players=3)
    deal_only = len([e for motion in plan.motions for e in motion.events]) - sum(
        len(motion.events) for motion in plan.motions[-len(plan.players):])
    [hand] = export_events(recorded([plan], cut=deal_only), DEMO_TABLE)
    assert not hand.unfinished
    assert "_unfinished" not in write_phh(hand)
    assert read_phh(write_phh(hand)).seats == plan.players
