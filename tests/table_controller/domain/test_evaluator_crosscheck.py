"""Evidence tests: our evaluator against independent ones (phevaluator, PokerKit).

Two evaluators induce the same ordering on a set of hands exactly when the map
"our strength -> their rank" is a bijection that is strictly decreasing (phevaluator
ranks 1 = best); checking that over all hands of a sample checks every pair of those
hands at once. The random-pair sign check below is the literal form of the same claim.

* all 2,598,960 five-card hands against phevaluator (the 7,462 classes of poker);
* 1,000,000 random seven-card hands and 200,000 six-card hands against phevaluator,
  categories included;
* 10,000 random seven-card hands against PokerKit (hand labels and ordering): PokerKit
  is pure Python at about 2,000 hands/s, too slow for a million in CI.
"""

from __future__ import annotations

import random
from array import array
from collections.abc import Iterator, Sequence
from itertools import combinations, islice, pairwise

import pytest

from table_controller.domain.cards import Card
from table_controller.domain.hands import HandCategory, HandValue, batch_evaluate

phevaluator = pytest.importorskip("phevaluator")

pytestmark = pytest.mark.slow

RANDOM_SEVEN = 1_000_000
RANDOM_SIX = 200_000
RANDOM_POKERKIT = 10_000
CHUNK = 100_000

# phevaluator's documented equivalence-class ranges (Cactus Kev numbering, 1 = best).
_PHEVAL_CATEGORY_FLOORS = [
    (10, HandCategory.STRAIGHT_FLUSH),
    (166, HandCategory.FOUR_OF_A_KIND),
    (322, HandCategory.FULL_HOUSE),
    (1599, HandCategory.FLUSH),
    (1609, HandCategory.STRAIGHT),
    (2467, HandCategory.THREE_OF_A_KIND),
    (3325, HandCategory.TWO_PAIR),
    (6185, HandCategory.PAIR),
    (7462, HandCategory.HIGH_CARD),
]


def _pheval_category(rank: int) -> HandCategory:
    for last, category in _PHEVAL_CATEGORY_FLOORS:
        if rank <= last:
            return category
    raise AssertionError(f"phevaluator rank out of range: {rank}")


def _random_hands(seed: int, size: int, count: int) -> Iterator[list[int]]:
    """``count`` uniformly random hands; one shuffle yields several disjoint hands."""
    rng = random.Random(seed)
    deck = list(range(52))
    per_shuffle = 52 // size
    made = 0
    while made < count:
        rng.shuffle(deck)
        for start in range(0, per_shuffle * size, size):
            yield deck[start : start + size]
        made += per_shuffle


class OrderCheck:
    """Accumulates (ours, theirs) pairs and checks the two orderings are identical."""

    def __init__(self) -> None:
        self.theirs_of: dict[int, int] = {}
        self.ours_of: dict[int, int] = {}

    def add(self, ours: Sequence[int], theirs: Sequence[int]) -> None:
        for mine, other in zip(ours, theirs, strict=True):
            # Same class on our side <=> same class on theirs.
            assert self.theirs_of.setdefault(mine, other) == other, (mine, other)
            assert self.ours_of.setdefault(other, mine) == mine, (mine, other)

    def assert_same_order(self) -> int:
        """Strictly increasing ours <=> strictly decreasing phevaluator rank."""
        ordered = sorted(self.theirs_of)
        for lower, higher in pairwise(ordered):
            assert self.theirs_of[lower] > self.theirs_of[higher], (lower, higher)
        return len(ordered)


def _pheval(hands: Sequence[Sequence[int]]) -> list[int]:
    evaluate = {
        5: phevaluator.evaluate_5cards,
        6: phevaluator.evaluate_6cards,
        7: phevaluator.evaluate_7cards,
    }[len(hands[0])]
    # Card ids are the same in both libraries: (rank - 2) * 4 + suit, clubs first.
    return [evaluate(*hand) for hand in hands]


def test_card_ids_agree_with_phevaluator() -> None:
    for index in (0, 1, 2, 3, 4, 51):
        assert phevaluator.Card(index).describe_card() == Card.from_index(index).code


def test_all_five_card_hands_against_phevaluator() -> None:
    check = OrderCheck()
    every_hand = combinations(range(52), 5)
    total = 0
    while chunk := list(islice(every_hand, CHUNK)):
        check.add(batch_evaluate(chunk), _pheval(chunk))
        total += len(chunk)
    assert total == 2_598_960
    assert check.assert_same_order() == 7_462


def test_million_seven_card_hands_against_phevaluator() -> None:
    check = OrderCheck()
    ours_all, theirs_all = array("q"), array("q")
    hands = _random_hands(seed=1, size=7, count=RANDOM_SEVEN)
    categories_seen: set[HandCategory] = set()
    while chunk := list(islice(hands, CHUNK)):
        ours, theirs = batch_evaluate(chunk), _pheval(chunk)
        check.add(ours, theirs)
        ours_all.extend(ours)
        theirs_all.extend(theirs)
    assert len(ours_all) >= RANDOM_SEVEN
    # Categories: checked once per distinct class, which covers every hand.
    for mine, other in check.theirs_of.items():
        category = HandValue(mine).category
        assert category is _pheval_category(other), (mine, other)
        categories_seen.add(category)
    assert categories_seen == set(HandCategory)
    check.assert_same_order()
    # The literal pairwise form: random pairs compare the same way in both.
    rng = random.Random(2)
    n = len(ours_all)
    for _ in range(RANDOM_SEVEN):
        i, j = rng.randrange(n), rng.randrange(n)
        ours_sign = (ours_all[i] > ours_all[j]) - (ours_all[i] < ours_all[j])
        theirs_sign = (theirs_all[j] > theirs_all[i]) - (theirs_all[j] < theirs_all[i])
        assert ours_sign == theirs_sign, (i, j)


def test_six_card_hands_against_phevaluator() -> None:
    check = OrderCheck()
    hands = list(_random_hands(seed=3, size=6, count=RANDOM_SIX))
    for start in range(0, len(hands), CHUNK):
        chunk = hands[start : start + CHUNK]
        check.add(batch_evaluate(chunk), _pheval(chunk))
    check.assert_same_order()


def test_seven_card_hands_against_pokerkit() -> None:
    pokerkit = pytest.importorskip("pokerkit")
    labels = {
        HandCategory.HIGH_CARD: pokerkit.Label.HIGH_CARD,
        HandCategory.PAIR: pokerkit.Label.ONE_PAIR,
        HandCategory.TWO_PAIR: pokerkit.Label.TWO_PAIR,
        HandCategory.THREE_OF_A_KIND: pokerkit.Label.THREE_OF_A_KIND,
        HandCategory.STRAIGHT: pokerkit.Label.STRAIGHT,
        HandCategory.FLUSH: pokerkit.Label.FLUSH,
        HandCategory.FULL_HOUSE: pokerkit.Label.FULL_HOUSE,
        HandCategory.FOUR_OF_A_KIND: pokerkit.Label.FOUR_OF_A_KIND,
        HandCategory.STRAIGHT_FLUSH: pokerkit.Label.STRAIGHT_FLUSH,
    }
    hands = list(_random_hands(seed=4, size=7, count=RANDOM_POKERKIT))
    ours = batch_evaluate(hands)
    entries = [
        pokerkit.StandardHighHand.from_game(
            "".join(Card.from_index(i).code for i in hand)
        ).entry
        for hand in hands
    ]
    for mine, entry in zip(ours, entries, strict=True):
        assert labels[HandValue(mine).category] == entry.label
    # PokerKit's entry index grows with strength, so negate it for OrderCheck.
    check = OrderCheck()
    check.add(ours, [-entry.index for entry in entries])
    check.assert_same_order()
