"""Pots: side pots from what each seat put in, pot splits and the odd chip.

Pure arithmetic on chip counts, shared by the betting engine
(:mod:`table_controller.domain.engine.betting`) and anything that needs to show pots.

Side pots
---------
Every distinct contribution level (antes included) cuts a slice: the slice
between two levels holds what every seat put in between them, and is won only
by live seats that put in at least the upper level. Neighbouring slices with
the same eligible seats merge into one pot. So a player all-in for less than the
ante is eligible only for the antes they matched, and an all-in player only for
what they could match.

The odd chip
------------
A pot that does not divide evenly among tied winners leaves one or more odd
chips. They go one each, in turn, to the tied winners ranked by their highest
card by rank and then suit (spades > hearts > diamonds > clubs), looking at
every card the player holds: the usual casino rule "odd chip to the high card by
suit" (docs/rules.md). :func:`odd_chip_order` builds that ranking from the cards.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from table_controller.domain.cards import Card


class Comparable(Protocol):
    """A hand value: anything ordered with ``<`` and ``==`` (e.g. ``HandValue``)."""

    def __lt__(self, other: Any, /) -> bool:
        """Whether this hand loses to ``other``."""
        ...


@dataclass(frozen=True, slots=True)
class Pot:
    """One pot: its chips and the live seats that can win it, in seat order."""

    amount: int
    eligible: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class PotShare:
    """How one pot was divided: ``shares`` maps winning seats to the chips they got."""

    pot: int
    """Index of the pot (0 = main pot, then side pots in order)."""
    amount: int
    winners: tuple[int, ...]
    shares: tuple[tuple[int, int], ...]


def build_pots(contributions: Mapping[int, int], live: Collection[int]) -> tuple[Pot, ...]:
    """The main pot and side pots for these total contributions.

    ``contributions`` maps each seat (folded ones too) to everything it put in
    this hand; ``live`` are the seats that can still win. A slice no live seat
    reached (only possible after a floor kill) joins the pot below it so no chip
    is ever lost.
    """
    pots: list[Pot] = []
    previous = 0
    for level in sorted({amount for amount in contributions.values() if amount > 0}):
        amount = sum(min(c, level) - min(c, previous) for c in contributions.values())
        eligible = tuple(sorted(s for s, c in contributions.items() if s in live and c >= level))
        if pots and (pots[-1].eligible == eligible or not eligible):
            pots[-1] = Pot(pots[-1].amount + amount, pots[-1].eligible)
        else:
            pots.append(Pot(amount, eligible))
        previous = level
    return tuple(pots)


def split(amount: int, winners_in_odd_chip_order: Sequence[int]) -> dict[int, int]:
    """Divide ``amount`` among the winners; odd chips go one each from the first.

    The winners must already be ranked for the odd chip (:func:`odd_chip_order`).
    """
    if not winners_in_odd_chip_order:
        raise ValueError("a pot needs at least one winner")
    share, odd = divmod(amount, len(winners_in_odd_chip_order))
    return {seat: share + (1 if i < odd else 0) for i, seat in enumerate(winners_in_odd_chip_order)}


def odd_chip_order(cards_by_seat: Mapping[int, Iterable[Card]]) -> tuple[int, ...]:
    """Seats ranked for the odd chip: highest card by rank, then suit, first.

    Pass every card each player holds (hole and up cards). Seats without cards
    come last, in seat order.
    """

    def key(seat: int) -> tuple[int, int, int]:
        cards = list(cards_by_seat[seat])
        if not cards:
            return (0, 0, seat)
        top = max(cards)
        return (-top.rank, -int(top.suit), seat)

    return tuple(sorted(cards_by_seat, key=key))


def pot_winners(
    pot: Pot,
    values: Mapping[int, Comparable],
    low_values: Mapping[int, int] | None = None,
) -> tuple[list[int], list[int]]:
    """The seats that win ``pot``: (best high hands, best qualifying lows).

    ``values`` holds every live seat's hand value (the high hand; in razz the
    low, as a comparable value). ``low_values`` (stud8 only, docs/rules.md
    "Variants"): every live seat's eight-or-better low score, bigger is better,
    0 = no low; the low list is empty when no eligible seat has a low. Each pot
    is decided among its own eligible seats. A pot whose eligible seats have no
    value (cannot happen when every live seat is valued) goes to the best valued
    hand of all.
    """
    contenders = [s for s in pot.eligible if s in values] or sorted(values)
    if not contenders:
        raise ValueError("no hand values to award the pot with")
    best = contenders[0]
    for seat in contenders[1:]:
        if values[best] < values[seat]:
            best = seat
    high = [s for s in contenders if not (values[s] < values[best] or values[best] < values[s])]
    low: list[int] = []
    if low_values is not None:
        lows = {s: low_values.get(s, 0) for s in contenders}
        top = max(lows.values())
        if top > 0:
            low = [s for s in contenders if lows[s] == top]
    return high, low


def award_pots(
    pots: Sequence[Pot],
    values: Mapping[int, Comparable],
    odd_chip_seats: Sequence[int],
    low_values: Mapping[int, int] | None = None,
) -> tuple[PotShare, ...]:
    """Give every pot to the best hand among its eligible seats, splitting ties.

    ``values`` holds the hand value of every live seat; ``odd_chip_seats`` ranks
    seats for the odd chip (seats missing from it come after, in seat order).
    With ``low_values`` (stud8, see :func:`pot_winners`) each pot is split: the
    odd chip goes to the high half, the low half to the best qualifying low, and
    the high hand scoops the pot when no eligible seat has a low. Each half is
    divided among its tied winners like a whole pot, so a seat winning one half
    and tying the other is "quartered" by the arithmetic alone.
    """
    rank = {seat: i for i, seat in enumerate(odd_chip_seats)}

    def ranked(seats: list[int]) -> list[int]:
        return sorted(seats, key=lambda s: (rank.get(s, len(rank)), s))

    shares: list[PotShare] = []
    for index, pot in enumerate(pots):
        high, low = pot_winners(pot, values, low_values)
        if low:
            low_half = pot.amount // 2  # the odd chip stays with the high half
            divided = split(pot.amount - low_half, ranked(high))
            for seat, chips in split(low_half, ranked(low)).items():
                divided[seat] = divided.get(seat, 0) + chips
        else:
            divided = split(pot.amount, ranked(high))
        shares.append(
            PotShare(
                pot=index,
                amount=pot.amount,
                winners=tuple(sorted(set(high) | set(low))),
                shares=tuple(sorted(divided.items())),
            )
        )
    return tuple(shares)
