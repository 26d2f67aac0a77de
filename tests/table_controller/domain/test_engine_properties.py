"""Property tests (hypothesis) of the dealing engine.

* Legal deals: any physical deal of 2-8 players on any seats, with random muck
  folds, either rule profile for the 3rd-street burn, raises no alert (a rule-15
  hand raises exactly its ``community_card`` notice) and reconstructs exactly the
  cards dealt, per seat and per zone, in the order received.
* Table chaos: arbitrary event sequences (random places and removes of random cards
  in random zones, hand lines, unknown tags) and legal deals with events dropped,
  repeated, swapped or inserted never make the engine raise, and after every event
  the state keeps its invariants: no card owned by two seats, valid statuses and
  streets, and a report that serialises to JSON.

(Per-rule tests and the single-injected-error property live with the engine's own
tests.)
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from table_controller.domain.cards import DECK, Card
from table_controller.domain.engine.alerts import Alert, AlertCode, Notice
from table_controller.domain.engine.dealing import (
    DealingEngine,
    HandState,
    SeatStatus,
    replay_events,
)
from table_controller.domain.engine.outputs import ConsoleResult, GameEvent
from table_controller.domain.engine.report import hand_report
from table_controller.domain.engine.settings import RuleProfile, TableSettings
from table_controller.domain.events import (
    CONSOLE_ACTIONS,
    FLOOR_RULINGS,
    CardPlaced,
    CardRemoved,
    ConsoleAction,
    FloorRuling,
    HandEnded,
    HandStarted,
    TableEvent,
    UnknownTag,
    UnknownTagRemoved,
)
from table_controller.domain.zones import ALL_ZONES
from table_controller.records.script import parse_script
from table_controller.simulation import PhysicalDeal, deal_cards, deal_random

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"

STREET_NUMBERS = (3, 4, 5, 6, 7)
_SETTINGS = settings(max_examples=250)

seat_sets = st.lists(st.integers(1, 8), min_size=2, max_size=8, unique=True).map(sorted)


@st.composite
def legal_deals(draw: st.DrawFn) -> tuple[PhysicalDeal, RuleProfile]:
    """A physical deal: seats, folds (seat -> street) and profile drawn by hypothesis."""
    seats = draw(seat_sets)
    folds = draw(st.dictionaries(st.sampled_from(seats), st.sampled_from(STREET_NUMBERS)))
    if len(folds) == len(seats):
        del folds[seats[0]]
    rules = RuleProfile(burn_before_third=draw(st.booleans()))
    seed = draw(st.integers(0, 2**32 - 1))
    return deal_random(seats, random.Random(seed), rules=rules, folds=folds), rules


def _check_reconstruction(deal: PhysicalDeal, hand: HandState) -> None:
    for seat in deal.seats:
        got = hand.seats[seat]
        assert tuple(got.down) == deal.down(seat), seat
        assert tuple(got.up) == deal.up(seat), seat
        expected = SeatStatus.FOLDED if seat in deal.folds else SeatStatus.ACTIVE
        assert got.status is expected, seat
    assert hand.community == deal.community
    live = deal.live_seats
    if len(live) == 1:
        assert hand.winners == [live[0]]
    elif deal.last_street == 7:
        assert hand.winners
        assert set(hand.winners) <= set(live)
    else:
        assert hand.winners == []  # stopped before 7th street: no showdown


@_SETTINGS
@given(legal_deals())
def test_legal_deal_raises_no_alert_and_is_reconstructed(
    case: tuple[PhysicalDeal, RuleProfile],
) -> None:
    deal, rules = case
    engine = DealingEngine(TableSettings(rules=rules))
    alerts: list[Alert] = []
    for event in deal.events:
        alerts += [out for out in engine.apply(event) if isinstance(out, Alert)]
    alerts += [out for out in engine.finish_hand() if isinstance(out, Alert)]
    assert alerts == [], [a.message for a in alerts]
    # Rule 15's community card is announced as a notice; nothing else is.
    expected = [AlertCode.COMMUNITY_CARD] if deal.community is not None else []
    assert engine.hand is not None
    assert [n.code for n in engine.hand.notices] == expected
    assert engine.hand is not None
    _check_reconstruction(deal, engine.hand)


def test_rule15_pickup_right_after_seventh_burn_is_clean() -> None:
    path = SCRIPTS / "rule15-reshuffle-burn-then-pickup.jsonl"
    script = parse_script(path.read_text(encoding="utf-8").splitlines(), path.name)
    [hand] = replay_events((event for _, event in script.events), script.settings)
    assert [alert.code for alert in hand.alerts] == []


@_SETTINGS
@given(
    st.permutations(DECK),
    seat_sets,
    st.dictionaries(st.integers(1, 8), st.sampled_from(STREET_NUMBERS)),
    st.integers(0, 2**32 - 1),
)
def test_given_cards_dealt_as_given(
    order: Sequence[Card], seats: list[int], folds: dict[int, int], seed: int
) -> None:
    """deal_cards (the hand-history path) deals exactly the given cards, cleanly."""
    cards = {seat: list(order[i * 7 : i * 7 + 7]) for i, seat in enumerate(seats[:6])}
    # Seven or eight players cannot all get seven distinct cards plus four burns:
    # they stop after 6th street here (the random path covers rule 15).
    if len(seats) > 6:
        cards = {seat: list(order[i * 6 : i * 6 + 6]) for i, seat in enumerate(seats)}
    folds = {s: st_ for s, st_ in folds.items() if s in cards}
    if len(folds) == len(cards):
        del folds[seats[0]]
    deal = deal_cards(cards, folds=folds, rng=random.Random(seed))
    [hand] = replay_events(deal.events)
    assert hand.alerts == []
    for seat, dealt in deal.cards.items():
        assert list(dealt) == cards[seat][: len(dealt)]
    burned = [card for street in deal.burns.values() for card in street]
    assert not set(burned) & {card for got in cards.values() for card in got}
    _check_reconstruction(deal, hand)


# ------------------------------------------------------------------ table chaos

_FEW_CARDS = DECK[:10]
cards_any = st.sampled_from(_FEW_CARDS) | st.sampled_from(DECK)
zones_any = st.sampled_from(ALL_ZONES)

random_events = st.one_of(
    st.builds(CardPlaced, zones_any, cards_any),
    st.builds(CardRemoved, zones_any, cards_any),
    st.builds(UnknownTag, zones_any, st.sampled_from(["E004AA", "E004BB"])),
    st.builds(UnknownTagRemoved, zones_any, st.sampled_from(["E004AA", "E004BB"])),
    st.builds(
        HandStarted,
        st.lists(st.integers(1, 8), min_size=1, max_size=8, unique=True).map(tuple),
        st.none() | st.dictionaries(st.integers(1, 8), st.integers(0, 50)),
    ),
    # The dealer's console: any action, amount or ruling, in or out of turn.
    st.builds(
        ConsoleAction,
        st.integers(1, 8),
        st.sampled_from(CONSOLE_ACTIONS),
        st.none() | st.integers(0, 60),
    ),
    st.builds(FloorRuling, st.integers(1, 8), st.sampled_from(FLOOR_RULINGS)),
    st.builds(HandEnded),
)


def _check_invariants(
    engine: DealingEngine, outputs: Sequence[object], duplicated: set[Card]
) -> None:
    """The state's invariants. A card may sit in two seats (or twice in one) only
    after the engine flagged it ``duplicate_card``: two physical copies."""
    for out in outputs:
        assert isinstance(out, Alert | Notice | GameEvent | ConsoleResult)
        if isinstance(out, Alert | Notice):
            json.dumps(out.as_dict())
            assert out.street is None or out.street in STREET_NUMBERS
            assert out.seat is None or 1 <= out.seat <= 8
    hand = engine.hand
    if hand is None:
        return
    owners: dict[Card, int] = {}
    for seat_no, seat in hand.seats.items():
        assert seat_no in hand.players
        assert seat.status in SeatStatus
        for card in seat.all_cards:
            assert card not in owners or card in duplicated, (
                f"{card} held by seats {owners.get(card)} and {seat_no} without an alert"
            )
            owners[card] = seat_no
    assert hand.street is None or hand.street in STREET_NUMBERS
    assert hand.bring_in is None or hand.bring_in in hand.seats
    assert set(hand.first_to_act) <= {4, 5, 6, 7}
    assert set(hand.first_to_act.values()) <= set(hand.seats)
    assert len(set(hand.winners)) == len(hand.winners)
    assert set(hand.winners) <= set(hand.seats)
    assert hand.due_and_alone() == _due_from_scratch(hand)
    json.dumps(hand_report(hand))


def _due_from_scratch(hand: HandState) -> tuple[int | None, bool]:
    """The due seat by its definition, counted afresh (the engine reads cached live
    seats): the first live seat with the fewest cards, and whether it alone has them;
    none once the deal is over."""
    live = [s for s in hand.players if hand.seats[s].status is SeatStatus.ACTIVE]
    if len(live) < 2 or hand.finished:
        return None, False
    counts = [hand.seats[s].received for s in live]
    fewest = min(counts)
    if fewest >= 7 or (hand.community is not None and fewest >= 6):
        return None, False
    return live[counts.index(fewest)], counts.count(fewest) == 1


def _run_checked(events: Sequence[TableEvent], rules: RuleProfile | None = None,
                 **settings: bool) -> None:
    engine = DealingEngine(TableSettings(rules=rules or RuleProfile(), **settings))
    duplicated: set[Card] = set()
    for event in events:
        if isinstance(event, HandStarted):
            duplicated = set()
        outputs = engine.apply(event)
        if isinstance(event, CardPlaced) and any(
            isinstance(out, Alert) and out.code is AlertCode.DUPLICATE_CARD for out in outputs
        ):
            duplicated.add(event.card)
        _check_invariants(engine, outputs, duplicated)
    _check_invariants(engine, engine.finish_hand(), duplicated)


@_SETTINGS
@given(st.lists(random_events, max_size=80))
def test_random_event_sequences_never_raise(events: list[TableEvent]) -> None:
    _run_checked(events)


@_SETTINGS
@given(
    st.lists(random_events, min_size=1, max_size=60).map(
        lambda evs: [HandStarted((1, 2, 3, 5, 8)), *evs]
    )
)
def test_random_events_inside_a_hand_never_raise(events: list[TableEvent]) -> None:
    _run_checked(events)


@st.composite
def mangled_deals(draw: st.DrawFn) -> tuple[list[TableEvent], RuleProfile]:
    """A legal deal with events dropped, repeated, swapped or inserted."""
    deal, rules = draw(legal_deals())
    events = list(deal.events)
    for _ in range(draw(st.integers(1, 6))):
        i = draw(st.integers(0, len(events) - 1))
        how = draw(st.sampled_from(["drop", "repeat", "swap", "insert"]))
        if how == "drop" and i > 0:
            del events[i]
        elif how == "repeat":
            events.insert(i, events[i])
        elif how == "swap" and i + 1 < len(events):
            events[i], events[i + 1] = events[i + 1], events[i]
        else:
            events.insert(i + 1, draw(random_events))
    return events, rules


@_SETTINGS
@given(mangled_deals())
def test_mangled_legal_deals_never_raise(case: tuple[list[TableEvent], RuleProfile]) -> None:
    events, rules = case
    _run_checked(events, rules)


@_SETTINGS
@given(mangled_deals())
def test_mangled_deals_with_unread_stacks_never_raise(
    case: tuple[list[TableEvent], RuleProfile],
) -> None:
    """The same, with the unread-card inference on: a dropped card is read as a card
    dealt that no reader read, which changes the seats' counts on other paths."""
    events, rules = case
    _run_checked(events, rules, unread_stacks=True)


@_SETTINGS
@given(mangled_deals())
def test_mangled_auto_hands_never_raise(case: tuple[list[TableEvent], RuleProfile]) -> None:
    """The same as card-only auto hands (no hand line: players learnt from the deal,
    joining as their first card is seen), with the unread-card inference on."""
    events, rules = case
    _run_checked([e for e in events if not isinstance(e, HandStarted)], rules,
                 auto_hands=True, unread_stacks=True)
