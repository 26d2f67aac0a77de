"""When a card entered by hand contradicts the hand the readers saw (issue 19). Pure.

A manual ``card`` (docs/console.md) stands for a card the dealer really dealt whose
tag no reader reads. The daemon already refuses one whose card a reader sees or the
hand has on the table (``card_seen``, :meth:`~table_controller.daemon.core.TableCore`).
Two more entries cannot be such a card, whatever its tag, and are refused before
they are journaled (nothing changes, the requester is told why):

* a seat that is not in the hand (a console hand's players, or a card-only hand's
  once its first round is dealt: ``HandState.forming`` is over): an entry there is a
  wrong seat, not a dead tag (a *read* card there is the dealing error
  ``card_to_inactive_seat``, rule 9);
* a seat whose cards of the street being dealt the readers have all read already
  (3 cards on 3rd street, 4 on 4th... 7 on 7th) while the next street has not begun
  (no burn for it yet, rule 13): the entry would be one card too many. A card the
  engine inferred unread (``card_unread``) is still waiting for its entry, so it
  does not count as read here, for an entry of its face (a face-up entry fills that
  card's slot of the public up row).

No I/O, no clock.
"""

from __future__ import annotations

from table_controller.domain.engine.hand import HandState
from table_controller.domain.engine.outputs import ConsoleResult, ReplyCode
from table_controller.domain.zones import Zone, ZoneKind


def manual_contradiction(hand: HandState | None, zone: Zone) -> ConsoleResult | None:
    """Why a manual card at ``zone`` cannot be a dealt card of ``hand``, or None."""
    if hand is None or hand.finished or zone.seat is None:
        return None  # no hand (the entry may start one), or not a seat's card
    seat = zone.seat
    if seat not in hand.players and not hand.forming:
        return ConsoleResult(
            False, ReplyCode.UNKNOWN_SEAT,
            f"seat {seat} is not in hand {hand.number}: a card entered by hand must be"
            " one dealt to a player of the hand")
    state = hand.seats.get(seat)
    street = hand.street
    if state is None or street is None:
        return None
    waiting = state.unread_down if zone.kind is ZoneKind.DOWN else len(state.unread_up)
    read = state.received - waiting
    if read >= street and hand.burns.get(street + 1, 0) == 0:
        return ConsoleResult(
            False, ReplyCode.CARD_SEEN,
            f"the readers have read all {street} cards of seat {seat} on"
            f" {_ordinal(street)} street: a card entered by hand would be one too many")
    return None


def _ordinal(street: int) -> str:
    return {3: "3rd"}.get(street, f"{street}th")
