"""Property tests of the betting engine: random legal play, floor actions and bad input.

Hypothesis plays whole hands: random seats and stacks (short ones included), random
structures (cap 0-4 or none, heads-up unlimited, open pair, optional bring-in),
random legal actions with their amounts, now and then a kill out of turn, an undo,
or a rejected action. Checked after every step:

* chips are conserved: stacks + pot (bets included) equal the starting chips;
* no stack is ever negative;
* while a seat is due, ``legal_actions`` is non-empty and agrees with ``can_act``
  for every console action and every listed total;
* a rejected action changes nothing;
* every hand ends (paid) within a bounded number of steps.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from table_controller.domain.engine.betting import BettingError, BettingHand, BettingStructure
from table_controller.domain.events import CONSOLE_ACTIONS

MAX_STEPS = 400


def _snapshot(hand: BettingHand) -> tuple[Any, ...]:
    return (
        hand.stacks,
        hand.bets,
        hand.committed,
        hand.to_act,
        hand.legal_actions(),
        hand.round_complete,
        hand.hand_over,
        len(hand.log),
    )


@st.composite
def hands(draw: st.DrawFn) -> BettingHand:
    players = draw(st.integers(2, 8))
    seats = draw(st.lists(st.integers(1, 8), min_size=players, max_size=players, unique=True))
    stacks = {seat: draw(st.integers(1, 150)) for seat in seats}
    ante = draw(st.integers(0, 3))
    bring_in = draw(st.integers(0, 3))
    small = draw(st.integers(bring_in + 1, 8))
    structure = BettingStructure(
        ante=ante,
        bring_in=bring_in,
        small_bet=small,
        big_bet=draw(st.sampled_from((small, 2 * small))),
        raise_cap=draw(st.one_of(st.none(), st.integers(0, 4))),
        heads_up_unlimited=draw(st.booleans()),
    )
    return BettingHand(stacks, structure)


def _check_invariants(hand: BettingHand, total: int) -> None:
    assert all(chips >= 0 for chips in hand.stacks.values())
    assert sum(hand.stacks.values()) + hand.pot_total == total
    assert hand.pot_total == sum(hand.committed.values()) or hand.hand_over
    if not hand.hand_over:
        assert sum(p.amount for p in hand.pots()) == hand.pot
    seat = hand.to_act
    if seat is None:
        assert hand.legal_actions() == ()
        return
    legal = {a.action: a for a in hand.legal_actions()}
    assert legal, "a seat is due but has no legal action"
    for name in CONSOLE_ACTIONS:
        alias = name in ("bet", "raise") and "complete" in legal
        assert hand.can_act(seat, name) == (name in legal or alias), name
    for action in legal.values():
        for amount in action.totals:
            assert hand.can_act(seat, action.action, amount)
        assert not hand.can_act(seat, action.action, action.max_total + 1)


@settings(max_examples=250)
@given(hand=hands(), data=st.data())
def test_random_legal_play_conserves_chips_and_always_ends(
    hand: BettingHand, data: st.DataObject
) -> None:
    total = sum(hand.starting_stacks.values())
    _check_invariants(hand, total)
    for _ in range(MAX_STEPS):
        if hand.hand_over:
            break
        seat = hand.to_act
        if seat is not None:
            roll = data.draw(st.integers(0, 99))
            if roll < 3:
                hand.kill(data.draw(st.sampled_from(hand.live_seats)), "property test")
            elif roll < 6 and hand.can_undo_last():
                hand.undo_last()
            elif roll < 12:
                before = _snapshot(hand)
                other = data.draw(st.sampled_from(hand.seats))
                action = data.draw(st.sampled_from(CONSOLE_ACTIONS))
                amount = data.draw(st.one_of(st.none(), st.integers(0, 60)))
                try:
                    hand.act(other, action, amount)
                except BettingError:
                    assert _snapshot(hand) == before
            else:
                legal = data.draw(st.sampled_from(hand.legal_actions()))
                amount = data.draw(st.sampled_from((None, *legal.totals)))
                hand.act(seat, legal.action, amount)
        elif hand.street is None or (
            hand.street < 7 and not (hand.betting_closed and data.draw(st.booleans()))
        ):
            # Next street; when nobody can bet any more, the pots may also be paid
            # before the last cards are out.
            street = 3 if hand.street is None else hand.street + 1
            hand.start_street(
                street,
                data.draw(st.sampled_from(hand.seats)),
                open_pair=street == 4 and data.draw(st.booleans()),
                bring_in_optional=street == 3 and data.draw(st.booleans()),
            )
        else:
            values = {s: data.draw(st.integers(0, 3)) for s in hand.live_seats}
            order = data.draw(st.permutations(hand.seats))
            hand.award(values, order)
        _check_invariants(hand, total)
    assert hand.hand_over, "the hand did not end"
    assert sum(hand.stacks.values()) == total
    assert sum(hand.winnings.values()) + sum(hand.returned.values()) <= total


@settings(max_examples=150)
@given(hand=hands(), data=st.data())
def test_rejected_actions_change_nothing(hand: BettingHand, data: st.DataObject) -> None:
    hand.start_street(3, data.draw(st.sampled_from(hand.seats)))
    for _ in range(30):
        if hand.to_act is None:
            break
        before = _snapshot(hand)
        seat = data.draw(st.sampled_from(hand.seats))
        action = data.draw(st.sampled_from((*CONSOLE_ACTIONS, "shove")))
        amount = data.draw(st.one_of(st.none(), st.integers(-5, 60)))
        if hand.can_act(seat, action, amount):
            hand.act(seat, action, amount)
            continue
        with pytest.raises(BettingError) as caught:
            hand.act(seat, action, amount)
        assert caught.value.code in {
            "out_of_turn",
            "illegal_bet",
            "illegal_action",
            "hand_over",
            "unknown_seat",
            "no_betting_round",
        }
        assert _snapshot(hand) == before
