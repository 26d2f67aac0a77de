"""Cross-reads that strength cannot decide: the deal order does (issue 19).

A reader that reports no strength (the project's MFRC522 and PN5180 firmware) reads a
card and its neighbour's cross-read alike. The engine says where the dealer is due to
deal (:func:`due_zones`: position order, docs/rules.md "Structure of a hand"; the burn
before each street, rule 13; the 3rd card down after an exposed hole card, rule 5) and
which cards are away from a live seat (:func:`returning_cards`); presence lets them
decide (docs/presence.md rule 1, the decision table). Unit tests of the engine's half,
then the whole path as property: any legal deal through any channel with cross-reads
and no strengths gives the dealt seats at every street's end and no alert.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from firmware_bridge.rf_channel import profile
from table_controller.domain.cards import Card
from table_controller.domain.engine.alerts import Alert
from table_controller.domain.engine.dealing import DealingEngine
from table_controller.domain.engine.due import due_zones, returning_cards
from table_controller.domain.engine.hand import HandState
from table_controller.domain.engine.settings import TableSettings
from table_controller.domain.events import CardPlaced, CardRemoved, HandStarted, TableEvent
from table_controller.domain.zones import BURN, Zone, ZoneKind
from table_controller.simulation.plan import plan_hand
from table_controller.simulation.runner import rf_table

SEATS = range(1, 9)


def _engine(*players: int) -> DealingEngine:
    engine = DealingEngine(TableSettings())
    engine.apply(HandStarted(players))
    return engine


def _place(engine: DealingEngine, zone: str, card: str) -> None:
    engine.apply(CardPlaced(Zone.parse(zone), Card.parse(card)))


def _hand(engine: DealingEngine) -> HandState:
    hand = engine.hand
    assert hand is not None
    return hand


def test_no_hand_any_seat_may_be_dealt_its_first_card_face_down() -> None:
    assert due_zones(None, range(1, 4)) == (Zone.down(1), Zone.down(2), Zone.down(3))
    # A table that burns before 3rd street (rule 13's profile setting): the burn first.
    assert due_zones(None, range(1, 3), burn_before_third=True) == (
        BURN, Zone.down(1), Zone.down(2))


def test_the_rest_of_the_round_then_the_next_round_in_position_order() -> None:
    engine = _engine(2, 4, 6)
    _place(engine, "seat2.down", "As")
    # Round 1 goes on at seat 4, then 6; round 2 (down too) starts again at seat 2.
    assert due_zones(_hand(engine), SEATS) == (
        Zone.down(4), Zone.down(6), Zone.down(2), Zone.down(4), Zone.down(6))
    for zone, card in (("seat4.down", "Kd"), ("seat6.down", "Qh"), ("seat2.down", "Jc"),
                       ("seat4.down", "Tc"), ("seat6.down", "9s")):
        _place(engine, zone, card)
    # Round 3 is 3rd street's up card; round 4 opens 4th street: its burn first (rule 13).
    assert due_zones(_hand(engine), SEATS) == (
        Zone.up(2), Zone.up(4), Zone.up(6), BURN, Zone.up(2), Zone.up(4), Zone.up(6))
    for zone, card in (("seat2.up", "8s"), ("seat4.up", "7s"), ("seat6.up", "6s")):
        _place(engine, zone, card)
    assert due_zones(_hand(engine), SEATS)[:2] == (BURN, Zone.up(2))
    _place(engine, "burn", "5s")
    assert due_zones(_hand(engine), SEATS)[:1] == (Zone.up(2),)


def test_after_an_exposed_hole_card_the_third_card_is_due_face_down() -> None:
    # Rule 5: the 1st card dealt face up; the seat's 3rd card replaces it face down.
    engine = _engine(1, 2)
    for zone, card in (("seat1.up", "As"), ("seat2.down", "Kd"), ("seat1.down", "Qh"),
                       ("seat2.down", "Jc")):
        _place(engine, zone, card)
    assert due_zones(_hand(engine), SEATS)[:2] == (Zone.down(1), Zone.up(2))


def test_nothing_is_due_once_the_deal_is_complete() -> None:
    engine = _engine(1, 2)
    cards = iter(["As", "Ks", "Qs", "Js", "Ts", "9s", "8s", "7s", "6s", "5s", "4s", "3s",
                  "2s", "Ah", "Kh", "Qh", "Jh", "Th"])
    for number in range(1, 8):
        if number >= 4:
            _place(engine, "burn", next(cards))
        face = "up" if 3 <= number <= 6 else "down"
        for seat in (1, 2):
            _place(engine, f"seat{seat}.{face}", next(cards))
    assert due_zones(_hand(engine), SEATS) == ()


def test_a_card_lifted_from_a_live_seat_is_expected_back_where_it_lay() -> None:
    engine = _engine(1, 2)
    _place(engine, "seat1.down", "As")
    assert returning_cards(_hand(engine)) == {}
    engine.apply(CardRemoved(Zone.down(1), Card.parse("As")))
    assert returning_cards(_hand(engine)) == {Card.parse("As"): Zone.down(1)}
    _place(engine, "seat1.down", "As")
    assert returning_cards(_hand(engine)) == {}


NO_STRENGTH_CHANNELS = st.builds(
    lambda name, muck, cross, flicker, hand, peek: (name, [
        "strength_reported=0", f"muck_depth={muck}", "stack_loss=0", "dead_tag=0",
        f"cross_read={cross}", f"flicker={flicker}", f"hand_pass={hand}",
        f"peek_rate={peek}"]),
    st.sampled_from(["good", "diy", "no-muck"]), st.sampled_from(["0", "2", "5", "all"]),
    st.floats(0.0, 0.3), st.floats(0.0, 0.01), st.floats(0.0, 0.3), st.floats(0.0, 1.0))
"""Readers that report no strength, any cross-read rate up to 30 % and muck depth, with
flicker, the dealer's hand and peeks; every card read (a card never read, stack loss
and dead tags, is the engine's inference, not a cross-read)."""


@settings(max_examples=30)
@given(st.integers(1, 100_000), NO_STRENGTH_CHANNELS)
def test_cross_reads_without_strengths_give_the_dealt_seats_at_every_street_and_no_alert(
        number: int, channel: tuple[str, list[str]]) -> None:
    name, overrides = channel
    rf = profile(name, overrides)
    hand = replace(plan_hand(number, 77, {}), number=1)
    table = rf_table(rf, number)
    engine = DealingEngine(TableSettings(auto_hands=True))
    alerts: list[str] = []
    # (street, the card that completed it, each live seat's down and up cards then)
    streets: list[tuple[int, str, dict[int, tuple[set[str], set[str]]]]] = []

    def apply(batch: Sequence[TableEvent]) -> tuple[tuple[Zone, ...], dict[Card, Zone]]:
        for event in batch:
            before = engine.hand
            done = len(before.completed_streets) if before is not None else 0
            alerts.extend(o.message for o in engine.apply(event) if isinstance(o, Alert))
            now = engine.hand
            if (now is not None and len(now.completed_streets) > done
                    and isinstance(event, CardPlaced)):
                streets.append((now.completed_streets[-1], event.card.code, {
                    seat: ({c.code for c in now.seats[seat].down},
                           {c.code for c in now.seats[seat].up})
                    for seat in now.live_seats}))
        hand_now = engine.hand
        return due_zones(hand_now, SEATS), returning_cards(hand_now)

    _inputs, facts = table.deal(replace(hand, clear=()), apply=apply)
    assert alerts == [], (alerts, facts.cross_reads)
    assert streets, "the deal completes 3rd street at least"
    for street, card, seats in streets:
        dealt = _lying_when_dealt(hand.events, card)
        for seat, cards in dealt.items():
            if cards != (set(), set()):  # (a seat folding meanwhile: its cards in flight)
                assert seats.get(seat) == cards, (street, seat, facts.cross_reads)


def _lying_when_dealt(events: tuple[object, ...], card: str
                      ) -> dict[int, tuple[set[str], set[str]]]:
    """Each seat's down and up cards as the dealer left them when he put ``card`` down
    at a seat (the card that completed a street)."""
    lying: dict[int, tuple[set[str], set[str]]] = {}
    for event in events:
        if isinstance(event, CardPlaced | CardRemoved) and event.zone.seat is not None:
            down, up = lying.setdefault(event.zone.seat, (set(), set()))
            side = down if event.zone.kind is ZoneKind.DOWN else up
            if isinstance(event, CardPlaced):
                side.add(event.card.code)
                if event.card.code == card:
                    break
            else:
                side.discard(event.card.code)
    return lying
