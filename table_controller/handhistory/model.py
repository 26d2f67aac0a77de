"""A Seven Card Stud hand history as typed data: the common ground of PHH import and export.

A :class:`StudHand` is what a PHH file of a stud variant (``F7S`` Seven Card Stud,
``FR`` Razz, ``F7S/8`` Stud Hi-Lo) says, in our terms:
players are *seats* (PHH ``p1`` is the first entry of :attr:`StudHand.seats`,
the seat nearest the dealer's left), and the PHH ``actions`` list becomes an
ordered tuple of :class:`Deal` (cards to one seat on one street) and
:class:`Bet` (one betting or showdown action) items, each carrying the street
it belongs to. Everything here is plain data; parsing and writing live in
:mod:`~table_controller.handhistory.reader` and
:mod:`~table_controller.handhistory.writer`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from table_controller.domain.cards import Card
from table_controller.domain.hands import Game

STREETS = (3, 4, 5, 6, 7)
"""The five streets of a stud hand."""

BetVerb = Literal["pb", "cbr", "cc", "f", "sm"]
"""PHH betting verbs: bring-in, complete/bet/raise to, check/call, fold, show/muck."""


class PhhError(ValueError):
    """A hand history that cannot be read, imported or exported; ``str()`` says why."""


@dataclass(frozen=True, slots=True)
class Deal:
    """Cards dealt to ``seat`` on ``street`` (three on 3rd street, one later).

    ``community`` marks the rule-15 community card (PHH ``d db``); its seat is 0.
    """

    seat: int
    street: int
    cards: tuple[Card, ...]
    community: bool = False


@dataclass(frozen=True, slots=True)
class Bet:
    """One PHH player action on ``street``.

    ``amount`` is the ``cbr`` total for the round; ``cards`` are the cards shown
    by ``sm`` (empty: mucked unseen).
    """

    seat: int
    street: int
    verb: BetVerb
    amount: int | None = None
    cards: tuple[Card, ...] = ()


HandItem = Deal | Bet
"""One entry of a hand's action list."""


@dataclass(frozen=True, slots=True)
class StudHand:
    """One Seven Card Stud hand (see the module docstring).

    ``starting_stacks`` and ``antes`` are per player, in :attr:`seats` order,
    stacks *before* the ante as in PHH. ``filled`` lists the cards this
    project invented for unknown (``??``) cards, if it was asked to.
    ``extra`` keeps other PHH fields (names, event, ...) as read, for the
    record; ``betting_known``/``stacks_known`` are False when an export had to
    supply placeholders (a card-only table); ``unfinished`` is True when the
    recording stopped mid-hand.
    """

    seats: tuple[int, ...]
    antes: tuple[int, ...]
    bring_in: int
    small_bet: int
    big_bet: int
    starting_stacks: tuple[int, ...]
    items: tuple[HandItem, ...]
    finishing_stacks: tuple[int, ...] | None = None
    ante_trimming_status: bool = True
    seat_count: int | None = None
    hand: int | str | None = None
    filled: tuple[Card, ...] = ()
    betting_known: bool = True
    stacks_known: bool = True
    community: Card | None = None
    unfinished: bool = False
    """The recording ended in the middle of this hand (two or more seats still in,
    cards still to come): the actions stop where the recording did."""
    extra: Mapping[str, object] = field(default_factory=dict)
    game: Game = Game.STUD
    """The game (PHH ``variant``: ``F7S`` stud, ``FR`` razz, ``F7S/8`` stud8)."""

    def player(self, seat: int) -> int:
        """The PHH player number (1-based) of ``seat``."""
        return self.seats.index(seat) + 1

    @property
    def deals(self) -> tuple[Deal, ...]:
        """Every :class:`Deal` item, in order."""
        return tuple(item for item in self.items if isinstance(item, Deal))

    @property
    def bets(self) -> tuple[Bet, ...]:
        """Every :class:`Bet` item, in order."""
        return tuple(item for item in self.items if isinstance(item, Bet))

    def streets(self) -> dict[int, dict[int, tuple[Card, ...]]]:
        """street -> seat -> the cards dealt to it on that street (seat deals only)."""
        out: dict[int, dict[int, tuple[Card, ...]]] = {}
        for deal in self.deals:
            if deal.community:
                continue
            per_seat = out.setdefault(deal.street, {})
            per_seat[deal.seat] = per_seat.get(deal.seat, ()) + deal.cards
        return out

    def cards_of(self, seat: int) -> tuple[Card, ...]:
        """Every card ``seat`` received, in deal order."""
        return tuple(card for deal in self.deals if deal.seat == seat and not deal.community
                     for card in deal.cards)

    def folds(self) -> dict[int, int]:
        """seat -> the street on whose betting it folded."""
        return {bet.seat: bet.street for bet in self.bets if bet.verb == "f"}

    def bring_in_seat(self) -> int | None:
        """The seat that posted the bring-in (``pb``), if any."""
        return next((bet.seat for bet in self.bets if bet.verb == "pb"), None)
