"""One test per betting rule of docs/rules.md (structure, rules 1-4, 8, 9 and the floor tools).

Stakes are docs/rules.md's $5/$10 example unless a test says otherwise: ante 1,
bring-in 2, small bet 5, big bet 10, three raises after the bet or completion.
"""

from __future__ import annotations

from typing import Any

import pytest

from table_controller.domain.cards import parse_cards
from table_controller.domain.engine.betting import (
    ActionKind,
    ActionTaken,
    BetReturned,
    BettingError,
    BettingHand,
    BettingStructure,
    BringInRetracted,
    HandKilled,
    HandOverError,
    IllegalActionError,
    IllegalBetError,
    NoBettingRoundError,
    OutOfTurnError,
    PotAwarded,
    UnknownSeatError,
)
from table_controller.domain.engine.pots import Pot, build_pots, odd_chip_order, split
from table_controller.domain.engine.settings import RuleProfile, TableSettings
from table_controller.domain.events import ConsoleAction
from table_controller.domain.hands import evaluate

STAKES = BettingStructure(ante=1, bring_in=2, small_bet=5, big_bet=10, raise_cap=3)


def table(*stacks: int, structure: BettingStructure = STAKES) -> BettingHand:
    """A hand with seats 1..n holding ``stacks`` before the ante."""
    return BettingHand(dict(enumerate(stacks, 1)), structure)


def snapshot(hand: BettingHand) -> tuple[Any, ...]:
    """Everything observable, to prove a rejected action changed nothing."""
    return (
        hand.stacks,
        hand.bets,
        hand.committed,
        hand.to_act,
        hand.pot_total,
        hand.pots(),
        hand.legal_actions(),
        hand.round_complete,
        hand.hand_over,
        len(hand.log),
        hand.raises_left,
    )


def names(hand: BettingHand) -> dict[str, tuple[int, ...]]:
    return {a.action: a.totals for a in hand.legal_actions()}


def through_third(hand: BettingHand, opener: int = 1) -> None:
    """3rd street: ``opener`` brings it in, everybody calls."""
    hand.start_street(3, opener)
    hand.bring_in(opener)
    while not hand.round_complete:
        seat = hand.to_act
        assert seat is not None
        hand.call(seat)


# ------------------------------------------------------------------ antes


def test_antes_are_posted_at_once_and_start_the_pot() -> None:
    hand = table(100, 100, 100)
    assert hand.stacks == {1: 99, 2: 99, 3: 99}
    assert hand.pot == hand.pot_total == 3
    assert hand.round_complete
    assert hand.to_act is None


def test_an_ante_larger_than_the_stack_puts_the_player_all_in() -> None:
    hand = table(100, 100, 1, structure=BettingStructure(ante=2, bring_in=3, small_bet=5))
    assert hand.stacks[3] == 0
    assert hand.all_in_seats == (3,)
    assert hand.pots() == (Pot(3, (1, 2, 3)), Pot(2, (1, 2)))


def test_an_ante_nobody_else_could_match_goes_back() -> None:
    hand = table(100, 1, structure=BettingStructure(ante=3, bring_in=4, small_bet=5))
    assert hand.committed == {1: 1, 2: 1}
    assert hand.stacks == {1: 99, 2: 0}
    assert BetReturned(1, 2, None) in hand.log


def test_stacks_after_ante_are_counted_back() -> None:
    hand = BettingHand({2: 99, 5: 49}, STAKES, stacks_after_ante=True)
    assert hand.starting_stacks == {2: 100, 5: 50}
    assert hand.stacks == {2: 99, 5: 49}


def test_structure_from_table_settings() -> None:
    settings = TableSettings(
        ante=3, bring_in=5, small_bet=15, big_bet=30,
        rules=RuleProfile(raise_cap=4, heads_up_unlimited_raises=True),
    )  # fmt: skip
    assert BettingStructure.from_settings(settings) == BettingStructure(3, 5, 15, 30, 4, True)


# ------------------------------------------------------- rule 1: bring-in


def test_rule_1_the_low_card_must_bring_it_in_or_complete() -> None:
    hand = table(100, 100, 100)
    hand.start_street(3, 2)
    assert hand.to_act == 2
    assert names(hand) == {"bring_in": (2,), "complete": (5,)}
    for action in ("fold", "check", "call"):
        with pytest.raises(IllegalActionError):
            hand.act(2, action)
    op = hand.bring_in(2)
    assert op == ActionTaken(2, 3, ActionKind.BRING_IN, 2, 2, False, "bring_in")
    assert hand.to_act == 3
    assert names(hand) == {"fold": (0,), "call": (2,), "complete": (5,)}


def test_everybody_calling_the_bring_in_ends_the_round() -> None:
    hand = table(100, 100, 100)
    hand.start_street(3, 2)
    hand.bring_in(2)
    hand.call(3)
    assert not hand.round_complete
    hand.call(1)
    assert hand.round_complete, "the bring-in has no option when nobody completes"
    assert hand.pot == 3 + 6


# ------------------------------------------------------- rule 2: complete


def test_rule_2_the_bring_in_player_may_open_for_a_full_bet() -> None:
    hand = table(100, 100, 100)
    hand.start_street(3, 1)
    op = hand.complete(1)
    assert (op.action, op.total) == (ActionKind.COMPLETE, 5)
    assert names(hand) == {"fold": (0,), "call": (5,), "raise": (10,)}


def test_bet_or_raise_facing_the_bring_in_is_the_completion() -> None:
    hand = table(100, 100, 100)
    hand.start_street(3, 1)
    hand.bring_in(1)
    op = hand.act(2, "raise", 5)
    assert op.action is ActionKind.COMPLETE
    assert op.entered == "raise"


# ------------------------------------- rule 3: completion is not a raise


def test_rule_3_completion_then_three_raises_in_the_15_30_example() -> None:
    structure = BettingStructure(ante=3, bring_in=5, small_bet=15, big_bet=30, raise_cap=3)
    hand = table(500, 500, 500, 500, structure=structure)
    hand.start_street(3, 1)
    hand.bring_in(1)
    hand.complete(2)  # 5 -> 15: a completion, not a raise
    assert hand.raises_left == 3
    assert hand.raise_to(3).total == 30
    assert hand.raise_to(4).total == 45
    assert hand.raise_to(1).total == 60
    assert hand.raises_left == 0
    before = snapshot(hand)
    with pytest.raises(IllegalBetError, match="cap"):
        hand.raise_to(2)
    assert snapshot(hand) == before
    assert "raise" not in names(hand)
    hand.call(2)
    hand.call(3)
    hand.call(4)
    assert hand.round_complete
    assert hand.pot == 4 * 3 + 4 * 60


def test_the_cap_counts_per_round() -> None:
    hand = table(500, 500, 500)
    hand.start_street(3, 1)
    hand.complete(1)
    hand.raise_to(2)
    hand.raise_to(3)
    hand.raise_to(1)
    hand.call(2)
    hand.call(3)
    hand.start_street(4, 2)
    hand.bet(2)
    hand.raise_to(3)
    hand.raise_to(1)
    assert hand.raise_to(2).total == 20
    assert hand.raises_left == 0


def test_no_cap_when_the_setting_is_none() -> None:
    hand = table(1000, 1000, 1000, structure=BettingStructure(raise_cap=None))
    hand.start_street(3, 1)
    hand.complete(1)
    for _ in range(8):
        hand.raise_to(hand.to_act or 0)
    assert max(hand.bets.values()) == 5 + 8 * 5
    assert hand.raises_left is None


def test_heads_up_unlimited_raises() -> None:
    structure = BettingStructure(raise_cap=3, heads_up_unlimited=True)
    hand = table(1000, 1000, structure=structure)
    hand.start_street(3, 1)
    hand.complete(1)
    for _ in range(6):  # six raises: past the cap of three
        seat = hand.to_act
        assert seat is not None
        hand.raise_to(seat)
    assert max(hand.bets.values()) == 5 + 6 * 5
    assert hand.raises_left is None


def test_heads_up_unlimited_starts_when_the_third_player_folds() -> None:
    structure = BettingStructure(raise_cap=1, heads_up_unlimited=True)
    hand = table(1000, 1000, 1000, structure=structure)
    hand.start_street(3, 1)
    hand.complete(1)
    hand.raise_to(2)
    assert hand.raises_left == 0
    with pytest.raises(IllegalBetError):
        hand.raise_to(3)
    hand.fold(3)
    assert hand.raises_left is None
    assert hand.raise_to(1).total == 15


def test_the_cap_holds_with_three_players_even_with_heads_up_unlimited() -> None:
    hand = table(1000, 1000, 1000, structure=BettingStructure(heads_up_unlimited=True))
    hand.start_street(3, 1)
    hand.complete(1)
    hand.raise_to(2)
    hand.raise_to(3)
    hand.raise_to(1)
    assert not hand.can_raise_to(2)


# ------------------------------------------------------ bet sizes per street


@pytest.mark.parametrize(("street", "size"), [(4, 5), (5, 10), (6, 10), (7, 10)])
def test_fixed_bet_size_per_street(street: int, size: int) -> None:
    hand = table(500, 500)
    through_third(hand)
    for s in range(4, street):
        hand.start_street(s, 1)
        hand.check(1)
        hand.check(2)
    hand.start_street(street, 2)
    assert names(hand) == {"fold": (0,), "check": (0,), "bet": (size,)}
    other = 5 if size == 10 else 10
    before = snapshot(hand)
    with pytest.raises(IllegalBetError, match="bet to"):
        hand.bet(2, other)
    assert snapshot(hand) == before
    assert hand.bet(2, size).total == size
    assert hand.raise_to(1).total == 2 * size


def test_bet_facing_a_bet_and_raise_with_no_bet_are_refused() -> None:
    hand = table(500, 500)
    through_third(hand)
    hand.start_street(4, 1)
    with pytest.raises(IllegalActionError):
        hand.raise_to(1)
    with pytest.raises(IllegalActionError):
        hand.call(1)
    with pytest.raises(IllegalActionError):
        hand.complete(1)
    hand.bet(1)
    with pytest.raises(IllegalActionError):
        hand.bet(2)
    with pytest.raises(IllegalActionError):
        hand.check(2)


# ------------------------------------------------- rule 4: open pair on 4th


def test_rule_4_open_pair_bet_small_or_big() -> None:
    hand = table(500, 500, 500)
    through_third(hand)
    hand.start_street(4, 2, open_pair=True)
    assert names(hand)["bet"] == (5, 10)
    assert hand.can_bet(2, 5)
    assert hand.can_bet(2, 10)
    assert not hand.can_bet(2, 7)


def test_rule_4_after_the_small_bet_call_or_raise_to_the_big_bet() -> None:
    hand = table(500, 500, 500)
    through_third(hand)
    hand.start_street(4, 2, open_pair=True)
    hand.bet(2, 5)
    assert names(hand) == {"fold": (0,), "call": (5,), "raise": (10,)}
    with pytest.raises(IllegalBetError):
        hand.raise_to(3, 15)  # seed 002's "raise $10" misreading
    hand.raise_to(3, 10)
    assert names(hand)["raise"] == (20,), "once raised to $10, raises go in $10 steps"
    hand.raise_to(1)
    assert hand.raise_to(2).total == 30


def test_rule_4_a_big_opening_bet_raises_in_big_steps() -> None:
    hand = table(500, 500, 500)
    through_third(hand)
    hand.start_street(4, 2, open_pair=True)
    hand.bet(2, 10)
    assert names(hand)["raise"] == (20,)


def test_rule_4_if_the_pair_checks_later_players_have_the_option() -> None:
    hand = table(500, 500, 500)
    through_third(hand)
    hand.start_street(4, 2, open_pair=True)
    hand.check(2)
    assert names(hand)["bet"] == (5, 10)
    hand.bet(3, 10)


def test_without_an_open_pair_4th_street_is_the_small_bet_only() -> None:
    hand = table(500, 500)
    through_third(hand)
    hand.start_street(4, 1)
    with pytest.raises(IllegalBetError):
        hand.bet(1, 10)


def test_open_pair_only_on_4th_street() -> None:
    hand = table(500, 500)
    with pytest.raises(IllegalActionError):
        hand.start_street(3, 1, open_pair=True)


# ------------------------------------------------ rule 8: low card all-in


def test_rule_8_the_next_player_may_fold_bring_in_or_complete() -> None:
    hand = table(1, 100, 100, 100)  # seat 1, the low card, is all-in for the ante
    hand.start_street(3, 2, bring_in_optional=True)
    assert hand.to_act == 2
    assert names(hand) == {"fold": (0,), "bring_in": (2,), "complete": (5,)}
    hand.fold(2)
    assert names(hand) == {"fold": (0,), "bring_in": (2,), "complete": (5,)}
    hand.bring_in(3)
    assert names(hand) == {"fold": (0,), "call": (2,), "complete": (5,)}


def test_rule_8_without_the_flag_the_next_player_must_bring_in() -> None:
    hand = table(1, 100, 100)
    hand.start_street(3, 1)  # the all-in low card is skipped
    assert hand.to_act == 2
    assert not hand.can_fold(2)
    assert hand.can_bring_in(2)


def test_a_bring_in_short_of_chips_is_all_in_for_less() -> None:
    hand = table(100, 2, 100)  # 1 chip behind after the ante
    hand.start_street(3, 2)
    op = hand.bring_in(2)
    assert (op.total, op.all_in) == (1, True)
    assert names(hand) == {"fold": (0,), "call": (1,), "complete": (5,)}
    hand.call(3)
    hand.call(1)
    assert hand.round_complete
    assert hand.committed == {1: 2, 2: 2, 3: 2}


# ------------------------------------------------------------- all-in


def test_allin_is_classified() -> None:
    hand = table(100, 4, 8, 13, 100)  # behind: 99, 3, 7, 12, 99
    hand.start_street(3, 2)
    op = hand.all_in(2)  # 3 chips: more than the bring-in, less than a completion
    assert (op.action, op.total, op.all_in) == (ActionKind.COMPLETE, 3, True)
    # A full raise would be 3 + 5 = 8: seat 3 has only 7, so its raise stops there.
    assert names(hand)["raise"] == (7,)
    op = hand.all_in(3)  # 7 chips: a raise for less than the full 8
    assert (op.action, op.total, op.all_in) == (ActionKind.RAISE, 7, True)
    op = hand.all_in(4)  # 12 = 7 + 5: a full raise
    assert (op.action, op.total) == (ActionKind.RAISE, 12)
    assert not hand.can_all_in(5), "99 chips is more than a fixed-limit raise"
    with pytest.raises(IllegalBetError):
        hand.all_in(5)
    hand.call(5)
    hand.call(1)
    assert hand.round_complete


def test_a_call_for_less_is_all_in() -> None:
    hand = table(100, 4)
    hand.start_street(3, 1)
    hand.complete(1)
    op = hand.call(2)
    assert (op.action, op.added, op.total, op.all_in) == (ActionKind.CALL, 3, 3, True)
    assert hand.round_complete
    assert hand.returned[1] == 2, "the 2 chips seat 2 could not call go back"
    assert hand.pot == 8


def test_a_short_all_in_raise_does_not_reopen_the_betting() -> None:
    hand = table(100, 100, 16, 100)  # seat 3: 15 behind
    through_third(hand)
    hand.start_street(4, 1)
    for seat in (1, 2, 3, 4):
        hand.check(seat)
    hand.start_street(5, 1)
    hand.bet(1)  # 10
    hand.call(2)
    op = hand.all_in(3)  # to 13: a raise of 3, less than a full 10
    assert (op.action, op.total) == (ActionKind.RAISE, 13)
    assert names(hand)["raise"] == (23,), "seat 4 has not acted: a full raise on top"
    hand.call(4)
    assert hand.to_act == 1
    assert names(hand) == {"fold": (10,), "call": (13,)}, "seat 1 already acted"
    with pytest.raises(IllegalBetError, match="short all-in"):
        hand.raise_to(1)
    hand.call(1)
    hand.call(2)
    assert hand.round_complete


def test_the_player_who_is_covered_can_only_call() -> None:
    hand = table(100, 6)  # seat 2: 5 behind
    hand.start_street(3, 2)
    hand.bring_in(2)
    hand.complete(1)
    assert names(hand) == {"fold": (2,), "call": (5,), "allin": (5,)}


def test_nobody_to_raise_when_everyone_else_is_all_in() -> None:
    hand = table(100, 4)
    hand.start_street(3, 2)
    hand.all_in(2)
    assert "complete" not in names(hand)
    hand.call(1)
    assert hand.round_complete
    assert hand.betting_closed
    hand.start_street(4, 1)
    assert hand.round_complete, "no action possible: the street needs no betting"


# ------------------------------------------------------------- side pots


def test_side_pots_with_their_eligible_seats() -> None:
    hand = table(6, 16, 100, 100)  # behind: 5, 15, 99, 99
    through_third(hand)  # 2 each
    hand.start_street(4, 3)
    hand.bet(3)
    hand.raise_to(4)
    hand.all_in(1)  # 3 in: all-in for less
    hand.call(2)
    hand.call(3)
    assert hand.round_complete
    assert hand.pots() == (Pot(4 * 6, (1, 2, 3, 4)), Pot(3 * 7, (2, 3, 4)))
    hand.start_street(5, 3)
    hand.bet(3)
    hand.call(4)
    hand.all_in(2)  # 3 more: short
    assert hand.round_complete
    assert hand.pots() == (
        Pot(4 * 6, (1, 2, 3, 4)),
        Pot(3 * 10, (2, 3, 4)),
        Pot(2 * 7, (3, 4)),
    )
    assert sum(p.amount for p in hand.pots()) == hand.pot


def test_award_pays_each_pot_to_its_best_eligible_hand() -> None:
    hand = table(6, 16, 100, 100)
    through_third(hand)
    hand.start_street(4, 3)
    hand.bet(3)
    hand.raise_to(4)
    hand.all_in(1)
    hand.call(2)
    hand.call(3)
    hand.start_street(5, 3)
    hand.bet(3)
    hand.call(4)
    hand.all_in(2)
    for street in (6, 7):
        hand.start_street(street, 3)
        hand.check(3)
        hand.check(4)
    values = {
        1: evaluate(parse_cards("AsAhAdKcKd2c3c")),  # full house: best
        2: evaluate(parse_cards("KsKhQd2d3d7h8h")),  # kings: second
        3: evaluate(parse_cards("QsQh4d5d9c8c7d")),
        4: evaluate(parse_cards("JsJh4h5h9s8s7s")),
    }
    ops = hand.award(values)
    assert [op.shares for op in ops] == [((1, 24),), ((2, 30),), ((3, 14),)]
    assert hand.winnings == {1: 24, 2: 30, 3: 14, 4: 0}
    assert hand.hand_over
    assert sum(hand.stacks.values()) == 6 + 16 + 200


def test_award_needs_every_live_seat_valued() -> None:
    hand = table(100, 100)
    through_third(hand)
    with pytest.raises(NoBettingRoundError):
        hand.award({1: 1, 2: 2})  # 4th-7th street still to come
    for street in (4, 5, 6, 7):
        hand.start_street(street, 1)
        hand.check(1)
        hand.check(2)
    with pytest.raises(IllegalActionError, match="live seats"):
        hand.award({1: 1})
    hand.award({1: 1, 2: 2})
    assert hand.stacks == {1: 97, 2: 103}


# ------------------------------------------------------------- odd chip


def test_odd_chip_goes_to_the_high_card_by_suit() -> None:
    cards = {
        1: parse_cards("Kh Kd 9c 7s 5h 3d 2c".replace(" ", "")),
        2: parse_cards("Ks Kc 9d 7h 5c 3s 2d".replace(" ", "")),
    }
    assert odd_chip_order(cards) == (2, 1), "king of spades beats king of hearts"
    hand = table(100, 100, 100)
    hand.start_street(3, 3)
    hand.bring_in(3)
    hand.call(1)
    hand.call(2)  # pot: 3 antes + 6 = 9
    for street in (4, 5, 6, 7):
        hand.start_street(street, 1)
        hand.check(1)
        hand.check(2)
        if street == 4:
            hand.fold(3)  # with no bet (rule 7): out of the pot
    assert hand.pot == 9
    values = {1: evaluate(cards[1]), 2: evaluate(cards[2])}
    assert values[1] == values[2]
    (op,) = hand.award(values, odd_chip_order(cards))
    assert op.shares == ((1, 4), (2, 5))


def test_several_odd_chips_go_one_each_in_order() -> None:
    assert split(11, [3, 1, 2]) == {3: 4, 1: 4, 2: 3}


def test_pots_helper_keeps_every_chip() -> None:
    pots = build_pots({1: 10, 2: 25, 3: 25, 4: 40}, live={1, 2, 4})
    assert pots == (Pot(40, (1, 2, 4)), Pot(45, (2, 4)), Pot(15, (4,)))


# ---------------------------------------------------- uncalled / last standing


def test_an_uncalled_bet_goes_back_and_the_last_seat_wins() -> None:
    hand = table(100, 100, 100)
    hand.start_street(3, 1)
    hand.bring_in(1)
    hand.complete(2)
    hand.fold(3)
    op = hand.fold(1)
    assert op.action is ActionKind.FOLD
    assert hand.hand_over
    assert BetReturned(2, 3, 3) in hand.log, "5 bet, only 2 called"
    awarded = [o for o in hand.log if isinstance(o, PotAwarded)]
    assert awarded == [PotAwarded(0, 7, (2,), ((2, 7),), False)]
    assert hand.stacks == {1: 97, 2: 104, 3: 99}
    assert hand.winnings == {1: 0, 2: 7, 3: 0}


def test_an_all_in_player_left_alone_wins_everything() -> None:
    hand = table(3, 100, 100)
    through_third(hand)  # seat 1 brings in with its last 2 chips
    hand.start_street(4, 2)
    hand.bet(2)
    hand.call(3)
    hand.start_street(5, 2)
    hand.fold(2)  # both players with chips fold with no bet to call
    hand.fold(3)
    assert hand.hand_over
    assert hand.stacks == {1: 3 + 8 + 8, 2: 92, 3: 92}, "the side pot has no one else to go to"


# ------------------------------------------------------- errors, no change


def test_out_of_turn_is_refused_and_changes_nothing() -> None:
    hand = table(100, 100, 100)
    hand.start_street(3, 2)
    before = snapshot(hand)
    with pytest.raises(OutOfTurnError) as caught:
        hand.bring_in(3)
    assert caught.value.code == "out_of_turn"
    assert snapshot(hand) == before


def test_a_wrong_amount_is_an_illegal_bet_and_changes_nothing() -> None:
    hand = table(100, 100, 100)
    hand.start_street(3, 2)
    hand.bring_in(2)
    before = snapshot(hand)
    with pytest.raises(IllegalBetError) as caught:
        hand.complete(3, 7)
    assert caught.value.code == "illegal_bet"
    with pytest.raises(IllegalBetError):
        hand.act(3, "call", 4)
    assert snapshot(hand) == before


def test_errors_name_the_problem() -> None:
    hand = table(100, 100)
    with pytest.raises(NoBettingRoundError):
        hand.check(1)
    with pytest.raises(UnknownSeatError):
        hand.start_street(3, 9)
    hand.start_street(3, 1)
    with pytest.raises(UnknownSeatError):
        hand.bring_in(7)
    with pytest.raises(IllegalActionError, match="unknown action"):
        hand.act(1, "shove")
    with pytest.raises(IllegalActionError):
        hand.start_street(4, 1)  # 3rd street's round is not complete
    hand.complete(1)
    hand.fold(2)
    with pytest.raises(HandOverError) as caught:
        hand.call(2)
    assert caught.value.code == "hand_over"
    assert isinstance(caught.value, BettingError)
    with pytest.raises(HandOverError):
        hand.start_street(4, 1)


def test_streets_go_in_order_and_end_at_7th() -> None:
    hand = table(100, 100)
    with pytest.raises(IllegalActionError):
        hand.start_street(4, 1)
    through_third(hand)
    for street in (4, 5, 6, 7):
        hand.start_street(street, 1)
        hand.check(1)
        hand.check(2)
    with pytest.raises(IllegalActionError):
        hand.start_street(8, 1)


# ---------------------------------------------------- rule 14: round complete


def test_round_complete_tells_the_dealer_when_the_next_street_may_come() -> None:
    hand = table(100, 100, 100)
    assert hand.round_complete
    hand.start_street(3, 1)
    assert not hand.round_complete
    hand.bring_in(1)
    hand.call(2)
    assert not hand.round_complete, "a 4th-street card now is a premature deal"
    hand.call(3)
    assert hand.round_complete


# -------------------------------------------------------- showdown order


def test_the_last_aggressor_on_the_river_shows_first() -> None:
    hand = table(100, 100, 100)
    through_third(hand)
    for street in (4, 5, 6):
        hand.start_street(street, 1)
        for seat in (1, 2, 3):
            hand.check(seat)
    hand.start_street(7, 1)
    hand.bet(1)
    hand.raise_to(2)
    hand.call(3)
    hand.call(1)
    assert hand.showdown_order() == (2, 3, 1)


def test_with_no_bet_on_the_river_the_first_to_act_shows_first() -> None:
    hand = table(100, 100, 100)
    through_third(hand)
    for street in (4, 5, 6, 7):
        hand.start_street(street, 3)
        for seat in (3, 1, 2):
            hand.check(seat)
    assert hand.showdown_order() == (3, 1, 2)


# ------------------------------------------------------------ floor tools


def test_kill_works_out_of_turn_and_is_recorded_distinctly() -> None:
    hand = table(100, 100, 100)
    hand.start_street(3, 1)
    hand.bring_in(1)
    op = hand.kill(3, "absent (rule 6)")
    assert op == HandKilled(3, 3, "absent (rule 6)")
    assert hand.to_act == 2
    hand.call(2)
    assert hand.round_complete
    assert hand.live_seats == (1, 2)


def test_killing_the_seat_to_act_passes_the_action() -> None:
    hand = table(100, 100, 100)
    hand.start_street(3, 1)
    hand.bring_in(1)
    hand.kill(2, "lifted the up cards facing a bet (rule 10)")
    assert hand.to_act == 3


def test_killing_all_but_one_ends_the_hand() -> None:
    hand = table(100, 100, 100)
    through_third(hand, 1)
    hand.kill(1)
    hand.kill(2)
    assert hand.hand_over
    assert hand.stacks[3] == 97 + 9
    with pytest.raises(HandOverError):
        hand.kill(3)


def test_undo_last_restores_the_state_before_it() -> None:
    hand = table(100, 100, 100)
    hand.start_street(3, 1)
    hand.bring_in(1)
    before = snapshot(hand)
    op = hand.complete(2)
    record = hand.undo_last()
    after = snapshot(hand)
    assert after[:9] == before[:9]
    assert after[10] == before[10]
    assert hand.log[-1] is record
    assert record.operation == op
    assert not hand.can_undo_last(), "only one action can be taken back"


def test_rule_9_the_wrong_bring_in_is_corrected_before_the_next_player_acts() -> None:
    hand = table(100, 100, 100)
    hand.start_street(3, 3)  # the dealing side names seat 3 the low card
    with pytest.raises(OutOfTurnError):
        hand.bring_in(1)
    hand.set_opener(1)  # the wrong player (seat 1) acts first: accept it
    wrong = hand.bring_in(1)
    record = hand.retract_bring_in(3)
    assert record == BringInRetracted(wrong, 3)
    assert hand.stacks == {1: 99, 2: 99, 3: 99}
    assert hand.to_act == 3
    hand.bring_in(3)
    assert hand.to_act == 1


def test_rule_9_once_the_next_player_acted_the_bring_in_stands() -> None:
    hand = table(100, 100, 100)
    hand.start_street(3, 1)
    hand.bring_in(1)
    hand.call(2)
    assert not hand.can_retract_bring_in(3)
    with pytest.raises(IllegalActionError, match="stands"):
        hand.retract_bring_in(3)
    hand.call(3)  # the true low card has no further obligation
    assert hand.round_complete


def test_set_opener_only_before_anyone_acts() -> None:
    hand = table(100, 100, 100)
    hand.start_street(3, 1)
    hand.bring_in(1)
    with pytest.raises(IllegalActionError):
        hand.set_opener(2)


def test_console_actions_apply_as_entered() -> None:
    hand = table(100, 100)
    hand.start_street(3, 2)
    assert not hand.can_console_action(ConsoleAction(seat=1, action="call"))
    with pytest.raises(OutOfTurnError):
        hand.verify_console_action(ConsoleAction(seat=1, action="call"))
    op = hand.apply_console_action(ConsoleAction(seat=2, action="bet", amount=5))
    assert (op.action, op.entered, op.total) == (ActionKind.COMPLETE, "bet", 5)
    assert hand.to_act == 1


def test_the_log_records_every_operation_in_order() -> None:
    hand = table(100, 100)
    through_third(hand)
    kinds = [type(op).__name__ for op in hand.log]
    assert kinds == [
        "AntePosted",
        "AntePosted",
        "StreetStarted",
        "ActionTaken",
        "ActionTaken",
    ]
