"""Equity against a brute-force reference, Monte Carlo against exact, PokerKit agreement.

The reference (equity_reference.py) deals every run-out in plain Python and values
hands with PokerKit's hand types; ours must equal it to 1e-9 on every spot, in all
three games (docs/rules.md "Variants"), including the rule-15 community card.
"""

from __future__ import annotations

import math
import random

import pytest
from equity_reference import HAND_TYPES, PK_CARD, random_spot, reference_equity
from hypothesis import given, settings
from hypothesis import strategies as st

from table_controller.domain.cards import DECK, parse_cards
from table_controller.domain.equity.core import compute_equity
from table_controller.domain.equity.evaluate import Game
from table_controller.domain.equity.model import runout_count

GAMES = list(Game)

# (name, cards per seat, dead cards): small enough for the Python reference.
SPOTS = [
    ("7th street being dealt, three-way", (7, 6, 6), 12),
    ("6th street heads-up", (6, 6), 6),
    ("6th street three-way", (6, 6, 6), 18),
    ("5th street heads-up", (5, 5), 24),
    ("5th street being dealt, heads-up", (6, 5), 20),
    ("4th street heads-up", (4, 4), 33),
    ("4th street being dealt, three-way", (5, 4, 4), 30),
    ("7th street, eight seats: community card", (6,) * 8, 0),
    ("7th street, seven seats, short deck: community card", (6,) * 7, 6),
    ("6th street being dealt, six seats", (6, 6, 6, 6, 6, 5), 10),
]


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize(("name", "counts", "dead"), SPOTS, ids=[s[0] for s in SPOTS])
def test_exact_equals_brute_force(game: Game, name: str, counts: tuple[int, ...],
                                  dead: int) -> None:
    rng = random.Random(f"{name}/{game}")
    for _ in range(1):  # more spots under --soak
        seats, dead_cards = random_spot(rng, counts, dead)
        expected, runouts = reference_equity(seats, dead_cards, game)
        result = compute_equity(seats, dead_cards, game)
        assert result.exact
        assert result.runouts == runouts == result.possible_runouts
        for seat, value in expected.items():
            assert result.equity[seat] == pytest.approx(float(value), abs=1e-9), (seats, seat)
        assert result.win[seat] + result.tie[seat] == pytest.approx(result.equity[seat])
        assert math.isclose(sum(result.equity.values()), 1.0, abs_tol=1e-12)
        assert result.community == ("community" in name)


def test_community_card_when_the_deck_runs_short() -> None:
    """Rule 15: eight seats on 6th street leave 4 cards for 8 last cards; one shared card."""
    rng = random.Random(15)
    seats, _ = random_spot(rng, (6,) * 8, 0)
    result = compute_equity(seats)
    assert result.community
    assert result.exact
    assert result.runouts == 4  # the four unseen cards, each the community card once


def test_unreachable_spot_is_refused_even_with_a_community_card() -> None:
    from table_controller.domain.equity.model import EquityError

    rng = random.Random(16)
    seats, dead = random_spot(rng, (3,) * 8, 6)  # 22 unseen, 8 x 3 + 1 needed
    with pytest.raises(EquityError, match="cannot complete every seat"):
        compute_equity(seats, dead)


@pytest.mark.parametrize("game", GAMES)
def test_monte_carlo_within_four_standard_errors_of_exact(game: Game) -> None:
    rng = random.Random(f"mc/{game}")
    for counts, dead in [((5, 5), 0), ((6, 6, 6), 0), ((6, 6, 6, 6), 0)]:
        seats, dead_cards = random_spot(rng, counts, dead)
        exact = compute_equity(seats, dead_cards, game, exact_limit=10**12)
        sampled = compute_equity(seats, dead_cards, game, samples=20_000, seed=7, exact_limit=0)
        assert exact.exact
        assert not sampled.exact
        assert sampled.runouts == 20_000
        assert sampled.stderr is not None
        for seat in seats:
            error = abs(sampled.equity[seat] - exact.equity[seat])
            assert error <= 4 * sampled.stderr[seat] + 1e-12, (seat, error, sampled.stderr)


def test_monte_carlo_is_reproducible_from_its_seed() -> None:
    seats = {1: parse_cards("AsKdQh"), 2: parse_cards("9h9d2s"), 5: parse_cards("7c7s8d")}
    first = compute_equity(seats, seed=42)
    again = compute_equity(seats, seed=42)
    other = compute_equity(seats, seed=43)
    assert not first.exact
    assert first == again
    assert first.equity != other.equity


def test_automatic_sampling_reaches_the_target_standard_error() -> None:
    """Eight seats on 3rd street (MC, community card): at most 0.25 points per seat."""
    rng = random.Random(8)
    seats, _ = random_spot(rng, (3,) * 8, 0)
    result = compute_equity(seats)
    assert not result.exact
    assert result.community
    assert result.stderr is not None
    assert max(result.stderr.values()) <= 0.0025


def test_heads_up_counting_equals_cross_product() -> None:
    """The heads-up counting methods equal the general cross product."""
    from table_controller.domain.equity.exact import _cross_product, _heads_up, _heads_up_split
    from table_controller.domain.equity.model import prepare

    rng = random.Random(2)
    for game in (Game.STUD, Game.RAZZ, Game.STUD8):
        for counts in [(5, 5), (6, 5), (6, 6), (7, 6), (4, 5)]:
            seats, dead = random_spot(rng, counts, 8)
            deal = prepare(seats, dead, game)
            counting = _heads_up_split if game is Game.STUD8 else _heads_up
            fast, slow = counting(deal), _cross_product(deal)
            assert fast[2] == slow[2] == runout_count(len(deal.unseen), deal.needs, False)
            assert list(fast[0]) == list(slow[0])
            assert list(fast[1]) == list(slow[1])


@st.composite
def heads_up_stud8(draw: st.DrawFn, *, streets: tuple[int, ...] = (4, 5, 6, 7),
                   max_runouts: int = 400_000) -> tuple[dict[int, list], list]:
    """Random heads-up moments (one seat maybe a card ahead), dead cards enough to keep
    the cross product (the slow path it is compared with) to at most ``max_runouts``."""
    deck = list(DECK)
    random.Random(draw(st.integers(0, 2**32))).shuffle(deck)
    street = draw(st.sampled_from(streets))
    ahead = draw(st.integers(0, 1)) if street < 7 else 0
    sizes = (street + ahead, street)
    seats = {1: deck[:sizes[0]], 2: deck[sizes[0]:sum(sizes)]}
    deck = deck[sum(sizes):]
    needs = [7 - size for size in sizes]
    fewest = next(d for d in range(len(deck) + 1)
                  if runout_count(len(deck) - d, needs, False) <= max_runouts)
    dead = deck[:draw(st.integers(fewest, min(fewest + 12, len(deck) - sum(needs))))]
    return seats, dead


@settings(max_examples=60)
@given(heads_up_stud8())
def test_stud8_heads_up_counting_equals_cross_product(
        spot: tuple[dict[int, list], list]) -> None:
    """Heads-up stud8 counting (issue 25) gives exactly the general method's integers:
    every seat's pot units, its scoop units and the run-out count."""
    from table_controller.domain.equity.exact import _cross_product, _heads_up_split
    from table_controller.domain.equity.model import prepare

    seats, dead = spot
    deal = prepare(seats, dead, Game.STUD8)
    fast, slow = _heads_up_split(deal), _cross_product(deal)
    assert fast[2] == slow[2] == deal.runouts
    assert list(fast[0]) == list(slow[0])
    assert list(fast[1]) == list(slow[1])


@settings(max_examples=40)
@given(heads_up_stud8(streets=(5, 6, 7), max_runouts=3_000))
def test_stud8_heads_up_equals_pokerkit_brute_force(
        spot: tuple[dict[int, list], list]) -> None:
    """The same spots against an independent evaluation: every run-out dealt in plain
    Python and valued by PokerKit's high and eight-or-better low hands."""
    seats, dead = spot
    expected, runouts = reference_equity(seats, dead, Game.STUD8)
    result = compute_equity(seats, dead, Game.STUD8)
    assert result.exact
    assert result.runouts == runouts
    for seat, value in expected.items():
        assert result.equity[seat] == pytest.approx(float(value), abs=1e-9), (seats, seat)


def _pokerkit_equity(seats: dict[int, list], dead: list, game: Game, samples: int) -> list[float]:
    import pokerkit

    random.seed(1234)  # calculate_equities samples with the random module
    deck = [PK_CARD[card] for card in DECK if card not in dead]
    return pokerkit.calculate_equities(
        [[[PK_CARD[card] for card in cards]] for cards in seats.values()],
        [], 7, 0, deck, HAND_TYPES[game], sample_count=samples,
    )


@pytest.mark.parametrize("game", GAMES)
def test_agrees_with_pokerkit_calculate_equities(game: Game) -> None:
    """PokerKit's Monte Carlo (its stud model: seven hole cards, no board) agrees
    within four of its standard errors (each sample's share is in [0, 1])."""
    rng = random.Random(f"pokerkit/{game}")
    samples = 400  # PokerKit values ~2,000 hands/s; 5,000 samples and more spots under --soak
    for counts in [(5, 5)]:
        seats, dead = random_spot(rng, counts, 2)
        ours = compute_equity(seats, dead, game)
        theirs = _pokerkit_equity(seats, dead, game, samples)
        for (seat, value), other in zip(sorted(ours.equity.items()), theirs, strict=True):
            se = max(math.sqrt(value * (1 - value) / samples), 1 / samples)
            assert abs(value - other) <= 4 * se, (seat, value, other)


@pytest.mark.soak
@pytest.mark.parametrize("game", GAMES)
def test_soak_exact_equals_brute_force_many_spots(game: Game) -> None:
    rng = random.Random(f"soak/{game}")
    for _ in range(40):
        name, counts, dead = rng.choice(SPOTS)
        seats, dead_cards = random_spot(rng, counts, dead)
        expected, _ = reference_equity(seats, dead_cards, game)
        result = compute_equity(seats, dead_cards, game)
        for seat, value in expected.items():
            assert result.equity[seat] == pytest.approx(float(value), abs=1e-9), (name, seats)


@pytest.mark.soak
@pytest.mark.parametrize("game", GAMES)
def test_soak_agrees_with_pokerkit(game: Game) -> None:
    rng = random.Random(f"soak-pokerkit/{game}")
    samples = 5_000
    for counts in [(5, 5), (4, 4), (6, 6, 6), (3, 3, 3)]:
        seats, dead = random_spot(rng, counts, 0)
        ours = compute_equity(seats, dead, game)
        theirs = _pokerkit_equity(seats, dead, game, samples)
        for (seat, value), other in zip(sorted(ours.equity.items()), theirs, strict=True):
            ours_se = ours.stderr[seat] if ours.stderr else 0.0
            se = math.hypot(max(math.sqrt(value * (1 - value) / samples), 1 / samples), ours_se)
            assert abs(value - other) <= 4 * se, (seat, value, other)
