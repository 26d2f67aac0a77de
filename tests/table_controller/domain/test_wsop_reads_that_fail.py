"""The real WSOP stud hands dealt on a table whose readers miss cards (issue 19).

The same 13 hands as ``test_wsop_hands.py``, dealt physically, but read the way a
card-only table without a muck antenna reads them: no card that reaches the muck
is ever seen there (a fold is only cards leaving their seat), players look at
their hole cards (lifted and put back), and at a showdown the players still in
turn their hole cards face up. Checked: no alert, the folds, the bring-in and the
winners of the recorded hand.
"""

from __future__ import annotations

import random

import pytest

from table_controller.domain.engine.dealing import SeatStatus, replay_events
from table_controller.domain.engine.settings import RuleProfile, TableSettings
from table_controller.domain.events import CardPlaced, CardRemoved, TableEvent
from table_controller.domain.zones import MUCK, Zone, ZoneKind
from tests.table_controller.domain.test_wsop_hands import BURN_SEEDS, HANDS, _deal, load


def _as_read(events: tuple[TableEvent, ...], rng: random.Random, showdown: bool
             ) -> list[TableEvent]:
    """No muck antenna, peeks at hole cards, and the showdown's cards turned up."""
    out: list[TableEvent] = []
    where: dict[object, Zone] = {}
    for event in events:
        if isinstance(event, CardPlaced) and event.zone == MUCK:
            continue  # the muck pile is not read at all
        out.append(event)
        if isinstance(event, CardPlaced):
            where[event.card] = event.zone
            downs = [c for c, z in where.items() if z.kind is ZoneKind.DOWN]
            if downs and rng.random() < 0.2:
                card = rng.choice(downs)  # someone looks at a hole card
                out += [CardRemoved(where[card], card), CardPlaced(where[card], card)]
        elif isinstance(event, CardRemoved):
            where.pop(event.card, None)
    if showdown:
        for card, zone in list(where.items()):
            if zone.kind is ZoneKind.DOWN and zone.seat is not None:
                out += [CardRemoved(zone, card), CardPlaced(Zone.up(zone.seat), card)]
    return out


@pytest.mark.parametrize("name", HANDS)
def test_wsop_hand_without_a_muck_antenna(name: str) -> None:
    hand = load(name)
    rules = RuleProfile()
    for seed in BURN_SEEDS:
        deal = _deal(hand, seed, rules)
        events = _as_read(deal.events, random.Random(seed), hand.showdown)
        [state] = replay_events(events, TableSettings(rules=rules))
        assert state.alerts == [], [a.message for a in state.alerts]
        assert state.bring_in == hand.bring_in
        assert sorted(state.winners) == hand.stack_grew
        for seat in deal.seats:
            expected = SeatStatus.FOLDED if seat in hand.folds else SeatStatus.ACTIVE
            assert state.seats[seat].status is expected, seat
