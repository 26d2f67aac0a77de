"""Reconciling what the readers show at start with the hand the journal restored.

Theory of operation
-------------------
While the daemon was down (a ``kill -9``, a crash, a restart) the dealer went
on: cards were dealt, hands folded, a hand may have ended and the next one been
dealt. At start the journal gives the hand as it was; the readers' first
inventories give the table as it is. Fed straight into the engine, in the order
the readers happen to report them, those differences read as dealing errors
(out of order, missing burns) and, when a hand boundary fell in the downtime,
the new deal merges into the old hand: cards "from the muck" and "to inactive
seats" by the dozen, and the old hand's result is lost (issue 9 item 10).

So the daemon collects the zone events of its first moments (until every
antenna has sent an inventory and presence holds have run out), nets them into
a *difference* (what is gone, what is new), and :func:`reconcile` orders that
difference the way a dealer makes it:

* If the restored hand had ended already (its result published), what left
  the table goes first (the clearing, the gathering), then the new deal.
* If the restored hand's clearing fell in the downtime (two or more cards of
  a live seat left the table, not to the muck: one card is a player lifting
  it; or none of its seat cards is left),
  the hand is **interrupted**: what happened during the downtime (cards dealt
  and cleared again, folds whose cards were gathered, the order of it all) is
  unknown. Its own last moves go first (its cards that reached the muck; the
  new cards while some of its cards are still at the seats; what arrived on
  the piles if no new hand has been dealt), then its seat cards that left: the
  hand ends as it would have when the table was cleared, with the cards as last
  seen. The daemon says so once (one alert) and does not publish what the
  engine makes of these guessed moves (they are not the dealer's errors). Then
  the piles gathered, then the new deal, as a new hand.
* Otherwise the hand goes on: the new cards in dealing order, then the cards
  that left the seats and the piles (a card lifted, a fold).

Dealing order: the engine (on a copy) says which seat is due and with which
face, and a new card at that seat goes next; a burn card goes before the first
card of a street; a seat that is due but has no new card and whose cards went
to the muck folds there. A new hand's first round goes by seat.

The order *within* a seat of cards dealt in the downtime (e.g. which of two
down cards came first) cannot be known; the up-card order follows the due
face, which is right for a correct deal.

Pure: no I/O, no clock; the engine it is given is copied, never changed.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from table_controller.domain.cards import Card
from table_controller.domain.engine.dealing import DealingEngine, street_of_card
from table_controller.domain.events import (
    CardPlaced,
    CardRemoved,
    UnknownTag,
    UnknownTagRemoved,
    ZoneEvent,
)
from table_controller.domain.zones import Zone, ZoneKind

_Key = tuple[Card, Zone, str | None]


@dataclass(frozen=True, slots=True)
class Reconciliation:
    """What :func:`reconcile` decided.

    ``before_end``: the events to feed first (for an interrupted hand: its own
    last moves and end); ``interrupted``: the restored hand (``hand``) ended in
    the downtime; ``after``: the rest, in dealing order.
    """

    before_end: list[ZoneEvent]
    interrupted: bool
    hand: int | None
    after: list[ZoneEvent]

    @property
    def events(self) -> list[ZoneEvent]:
        """All events, in the order to feed them."""
        return [*self.before_end, *self.after]


_PILES = (ZoneKind.BURN, ZoneKind.MUCK, ZoneKind.BOARD)


def leftover_piles(
    records: Iterable[Mapping[str, object]],
) -> dict[Card, list[tuple[Zone, str | None]]]:
    """The pile cards earlier hands left on the felt: where each still lies.

    A dealer often leaves the burn pile (or a muck) of the last hand on the table
    while the next hand is dealt. At a restart the readers report those cards
    with the current hand's: fed to the engine they would read as extra burns
    (issue 19). A card placed on the burn pile, the muck or the board in an
    earlier hand, not taken from there since and not dealt in the current hand,
    is that hand's: presence is told it lies there, so it nets out.
    ``records`` are journal op records in order (the envelope does not matter).
    """
    lying: dict[Card, dict[tuple[Zone, str | None], None]] = {}
    current: set[Card] = set()
    for record in records:
        op = record.get("op")
        if op == "hand":
            current = set()
            continue
        if op not in ("place", "remove"):
            continue
        try:
            zone = Zone.parse(str(record.get("zone")))
            card = Card.parse(str(record.get("card")))
        except ValueError:
            continue  # an unknown tag, or a record the replay refuses anyway
        deck = record.get("deck")
        key = (zone, deck if isinstance(deck, str) else None)
        if op == "place":
            current.add(card)
            if zone.kind in _PILES:
                lying.setdefault(card, {})[key] = None
            else:
                lying.pop(card, None)
        else:
            places = lying.get(card, {})
            # The deck of a removal may be unknown to an old record: the zone decides.
            for place in [key] if key in places else [k for k in places if k[0] == zone]:
                del places[place]
    return {card: list(places) for card, places in lying.items()
            if places and card not in current}


def net_difference(
    start: Mapping[Card, Sequence[tuple[Zone, str | None]]],
    events: Iterable[ZoneEvent],
) -> tuple[list[CardRemoved], list[CardPlaced], list[ZoneEvent]]:
    """Net ``events`` against the ``start`` positions: (gone, new, unknown-tag events).

    A card that came and went within ``events`` nets out; so does one that
    went and came back to where it was.
    """
    initial: dict[_Key, float] = {
        (card, zone, deck): 0.0 for card, places in start.items() for zone, deck in places
    }
    now = dict(initial)
    unknown: list[ZoneEvent] = []
    for event in events:
        if isinstance(event, CardPlaced):
            now[(event.card, event.zone, event.deck)] = event.at
        elif isinstance(event, CardRemoved):
            key = (event.card, event.zone, event.deck)
            if key not in now:  # presence knows the deck; a seeded card may not
                key = next((k for k in now if k[0] == event.card and k[1] == event.zone), key)
            now.pop(key, None)
        elif isinstance(event, UnknownTag | UnknownTagRemoved):
            unknown.append(event)
    gone = [CardRemoved(zone, card, 0.0, deck) for (card, zone, deck) in initial
            if (card, zone, deck) not in now]
    new = [CardPlaced(zone, card, at, deck) for (card, zone, deck), at in now.items()
           if (card, zone, deck) not in initial]
    return gone, new, unknown


def reconcile(
    engine: DealingEngine,
    gone: Sequence[CardRemoved],
    new: Sequence[CardPlaced],
    unknown: Sequence[ZoneEvent] = (),
) -> Reconciliation:
    """Order the start-up difference (see the module docstring)."""
    hand = engine.hand
    seat_removed = [e for e in gone if e.zone.seat is not None]
    seat_gone: list[ZoneEvent] = list(seat_removed)
    other_gone: list[ZoneEvent] = [e for e in gone if e.zone.seat is None]
    sim = copy.deepcopy(engine)
    pending = list(new)
    if hand is None or hand.finished or hand.cleared:
        # The result is known already (or there is no hand): what left the
        # table is the clearing and gathering, before any new deal.
        for event in [*seat_gone, *other_gone]:
            _apply(sim, event)
        before = [*seat_gone, *other_gone, *_deal_order(sim, pending)]
        return Reconciliation(before, False, None, list(unknown))
    to_muck = {e.card for e in pending if e.zone.kind is ZoneKind.MUCK}
    off_table = {(e.card, e.zone) for e in seat_removed if e.card not in to_muck}
    held = {(card, zone) for card, zones in hand.where.items() for zone in zones
            if zone.seat is not None}
    all_gone = bool(held) and held <= {(e.card, e.zone) for e in seat_removed}
    # A player may lift one card and put it back; two or more of one live
    # seat's cards leaving the table (not to the muck) is the dealer clearing it.
    clearing = any(
        len({(c, z) for c, z in off_table if z.seat == seat}) >= 2 for seat in hand.live_seats
    )
    if not (all_gone or clearing):
        # The hand goes on: the new cards in dealing order (a seat's cards that
        # went to the muck fold it when it is due and has nothing more), then
        # what left the seats and the piles.
        before = [*_deal_order(sim, pending), *seat_gone, *other_gone]
        return Reconciliation(before, False, hand.number, list(unknown))
    # The hand's end (its clearing) fell in the downtime. Its own last moves
    # first: its cards that went to the muck (folds); while some of its cards
    # are still at the seats every new card is still its own. Once all are
    # gone, new cards at the seats may be its last ones or the next hand's:
    # of the two readings, the one in which the dealer made fewer errors wins
    # (a correct deal read the right way makes none).
    readings = [False, True] if all_gone else [False]
    best: tuple[int, Reconciliation] | None = None
    for new_hand in readings:
        plan, errors = _interrupted(engine, pending, seat_gone, other_gone, unknown,
                                    new_hand=new_hand)
        if best is None or errors < best[0]:
            best = (errors, plan)
    assert best is not None
    return best[1]


def _interrupted(
    engine: DealingEngine,
    pending: Sequence[CardPlaced],
    seat_gone: Sequence[ZoneEvent],
    other_gone: Sequence[ZoneEvent],
    unknown: Sequence[ZoneEvent],
    *,
    new_hand: bool,
) -> tuple[Reconciliation, int]:
    """One reading of an interrupted hand; also how many alerts it would raise."""
    hand = engine.hand
    assert hand is not None
    sim = copy.deepcopy(engine)
    dealt_again = new_hand and any(e.zone.seat is not None for e in pending)
    old = [e for e in pending
           if not new_hand
           or (e.zone.kind is ZoneKind.MUCK and e.card in hand.owner)
           or (not dealt_again and e.zone.seat is None)]
    rest = [e for e in pending if e not in old]
    alerts_before = len(hand.alerts)
    before = [*_deal_order(sim, old), *seat_gone]
    for event in seat_gone:
        _apply(sim, event)
    sim_hand = sim.hand
    errors = len(sim_hand.alerts) - alerts_before if sim_hand is not None else 0
    for event in other_gone:
        _apply(sim, event)
    newer = sim.hands_played
    after: list[ZoneEvent] = [*other_gone, *_deal_order(sim, rest), *unknown]
    if sim.hands_played > newer and sim.hand is not None:
        errors += len(sim.hand.alerts)
    return Reconciliation(before, True, hand.number, after), errors


def _apply(sim: DealingEngine, event: ZoneEvent) -> None:
    # The class's apply, never an instance attribute: the copy must not call
    # back into the live engine (a test may wrap the live engine's apply).
    DealingEngine.apply(sim, event)


def _deal_order(sim: DealingEngine, pending: list[CardPlaced]) -> list[CardPlaced]:
    """The new cards in the order a dealer deals them (applied to ``sim`` as chosen)."""
    out: list[CardPlaced] = []
    while pending:
        event = _pick(sim, pending)
        pending.remove(event)
        out.append(event)
        _apply(sim, event)
    return out


def _pick(sim: DealingEngine, pending: Sequence[CardPlaced]) -> CardPlaced:
    hand = sim.hand
    seat_cards = sorted((e for e in pending if e.zone.seat is not None),
                        key=lambda e: (e.zone.seat or 0, e.zone.kind is not ZoneKind.DOWN,
                                       e.at))
    burns = [e for e in pending if e.zone.kind is ZoneKind.BURN]
    if hand is None or hand.finished or hand.cleared:
        if burns and sim.settings.rules.burn_before_third:
            return burns[0]
        return seat_cards[0] if seat_cards else _rest(pending)
    if hand.forming:
        # First round of a hand learnt from the deal: one card per seat, by seat.
        joining = [e for e in seat_cards if e.zone.seat not in hand.seats]
        if joining:
            return joining[0]
    due = hand.next_due()
    if due is not None:
        seat, face = due
        street = street_of_card(hand.seats[seat].received + 1)
        if burns and street not in hand.started_streets and not hand.burns.get(street, 0) and (
            street > 3 or sim.settings.rules.burn_before_third
        ):
            return burns[0]
        mine = [e for e in seat_cards if e.zone.seat == seat]
        if mine:
            return next((e for e in mine if e.zone.kind is face), mine[0])
        folded = [e for e in pending
                  if e.zone.kind is ZoneKind.MUCK and hand.owner.get(e.card) == seat]
        if folded:
            return folded[0]
    return _rest(pending)


def _rest(pending: Sequence[CardPlaced]) -> CardPlaced:
    """Nothing is due: folds to the muck first, then burns, the board, seats."""
    rank = {ZoneKind.MUCK: 0, ZoneKind.BURN: 1, ZoneKind.BOARD: 2}
    return min(pending, key=lambda e: (rank.get(e.zone.kind, 3), e.zone.seat or 0, e.at))
