"""PHH import and export (table_controller.handhistory), checked against PokerKit.

Data: tests/data/phh-wsop-2023-event43/ (13 Seven Card Stud hands of the 2023
WSOP Event #43 final table, PHH, published with PokerKit). PokerKit is the
reference for what a PHH file means: it must read every file we write and replay
it, and for the WSOP hands reach the recorded ``finishing_stacks``.
"""

from __future__ import annotations

import random
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from table_controller.domain.cards import Card
from table_controller.domain.engine.dealing import SeatStatus
from table_controller.domain.engine.settings import RuleProfile, TableSettings
from table_controller.domain.events import ConsoleAction, HandStarted, TableEvent
from table_controller.handhistory import (
    PhhError,
    StudHand,
    export_events,
    export_script,
    import_hand,
    read_phh,
    write_phh,
    write_phhs,
)
from table_controller.records.journal import Journal
from table_controller.records.replay import replay_hands
from table_controller.records.script import event_to_op, parse_script
from table_controller.simulation import deal_random
from table_controller.tools.cli import main

REPO = Path(__file__).resolve().parents[3]
DATA = REPO / "tests" / "data" / "phh-wsop-2023-event43"
HANDS = ("05", "06", "07", "08", "09", "10", "11", "69", "71", "72", "73", "74", "75")


def data_file(name: str) -> Path:
    """A file of the WSOP data set (tests/data); fails (never skips) when it is missing."""
    path = DATA / name
    if not path.is_file():
        pytest.fail(f"WSOP PHH data missing: {path.resolve()} (tests/data/ of the repository)")
    return path


def wsop(name: str) -> str:
    return data_file(f"stud-hand-{name}.phh").read_text(encoding="utf-8")


def pokerkit_replay(text: str) -> tuple[Any, Any]:
    """(hand history, final state) of PHH ``text`` as PokerKit replays it.

    PokerKit warns (UserWarning) on a fold facing no bet, which a card-only
    export may contain; pytest turns warnings into errors, so they are
    recorded here and returned through the state's ``_warnings`` attribute.
    """
    from pokerkit import HandHistory

    history = HandHistory.loads(text)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        states = list(history)
    final = states[-1]
    final_warnings = [str(w.message) for w in caught]
    return history, (final, final_warnings)


def dealt_by_pokerkit(state: Any) -> dict[int, list[tuple[str, bool]]]:
    """player index -> (card code, face up) of every hole card PokerKit dealt, in order."""
    from pokerkit import HoleDealing

    out: dict[int, list[tuple[str, bool]]] = {}
    for op in state.operations:
        if isinstance(op, HoleDealing):
            out.setdefault(op.player_index, []).extend(
                (repr(card), up) for card, up in zip(op.cards, op.statuses, strict=True)
            )
    return out


FACES = (False, False, True, True, True, True, False)
"""Stud faces, card by card: down, down, up x4, down."""


def expected_dealing(cards: tuple[Card, ...]) -> list[tuple[str, bool]]:
    return [(card.code, FACES[i]) for i, card in enumerate(cards)]


def stack_grew(text: str) -> list[int]:
    from pokerkit import HandHistory

    history = HandHistory.loads(text)
    return [i + 1 for i, (a, b) in enumerate(
        zip(history.starting_stacks, history.finishing_stacks, strict=True)) if b > a]


# ----------------------------------------------------------------- import


def test_data_set_has_the_thirteen_stud_hands_all_cards_known() -> None:
    found = sorted(p.name for p in DATA.glob("stud-hand-*.phh")) if DATA.is_dir() else []
    assert found == [f"stud-hand-{n}.phh" for n in HANDS], "tests/data hands changed"
    for name in HANDS:
        assert "??" not in wsop(name)


@pytest.mark.parametrize("name", HANDS)
def test_wsop_hand_imports_and_replays_clean(name: str) -> None:
    text = wsop(name)
    hand = read_phh(text)
    imported = import_hand(hand)
    script = parse_script(imported.script_lines())
    [state] = replay_hands(script)
    assert state.alerts == [], [a.message for a in state.alerts]
    assert state.bring_in == hand.bring_in_seat()
    assert sorted(state.winners) == stack_grew(text)
    folds = hand.folds()
    for seat in hand.seats:
        got = state.seats[seat]
        assert got.status is (SeatStatus.FOLDED if seat in folds else SeatStatus.ACTIVE)
        if seat not in folds:
            assert tuple(got.all_cards) == hand.cards_of(seat)
    # Settings and stacks: stacks behind are the PHH stacks less the ante.
    assert script.settings.ante == hand.antes[0]
    assert script.settings.bring_in == hand.bring_in
    assert (script.settings.small_bet, script.settings.big_bet) == (hand.small_bet, hand.big_bet)
    first = script.events[0][1]
    assert getattr(first, "stacks", None) == {
        s: c - hand.antes[0] for s, c in zip(hand.seats, hand.starting_stacks, strict=True)
    }


@pytest.mark.parametrize("name", HANDS)
def test_act_lines_sit_between_the_streets_and_each_fold_is_followed_by_its_muck(
    name: str,
) -> None:
    hand = read_phh(wsop(name))
    ops = import_hand(hand).ops
    acts = [op for op in ops if op["op"] == "act"]
    bets = [b for b in hand.bets if b.verb != "sm"]
    assert [a["seat"] for a in acts] == [b.seat for b in bets]
    verbs = {"pb": {"bring_in"}, "cbr": {"complete", "bet", "raise"}, "cc": {"call", "check"},
             "f": {"fold"}}
    for act, bet in zip(acts, bets, strict=True):
        assert act["action"] in verbs[bet.verb]
        if bet.verb == "cbr":
            assert act["amount"] == bet.amount
    assert sum(1 for a in acts if a["action"] == "complete") <= 1
    for index, op in enumerate(ops):
        if op["op"] == "act" and op["action"] == "fold":
            seat = op["seat"]
            count = len(list(hand.cards_of(seat))[: _cards_before_fold(ops, index, seat)])
            moves = ops[index + 1: index + 1 + 2 * count]
            assert [m["op"] for m in moves] == ["remove", "place"] * count
            assert all(m["zone"] == "muck" for m in moves[1::2])
            assert all(m["zone"].startswith(f"seat{seat}.") for m in moves[0::2])
    # Times grow along the script, so --mqtt can pace an imported hand.
    ats = [op["at"] for op in ops]
    assert ats == sorted(ats)


def _cards_before_fold(ops: tuple[dict[str, Any], ...], index: int, seat: int) -> int:
    return sum(
        1 for op in ops[:index]
        if op["op"] == "place" and op["zone"].startswith(f"seat{seat}.")
    )


def test_import_with_burn_before_third_and_other_seeds_stays_clean() -> None:
    hand = read_phh(wsop("69"))
    rules = RuleProfile(burn_before_third=True)
    for seed in range(4):
        imported = import_hand(hand, rules=rules, rng=random.Random(seed))
        script = parse_script(imported.script_lines())
        assert script.settings.rules.burn_before_third
        [state] = replay_hands(script)
        assert state.alerts == []
        burns = {c for cards in imported.deal.burns.values() for c in cards}
        dealt = {c for seat in hand.seats for c in hand.cards_of(seat)}
        assert burns
        assert not burns & dealt


# ---------------------------------------------------------------- export


@pytest.mark.parametrize("name", HANDS)
def test_reexport_replays_in_pokerkit_to_the_recorded_finishing_stacks(name: str) -> None:
    original = wsop(name)
    script = parse_script(import_hand(read_phh(original)).script_lines())
    [exported] = export_script(script)
    assert exported.betting_known
    assert exported.stacks_known
    text = write_phh(exported)
    history, (final, warned) = pokerkit_replay(text)
    original_history, _ = pokerkit_replay(original)
    assert warned == []
    assert list(final.stacks) == list(original_history.finishing_stacks)
    assert history.starting_stacks == original_history.starting_stacks
    assert "_betting" not in text


@pytest.mark.parametrize("name", HANDS)
def test_round_trip_import_export_import_gives_the_same_deal(name: str) -> None:
    first = read_phh(wsop(name))
    imported = import_hand(first)
    [exported] = export_script(parse_script(imported.script_lines()))
    again = read_phh(write_phh(exported))
    assert again.seats == first.seats
    assert again.streets() == first.streets()
    assert again.folds() == first.folds()
    assert [b for b in again.bets if b.verb != "sm"] == [b for b in first.bets if b.verb != "sm"]
    assert again.starting_stacks == first.starting_stacks
    # Same burns (same seed) and same act lines: the very same script.
    assert import_hand(again).script_lines() == imported.script_lines()


@pytest.mark.parametrize("name", HANDS)
def test_card_only_export_keeps_the_deal_and_pokerkit_loads_it(name: str) -> None:
    hand = read_phh(wsop(name))
    script = parse_script(import_hand(hand).script_lines())
    events = [e for _, e in script.events if not isinstance(e, ConsoleAction)]
    [exported] = export_events(events, script.settings)
    assert not exported.betting_known
    text = write_phh(exported)
    assert '_betting = "unknown"' in text
    assert "finishing_stacks" not in text
    back = read_phh(text)
    assert back.streets() == hand.streets()
    assert set(back.folds()) == set(hand.folds())
    _, (final, _warned) = pokerkit_replay(text)
    # PokerKit dealt every card to the seat we did, with the stud faces.
    dealt = dealt_by_pokerkit(final)
    for index, seat in enumerate(hand.seats):
        assert dealt[index] == expected_dealing(hand.cards_of(seat))


def test_several_hands_export_as_phhs_tables_pokerkit_reads() -> None:
    from pokerkit import HandHistory

    lines: list[str] = []
    for n, name in enumerate(("05", "69")):
        script_lines = import_hand(read_phh(wsop(name))).script_lines()
        lines += script_lines[1:] if n else script_lines
    # Different stakes cannot share one table line: the second hand runs at the first's
    # stakes, which is all a journal has anyway. Betting amounts stay as recorded.
    hands = export_script(parse_script(lines))
    assert [h.hand for h in hands] == [5, 69]
    text = write_phhs(hands)
    loaded = list(HandHistory.loads_all(text))
    assert len(loaded) == 2
    assert loaded[0].actions == HandHistory.loads(write_phh(hands[0])).actions


# -------------------------------------------------- card-only journals, random


def journal_of(events: list[TableEvent], path: Path, table: TableSettings) -> Path:
    """Write ``events`` as a daemon journal would (table record first)."""
    with Journal.open(path, fsync="never") as journal:
        journal.append({"op": "table", **table.model_dump(mode="json")}, at=0.0)
        for event in events:
            journal.append(event_to_op(event), at=event.at)
    return path


@settings(max_examples=150)
@given(seed=st.integers(0, 2**32 - 1), players=st.integers(2, 8),
       fold_chance=st.sampled_from([0.0, 0.1, 0.3]))
def test_random_card_only_deal_exports_to_phh_pokerkit_replays(
    seed: int, players: int, fold_chance: float
) -> None:
    rng = random.Random(seed)
    seats = sorted(rng.sample(range(1, 9), players))
    deal = deal_random(seats, rng, fold_chance=fold_chance)
    [exported] = export_events(list(deal.events), TableSettings())
    text = write_phh(exported)
    back = read_phh(text)
    assert back.seats == tuple(seats)
    # With a community card the file stops before 7th street (and its folds).
    last = 6 if deal.community is not None else 7
    assert back.folds() == {s: st for s, st in deal.folds.items() if st <= last}
    for seat in seats:
        assert back.cards_of(seat) == deal.cards[seat]
    _, (final, _warned) = pokerkit_replay(text)
    dealt = dealt_by_pokerkit(final)
    for index, seat in enumerate(seats):
        ours = expected_dealing(deal.cards[seat])
        assert dealt.get(index, [])[: len(ours)] == ours
    if deal.community is not None:
        # PokerKit has no stud board card: the file stops before 7th street.
        assert f'_community_card = "{deal.community.code}"' in text
        assert all(len(deal.cards[seat]) == 6 for seat in deal.live_seats)


def test_simulated_journal_exports_with_placeholder_stacks(tmp_path: Path) -> None:
    deal = deal_random([1, 2, 4, 6, 7], random.Random(5), fold_chance=0.2)
    path = journal_of(list(deal.events), tmp_path / "t.journal.jsonl", TableSettings())
    assert main(["phh", "export", str(path), "-o", str(tmp_path / "out.phh")]) == 0
    text = (tmp_path / "out.phh").read_text()
    assert '_stacks = "unknown"' in text
    _, (final, _warned) = pokerkit_replay(text)
    assert not final.status or final.street is not None


# ------------------------------------------------------- unknown cards, errors


UNKNOWN_HAND = """
variant = 'F7S'
antes = [1, 1, 1]
bring_in = 2
small_bet = 5
big_bet = 10
starting_stacks = [100, 100, 100]
actions = ['d dh p1 ????4d', 'd dh p2 Kd3h5c', 'd dh p3 As8d9c', 'p1 pb', 'p2 cc', 'p3 cc',
  'd dh p2 6d', 'd dh p3 Qs', 'd dh p1 7d', 'p3 cc', 'p1 cc', 'p2 f',
  'd dh p1 8h', 'd dh p3 2s', 'p3 cc', 'p1 cc', 'd dh p1 Jd', 'd dh p3 Jc', 'p3 cc', 'p1 cc',
  'd dh p1 ??', 'd dh p3 3c', 'p3 cc', 'p1 cc', 'p1 sm AhAc4d7d8hJdTs', 'p3 sm']
"""


def test_unknown_cards_are_refused_unless_filled() -> None:
    with pytest.raises(PhhError, match=r"unknown cards \(\?\?\)"):
        read_phh(UNKNOWN_HAND)
    hand = read_phh(UNKNOWN_HAND, fill_unknown=random.Random(1))
    # p1 showed its cards: they fill its unknowns; nothing needed inventing.
    assert hand.cards_of(1)[:2] == (Card.parse("Ah"), Card.parse("Ac"))
    assert hand.cards_of(1)[6] == Card.parse("Ts")
    assert hand.filled == ()
    [state] = replay_hands(parse_script(import_hand(hand).script_lines()))
    assert state.alerts == []


def test_unknown_cards_nobody_showed_are_filled_with_unused_cards_and_listed() -> None:
    text = UNKNOWN_HAND.replace("'p1 sm AhAc4d7d8hJdTs'", "'p1 sm'")
    hand = read_phh(text, fill_unknown=random.Random(2))
    assert len(hand.filled) == 3
    everything = [c for seat in hand.seats for c in hand.cards_of(seat)]
    assert len(set(everything)) == len(everything)
    assert set(hand.filled) <= set(everything)
    exported = write_phh(hand)
    assert "_filled_cards = " in exported
    [state] = replay_hands(parse_script(import_hand(hand).script_lines()))
    assert state.alerts == []


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("variant = 'NT'\n", "'NT' is not supported: only 'F7S'"),
        ("not toml [", "bad TOML"),
        (UNKNOWN_HAND.replace("'p2 f'", "'p9 f'"), "unknown player 'p9'"),
        (UNKNOWN_HAND.replace("'p2 f'", "'p2 xyz'"), "not a Seven Card Stud action"),
        (UNKNOWN_HAND.replace("'d dh p2 6d'", "'d dh p2 6d7d'"), "one card per player"),
        (UNKNOWN_HAND.replace("Kd3h5c", "Kd3hQs"), "dealt twice"),
        (UNKNOWN_HAND.replace("[100, 100, 100]", "[100]").replace("[1, 1, 1]", "[1]"),
         "2 to 8 players"),
    ],
)
def test_malformed_phh_is_one_readable_error(text: str, message: str) -> None:
    with pytest.raises(PhhError, match=message.replace("(", r"\(").replace("?", r"\?")):
        read_phh(text, fill_unknown=random.Random(0))


def test_other_variant_is_refused_by_name() -> None:
    # Razz (FR) and Stud Hi-Lo (F7S/8) import (test_variants_wsop.py); hold'em does not.
    text = data_file("stud-hi-lo-hand-48.phh").read_text().replace("'F7S/8'", "'FT'")
    with pytest.raises(PhhError, match="'FT' is not supported"):
        read_phh(text)


def test_stud_hand_model_player_numbers_follow_seats() -> None:
    hand = StudHand(seats=(2, 5, 7), antes=(1, 1, 1), bring_in=2, small_bet=5, big_bet=10,
                    starting_stacks=(9, 9, 9), items=())
    assert [hand.player(s) for s in (2, 5, 7)] == [1, 2, 3]


# ------------------------------------------------------------------- CLI


def test_cli_import_then_export(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "h.jsonl"
    source = data_file("stud-hand-73.phh")
    assert main(["phh", "import", str(source), "-o", str(script)]) == 0
    assert main(["replay", str(script), "--json"]) == 0
    capsys.readouterr()
    assert main(["phh", "export", str(script), "--hand", "73"]) == 0
    text = capsys.readouterr().out
    _, (final, _) = pokerkit_replay(text)
    assert list(final.stacks) == list(pokerkit_replay(source.read_text())[0].finishing_stacks)
    assert main(["phh", "export", str(script), "--hand", "4"]) == 2
    assert capsys.readouterr().err.strip() == f"stud-table phh export: {script}: no hand number 4"


def test_cli_import_refuses_other_variants_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / "nt.phh"
    path.write_text(data_file("razz-hand-20.phh").read_text().replace("'FR'", "'NT'"))
    assert main(["phh", "import", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "'NT' is not supported: only 'F7S'" in err


def test_cli_import_stdout_and_fill_unknown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "u.phh"
    path.write_text(UNKNOWN_HAND.replace("'p1 sm AhAc4d7d8hJdTs'", "'p1 sm'"))
    assert main(["phh", "import", str(path)]) == 2
    assert "--fill-unknown" in capsys.readouterr().err
    assert main(["phh", "import", str(path), "--fill-unknown", "--seed", "3"]) == 0
    out = capsys.readouterr()
    assert "3 unknown cards dealt as" in out.err
    assert parse_script(out.out.splitlines()).settings.small_bet == 5


def test_cards_gathered_after_the_hand_still_count_as_dealt() -> None:
    """Regression: a card-only table's last seat standing has its cards gathered into
    the muck one by one; the export must keep what it was dealt."""
    from table_controller.domain.events import CardPlaced, CardRemoved
    from table_controller.domain.zones import MUCK, Zone

    deal = deal_random([2, 3, 5, 8], random.Random(7), fold_chance=0.25)
    gathered: list[TableEvent] = []
    for seat in deal.live_seats:
        for zone, cards in ((Zone.down(seat), deal.down(seat)), (Zone.up(seat), deal.up(seat))):
            for card in cards:
                gathered += [CardRemoved(zone, card), CardPlaced(MUCK, card)]
    events = [e for e in deal.events if not isinstance(e, HandStarted)] + gathered
    [exported] = export_events(events, TableSettings(auto_hands=True))
    for seat in deal.seats:
        assert exported.cards_of(seat) == deal.cards[seat]
    assert set(exported.folds()) == set(deal.folds)
