"""Razz and Stud Hi-Lo in the rules engine (docs/rules.md "Variants"), rule by rule.

The variant table (engine/variants.py) against hand-made deals: razz brings in the
highest upcard (king high, ace low, ties to spades), opens later streets with the
lowest hand showing (pairs count against, ties by position), has no open pair
(rule 4) and awards the best ace-to-five low; stud8 brings in and opens as stud,
keeps rule 4, and splits every pot between the best high and the best qualifying
low (odd chip to the high half, no low: the high hand scoops, each pot on its
own). The report has ``winners_high``/``winners_low`` in stud8 only.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from stud_script import Table, codes

from table_controller.domain.cards import Card, parse_cards
from table_controller.domain.engine.dealing import DealingEngine
from table_controller.domain.engine.outputs import ConsoleResult
from table_controller.domain.engine.pots import Pot, award_pots
from table_controller.domain.engine.settings import TableSettings
from table_controller.domain.engine.variants import (
    VARIANTS,
    Game,
    Showdown,
    bring_in_of,
    describe_hand,
    showing_key,
    variant,
)
from table_controller.domain.events import ConsoleAction
from table_controller.domain.hands import HandValue, best_low, evaluate, low_score
from table_controller.records.script import parse_script

RAZZ, STUD, STUD8 = variant("razz"), variant("stud"), variant("stud8")


def cards(text: str) -> list[Card]:
    return list(parse_cards(text.replace(" ", "")))


# ------------------------------------------------------------ the variant table


def test_every_game_has_its_variant_and_phh_code() -> None:
    assert set(VARIANTS) == set(Game)
    assert [(v.game.value, v.phh, v.bring_in_highest, v.first_to_act_low, v.open_pair_rule,
             v.showdown) for v in VARIANTS.values()] == [
        ("stud", "F7S", False, False, True, Showdown.HIGH),
        ("razz", "FR", True, True, False, Showdown.LOW_A5),
        ("stud8", "F7S/8", False, False, True, Showdown.HIGH_LOW8),
    ]
    with pytest.raises(ValueError, match="omaha"):
        variant("omaha")


# ----------------------------------------------------------------- bring-in


@pytest.mark.parametrize(
    ("ups", "tiebreak", "expected"),
    [
        ({2: "3d", 4: "2c", 5: "Qs"}, "suit", 5),  # the highest card
        ({2: "Kh", 4: "Qs", 5: "7c"}, "suit", 2),  # the king is the highest
        ({2: "As", 4: "2c", 5: "3h"}, "suit", 5),  # the ace is the lowest
        ({2: "Kh", 4: "Ks", 5: "5c"}, "suit", 4),  # tie: the highest suit (spades)
        ({2: "Kh", 4: "Ks", 5: "5c"}, "position", 2),  # tie by position
        ({2: "Ac", 4: "Ad", 5: "Ah"}, "suit", 5),  # aces tie low: hearts above diamonds
    ],
)
def test_razz_bring_in_is_the_highest_upcard(
    ups: dict[int, str], tiebreak: str, expected: int
) -> None:
    cards_by_seat = {seat: Card.parse(code) for seat, code in ups.items()}
    assert bring_in_of(RAZZ, cards_by_seat, [2, 4, 5], tiebreak) == expected  # type: ignore[arg-type]


def test_stud8_bring_in_is_the_lowest_upcard_like_stud() -> None:
    ups = {2: Card.parse("3d"), 4: Card.parse("2c"), 5: Card.parse("Qs")}
    assert bring_in_of(STUD8, ups, [2, 4, 5], "suit") == bring_in_of(STUD, ups, [2, 4, 5],
                                                                     "suit") == 4


def _third(game: str, ups: dict[int, str]) -> Table:
    downs = iter(cards("9c 9d 9h 9s Tc Td"))
    t = Table([2, 4, 5], game=game)
    t.round("down", {s: next(downs).code for s in (2, 4, 5)})
    t.round("down", {s: next(downs).code for s in (2, 4, 5)})
    return t.round("up", ups)


def test_razz_script_names_the_highest_upcard_as_bring_in() -> None:
    t = _third("razz", {2: "3d", 4: "2c", 5: "Qs"})
    report = t.report()
    assert report["bring_in"] == 5
    assert codes(report) == []
    assert _third("stud", {2: "3d", 4: "2c", 5: "Qs"}).report()["bring_in"] == 4
    engine = t.engine()
    assert engine.hand is not None


def test_razz_bring_in_announcement_says_high_card() -> None:
    engine = DealingEngine(TableSettings(game=Game.RAZZ))
    script = parse_script(_third("razz", {2: "3d", 4: "2c", 5: "Qs"}).text().splitlines())
    texts = [o.text for _, e in script.events for o in engine.apply(e)
             if getattr(o, "text", None)]
    assert "High card: seat 5, queen of spades, brings it in." in texts


# ------------------------------------------------------------- first to act


@pytest.mark.parametrize(
    ("boards", "expected"),
    [
        ({2: "3d 4d", 4: "2c Ks", 5: "Qs Js"}, 2),  # 4-3 is the lowest
        ({2: "3d 3h", 4: "2c Ks", 5: "Qs Js"}, 5),  # a pair counts against; Q-J < K-2
        ({2: "3d 4d", 4: "4c 3c", 5: "Qs Js"}, 2),  # a tie: position
        ({2: "Ad 2d", 4: "2c 3c", 5: "Qs Js"}, 2),  # the ace is low
        ({2: "7d 2d 3h 4h", 4: "6c 5c 4c 3c", 5: "Qs Js Ts 9s"}, 4),  # 6-5-4-3 < 7-4-3-2
    ],
)
def test_razz_first_to_act_is_the_lowest_board(boards: dict[int, str], expected: int) -> None:
    keys = {seat: showing_key(RAZZ, cards(board)) for seat, board in boards.items()}
    assert max(sorted(keys), key=keys.__getitem__) == expected


def test_razz_hand_reports_the_lowest_board_first_and_stud8_the_highest() -> None:
    ups = {2: "3d", 4: "2c", 5: "Qs"}
    for game, first in (("razz", 2), ("stud8", 4), ("stud", 4)):
        t = _third(game, ups).burn("8c").round("up", {2: "4d", 4: "Ks", 5: "Js"})
        report = t.report()
        assert report["first_to_act"] == {"4": first}, game
        assert codes(report) == []


# ------------------------------------------------------------------ open pair


def _pair_on_fourth(game: str) -> DealingEngine:
    t = _third(game, {2: "3d", 4: "2c", 5: "Qs"})
    t.act(5 if game == "razz" else 4, "bring_in")
    order = [2, 4] if game == "razz" else [5, 2]
    for seat in order:
        t.act(seat, "call")
    t.burn("8c").round("up", {2: "4d", 4: "2s", 5: "Js"})  # seat 4 shows a pair of deuces
    return t.engine()


def test_razz_has_no_open_pair_rule() -> None:
    """Rule 4 does not apply in razz: with a pair showing on 4th street the bet is
    still the small bet (docs/rules.md "Variants")."""
    engine = _pair_on_fourth("razz")
    hand = engine.hand
    assert hand is not None
    assert hand.console is not None
    opener = hand.first_to_act[4]
    out = engine.apply(ConsoleAction(opener, "bet", 10))
    assert [o.code for o in out if isinstance(o, ConsoleResult)] == ["illegal_bet"]
    assert [a.code.value for a in hand.alerts] == ["illegal_bet"]
    assert hand.console.betting.bets[opener] == 0
    engine.apply(ConsoleAction(opener, "bet", 5))
    assert hand.console.betting.bets[opener] == 5


@pytest.mark.parametrize("game", ["stud", "stud8"])
def test_stud_and_stud8_keep_the_open_pair_big_bet(game: str) -> None:
    engine = _pair_on_fourth(game)
    hand = engine.hand
    assert hand is not None
    assert hand.console is not None
    opener = hand.first_to_act[4]
    engine.apply(ConsoleAction(opener, "bet", 10))
    assert hand.console.betting.bets[opener] == 10
    assert hand.alerts == []


# ------------------------------------------------------------------ showdown


# Seat 2: kings full (no low); seat 4: 6-4-3-2-A low, pair of tens high; seat 5: sevens.
STUD8_HAND = {
    2: "Kd Kc Ks 9d 9c Qh Jh",
    4: "Ah 2h 3c 4s 6d Td Tc",
    5: "7s 7c Qs Jc 8s 5h 9h",
}
BURNS = {4: "2c", 5: "2d", 6: "3d", 7: "3h"}


def _play_checked(game: str, hands: dict[int, str], stacks: int = 100) -> DealingEngine:
    """Deal ``hands`` (seats 2, 4, 5) to showdown; the bring-in is called, then all check."""
    engine = DealingEngine(TableSettings(game=Game(game)))
    t = Table([2, 4, 5], stacks=dict.fromkeys((2, 4, 5), stacks - 1))
    per_seat = {seat: cards(text) for seat, text in hands.items()}
    for number in range(7):
        if number >= 3:
            t.burn(BURNS[number + 1])
        face = "up" if 2 <= number <= 5 else "down"
        t.round(face, {seat: per_seat[seat][number].code for seat in per_seat})
    for _, event in parse_script(t.text().splitlines()).events:
        engine.apply(event)
        _bet_if_due(engine)
    engine.finish_hand()
    return engine


def _bet_if_due(engine: DealingEngine) -> None:
    """Play an open betting round: the bring-in, then calls and checks."""
    hand = engine.hand
    if hand is None or hand.bring_in is None:
        return
    if hand.console is None:
        engine.apply(ConsoleAction(hand.bring_in, "bring_in"))
    assert hand.console is not None
    betting = hand.console.betting
    while betting.street is not None and not betting.round_complete and not betting.hand_over:
        seat = betting.to_act
        assert seat is not None
        if max(betting.bets.values()) > betting.bets[seat]:
            engine.apply(ConsoleAction(seat, "call"))
        else:
            engine.apply(ConsoleAction(seat, "check"))


def test_stud8_splits_the_pot_odd_chip_to_the_high_half() -> None:
    engine = _play_checked("stud8", STUD8_HAND)
    hand = engine.hand
    assert hand is not None
    assert hand.console is not None
    assert hand.alerts == []
    # Pot: three antes and three bring-ins of 2 = 9; high 5 (the odd chip), low 4.
    assert hand.console.betting.stacks == {2: 99 - 2 + 5, 4: 99 - 2 + 4, 5: 97}
    assert (hand.winners, hand.winners_high, hand.winners_low) == ([2, 4], [2], [4])


def test_stud8_without_a_low_the_high_hand_scoops() -> None:
    no_low = {**STUD8_HAND, 4: "Ah 2h 3c Jd Qd Td Tc"}  # seat 4: no five <= 8
    engine = _play_checked("stud8", no_low)
    hand = engine.hand
    assert hand is not None
    assert hand.console is not None
    assert hand.console.betting.stacks == {2: 97 + 9, 4: 97, 5: 97}
    assert (hand.winners, hand.winners_high, hand.winners_low) == ([2], [2], [])


def test_razz_lowest_hand_wins_straights_and_flushes_do_not_count() -> None:
    hands = {
        2: "Kd Kc Ks 9d 9c Qh Jh",
        4: "Ah 2h 3c 4h 5h Td Tc",  # a wheel, a straight: still the best razz hand
        5: "7s 7c Qs 6c 4c 3s 2s",  # 7-6-4-3-2
    }
    engine = _play_checked("razz", hands)
    hand = engine.hand
    assert hand is not None
    assert hand.console is not None
    assert hand.alerts == []
    assert hand.winners == [4]
    assert hand.console.betting.stacks[4] == 97 + 9


def test_the_report_has_the_halves_in_stud8_only() -> None:
    engine = _play_checked("stud8", STUD8_HAND)
    assert engine.hand is not None
    from table_controller.domain.engine.report import hand_report

    report = hand_report(engine.hand)
    assert (report["winners_high"], report["winners_low"]) == ([2], [4])
    stud = _play_checked("stud", STUD8_HAND)
    assert stud.hand is not None
    stud_report = hand_report(stud.hand)
    assert set(stud_report) == {"players", "community", "bring_in", "first_to_act",
                                "winners", "alerts", "notices"}


def test_card_only_stud8_names_both_halves() -> None:
    t = Table([2, 4, 5], game="stud8")
    per_seat = {seat: cards(text) for seat, text in STUD8_HAND.items()}
    for number in range(7):
        if number >= 3:
            t.burn(BURNS[number + 1])
        t.round("up" if 2 <= number <= 5 else "down",
                {seat: per_seat[seat][number].code for seat in per_seat})
    report = t.report()
    assert report["alerts"] == []
    assert (report["winners"], report["winners_high"], report["winners_low"]) == (
        [2, 4], [2], [4])


def test_showdown_descriptions_per_game() -> None:
    assert describe_hand(RAZZ, cards("Ah 2h 3h 4h 5h Td Tc")) == "five-four low"
    assert describe_hand(STUD8, cards("Ah 2h 3c 4s 6d Td Tc")) == "pair of tens; six-four low"
    assert describe_hand(STUD8, cards("Kd Kc Ks 9d 9c Qh Jh")) == "kings full of nines; no low"


# ------------------------------------------------------------------- pots


def _v(strength: int) -> HandValue:
    return HandValue(strength)


def test_split_pot_quartering_and_odd_chips() -> None:
    pot = (Pot(21, (2, 4, 5)),)
    values = {2: _v(1), 4: _v(9), 5: _v(3)}
    # Seat 4 wins the high alone and ties the low with seat 5: it is "quartered"
    # by the arithmetic: high 11 (the odd chip), low 10 split 5/5.
    [share] = award_pots(pot, values, [2, 4, 5], {2: 0, 4: 7, 5: 7})
    assert dict(share.shares) == {4: 16, 5: 5}
    # No low at all: the high hand scoops.
    [share] = award_pots(pot, values, [2, 4, 5], {2: 0, 4: 0, 5: 0})
    assert dict(share.shares) == {4: 21}
    # Tied high halves: the odd chip of the half by the odd-chip order (high card by suit).
    [share] = award_pots(pot, {2: _v(9), 4: _v(9), 5: _v(3)}, [4, 2, 5], {2: 0, 4: 0, 5: 8})
    assert dict(share.shares) == {4: 6, 2: 5, 5: 10}


def test_each_side_pot_is_split_on_its_own() -> None:
    pots = (Pot(30, (2, 4, 5)), Pot(20, (2, 4)))
    values = {2: _v(9), 4: _v(5), 5: _v(1)}
    lows = {2: 0, 4: 0, 5: 6}  # only seat 5 has a low; it is not in the side pot
    main, side = award_pots(pots, values, [2, 4, 5], lows)
    assert dict(main.shares) == {2: 15, 5: 15}
    assert dict(side.shares) == {2: 20}  # no eligible low: the high hand scoops it


# ------------------------------------------------------------------ low scores


def test_low_score_matches_the_exhaustive_low_on_every_seven_card_multiset() -> None:
    """The fast path (five different ranks: the lowest five) against trying all 21
    five-card hands, over the seven-card rank multisets and both low games."""
    for number, ranks in enumerate(itertools.combinations_with_replacement(range(2, 15), 7)):
        # Every 5th multiset keeps CI quick (the whole set, 147,550 checks over 5-7
        # cards, was run once by hand: no difference).
        if number % 5 or max(ranks.count(r) for r in ranks) > 4:
            continue
        for eight in (False, True):
            assert low_score(ranks, eight) == max(best_low(ranks, eight_or_better=eight)[0], 0)


@settings(max_examples=300)
@given(st.lists(st.sampled_from(range(52)), min_size=5, max_size=7, unique=True))
def test_razz_showdown_prefers_the_lower_hand(indices: list[int]) -> None:
    from table_controller.domain.cards import DECK

    hand = [DECK[i] for i in indices]
    value = low_score(tuple(sorted(c.rank for c in hand)), False)
    # A hand of five different ranks always beats any hand with a pair, even the
    # best paired one (A-A-2-3-4: aces are low).
    distinct = len({1 if c.rank == 14 else c.rank for c in hand}) >= 5
    best_paired = low_score((2, 3, 4, 14, 14), False)
    assert (value > best_paired) == distinct
    assert evaluate(hand) is not None


# ------------------------------------------------------------------ the door


def test_replay_refuses_a_bad_game_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"op":"table","game":"omaha"}\n{"op":"hand","players":[1,2]}\n')
    result = subprocess.run(
        [sys.executable, "-m", "table_controller", "replay", str(path), "--json"],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.strip() == (
        f"stud-table replay: {path}:1: table setting game: Input should be 'stud',"
        " 'razz' or 'stud8'"
    )


def test_replay_door_plays_a_razz_script(tmp_path: Path) -> None:
    path = tmp_path / "razz.jsonl"
    path.write_text(_third("razz", {2: "3d", 4: "2c", 5: "Qs"}).text())
    result = subprocess.run(
        [sys.executable, "-m", "table_controller", "replay", str(path), "--json"],
        capture_output=True, text=True, timeout=120, check=True,
    )
    [hand] = json.loads(result.stdout)["hands"]
    assert hand["bring_in"] == 5
    assert "winners_high" not in hand
    text = subprocess.run(
        [sys.executable, "-m", "table_controller", "replay", str(path)],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout
    assert text.splitlines()[0] == "game: Razz"


def test_razz_announces_the_low_board_and_every_pair() -> None:
    """Rule 12 in razz: the lowest board is named as a low, pairs as pairs."""
    t = _third("razz", {2: "3d", 4: "2c", 5: "Qs"})
    t.burn("8c").round("up", {2: "4d", 4: "2s", 5: "Js"})
    engine = DealingEngine(TableSettings(game=Game.RAZZ))
    texts = [o.text for _, e in parse_script(t.text().splitlines()).events
             for o in engine.apply(e) if getattr(o, "text", None)]
    assert "Seat 2 is low with four-three low." in texts
    assert "Seat 4 shows pair of deuces." in texts
