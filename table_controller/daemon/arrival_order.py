"""Cards of different readers read out of order: hold the one nobody is dealing yet.

Theory of operation
-------------------
Each reader has its own serial link and thread, which stamps a frame when the
thread gets to it. Two cards dealt 50 ms apart to seats on two readers can
therefore reach the core the other way round: a reader's thread woken late
(a loaded machine, the GIL, another process) stamps and queues its frame after
the next reader's. The core handles the reports in stamp order, but the stamps
are already swapped (measured: bench/bench_daemon_flood.py counts such pairs;
the same happens with the flood sent to another table). A real reader does the
same within its scan cycle (antennas are read one after the other). Applied as
they come, the engine calls the swap a dealing error (``out_of_order``,
``missing_burn`` + ``extra_burn``, ``card_to_inactive_seat`` for the cards
after it, docs/alerts.md; rule 13 for the burn): a false alert, and cards
without their event.

:class:`ArrivalOrder` decides, with no clock or I/O of its own: a card placed
where the dealer is *not* expected to deal now (the engine's due seat and burn,
:func:`dealer_expects`) is held for at most :data:`ARRIVAL_WINDOW` seconds from
its stamp; a card that is expected is applied at once, and then every held card
that has become expected. A held card whose window ran out is applied as it came,
so a real dealing error is still judged, :data:`ARRIVAL_WINDOW` later. Anything
else (a card leaving, a fold to the muck, an unknown tag) first releases every
held card, in the order they came, so nothing overtakes it. A dealer's own order
is never changed beyond the window. The cost: an unexpected card's event, and its
alert, come up to the window later; so does the first card of an auto hand's
second round when a seat is empty (nobody knows the first round is over until the
window ends).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

from table_controller.domain.engine.dealing import DealingEngine
from table_controller.domain.engine.hand import street_of_card
from table_controller.domain.events import CardPlaced, ZoneEvent
from table_controller.domain.zones import ZoneKind

ARRIVAL_WINDOW: Final = 0.5
"""Seconds a card the dealer is not expected to deal now waits for the card that
is (from the card's stamp): above a loaded host's scheduling delays and a reader's
scan cycle (a link's report waited up to 0.4 s for its thread at load 12 on
two cores), about the time a dealer takes for one card."""

MAX_HELD: Final = 16
"""Cards held at once at most; past it every held card is applied as it came."""

Expects = Callable[[ZoneEvent], bool]
"""Whether the dealer is expected to deal this zone event now (the engine's view)."""

_DEALT: Final = frozenset({ZoneKind.DOWN, ZoneKind.UP, ZoneKind.BURN})
"""Zones a dealt card lands in whose order the engine judges (``out_of_order``, rule 13)."""


def dealer_expects(engine: DealingEngine, event: ZoneEvent) -> bool:
    """Whether ``event`` is what the dealer is due to do next: the due seat's card, or
    the burn before a street's first card (rule 13) or after a scramble (rule 15),
    and on a clear table the burn that opens the hand when the table burns before
    3rd street. True when the
    engine has no order to judge it by (a hand ended, nothing due): such a card is
    never held. While an auto hand learns its players, a card to a new seat."""
    if not isinstance(event, CardPlaced) or event.zone.kind not in _DEALT:
        return True
    burn_before_third = engine.settings.rules.burn_before_third
    if engine.starts_hand(event):
        return event.zone.kind is ZoneKind.BURN or not burn_before_third
    hand = engine.hand
    if hand is None or hand.finished or hand.cleared:
        return True
    if hand.forming:
        # Auto hands learn their players from the first round, which ends with the
        # first seat's second card: a card to a seat still joining comes first, or
        # that seat (read late) would be left out of the hand, and all its cards.
        # Once every seat of the table has joined, the round is over: no wait.
        full = len(hand.seats) >= engine.settings.seats
        return event.zone.seat is not None and (full or event.zone.seat not in hand.seats)
    due = hand.next_due()
    if due is None:
        return True
    if hand.reshuffle_burn_due:
        return event.zone.kind is ZoneKind.BURN  # rule 15: a burn after the scramble
    seat, _face = due
    street = street_of_card(hand.seats[seat].received + 1)
    burn_due = (street not in hand.started_streets and not hand.burns.get(street, 0)
                and (street > 3 or burn_before_third))
    if burn_due:
        return event.zone.kind is ZoneKind.BURN
    return event.zone.seat == seat


class ArrivalOrder:
    """The held cards and what to apply when (see the module docstring)."""

    def __init__(self, window: float = ARRIVAL_WINDOW, max_held: int = MAX_HELD) -> None:
        """Hold unexpected cards for ``window`` seconds, ``max_held`` at most."""
        self.window = window
        self.max_held = max_held
        self._held: list[ZoneEvent] = []
        self.reordered = 0
        """Cards applied before one that came earlier (a swap undone)."""
        self.expired = 0
        """Held cards applied as they came when their window ran out."""

    @property
    def holding(self) -> bool:
        """Whether a card is held."""
        return bool(self._held)

    def next_deadline(self) -> float | None:
        """Monotonic time the oldest held card's window ends (None: none held)."""
        return self._held[0].at + self.window if self._held else None

    def admit(self, events: Sequence[ZoneEvent]) -> list[ZoneEvent]:
        """Take ``events`` as presence produced them: a dealt card is held (the caller
        then applies :meth:`due` ones); anything else is returned to apply now, after
        every card held before it."""
        out: list[ZoneEvent] = []
        for event in events:
            if isinstance(event, CardPlaced) and event.zone.kind in _DEALT:
                self._held.append(event)
            else:
                out += self.release_all()
                out.append(event)
        return out

    def due(self, expects: Expects) -> ZoneEvent | None:
        """The next held card to apply now: the oldest the dealer is expected to deal
        (the caller applies it, then asks again), or None."""
        for index, event in enumerate(self._held):
            if expects(event):
                if index:
                    self.reordered += 1
                return self._held.pop(index)
        if len(self._held) > self.max_held:
            return self._held.pop(0)
        return None

    def expire(self, now: float) -> ZoneEvent | None:
        """The oldest held card if its window ended by ``now`` (applied as it came)."""
        if self._held and now >= self._held[0].at + self.window:
            self.expired += 1
            return self._held.pop(0)
        return None

    def release_all(self) -> list[ZoneEvent]:
        """Every held card, in the order they came (something must not overtake them)."""
        out, self._held = self._held, []
        return out
