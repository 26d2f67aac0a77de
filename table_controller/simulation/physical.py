"""Physical deal sequences: the table events a dealer produces for one clean hand.

Theory of operation
-------------------
A :class:`_Shoe` models the cards in the dealer's hands: the *fresh* deck, the
burn pile, and (only when the deck runs short on 7th street) the *pool* of burn
cards scrambled with the last fresh card. Dealing a hand walks the streets the
way docs/rules.md describes:

* 3rd street: optional burn (profile ``burn_before_third``), then three rounds
  in position order (seat order ascending; seat 1 is at the dealer's left):
  round 1 down (``seatN.down``), round 2 down, round 3 up (``seatN.up``).
* 4th-6th street: burn, then one card up to every live seat.
* 7th street: burn, then one card down to every live seat. When the fresh deck
  cannot serve every live seat (rule 15) the dealer deals all fresh cards but the
  last, picks up the burn pile (a ``CardRemoved`` per burn card), scrambles it
  with the last card, burns again and deals the rest from that pool. When even
  the pool is too small, the dealer burns and turns one community card face up
  in the ``board`` zone instead (with eight players at 7th street this is
  always the case).
* After a street's deal, the seats folding on that street's betting muck their
  cards: each card is removed from its zone and placed in ``muck``, card by
  card. Folded seats get no more cards; the hand stops when one seat is left.

Cards come either from a seeded shuffle (:func:`deal_random`) or are given per
seat (:func:`deal_cards`, :func:`deal_streets`: hand histories, differential
tests). Given cards are *reserved*: burns are drawn only from cards nobody
receives, so a given hand is dealt exactly as written.

Everything is pure: the only randomness is the caller's :class:`random.Random`.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Protocol

from table_controller.domain.cards import DECK, Card
from table_controller.domain.engine.dealing import CARDS_PER_HAND, expected_face
from table_controller.domain.engine.settings import RuleProfile
from table_controller.domain.events import CardPlaced, CardRemoved, HandStarted, TableEvent
from table_controller.domain.zones import BOARD, BURN, MAX_SEATS, MUCK, Zone, ZoneKind

if TYPE_CHECKING:
    from table_controller.simulation.players import Decision

__all__ = [
    "DealerTable",
    "PhysicalDeal",
    "RoundHook",
    "deal_cards",
    "deal_random",
    "deal_streets",
    "expected_face",
    "random_folds",
    "random_hands",
]

STREETS = (3, 4, 5, 6, 7)
"""The five streets of a stud hand, by their usual names."""


@dataclass(frozen=True, slots=True)
class PhysicalDeal:
    """One hand as dealt physically, plus what a correct reconstruction must find.

    ``events`` is the whole sequence (``HandStarted`` first). ``cards`` are the
    cards each seat received, in deal order (folded seats included: what they had
    when they mucked). ``folds`` maps each seat that mucked to the street after
    whose deal it folded. ``burns`` maps a street to the cards placed on the burn
    pile for it (two on a reshuffled 7th street). ``community`` is the rule-15
    community card, if one was used.
    """

    seats: tuple[int, ...]
    events: tuple[TableEvent, ...]
    cards: Mapping[int, tuple[Card, ...]]
    folds: Mapping[int, int]
    burns: Mapping[int, tuple[Card, ...]]
    community: Card | None = None
    reshuffled: bool = False
    last_street: int = 3
    stacks: Mapping[int, int] | None = None
    """Chips behind each seat after the ante (hands whose players bet), else None."""
    decisions: tuple[Decision, ...] = ()
    """Every betting decision the players made (hands whose players bet): where
    its console action is in ``events`` and what the seat could do."""

    @property
    def live_seats(self) -> tuple[int, ...]:
        """Seats that never folded, in position order."""
        return tuple(s for s in self.seats if s not in self.folds)

    def down(self, seat: int) -> tuple[Card, ...]:
        """The cards ``seat`` holds face down at the end (none once folded)."""
        return self._with_face(seat, ZoneKind.DOWN)

    def up(self, seat: int) -> tuple[Card, ...]:
        """The cards ``seat`` holds face up at the end (none once folded)."""
        return self._with_face(seat, ZoneKind.UP)

    def _with_face(self, seat: int, face: ZoneKind) -> tuple[Card, ...]:
        if seat in self.folds:
            return ()
        return tuple(
            card
            for number, card in enumerate(self.cards[seat], start=1)
            if expected_face(number) is face
        )

    def street_cards(self, street: int) -> dict[int, tuple[Card, ...]]:
        """The cards each seat received on ``street`` (seats dealt on it only)."""
        numbers = range(0, 3) if street == 3 else range(street - 1, street)
        out: dict[int, tuple[Card, ...]] = {}
        for seat in self.seats:
            got = tuple(self.cards[seat][i] for i in numbers if i < len(self.cards[seat]))
            if got:
                out[seat] = got
        return out


class DealerTable(Protocol):
    """What a :class:`RoundHook` may ask of the dealer during a hand."""

    @property
    def seats(self) -> tuple[int, ...]:
        """Seats dealt in, in position order."""
        ...

    @property
    def community(self) -> Card | None:
        """The rule-15 community card, once dealt."""
        ...

    def live(self) -> list[int]:
        """Seats that have not mucked, in position order."""
        ...

    def cards_of(self, seat: int) -> tuple[Card, ...]:
        """The cards ``seat`` received, in deal order."""
        ...

    def up_cards(self, seat: int) -> tuple[Card, ...]:
        """The cards ``seat`` holds face up."""
        ...

    def emit(self, event: TableEvent) -> int:
        """Record a (console) event; returns its index in the hand's events."""
        ...

    def muck(self, seat: int, street: int, *, up_first: bool = False) -> int:
        """Move ``seat``'s cards to the muck, card by card (a fold, or a loser at
        showdown); ``up_first``: the face-up cards go first. Returns the index of
        the first event of the muck in the hand's events."""
        ...


class RoundHook(Protocol):
    """Betting between the streets: the players act after each street's deal.

    With a hook the dealer deals a street only once the hook returns (the betting
    round is complete), and stops dealing when fewer than two seats are live or
    :meth:`hand_over` says so.
    """

    def stacks(self) -> Mapping[int, int]:
        """Chips behind each seat after the ante (the ``hand`` line's stacks)."""
        ...

    def betting_round(self, street: int, dealer: DealerTable) -> None:
        """Run ``street``'s betting round (``dealer.emit`` the actions, ``dealer.muck`` folds)."""
        ...

    def hand_over(self) -> bool:
        """No more cards are to be dealt (everyone but one folded)."""
        ...

    def finish(self, dealer: DealerTable) -> tuple[Decision, ...]:
        """Showdown and end of hand; returns the decisions made during the hand."""
        ...


def random_folds(
    seats: Sequence[int], rng: random.Random, chance: float = 0.15
) -> dict[int, int]:
    """Each seat folds after a street's deal with probability ``chance`` per street.

    At least one seat never folds, so a hand always has a last seat standing.
    """
    folds: dict[int, int] = {}
    for seat in seats:
        for street in STREETS:
            if rng.random() < chance:
                folds[seat] = street
                break
    if len(folds) == len(seats):
        del folds[rng.choice(list(seats))]
    return folds


def deal_random(
    seats: Sequence[int],
    rng: random.Random,
    *,
    rules: RuleProfile | None = None,
    folds: Mapping[int, int] | None = None,
    fold_chance: float = 0.15,
    hand_id: int | None = None,
    start: float = 0.0,
    step: float = 1.0,
    betting: RoundHook | None = None,
) -> PhysicalDeal:
    """Deal one hand from a deck shuffled by ``rng``.

    ``folds`` (seat -> street after whose deal it mucks) defaults to
    :func:`random_folds` with ``fold_chance``. Event ``at`` times start at
    ``start`` and grow by ``step``. With ``betting`` the players bet between the
    streets instead (:class:`RoundHook`; ``folds`` is then ignored).
    """
    players = _check_seats(seats)
    order = list(DECK)
    rng.shuffle(order)
    if betting is not None:
        plan: dict[int, int] = {}
    else:
        plan = dict(random_folds(players, rng, fold_chance) if folds is None else folds)
    dealer = _Dealer(players, _Shoe(order, set()), plan, rules, rng, None, None)
    dealer.table = betting
    return dealer.run(hand_id, start, step)


def deal_cards(
    cards: Mapping[int, Sequence[Card]],
    *,
    folds: Mapping[int, int] | None = None,
    community: Card | None = None,
    rules: RuleProfile | None = None,
    rng: random.Random | None = None,
    hand_id: int | None = None,
    start: float = 0.0,
    step: float = 1.0,
) -> PhysicalDeal:
    """Deal given cards: ``cards[seat]`` lists the seat's cards in deal order.

    The seats in the hand are the keys of ``cards``. A street is dealt while at
    least two seats are live and they have cards for it; ``community`` replaces
    the 7th-street cards (rule 15). Burn cards are drawn by ``rng`` (default
    ``Random(0)``) from cards nobody receives. Raises ``ValueError`` when the
    cards cannot be dealt as given (duplicates, a live seat missing a card that
    others get, more than seven cards, a deck too short for them).
    """
    players = _check_seats(list(cards))
    given = [card for seat in players for card in cards[seat]]
    if community is not None:
        given.append(community)
    if len(set(given)) != len(given):
        raise ValueError("a card is given twice")
    for seat in players:
        if not 3 <= len(cards[seat]) <= CARDS_PER_HAND:
            raise ValueError(f"seat {seat} must get 3 to 7 cards, not {len(cards[seat])}")
    rng = rng or random.Random(0)
    order = list(DECK)
    rng.shuffle(order)
    plan = dict(folds or {})
    shoe = _Shoe(order, set(given))
    per_seat = {seat: tuple(cards[seat]) for seat in players}
    return _Dealer(players, shoe, plan, rules, rng, per_seat, community).run(
        hand_id, start, step
    )


def deal_streets(
    streets: Mapping[int, Mapping[int, Sequence[Card]]],
    *,
    folds: Mapping[int, int] | None = None,
    community: Card | None = None,
    rules: RuleProfile | None = None,
    rng: random.Random | None = None,
    hand_id: int | None = None,
) -> PhysicalDeal:
    """Deal given per-street cards: ``streets[3][seat]`` is the seat's three 3rd-street
    cards (down, down, up), ``streets[n][seat]`` its one card on street ``n`` (4..7).

    The form hand histories use (PHH ``d dh`` lines). See :func:`deal_cards`.
    """
    if 3 not in streets:
        raise ValueError("3rd street cards are needed")
    per_seat: dict[int, list[Card]] = {seat: list(c) for seat, c in streets[3].items()}
    for street in (4, 5, 6, 7):
        for seat, got in streets.get(street, {}).items():
            if seat not in per_seat:
                raise ValueError(f"seat {seat} gets a card on street {street} but not on 3rd")
            if len(per_seat[seat]) != street - 1 or len(got) != 1:
                raise ValueError(f"seat {seat}: street {street} needs exactly one more card")
            per_seat[seat].extend(got)
    return deal_cards(
        per_seat, folds=folds, community=community, rules=rules, rng=rng, hand_id=hand_id
    )


# --------------------------------------------------------------------- internals


def _check_seats(seats: Sequence[int]) -> tuple[int, ...]:
    players = tuple(sorted(seats))
    if len(set(players)) != len(players):
        raise ValueError("a seat is listed twice")
    if not 2 <= len(players) <= MAX_SEATS:
        raise ValueError(f"a stud hand has 2 to {MAX_SEATS} players, not {len(players)}")
    if any(not 1 <= s <= MAX_SEATS for s in players):
        raise ValueError(f"seats are numbered 1..{MAX_SEATS}")
    return players


class _Shoe:
    """The cards in the dealer's hands: fresh deck, burn pile, rule-15 pool.

    ``reserved`` cards are promised to seats (given deals): burns never use them.
    """

    def __init__(self, order: list[Card], reserved: set[Card]) -> None:
        self.fresh = order
        self.burn_pile: list[Card] = []
        self.pool: list[Card] | None = None
        self.reserved = reserved

    @property
    def source(self) -> list[Card]:
        return self.pool if self.pool is not None else self.fresh

    def draw(self, card: Card | None = None) -> Card:
        """Take ``card`` (a given card) or the top free card of the current source."""
        source = self.source
        if card is None:
            for i in range(len(source) - 1, -1, -1):
                if source[i] not in self.reserved:
                    return source.pop(i)
            raise ValueError("the deck ran out of cards nobody receives")
        if card not in source:
            raise ValueError(f"the {card.name} cannot be dealt now: it is not in the deck")
        source.remove(card)
        self.reserved.discard(card)
        return card

    def gather(self, rng: random.Random) -> list[Card]:
        """Rule 15: pick up the burn pile, scramble it with the fresh cards left."""
        picked = self.burn_pile
        self.pool = [*picked, *self.fresh]
        self.fresh = []
        self.burn_pile = []
        rng.shuffle(self.pool)
        return picked


@dataclass(slots=True)
class _Dealer:
    """Walks one hand street by street, recording the table events."""

    seats: tuple[int, ...]
    shoe: _Shoe
    folds: dict[int, int]
    rules: RuleProfile | None
    rng: random.Random
    given: Mapping[int, tuple[Card, ...]] | None
    community_given: Card | None
    events: list[TableEvent] = field(default_factory=list)
    held: dict[int, list[Card]] = field(default_factory=dict)
    burns: dict[int, list[Card]] = field(default_factory=dict)
    folded: dict[int, int] = field(default_factory=dict)
    community: Card | None = None
    reshuffled: bool = False
    last_street: int = 3
    table: RoundHook | None = None
    _clock: float = 0.0
    _step: float = 1.0

    def run(self, hand_id: int | None, start: float, step: float) -> PhysicalDeal:
        self._clock, self._step = start, step
        for seat, street in self.folds.items():
            if seat not in self.seats or street not in STREETS:
                raise ValueError(f"bad fold: seat {seat} on street {street}")
        if all(seat in self.folds for seat in self.seats):
            raise ValueError("every seat folds: one seat must be left to win")
        self.held = {seat: [] for seat in self.seats}
        table = self.table
        stacks = dict(table.stacks()) if table is not None else None
        self.events.append(
            HandStarted(self.seats, stacks=stacks, at=self._now(), hand_id=hand_id)
        )
        for street in STREETS:
            live = self._live()
            if len(live) < 2 or not self._has_cards_for(street, live):
                break
            if table is not None and table.hand_over():
                break
            self.last_street = street
            if street == 3:
                self._third_street(live)
            elif street == 7:
                self._seventh_street(live)
            else:
                self._burn(street)
                for seat in live:
                    self._deal(seat)
            if table is not None:
                table.betting_round(street, self)
            else:
                self._muck_folders(street)
        decisions = table.finish(self) if table is not None else ()
        return PhysicalDeal(
            seats=self.seats,
            events=tuple(self.events),
            cards={seat: tuple(cards) for seat, cards in self.held.items()},
            folds=dict(self.folded),
            burns={street: tuple(cards) for street, cards in self.burns.items()},
            community=self.community,
            reshuffled=self.reshuffled,
            last_street=self.last_street,
            stacks=stacks,
            decisions=decisions,
        )

    # ------------------------------------------------- the betting hook's view

    def live(self) -> list[int]:
        """Seats that have not mucked, in position order."""
        return self._live()

    def cards_of(self, seat: int) -> tuple[Card, ...]:
        """The cards ``seat`` received, in deal order."""
        return tuple(self.held[seat])

    def up_cards(self, seat: int) -> tuple[Card, ...]:
        """The cards ``seat`` holds face up."""
        return tuple(
            card for number, card in enumerate(self.held[seat], start=1)
            if expected_face(number) is ZoneKind.UP
        )

    def emit(self, event: TableEvent) -> int:
        """Record ``event`` (a console input) at the dealer's clock; its index."""
        self.events.append(replace(event, at=self._now()))
        return len(self.events) - 1

    def muck(self, seat: int, street: int, *, up_first: bool = False) -> int:
        """Move ``seat``'s cards to the muck, card by card (``up_first``: the face-up
        cards first); the index of the muck's first event."""
        self.folded[seat] = street
        start = len(self.events)
        cards = [(card, expected_face(n)) for n, card in enumerate(self.held[seat], start=1)]
        if up_first:
            cards.sort(key=lambda held: held[1] is not ZoneKind.UP)  # stable: deal order kept
        for card, face in cards:
            zone = Zone.down(seat) if face is ZoneKind.DOWN else Zone.up(seat)
            self.events.append(CardRemoved(zone, card, self._now()))
            self._place(MUCK, card)
        return start

    # ---------------------------------------------------------------- streets

    def _live(self) -> list[int]:
        return [seat for seat in self.seats if seat not in self.folded]

    def _has_cards_for(self, street: int, live: list[int]) -> bool:
        if self.given is None:
            return True
        number = 3 if street == 3 else street
        having = [seat for seat in live if len(self.given[seat]) >= number]
        if street == 7 and self.community_given is not None:
            if having:
                raise ValueError("a community card replaces every 7th-street card")
            return True
        if having and len(having) != len(live):
            missing = sorted(set(live) - set(having))
            raise ValueError(f"seats {missing} have no card for street {street}")
        return bool(having)

    def _third_street(self, live: list[int]) -> None:
        if self.rules is not None and self.rules.burn_before_third:
            self._burn(3)
        for _ in range(3):
            for seat in live:
                self._deal(seat)

    def _seventh_street(self, live: list[int]) -> None:
        shoe = self.shoe
        fresh, burned = len(shoe.fresh), len(shoe.burn_pile)
        if self.given is not None:
            use_board = self.community_given is not None
        else:
            # Rule 15: deal normally, else reshuffle the burns, else a community card.
            use_board = fresh + burned < len(live) + 1
        if use_board:
            self._community()
            return
        if fresh >= len(live) + 1:
            self._burn(7)
            for seat in live:
                self._deal(seat)
            return
        self._reshuffle_seventh(live)

    def _reshuffle_seventh(self, live: list[int]) -> None:
        """Rule 15: deal all fresh cards but the last, scramble it with the burns."""
        shoe = self.shoe
        waiting = list(live)
        if len(shoe.fresh) >= 2:
            free = [card for card in shoe.fresh if card not in shoe.reserved]
            if free or self.given is None:
                self._burn(7)
            else:
                # Every fresh card is promised: burn the last seat's; it comes back
                # to that seat from the scrambled pool.
                last = self._given_card(waiting[-1])
                shoe.fresh.remove(last)
                self._record_burn(7, last)
            while len(shoe.fresh) > 1 and waiting:
                self._deal(waiting.pop(0))
        self._gather()
        self._burn(7)
        for seat in waiting:
            self._deal(seat)

    def _community(self) -> None:
        shoe = self.shoe
        if len(shoe.fresh) < 2:
            self._gather()
        self._burn(7)
        card = shoe.draw(self.community_given)
        self.community = card
        self._place(BOARD, card)

    def _gather(self) -> None:
        self.reshuffled = True
        for card in self.shoe.gather(self.rng):
            self.events.append(CardRemoved(BURN, card, self._now()))

    # ------------------------------------------------------------------ cards

    def _given_card(self, seat: int) -> Card:
        assert self.given is not None
        return self.given[seat][len(self.held[seat])]

    def _deal(self, seat: int) -> None:
        number = len(self.held[seat]) + 1
        want = self._given_card(seat) if self.given is not None else None
        card = self.shoe.draw(want)
        self.held[seat].append(card)
        face = expected_face(number)
        zone = Zone.down(seat) if face is ZoneKind.DOWN else Zone.up(seat)
        self._place(zone, card)

    def _burn(self, street: int) -> None:
        self._record_burn(street, self.shoe.draw())

    def _record_burn(self, street: int, card: Card) -> None:
        self.shoe.burn_pile.append(card)
        self.burns.setdefault(street, []).append(card)
        self._place(BURN, card)

    def _muck_folders(self, street: int) -> None:
        for seat in self.seats:
            if self.folds.get(seat) != street or seat in self.folded:
                continue
            if len(self._live()) <= 1:
                return
            self.muck(seat, street)

    def _place(self, zone: Zone, card: Card) -> None:
        self.events.append(CardPlaced(zone, card, self._now()))

    def _now(self) -> float:
        at = self._clock
        self._clock += self._step
        return at


def random_hands(count: int, seed: int, fold_chance: float = 0.2) -> list[PhysicalDeal]:
    """``count`` hands of 2 to 8 players on random seats, dealt by :func:`deal_random`
    from one ``random.Random(seed)``: the same list for the same arguments (the
    engine bench and the daemon fault rig deal these)."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        seats = sorted(rng.sample(range(1, 9), rng.randint(2, 8)))
        out.append(deal_random(seats, rng, fold_chance=fold_chance))
    return out
