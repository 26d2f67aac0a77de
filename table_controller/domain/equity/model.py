"""One moment of a hand, checked and prepared for equity; how a pot is shared.

:func:`prepare` checks the seats' cards and the dead cards (every problem is an
:class:`EquityError` whose one-line message names it) and returns a :class:`Deal`:
what every seat holds (as summed evaluation codes), what it still needs, the unseen
cards, and whether the last card is a community card (docs/rules.md rule 15).

Card counts (the rule documented in docs/equity.md): every live seat holds 3 to 7
cards, and the counts differ by at most one — the same street for everybody, or
a street being dealt (some seats already have its card). Anything else no moment of
a correct deal produces, so it is refused rather than guessed at.

:func:`pot_units` shares pots in integer units: a whole pot is :data:`UNITS`
(divisible by 2k for every k-way split of up to eight seats), so exact
enumeration sums integers and its result is exact up to the final division.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from math import comb, perm
from typing import Final

import numpy as np
import numpy.typing as npt

from table_controller.domain.cards import Card
from table_controller.domain.equity.evaluate import CODE, SUIT_BITS, Game, Scores

__all__ = ["UNITS", "Deal", "EquityError", "pot_units", "prepare", "runout_count"]

UNITS: Final = 1680
"""A whole pot in share units: lcm(1..8) * 2, so halves split up to 8 ways stay whole."""
_HALF: Final = UNITS // 2
_WHOLE_SPLIT: Final = np.array([0, *(UNITS // k for k in range(1, 9))], dtype=np.int64)
_HALF_SPLIT: Final = np.array([0, *(_HALF // k for k in range(1, 9))], dtype=np.int64)

MAX_SEATS: Final = 8
MIN_CARDS: Final = 3
MAX_CARDS: Final = 7


class EquityError(ValueError):
    """The cards given cannot be a moment of a stud hand; the message says why."""


@dataclass(frozen=True, slots=True)
class Deal:
    """A checked moment of a hand, ready for enumeration or sampling.

    ``needs[i]`` is how many cards seat ``seats[i]`` still receives of its own;
    with ``community`` one more card, shared, completes every seat in
    ``community_seats`` (those still short of seven).
    """

    game: Game
    seats: tuple[int, ...]
    cards: tuple[tuple[Card, ...], ...]
    dead: tuple[Card, ...]
    base_code: npt.NDArray[np.int64]
    base_bits: npt.NDArray[np.uint64]
    needs: tuple[int, ...]
    community: bool
    community_seats: tuple[bool, ...]
    unseen: tuple[int, ...]

    @property
    def runouts(self) -> int:
        """How many different run-outs (cards to every seat, in seat order) exist."""
        return runout_count(len(self.unseen), self.needs, self.community)

    def with_community_card(self, index: int) -> Deal:
        """The same deal once the community card ``index`` is known (it joins every
        sharing seat's cards and leaves the unseen cards)."""
        share = np.array(self.community_seats, dtype=bool)
        return Deal(
            game=self.game,
            seats=self.seats,
            cards=self.cards,
            dead=self.dead,
            base_code=self.base_code + np.where(share, CODE[index], 0),
            base_bits=self.base_bits + np.where(share, SUIT_BITS[index], np.uint64(0)),
            needs=self.needs,
            community=False,
            community_seats=(False,) * len(self.seats),
            unseen=tuple(card for card in self.unseen if card != index),
        )


def runout_count(unseen: int, needs: Sequence[int], community: bool) -> int:
    """Run-outs of ``needs`` own cards per seat (plus one shared card) from ``unseen``."""
    total = 1
    left = unseen
    for need in needs:
        total *= comb(left, need)
        left -= need
    return total * perm(left, 1) if community else total


def _check_cards(seats: Mapping[int, Sequence[Card]], dead: Sequence[Card]) -> None:
    where: dict[Card, str] = {}
    for owner, cards in [*((f"seat {s}", c) for s, c in seats.items()), ("dead", dead)]:
        for card in cards:
            if card in where:
                if where[card] == owner:
                    raise EquityError(f"card {card} appears twice on {owner}")
                raise EquityError(f"card {card} is on {where[card]} and on {owner}")
            where[card] = owner


def prepare(
    seats: Mapping[int, Sequence[Card]], dead: Sequence[Card] = (), game: Game = Game.STUD
) -> Deal:
    """Check a moment of a hand and prepare it; raises :class:`EquityError` naming the problem."""
    if len(seats) < 2:
        raise EquityError(f"equity needs at least two live seats, got {len(seats)}")
    for seat, cards in seats.items():
        if not 1 <= seat <= MAX_SEATS:
            raise EquityError(f"seat {seat} is not a seat number 1..{MAX_SEATS}")
        if not MIN_CARDS <= len(cards) <= MAX_CARDS:
            raise EquityError(
                f"seat {seat} has {len(cards)} cards: a live seat holds"
                f" {MIN_CARDS} to {MAX_CARDS}"
            )
    _check_cards(seats, dead)
    counts = {len(cards) for cards in seats.values()}
    if max(counts) - min(counts) > 1:
        raise EquityError(
            f"seats hold {min(counts)} and {max(counts)} cards: live seats hold the same"
            " number of cards, or one more while a street is being dealt"
        )
    order = tuple(sorted(seats))
    held = tuple(tuple(seats[seat]) for seat in order)
    taken = {card.index for cards in held for card in cards} | {card.index for card in dead}
    unseen = tuple(i for i in range(52) if i not in taken)
    needs = tuple(MAX_CARDS - len(cards) for cards in held)
    community = sum(needs) > len(unseen)
    sharing = tuple(need > 0 for need in needs) if community else (False,) * len(order)
    if community:
        # Rule 15: every seat still short of seven gets its last card as one shared card.
        needs = tuple(n - 1 if share else n for n, share in zip(needs, sharing, strict=True))
        if sum(needs) + 1 > len(unseen):
            raise EquityError(
                f"the {len(unseen)} unseen cards cannot complete every seat, even with a"
                f" community card ({sum(needs) + 1} needed)"
            )
    base_code = np.array([int(CODE[[c.index for c in cards]].sum()) for cards in held])
    base_bits = np.array(
        [int(SUIT_BITS[[c.index for c in cards]].sum()) for cards in held], dtype=np.uint64
    )
    return Deal(
        game=game,
        seats=order,
        cards=held,
        dead=tuple(dead),
        base_code=base_code.astype(np.int64),
        base_bits=base_bits,
        needs=needs,
        community=community,
        community_seats=sharing,
        unseen=unseen,
    )


def pot_units(scores: Scores) -> npt.NDArray[np.int64]:
    """Each seat's share of the pot, in :data:`UNITS`, per run-out.

    ``scores`` holds ``(seats, runouts)`` arrays (bigger is better). High or razz:
    the best score takes the pot, equal best scores split it. Stud8: half to the
    best high, half to the best qualifying low (low score > 0), each half split
    among equals; with no qualifying low the high takes the whole pot.
    """
    best = scores.primary.max(axis=0)
    top = scores.primary == best
    ways = top.sum(axis=0)
    if scores.low is None:
        whole: npt.NDArray[np.int64] = top * _WHOLE_SPLIT[ways]
        return whole
    best_low = scores.low.max(axis=0)
    low_top = (scores.low == best_low) & (best_low > 0)
    low_ways = low_top.sum(axis=0)
    split: npt.NDArray[np.int64] = np.where(
        best_low > 0,
        top * _HALF_SPLIT[ways] + low_top * _HALF_SPLIT[low_ways],
        top * _WHOLE_SPLIT[ways],
    )
    return split
