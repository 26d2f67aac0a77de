"""Where the dealer is due to deal next: the engine's deal order as zones (issue 19).

Presence cannot always tell which of two neighbouring antennas a card lies on: a
reader that reports no strength (the project's MFRC522 and PN5180 firmware), or two
reads equally strong. The dealer can: he deals one card at a time in position order
(docs/rules.md "Structure of a hand": round 1 down, round 2 down, round 3 up, then one
card a street), burns one card before 4th, 5th, 6th and 7th street (rule 13; before
3rd street too with ``burn_before_third``) and after rule 15's scramble, and a seat's
3rd card lands face down after an exposed hole card (rule 5) and its 7th face up
under rule 17(b). :func:`due_zones` turns the hand's state into the zones the next
cards are due in, soonest first, and :func:`returning_cards` the cards a live seat
owns that are away from its zones (lifted to peek: put back, not dealt); presence
lets them decide (docs/presence.md, the decision table). Pure: a hand in, zones out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from table_controller.domain.cards import Card
from table_controller.domain.engine.hand import CARDS_PER_HAND, HandState, street_of_card
from table_controller.domain.zones import BURN, Zone, ZoneKind

__all__ = ["DealExpectation", "due_zones", "returning_cards"]


def due_zones(hand: HandState | None, seats: Iterable[int], *,
              burn_before_third: bool = False) -> tuple[Zone, ...]:
    """The zones the dealer is due to deal his next cards to, soonest first: the rest
    of the round being dealt, then the next round, each seat with the face its card is
    due with, and the burn where one is due before a round (rule 13, rule 15).

    ``hand``: the engine's hand (None, or a hand finished or cleared: the next card
    opens a new hand). ``seats``: the table's seat numbers, for a hand whose players
    are still learnt from the first round (an auto hand): any seat may be dealt in,
    face down. Empty when nothing is due (the deal is complete)."""
    if hand is None or hand.finished or hand.cleared:
        opening = (BURN,) if burn_before_third else ()
        return (*opening, *(Zone.down(seat) for seat in sorted(seats)))
    if hand.forming:
        # Auto hand, rounds 1 and 2: every card face down, to any seat.
        return tuple(Zone.down(seat) for seat in sorted(seats))
    live = hand.live_seats
    if len(live) < 2:
        return ()
    if hand.reshuffle_burn_due:
        return (BURN,)  # rule 15: the burn after the scramble comes first
    received = {seat: hand.seats[seat].received for seat in live}
    fewest = min(received.values())
    zones: list[Zone] = []
    for number in (fewest + 1, fewest + 2):
        if number > CARDS_PER_HAND or (hand.community is not None and number >= CARDS_PER_HAND):
            break
        round_seats = [seat for seat in live if received[seat] < number]
        if not round_seats:
            continue
        street = street_of_card(number)
        opens_street = (number == 1 or street != street_of_card(number - 1))
        if (opens_street and all(received[s] == number - 1 for s in live)
                and not hand.burns.get(street, 0) and (street > 3 or burn_before_third)):
            zones.append(BURN)  # rule 13: the street's burn before its first card
        for seat in round_seats:
            face = hand.face_due(hand.seats[seat], received[seat] + 1)
            zones.append(Zone.up(seat) if face is ZoneKind.UP else Zone.down(seat))
            received[seat] += 1
    return tuple(zones)


def returning_cards(hand: HandState | None) -> dict[Card, Zone]:
    """The cards a live seat owns that no reader sees in its zones now, each with the
    zone it lay in: a card lifted to peek (or a palmed one) that may come back there.
    Empty when no hand is being dealt."""
    if hand is None or hand.finished or hand.cleared:
        return {}
    out: dict[Card, Zone] = {}
    for seat_no in hand.live_seats:
        for held in hand.seats[seat_no].cards:
            if not held.present and (zone := hand.last_zone.get(held.card)) is not None:
                out[held.card] = zone
    return out


class DealExpectation:
    """:func:`due_zones` and :func:`returning_cards` of a table's hand, computed again
    only when the hand may have changed (issue 20: the daemon asks at every reader
    report and every tick, and most of those come between two cards).

    ``seats`` and ``burn_before_third`` are the table's, fixed. :meth:`of` takes the
    engine's hand and its change count (``DealingEngine.changes``, raised by every call
    that may change the hand): the same hand object at the same count is the same
    state, so the last answer stands."""

    __slots__ = ("_burn_before_third", "_changes", "_hand", "_seats", "_value")

    def __init__(self, seats: Iterable[int], *, burn_before_third: bool = False) -> None:
        self._seats = tuple(sorted(seats))
        self._burn_before_third = burn_before_third
        self._hand: HandState | None = None
        self._changes = -1
        self._value: tuple[tuple[Zone, ...], Mapping[Card, Zone]] = ((), {})

    def of(self, hand: HandState | None,
           changes: int) -> tuple[tuple[Zone, ...], Mapping[Card, Zone]]:
        """(due zones, returning cards) of ``hand`` at the engine's ``changes``; the
        mapping is shared between calls: read it, do not change it."""
        if changes != self._changes or hand is not self._hand:
            self._value = (due_zones(hand, self._seats,
                                     burn_before_third=self._burn_before_third),
                           returning_cards(hand))
            self._hand, self._changes = hand, changes
        return self._value
