"""Hypothesis properties of equity, the vectorised evaluator and outs."""

from __future__ import annotations

import math
import random
from itertools import permutations

from hypothesis import given, settings
from hypothesis import strategies as st

from table_controller.domain.cards import DECK, Card, parse_cards
from table_controller.domain.equity.core import compute_equity
from table_controller.domain.equity.evaluate import Game, best_low, scores_of_hands
from table_controller.domain.equity.model import prepare
from table_controller.domain.equity.outs import outs
from table_controller.domain.hands import batch_evaluate

HEAVY = settings()


@st.composite
def spots(draw: st.DrawFn, *, seats: tuple[int, int] = (2, 4),
          streets: tuple[int, ...] = (5, 6, 7)) -> tuple[dict[int, list[Card]], list[Card]]:
    """Random legal moments: 2-4 seats on one street (or one card more), dead cards."""
    deck = list(DECK)
    random.Random(draw(st.integers(0, 2**32))).shuffle(deck)
    count = draw(st.integers(*seats))
    street = draw(st.sampled_from(streets))
    ahead = draw(st.integers(0, count)) if street < 7 else 0  # seats already dealt this street
    numbers = sorted(draw(st.lists(st.integers(1, 8), min_size=count, max_size=count,
                                   unique=True)))
    result = {}
    for i, number in enumerate(numbers):
        size = street + (1 if i < ahead else 0)
        result[number], deck = deck[:size], deck[size:]
    dead = deck[: draw(st.integers(0, 8))]
    return result, dead


@HEAVY
@given(spots(), st.sampled_from(list(Game)))
def test_equities_sum_to_one_and_shares_add_up(spot: tuple, game: Game) -> None:
    seats, dead = spot
    result = compute_equity(seats, dead, game, samples=2000, seed=1)
    assert math.isclose(sum(result.equity.values()), 1.0, abs_tol=1e-9)
    for seat in seats:
        assert 0.0 <= result.win[seat] <= result.equity[seat] <= 1.0
        assert math.isclose(result.win[seat] + result.tie[seat], result.equity[seat],
                            abs_tol=1e-12)


@HEAVY
@given(spots(seats=(2, 3), streets=(5, 6)), st.sampled_from(list(Game)), st.data())
def test_swapping_two_seats_cards_swaps_their_equities(spot: tuple, game: Game,
                                                       data: st.DataObject) -> None:
    seats, dead = spot
    a, b = data.draw(st.sampled_from(list(permutations(sorted(seats), 2))))
    swapped = {**seats, a: seats[b], b: seats[a]}
    if {len(swapped[s]) for s in swapped} != {len(seats[s]) for s in seats}:
        return
    first = compute_equity(seats, dead, game)
    second = compute_equity(swapped, dead, game)
    if first.exact:  # exact results are symmetric to the last bit of the sums
        assert math.isclose(first.equity[a], second.equity[b], abs_tol=1e-12)
        assert math.isclose(first.equity[b], second.equity[a], abs_tol=1e-12)


def _beats(mine: list[int], theirs: list[int]) -> bool:
    return batch_evaluate([mine])[0] > batch_evaluate([theirs])[0]


@HEAVY
@given(st.integers(0, 2**32))
def test_a_seat_that_loses_every_runout_has_zero_equity(seed: int) -> None:
    """Heads-up 6th street, stud: equity 0 exactly when no run-out wins or ties."""
    deck = list(DECK)
    random.Random(seed).shuffle(deck)
    seats = {1: deck[:6], 2: deck[6:12]}
    result = compute_equity(seats)
    unseen = [c.index for c in deck[12:]]
    a = [c.index for c in seats[1]]
    b = [c.index for c in seats[2]]
    values_a = dict(zip(unseen, batch_evaluate([[*a, x] for x in unseen]), strict=True))
    values_b = dict(zip(unseen, batch_evaluate([[*b, x] for x in unseen]), strict=True))
    for mine, theirs, seat in ((values_a, values_b, 1), (values_b, values_a, 2)):
        never = all(mine[x] < theirs[y] for x in unseen for y in unseen if x != y)
        assert (result.equity[seat] == 0.0) == never


@HEAVY
@given(spots(seats=(2, 3), streets=(5, 6)), st.sampled_from(list(Game)), st.data())
def test_a_dead_card_that_only_wins_for_a_seat_lowers_its_equity(
    spot: tuple, game: Game, data: st.DataObject
) -> None:
    """If seat S takes the whole pot in every run-out in which card c is dealt (to
    anybody), then c becoming dead cannot raise S's equity, and lowers it unless S
    wins every run-out anyway. (Equity is the mix p * 1 + (1 - p) * equity-without-c.)
    Checked on the cards that are such "only good for S" cards in this spot."""
    seats, dead = spot
    base = compute_equity(seats, dead, game)
    if not base.exact:
        return
    seat = data.draw(st.sampled_from(sorted(seats)))
    deal = prepare(seats, dead, game)
    for index in deal.unseen[:6]:
        card = Card.from_index(index)
        # Every run-out dealing c: c given to each seat in turn; S must win them all.
        only_good = True
        for holder in seats:
            forced = {s: [*cards, card] if s == holder else cards for s, cards in seats.items()}
            if len(forced[holder]) > 7 or max(map(len, forced.values())) - min(
                    map(len, forced.values())) > 1:
                only_good = False
                break
            forced_result = compute_equity(forced, dead, game)
            if not forced_result.exact or forced_result.win[seat] < 1.0:
                only_good = False
                break
        if not only_good:
            continue
        without = compute_equity(seats, [*dead, card], game)
        assert without.equity[seat] <= base.equity[seat] + 1e-12
        if without.equity[seat] < 1.0:
            assert without.equity[seat] < base.equity[seat]


@settings(max_examples=50)
@given(st.lists(st.lists(st.sampled_from(range(52)), min_size=7, max_size=7, unique=True),
                min_size=1, max_size=50))
def test_vectorised_evaluator_equals_the_python_ones(hands: list[list[int]]) -> None:
    high = scores_of_hands(hands, Game.STUD).primary
    assert list(high) == batch_evaluate(hands)
    razz = scores_of_hands(hands, Game.RAZZ).primary
    low8 = scores_of_hands(hands, Game.STUD8).low
    assert low8 is not None
    for i, hand in enumerate(hands):
        ranks = [index // 4 + 2 for index in hand]
        assert razz[i] == best_low(ranks, eight_or_better=False)[0]
        assert low8[i] == best_low(ranks, eight_or_better=True)[0]


def test_outs_of_the_player_behind() -> None:
    """Ace-king high against a pair of nines on 5th street: the aces, kings and queens
    (nine cards) pair the player behind above the nines."""
    seats = {1: parse_cards("AsKdQh7c2d"), 4: parse_cards("9h9d2sJc3h")}
    found = outs(prepare(seats))
    assert found is not None
    assert (found.seat, found.against) == (1, 4)
    assert sorted(card.code for card in found.cards) == sorted(
        ["Ac", "Ad", "Ah", "Kc", "Kh", "Ks", "Qc", "Qd", "Qs"]
    )


def test_outs_do_not_apply_before_5th_street_multiway_or_on_7th() -> None:
    assert outs(prepare({1: parse_cards("AsKdQh7c"), 4: parse_cards("9h9d2sJc")})) is None
    three = {1: parse_cards("AsKdQh7c2d"), 4: parse_cards("9h9d2sJc3h"),
             5: parse_cards("5c5s6d6h8c")}
    assert outs(prepare(three)) is None
    seventh = {1: parse_cards("AsKdQh7c2d4h5h"), 4: parse_cards("9h9d2sJc3h3s8d")}
    assert outs(prepare(seventh)) is None


@HEAVY
@given(spots(seats=(2, 2), streets=(5, 6)), st.sampled_from(list(Game)))
def test_every_out_puts_the_player_behind_ahead(spot: tuple, game: Game) -> None:
    from table_controller.domain.equity.readings import current_value

    seats, dead = spot
    if len({len(c) for c in seats.values()}) != 1:
        return
    found = outs(prepare(seats, dead, game))
    if found is None:
        return
    ahead = current_value(seats[found.against], game)
    for card in found.cards:
        mine = current_value([*seats[found.seat], card], game)
        assert mine != ahead
