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
owns that are away from its zones (lifted to peek: put back, not dealt), and
:func:`face_up_holes` the face-down hole cards the deal since says were dealt face up
(a dead hand the dealer stopped dealing to); presence lets them decide
(docs/presence.md, the decision table). Pure: a hand in, zones out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from table_controller.domain.cards import Card
from table_controller.domain.engine.hand import CARDS_PER_HAND, HandState, street_of_card
from table_controller.domain.zones import BURN, Zone, ZoneKind

__all__ = ["PASSED_OVER_ROUNDS", "DealExpectation", "due_zones", "face_up_holes",
           "returning_cards"]

PASSED_OVER_ROUNDS = 3
"""Rounds a seat with one exposed hole card must be passed over (no card of its read
since its hole cards, each taken as unread) before its face-down hole card is taken
for face up (:func:`face_up_holes`). The seat's own cards may lie unread: the 3rd,
dealt face down onto the other hole card, is the second card of a stack, unread with
``stack_loss`` (5% in the ``diy`` and ``no-muck`` profiles); the 4th and 5th, the
second and third of the up row, each with ``stack_loss * up_stack_factor`` (2.5%),
all with 0.5% dead tags. Two rounds (about 0.17% of such seats, 1.2% at 15% stack
loss) took a live hand for dead once in the 20,000 hands at 15% stack loss and 5%
cross-reads (docs/simulation.md); three (about 0.005%, 0.1%) did not, and missed 2
more of the 913 dead hands in the target cell. Only where the up antenna also reads
the hole card (a 2% cross-read) does it matter at all."""


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
        # Auto hand, rounds 1 and 2: every card face down, to any seat. Round 2 can only
        # have begun at the first seat dealt in (position order): its up zone comes
        # last, for its 2nd hole card dealt face up and read by a neighbour's up row
        # too (the seat it was dealt to, issue 19). Not with one seat dealt in: a hand
        # needs two, so round 1 is still going on.
        downs = tuple(Zone.down(seat) for seat in sorted(seats))
        players = hand.players
        return (*downs, Zone.up(players[0])) if len(players) >= 2 else downs
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


def face_up_holes(hand: HandState | None) -> dict[Card, Zone]:
    """The face-down hole cards the deal says lie face up, each with its seat's up zone
    (issue 19): what presence moves there when that zone's antenna reads the card too
    and no strength tells the two reads apart (docs/presence.md rule 1).

    A seat whose one hole card was dealt face up and whose other one was read by both
    of its antennas alike (a reader without strengths: the deal order put it face
    down, where it was due) looks like rule 5's picture of one exposed hole card. If
    the dealer then passes the seat over for :data:`PASSED_OVER_ROUNDS` rounds, no
    card of it read since its hole cards, he is dealing it nothing: both hole cards
    were dealt face up and he took the hand for dead. A seat that has folded, or
    that has any later card read, is not named."""
    if hand is None or hand.finished or hand.cleared:
        return {}
    out: dict[Card, Zone] = {}
    for seat_no in hand.live_seats:
        seat = hand.seats[seat_no]
        if seat.exposed_holes != 1 or seat.unread < PASSED_OVER_ROUNDS:
            continue
        passed = range(3, 3 + PASSED_OVER_ROUNDS)
        if any(held.number > 2 for held in seat.cards) or not all(
                number in seat.unread_numbers for number in passed):
            continue  # a card of its read after the hole cards: it is dealt to
        down = [held for held in seat.cards if held.number in (1, 2) and held.present
                and held.face is ZoneKind.DOWN and not held.exposed_hole]
        if len(down) == 1:
            out[down[0].card] = Zone.up(seat_no)
    return out


class DealExpectation:
    """:func:`due_zones`, :func:`returning_cards` and :func:`face_up_holes` of a
    table's hand, computed again only when the hand may have changed (issue 20: the
    daemon asks at every reader report and every tick, and most of those come between
    two cards).

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
        self._value: tuple[tuple[Zone, ...], Mapping[Card, Zone], Mapping[Card, Zone]] = (
            (), {}, {})

    def of(self, hand: HandState | None, changes: int
           ) -> tuple[tuple[Zone, ...], Mapping[Card, Zone], Mapping[Card, Zone]]:
        """(due zones, returning cards, face-up hole cards) of ``hand`` at the engine's
        ``changes``; the mappings are shared between calls: read them, do not change
        them."""
        if changes != self._changes or hand is not self._hand:
            self._value = (due_zones(hand, self._seats,
                                     burn_before_third=self._burn_before_third),
                           returning_cards(hand), face_up_holes(hand))
            self._hand, self._changes = hand, changes
        return self._value
