"""A slow, obviously-correct equity reference for the tests of table_controller.domain.equity.

Every run-out is dealt one by one in plain Python (itertools), every seat's seven
cards are valued with PokerKit's hand types (``StandardHighHand``;
``RegularLowHand``, ace-to-five, for razz; ``EightOrBetterLowHand`` for the stud8
low half) and the pot is shared the way PokerKit's own ``calculate_equities`` shares
it, in exact fractions. Nothing is shared with the code under test except the card
type. Values are cached per seven-card hand, since a seat meets the same hand in
many run-outs; keep spots small (up to ~100,000 run-outs).
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping, Sequence
from fractions import Fraction
from itertools import combinations
from typing import Any

import pokerkit

from table_controller.domain.cards import DECK, Card
from table_controller.domain.equity.evaluate import Game

HAND_TYPES: dict[Game, tuple[Any, ...]] = {
    Game.STUD: (pokerkit.StandardHighHand,),
    Game.RAZZ: (pokerkit.RegularLowHand,),
    Game.STUD8: (pokerkit.StandardHighHand, pokerkit.EightOrBetterLowHand),
}
PK_CARD: dict[Card, Any] = {card: next(iter(pokerkit.Card.parse(card.code))) for card in DECK}


def _runouts(
    unseen: Sequence[Card], needs: Sequence[int]
) -> Iterator[tuple[tuple[Card, ...], ...]]:
    """Every way to give seat i ``needs[i]`` of the unseen cards (sets, disjoint)."""
    if not needs:
        yield ()
        return
    for mine in combinations(unseen, needs[0]):
        rest = [card for card in unseen if card not in mine]
        for others in _runouts(rest, needs[1:]):
            yield (mine, *others)


def reference_equity(
    seats: Mapping[int, Sequence[Card]], dead: Sequence[Card], game: Game
) -> tuple[dict[int, Fraction], int]:
    """Exact pot equity per seat by brute force, and the number of run-outs."""
    order = sorted(seats)
    used = {card for cards in seats.values() for card in cards} | set(dead)
    unseen = [card for card in DECK if card not in used]
    needs = [7 - len(seats[seat]) for seat in order]
    community = sum(needs) > len(unseen)
    if community:  # rule 15: the last card of every seat still short is one shared card
        sharing = [need > 0 for need in needs]
        needs = [need - 1 if share else need for need, share in zip(needs, sharing, strict=True)]
    cache: dict[frozenset[Card], tuple[Any, ...]] = {}

    def hands_of(cards: frozenset[Card]) -> tuple[Any, ...]:
        if cards not in cache:
            hole = [PK_CARD[card] for card in cards]
            cache[cards] = tuple(t.from_game_or_none(hole, ()) for t in HAND_TYPES[game])
        return cache[cards]

    totals = dict.fromkeys(order, Fraction(0))
    count = 0
    for runout in _runouts(unseen, needs):
        left = [card for card in unseen if not any(card in own for own in runout)]
        for shared in left if community else [None]:
            finals = []
            for i, seat in enumerate(order):
                extra = (shared,) if community and sharing[i] and shared else ()
                finals.append(hands_of(frozenset((*seats[seat], *runout[i], *extra))))
            count += 1
            qualifying = 0
            shares = dict.fromkeys(order, Fraction(0))
            for kind in range(len(HAND_TYPES[game])):
                values = [final[kind] for final in finals]
                present = [value for value in values if value is not None]
                if not present:
                    continue  # no qualifying low: that half goes to the high
                qualifying += 1
                best = max(present)
                winners = [seat for seat, v in zip(order, values, strict=True) if v == best]
                for seat in winners:
                    shares[seat] += Fraction(1, len(winners))
            for seat in order:
                totals[seat] += shares[seat] / qualifying
    return {seat: total / count for seat, total in totals.items()}, count


def random_spot(
    rng: random.Random, counts: Sequence[int], dead: int
) -> tuple[dict[int, list[Card]], list[Card]]:
    """Random seats (numbers 1..8, sorted) holding ``counts`` cards, and ``dead`` dead cards."""
    deck = list(DECK)
    rng.shuffle(deck)
    numbers = sorted(rng.sample(range(1, 9), len(counts)))
    seats = {}
    for number, count in zip(numbers, counts, strict=True):
        seats[number], deck = deck[:count], deck[count:]
    return seats, deck[:dead]
