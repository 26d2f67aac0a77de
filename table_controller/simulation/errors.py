"""Dealing-error injection: turn a clean physical deal into one with a known mistake.

Each :class:`ErrorKind` is a mistake a dealer (or a foreign card) makes on a real
table, named by the alert code the engine must raise for it. :func:`inject`
rewrites a clean :class:`PhysicalDeal`'s events so that exactly that mistake
happens once, the way it would physically (the rest of the hand is dealt as a
dealer would go on, or the hand stops right after the mistake when going on
would be ambiguous), and says which alert (code, seat) is expected.

Pure and seeded: randomness comes from the caller's :class:`random.Random`.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from table_controller.domain.cards import DECK, Card
from table_controller.domain.events import (
    CardPlaced,
    CardRemoved,
    ConsoleAction,
    HandStarted,
    TableEvent,
    UnknownTag,
)
from table_controller.domain.zones import BURN, MUCK, Zone, ZoneKind
from table_controller.simulation.physical import PhysicalDeal

SECOND_DECK = "blue"
"""Deck name used for a second physical copy of a card (duplicate cards)."""


class ErrorKind(StrEnum):
    """Injectable dealing errors; each value is the alert code that must follow."""

    HOLE_CARD_EXPOSED = "hole_card_exposed"
    BOTH_HOLE_CARDS_EXPOSED = "both_hole_cards_exposed"
    UPCARD_DEALT_DOWN = "upcard_dealt_down"
    LAST_CARD_EXPOSED = "last_card_exposed"
    MISSING_BURN = "missing_burn"
    EXTRA_BURN = "extra_burn"
    OUT_OF_ORDER = "out_of_order"
    CARD_TO_INACTIVE_SEAT = "card_to_inactive_seat"
    UNKNOWN_CARD = "unknown_card"
    DUPLICATE_CARD = "duplicate_card"
    CARD_FROM_MUCK = "card_from_muck"
    TOO_MANY_CARDS = "too_many_cards"
    SHORT_HAND = "short_hand"


NEEDS_SEVENTH: frozenset[ErrorKind] = frozenset(
    {ErrorKind.LAST_CARD_EXPOSED, ErrorKind.TOO_MANY_CARDS, ErrorKind.SHORT_HAND}
)
"""Kinds that need a hand reaching 7th street with two live seats or more."""


@dataclass(frozen=True, slots=True)
class Injection:
    """A deal with one injected error and the alert it must raise.

    ``kind`` is an :class:`ErrorKind` or a console kind
    (:class:`~.console_errors.ConsoleErrorKind`): both are the alert code.
    """

    kind: str
    events: tuple[TableEvent, ...]
    seat: int | None
    street: int | None
    witnesses: tuple[tuple[int, ...], ...] = ()
    """The cards the mistake is judged against, besides the card put down differently
    (indices in :attr:`events`), in groups: the table sees the mistake only if it read
    at least one card of every group; an empty group is a witness never dealt (the
    hand ended before it). docs/simulation.md "Masked": with a witness unread the
    table's picture is a legal deal's, so the injection is undetectable there."""


@dataclass(frozen=True, slots=True)
class _Deal:
    """Index of a deal's events: which event is which seat's k-th card."""

    index: int
    seat: int
    number: int


def _seat_deals(events: Sequence[TableEvent]) -> list[_Deal]:
    received: dict[int, int] = {}
    out = []
    for index, event in enumerate(events):
        if isinstance(event, CardPlaced) and event.zone.seat is not None:
            seat = event.zone.seat
            received[seat] = received.get(seat, 0) + 1
            out.append(_Deal(index, seat, received[seat]))
    return out


def _unused(deal: PhysicalDeal, events: Sequence[TableEvent]) -> list[Card]:
    used = {e.card for e in events if isinstance(e, CardPlaced | CardRemoved)}
    return [card for card in DECK if card not in used]


def _with_zone(event: TableEvent, zone: Zone) -> TableEvent:
    assert isinstance(event, CardPlaced)
    return replace(event, zone=zone)


def _street(number: int) -> int:
    return 3 if number <= 3 else number


def inject(deal: PhysicalDeal, kind: ErrorKind, rng: random.Random) -> Injection | None:
    """``deal`` with one ``kind`` error injected, or ``None`` if the deal gives it no
    chance (e.g. no empty seat for a card to an inactive seat)."""
    events = list(deal.events)
    deals = _seat_deals(events)
    live = set(deal.live_seats)

    def pick(candidates: list[_Deal]) -> _Deal | None:
        return rng.choice(candidates) if candidates else None

    if kind in (ErrorKind.HOLE_CARD_EXPOSED, ErrorKind.BOTH_HOLE_CARDS_EXPOSED):
        seats = [d.seat for d in deals if d.number == 3]
        if not seats:
            return None
        seat = rng.choice(seats)
        mine = {d.number: d for d in deals if d.seat == seat}
        exposed = [1, 2] if kind is ErrorKind.BOTH_HOLE_CARDS_EXPOSED else [rng.choice([1, 2])]
        for number in exposed:
            events[mine[number].index] = _with_zone(events[mine[number].index], Zone.up(seat))
        if kind is ErrorKind.BOTH_HOLE_CARDS_EXPOSED:
            # Rule 5: the hand is dead; the dealer deals it nothing more.
            dead = {d.index for d in deals if d.seat == seat and d.number >= 3}
            folds = _fold_events(events, seat)
            gone = dead | folds
            events = [e for i, e in enumerate(events) if i not in gone]
            if len({d.seat for d in deals}) <= 2:
                return None  # a dead hand heads-up ends the hand: nothing to compare
            # Witness: the other exposed hole card (each is judged against the other).
            holes = tuple((mine[n].index - sum(1 for i in gone if i < mine[n].index),)
                          for n in (1, 2))
            return Injection(kind, tuple(events), seat, 3, holes)
        else:
            # Rule 5: the dealer deals the third card face down instead.
            third = mine[3].index
            events[third] = _with_zone(events[third], Zone.down(seat))
        return Injection(kind, tuple(events), seat, 3)

    if kind is ErrorKind.UPCARD_DEALT_DOWN:
        chosen = pick([d for d in deals if 3 <= d.number <= 6])
        if chosen is None:
            return None
        events[chosen.index] = _with_zone(events[chosen.index], Zone.down(chosen.seat))
        return Injection(kind, tuple(events), chosen.seat, _street(chosen.number))

    if kind is ErrorKind.LAST_CARD_EXPOSED:
        chosen = pick([d for d in deals if d.number == 7])
        if chosen is None:
            return None
        events[chosen.index] = _with_zone(events[chosen.index], Zone.up(chosen.seat))
        return Injection(kind, tuple(events), chosen.seat, 7)

    burns = [i for i, e in enumerate(events) if isinstance(e, CardPlaced) and e.zone == BURN]
    if kind is ErrorKind.MISSING_BURN:
        if not burns:
            return None
        index = rng.choice(burns)
        street = _street(next((d.number for d in deals if d.index > index), 7))
        del events[index]
        return Injection(kind, tuple(events), None, street)

    if kind is ErrorKind.EXTRA_BURN:
        if not burns:
            return None
        index = rng.choice(burns)
        street = _street(next((d.number for d in deals if d.index > index), 7))
        spare = _unused(deal, events)
        if not spare:
            return None
        events.insert(index + 1, CardPlaced(BURN, rng.choice(spare), events[index].at))
        witnesses: tuple[tuple[int, ...], ...] = ()
        if 4 <= street <= 6:
            # A second burn on 4th-6th street looks like that street's cards all unread
            # and the next street's burn until the 6th street's cards come (face up,
            # where the other reading has the river, face down): those are the witness.
            witnesses = (tuple(d.index + 1 for d in deals
                               if d.number == 6 and d.index > index),)
        return Injection(kind, tuple(events), None, street, witnesses)

    if kind is ErrorKind.OUT_OF_ORDER:
        pairs = [
            (a, b) for a, b in itertools.pairwise(deals)
            if b.index == a.index + 1 and a.number == b.number and a.seat != b.seat
        ]
        if not pairs:
            return None
        first, second = rng.choice(pairs)
        events[first.index], events[second.index] = events[second.index], events[first.index]
        # Witnesses: both swapped cards (the one dealt early is judged against the other).
        return Injection(kind, tuple(events), second.seat, _street(second.number),
                         ((first.index,), (second.index,)))

    if kind is ErrorKind.CARD_TO_INACTIVE_SEAT:
        empty = [s for s in range(1, 9) if s not in deal.seats]
        spare = _unused(deal, events)
        if not empty or not deals or not spare:
            return None
        seat = rng.choice(empty)
        index = rng.randint(deals[0].index + 1, len(events))
        zone = Zone(rng.choice([ZoneKind.DOWN, ZoneKind.UP]), seat)
        events.insert(index, CardPlaced(zone, rng.choice(spare), 0.0))
        return Injection(kind, tuple(events), seat, None)

    if kind is ErrorKind.UNKNOWN_CARD:
        index = rng.randint(1, len(events))
        seat = rng.choice(list(deal.seats))
        zone = Zone(rng.choice([ZoneKind.DOWN, ZoneKind.UP]), seat)
        uid = "".join(rng.choice("0123456789ABCDEF") for _ in range(14))
        events.insert(index, UnknownTag(zone, uid, 0.0))
        return Injection(kind, tuple(events), seat, None)

    if kind is ErrorKind.DUPLICATE_CARD:
        # A second deck's copy of a card already at another seat is dealt as a
        # seat's card; the hand stops there (going on with two copies is moot).
        chosen = pick([d for d in deals if d.number >= 2 and d.seat in live])
        if chosen is None:
            return None
        earlier = [
            d for d in deals if d.index < chosen.index and d.seat != chosen.seat
            and _still_there(events, d.index, chosen.index)
        ]
        if not earlier:
            return None
        source = rng.choice(earlier)
        copy = events[source.index]
        assert isinstance(copy, CardPlaced)
        target = events[chosen.index]
        assert isinstance(target, CardPlaced)
        events[chosen.index] = replace(target, card=copy.card, deck=SECOND_DECK)
        # Witness: the first copy (a copy is a duplicate only next to the first).
        return Injection(kind, tuple(events[: chosen.index + 1]), chosen.seat, None,
                         ((source.index,),))

    if kind is ErrorKind.CARD_FROM_MUCK:
        mucked = [i for i, e in enumerate(events) if isinstance(e, CardPlaced) and e.zone == MUCK]
        if not mucked:
            return None
        first_muck = mucked[0]
        later = [d for d in deals if d.index > first_muck]
        chosen = pick(later)
        if chosen is None:
            return None
        muck_card = events[first_muck]
        target = events[chosen.index]
        assert isinstance(muck_card, CardPlaced)
        assert isinstance(target, CardPlaced)
        head = events[: chosen.index]
        head += [CardRemoved(MUCK, muck_card.card, target.at),
                 replace(target, card=muck_card.card)]
        return Injection(kind, tuple(head), chosen.seat, None)

    if kind is ErrorKind.TOO_MANY_CARDS:
        sevens = [d for d in deals if d.number == 7]
        if not sevens:
            return None
        spare = _unused(deal, events)
        if not spare:
            return None
        seat = rng.choice([d.seat for d in sevens])
        # Right after 7th street's deal (before any betting on it, with a console).
        events.insert(sevens[-1].index + 1, CardPlaced(Zone.down(seat), rng.choice(spare), 0.0))
        # Witnesses: the seat's down cards. An 8th card is one too many only after a
        # 7th (the river), and a face-down card at a seat whose hole card lies unread is,
        # to the table, that hole card read at last after a peek (docs/engine.md).
        downs = tuple((d.index,) for d in deals
                      if d.seat == seat and d.number in (1, 2, 7))
        return Injection(kind, tuple(events), seat, 7, downs)

    if kind is ErrorKind.SHORT_HAND:
        sevens = [d for d in deals if d.number == 7]
        if len(sevens) < 2:
            return None
        last = sevens[-1]  # the dealer misses the last player: nobody was skipped before
        del events[last.index]
        # Every hand is shown down (a short hand is dead only at showdown, rule 18):
        # with a console, the losers do not muck before the end of the hand.
        events = _without_showdown_mucks(events)
        if any(isinstance(e, CardRemoved) and e.zone.seat == last.seat
               for e in events[last.index:]):
            return None  # that player folds on 7th street: no hand to show down
        return Injection(kind, tuple(events), last.seat, 7)

    raise ValueError(f"unknown error kind {kind!r}")  # pragma: no cover


def _without_showdown_mucks(events: list[TableEvent]) -> list[TableEvent]:
    """``events`` without the cards mucked after the last console action (the
    losers at showdown); unchanged for a card-only deal."""
    last_action = max(
        (i for i, e in enumerate(events) if isinstance(e, ConsoleAction)), default=None
    )
    if last_action is None:
        return events
    return [
        e for i, e in enumerate(events)
        if i <= last_action or not (
            (isinstance(e, CardRemoved) and e.zone.seat is not None)
            or (isinstance(e, CardPlaced) and e.zone == MUCK)
        )
    ]


def _fold_events(events: Sequence[TableEvent], seat: int) -> set[int]:
    """Indices of the events that move ``seat``'s cards to the muck."""
    cards = {
        e.card for e in events if isinstance(e, CardPlaced) and e.zone.seat == seat
    }
    return {
        i for i, e in enumerate(events)
        if isinstance(e, CardPlaced | CardRemoved) and e.card in cards
        and (e.zone == MUCK or (isinstance(e, CardRemoved) and e.zone.seat == seat))
    }


def _still_there(events: Sequence[TableEvent], placed: int, until: int) -> bool:
    """Whether the card placed at ``placed`` is still on its zone before ``until``."""
    event = events[placed]
    assert isinstance(event, CardPlaced)
    return not any(
        isinstance(e, CardRemoved) and e.card == event.card for e in events[placed + 1 : until]
    )


def strip_hand_start(events: Sequence[TableEvent]) -> list[TableEvent]:
    """The events without their ``HandStarted`` (for a card-only table)."""
    return [e for e in events if not isinstance(e, HandStarted)]
