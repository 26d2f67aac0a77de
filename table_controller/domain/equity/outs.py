"""Outs heads-up from 5th street on: the unseen cards that put the player behind ahead.

A seat is *ahead* when, were the hand shown down now with the cards each seat holds,
it would take more than half the pot (``stud8``: both halves counted, so a seat
with the high facing a seat with the low is level, and neither has outs). The
player behind's outs are the unseen cards that, given to it as its next card, put
it ahead of the other seat's cards as they are now — the broadcast convention: the
leader's own next card is not considered.

Only heads-up, with both seats on the same street, 5th or 6th (7th street has no
next card), and not when the next card would be the community card of rule 15.
"""

from __future__ import annotations

from dataclasses import dataclass

from table_controller.domain.cards import Card
from table_controller.domain.equity.evaluate import Game
from table_controller.domain.equity.model import Deal
from table_controller.domain.equity.readings import current_value

__all__ = ["Outs", "outs"]


@dataclass(frozen=True, slots=True)
class Outs:
    """Seat ``seat`` is behind seat ``against``; ``cards`` would put it ahead."""

    seat: int
    against: int
    cards: tuple[Card, ...]


def _share(mine: tuple[int, int], theirs: tuple[int, int], game: Game) -> float:
    """My share of the pot at a showdown now, given both current scores."""
    def split(a: int, b: int) -> float:
        return 1.0 if a > b else 0.5 if a == b else 0.0

    high = split(mine[0], theirs[0])
    if game is Game.STUD8 and (mine[1] or theirs[1]):
        return (high + split(mine[1], theirs[1])) / 2
    return high


def outs(deal: Deal) -> Outs | None:
    """The outs of the player behind, or ``None`` where outs do not apply (see above)."""
    if len(deal.seats) != 2 or deal.community:
        return None
    counts = {len(cards) for cards in deal.cards}
    if len(counts) != 1 or counts.pop() not in (5, 6):
        return None
    values = [current_value(cards, deal.game) for cards in deal.cards]
    share = _share(values[0], values[1], deal.game)
    if share == 0.5:
        return None
    behind, ahead = (0, 1) if share < 0.5 else (1, 0)
    hand = deal.cards[behind]
    cards = tuple(
        card
        for card in map(Card.from_index, deal.unseen)
        if _share(current_value((*hand, card), deal.game), values[ahead], deal.game) > 0.5
    )
    return Outs(deal.seats[behind], deal.seats[ahead], cards)
