"""The 13 real WSOP hands dealt physically through the RF channel, with each profile.

The hands of ``test_wsop_hands.py`` (tests/data/phh-wsop-2023-event43), dealt by
:func:`~table_controller.simulation.deal_streets` and then timed, read and tracked as
the simulator's fast mode does on a card-only table (:mod:`table_controller.simulation.rf`:
peeks, flicker, cross-reads, stack loss and the profile's muck depth, through the
daemon's presence tracker). Dead tags are off here: a dead tag's card is what manual
entry is for, and its one documented alert is not a false one. Checked per hand and
channel seed:

* no alert at all, one hand each;
* the bring-in is the recorded ``pb`` player;
* the winners are the players whose stack grew.

What the engine infers (issue 19: folds into a muck read to any depth, peeks, flicker,
the dealer's hand, and with ``unread_stacks`` the cards a stack or a row never lets
the readers see) passes with every profile, and so do the profiles' cross-reads, which
presence decides by strength (docs/presence.md).
"""

from __future__ import annotations

import random

import pytest

from firmware_bridge.rf_channel import PROFILES, leaves_cards_unread, profile
from table_controller.domain.engine.dealing import replay_events
from table_controller.domain.engine.settings import RuleProfile, TableSettings
from table_controller.domain.events import HandStarted, TableEvent
from table_controller.simulation import deal_streets
from table_controller.simulation.plan import SimHand, clear_events
from table_controller.simulation.rf import RFTable
from table_controller.simulation.runner import rf_table
from tests.table_controller.domain.test_wsop_hands import HANDS, load

CHANNEL_SEEDS = (0, 1, 2, 3)

INFERRED = ["dead_tag=0", "stack_loss=0", "cross_read=0"]
"""The profile's muck depth, peeks, flicker and hand passes: what the engine infers."""


def _card_only(events: tuple[TableEvent, ...]) -> tuple[TableEvent, ...]:
    """A card-only table has no hand line."""
    return tuple(e for e in events if not isinstance(e, HandStarted))


def _deal_all(rf_name: str, overrides: list[str], check_winners: bool) -> tuple[int, int]:
    """Every hand with every channel seed; (hands whose winners were checked, hands
    with a live seat's card never read)."""
    unreadable = checked = 0
    for seed in CHANNEL_SEEDS:
        table: RFTable = rf_table(profile(rf_name, overrides), seed)
        for number, name in enumerate(HANDS, start=1):
            hand = load(name)
            deal = deal_streets(hand.streets, folds=hand.folds, rng=random.Random(seed))
            events = _card_only(deal.events)
            sim = SimHand(number, deal.seats, None, None, None, events,
                          tuple(clear_events(events)))
            inputs, facts = table.deal(sim)
            # Readers that miss stacked cards infer them (docs/engine.md "Reads that
            # fail"), as a daemon configured with [table] unread_stacks does.
            states = replay_events(inputs, TableSettings(
                auto_hands=True, rules=RuleProfile(),
                unread_stacks=leaves_cards_unread(table.params)))
            where = f"{rf_name} {overrides} seed {seed} hand {name}"
            assert len(states) == 1, where
            [state] = states
            assert [a.code.value for a in state.alerts] == [], where
            assert state.bring_in == hand.bring_in, where
            live = set(deal.live_seats)
            if any(zone.startswith("seat") and int(zone[4]) in live
                   for _i, zone, _why in facts.unread):
                unreadable += 1
                continue
            checked += 1
            if check_winners:
                assert sorted(state.winners) == hand.stack_grew, where
    return checked, unreadable


@pytest.mark.parametrize("rf_name", list(PROFILES))
def test_wsop_hands_through_the_channel_no_alert_and_the_right_winner(rf_name: str) -> None:
    checked, unreadable = _deal_all(rf_name, INFERRED, check_winners=True)
    assert (checked, unreadable) == (len(HANDS) * len(CHANNEL_SEEDS), 0)


def test_wsop_hands_with_the_stack_loss_of_a_diy_table_raise_no_alert() -> None:
    # Cards no reader read are inferred (unread_stacks): no alert, one hand each, the
    # recorded bring-in; the winners only where every live card was read.
    _deal_all("no-muck", ["dead_tag=0", "cross_read=0"], check_winners=False)


@pytest.mark.parametrize("rate", ["0.01", "0.05"])
def test_wsop_hands_with_the_cross_reads_of_a_good_table_raise_no_alert(rate: str) -> None:
    # Presence decides a cross-read by the stronger read within its settle window
    # (docs/presence.md rule 1), whichever reader reports first.
    _deal_all("good", ["dead_tag=0", f"cross_read={rate}"], check_winners=True)
