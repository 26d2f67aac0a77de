"""An up card no reader read, on the state (issue 19; docs/mqtt.md ``up_row``).

With ``unread_stacks`` the engine infers a card that was dealt but never read
(docs/engine.md "Reads that fail"). An inferred *up* card is a slot of the seat's
face-up row whose face nobody knows: ``{"unread": true}`` in ``up_row`` on the public
and the secure state, never a card; a later read or a manual entry fills it. These
tests follow the projection (``daemon/projection.py``), the engine's fill
(``DealingEngine._unread_up_card_read``) and the manual entry's check.
"""

from __future__ import annotations

import json
import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from table_controller.daemon.manual_entry import manual_contradiction
from table_controller.daemon.projection import public_state, secure_state
from table_controller.domain.cards import Card
from table_controller.domain.engine.dealing import DealingEngine, HandState
from table_controller.domain.engine.settings import TableSettings
from table_controller.domain.equity.evaluate import Game
from table_controller.domain.equity.live import compute_live, equity_spot
from table_controller.domain.events import CardPlaced, CardRemoved, TableEvent
from table_controller.domain.zones import Zone, ZoneKind
from table_controller.simulation.physical import deal_random
from tests.table_controller.stud_script import (
    BURNS,
    Table,
    codes,
    deal_street,
    deal_third,
    notice_codes,
)

UNREAD: dict[str, Any] = {"unread": True}


def _seat4_ks_unread() -> Table:
    """Seats 2, 4, 5; seat 4's 4th-street up card (Ks) was never read: the burn and
    seat 5's Js came, so seat 4 was dealt it (rule 7's order) unread."""
    t = deal_third(Table([2, 4, 5], unread_stacks=True))
    return t.burn(BURNS[4]).up(2, "4d").up(5, "Js")


def _row(hand: HandState, seat: int) -> list[Any]:
    state = json.loads(public_state("t1", 8, hand).model_dump_json())
    row: list[Any] = state["seats"][seat - 1]["up_row"]
    return row


def test_an_unread_up_card_is_a_slot_of_unknown_face_on_both_states() -> None:
    hand = _seat4_ks_unread().engine().current_hand()
    public = json.loads(public_state("t1", 8, hand).model_dump_json())
    seat4 = public["seats"][3]
    assert seat4["up_row"] == ["2c", UNREAD]
    assert seat4["up"] == ["2c"]  # the cards read, as before (a v1 consumer's field)
    assert seat4["down_count"] == 2
    assert seat4["showing"] == "Deuce high showing"  # from the cards read only
    assert "Ks" not in json.dumps(public)
    secure = json.loads(secure_state("t1", 8, hand).model_dump_json())
    assert secure["seats"][3]["up_row"] == ["2c", UNREAD]
    assert "Ks" not in json.dumps(secure)  # unknown to the production room too
    # A seat read whole: its row is its up cards.
    assert public["seats"][1]["up_row"] == public["seats"][1]["up"] == ["3d", "4d"]
    assert public["seats"][0]["up_row"] == []  # an empty seat


def test_a_seat_with_an_unread_hole_card_only_has_no_slot_in_its_row() -> None:
    """An unread *down* card is counted in ``down_count``, not shown in the row."""
    t = deal_third(Table([2, 4, 5], unread_stacks=True))
    t.lines = [line for line in t.lines if line.get("card") != "Kc"]
    deal_street(t, 4)
    hand = t.engine().current_hand()
    assert _row(hand, 4) == ["2c", "Ks"]
    assert public_state("t1", 8, hand).seats[3].down_count == 2


def test_the_unread_card_read_once_the_round_is_dealt_fills_its_slot() -> None:
    """Read at last after 5th street's round (moved, now read by its antenna), before
    6th street's burn: it fills the 4th-street slot; nothing is dealt, no alert."""
    t = _seat4_ks_unread()
    t.burn(BURNS[5]).up(2, "5d").up(4, "8c").up(5, "Jh").up(4, "Ks")
    hand = t.engine().current_hand()
    assert _row(hand, 4) == ["2c", "Ks", "8c"]  # in deal order: the slot was the 4th card
    assert hand.seats[4].unread == 0
    report = t.report()
    assert report["alerts"] == []
    assert report["players"]["4"]["up"] == ["2c", "8c", "Ks"]  # replay: as received


def test_a_manual_entry_fills_the_slot_even_right_after_the_seat_was_passed_over() -> None:
    """The producer enters seat 4's Ks at once: the slot is filled, the seat was not
    skipped (no ``out_of_order``, rule 7), and ``manual_card`` names the tag to replace."""
    t = _seat4_ks_unread()
    t.lines.append({"op": "place", "zone": "seat4.up", "card": "Ks", "manual": True})
    hand = t.engine().current_hand()
    assert _row(hand, 4) == ["2c", "Ks"]
    report = t.report()
    assert report["alerts"] == []
    assert notice_codes(report) == ["card_unread", "manual_card"]


def test_a_manual_entry_later_in_the_hand_fills_the_slot() -> None:
    t = _seat4_ks_unread()
    t.burn(BURNS[5]).up(2, "5d").up(4, "8c").up(5, "Jh")
    t.lines.append({"op": "place", "zone": "seat4.up", "card": "Ks", "manual": True})
    for street in (6, 7):
        deal_street(t, street)
    hand = t.engine().current_hand()
    assert _row(hand, 4) == ["2c", "Ks", "8c", "8h"]
    report = t.report()
    assert report["alerts"] == []
    assert report["winners"] == [4]  # kings full, the entered king counted


def test_a_card_read_in_the_seats_turn_is_its_card_dealt_and_the_slot_stays() -> None:
    """Seat 4's 5th-street card in its turn is that card (rule 7), not the old slot:
    the slot stays open to the end, and the replay report names no card for it."""
    t = _seat4_ks_unread()
    for street in (5, 6, 7):
        deal_street(t, street)
    hand = t.engine().current_hand()
    assert _row(hand, 4) == ["2c", UNREAD, "8c", "8h"]
    report = t.report()
    assert report["alerts"] == []
    assert report["players"]["4"]["up"] == ["2c", "8c", "8h"]  # the replay invents none


def test_a_manual_up_entry_for_the_slot_is_not_one_too_many() -> None:
    """Seat 4 holds its 4th-street count with the Ks unread: an up entry is its card,
    not a fifth; a down entry there still is one too many."""
    hand = _seat4_ks_unread().engine().current_hand()
    assert manual_contradiction(hand, Zone.up(4)) is None
    refused = manual_contradiction(hand, Zone.down(4))
    assert refused is not None
    assert not refused.accepted


def test_equity_treats_the_unread_up_card_as_unseen() -> None:
    """Nobody knows it: not the seat's, not dead; it is dealt from the unseen cards."""
    hand = _seat4_ks_unread().engine().current_hand()
    spot = equity_spot(hand, Game.STUD)
    assert spot is not None
    seats = dict(spot.seats)
    assert Card.parse("Ks") not in seats[4]
    assert len(seats[4]) == 3
    assert Card.parse("Ks") not in spot.dead
    live = compute_live(spot)
    assert live.problem is None
    assert abs(sum(share.equity for share in live.seats.values()) - 1.0) < 1e-9


def test_without_unread_stacks_the_row_is_the_up_cards() -> None:
    t = deal_third(Table([2, 4, 5]))
    t.burn(BURNS[4]).up(2, "4d").up(5, "Js")  # seat 4 missed: strict order
    hand = t.engine().current_hand()
    assert _row(hand, 4) == ["2c"]
    assert codes(t.report()) == ["out_of_order"]


# ---------------------------------------------------------------- any legal deal


def _drop_up_cards(events: list[TableEvent], rng: random.Random, chance: float
                   ) -> tuple[list[TableEvent], set[Card]]:
    """Up cards 4-6 (a row of up cards) never read, any number per seat and round,
    except a round's every card (that picture is a real error's: docs/engine.md)."""
    count: dict[int, int] = {}
    by_round: dict[int, list[Card]] = {}
    for event in events:
        if isinstance(event, CardPlaced) and event.zone.seat is not None and (
                event.zone.kind is ZoneKind.UP or event.zone.kind is ZoneKind.DOWN):
            seat = event.zone.seat
            count[seat] = count.get(seat, 0) + 1
            if event.zone.kind is ZoneKind.UP and count[seat] in (4, 5, 6):
                by_round.setdefault(count[seat], []).append(event.card)
    dropped: set[Card] = set()
    for cards in by_round.values():
        chosen = {card for card in cards if rng.random() < chance}
        if len(chosen) < len(cards):
            dropped |= chosen
    kept = [e for e in events if not (isinstance(e, CardPlaced | CardRemoved)
                                      and e.zone.seat is not None and e.card in dropped)]
    return kept, dropped


@settings(max_examples=100)
@given(
    seed=st.integers(0, 2**32 - 1),
    # (up to 6 players: 7 run the deck short on 7th street, rule 15's other picture)
    seats=st.lists(st.integers(1, 8), min_size=2, max_size=6, unique=True),
    chance=st.sampled_from([0.1, 0.3, 0.6]),
)
def test_at_every_burn_each_live_seats_row_is_its_dealt_row_with_slots_unread(
    seed: int, seats: list[int], chance: float
) -> None:
    """Any legal deal, up cards of streets 4-6 unread: at each street's burn (rule
    13: the round before it is over) every live seat's ``up_row`` is what it was
    dealt, each card never read a slot of unknown face, in deal order; no state
    ever names a card that was never read."""
    rng = random.Random(seed)
    physical = list(deal_random(sorted(seats), rng, fold_chance=0.0).events)
    events, dropped = _drop_up_cards(physical, rng, chance)
    rows: dict[int, list[Any]] = {}
    expected_at_burn: list[dict[int, list[Any]]] = []
    for event in physical:
        if isinstance(event, CardPlaced) and event.zone.kind is ZoneKind.BURN:
            expected_at_burn.append({s: list(r) for s, r in rows.items()})
        if (isinstance(event, CardPlaced) and event.zone.seat is not None
                and event.zone.kind is ZoneKind.UP):
            rows.setdefault(event.zone.seat, []).append(
                UNREAD if event.card in dropped else event.card.code)
    engine = DealingEngine(TableSettings(unread_stacks=True))
    burn = 0
    for event in events:
        engine.apply(event)
        hand = engine.current_hand()
        shown = {slot for seat in json.loads(public_state("t1", 8, hand).model_dump_json())[
            "seats"] for slot in [*seat["up"], *seat["up_row"]] if isinstance(slot, str)}
        assert not shown & {card.code for card in dropped}
        if isinstance(event, CardPlaced) and event.zone.kind is ZoneKind.BURN:
            expected = expected_at_burn[burn]
            for seat_no in hand.live_seats:
                assert _row(hand, seat_no) == expected.get(seat_no, []), (burn, seat_no)
            burn += 1
    assert burn == len(expected_at_burn)
    engine.finish_hand()
    hand = engine.current_hand()
    assert hand.alerts == []
    for seat_no in hand.live_seats:  # the river is down: the rows are complete
        assert _row(hand, seat_no) == rows[seat_no], seat_no


@settings(max_examples=100)
@given(
    seed=st.integers(0, 2**32 - 1),
    seats=st.lists(st.integers(1, 8), min_size=2, max_size=6, unique=True),
    chance=st.sampled_from([0.1, 0.3, 0.6]),
)
def test_unread_up_cards_entered_by_hand_fill_their_slots_and_raise_nothing(
    seed: int, seats: list[int], chance: float
) -> None:
    """Any legal deal, up cards of streets 4-6 unread, each entered by hand (the
    producer's Manual card) at a street's burn after it, or at the end: no alert, and
    every live seat's row is then the row it was dealt, in deal order."""
    rng = random.Random(seed)
    physical = list(deal_random(sorted(seats), rng, fold_chance=0.0).events)
    events, dropped = _drop_up_cards(physical, rng, chance)
    at: dict[Card, Zone] = {}
    rows: dict[int, list[str]] = {}
    for event in physical:
        if (isinstance(event, CardPlaced) and event.zone.seat is not None
                and event.zone.kind is ZoneKind.UP):
            rows.setdefault(event.zone.seat, []).append(event.card.code)
            if event.card in dropped:
                at[event.card] = event.zone
    position = {id(event): i for i, event in enumerate(physical)}
    dealt_at = {event.card: i for i, event in enumerate(physical)
                if isinstance(event, CardPlaced) and event.card in at}
    engine = DealingEngine(TableSettings(unread_stacks=True))
    pending = list(at)  # dealt unread, not yet entered
    for event in events:
        engine.apply(event)
        if isinstance(event, CardPlaced) and event.zone.kind is ZoneKind.BURN:
            # The rounds before this burn are over: their unread cards are slots now.
            # A seat's are entered left to right (an entry fills the seat's earliest
            # slot: it names a seat, not a slot), some now, the others later.
            closed = [card for card in pending if dealt_at[card] < position[id(event)]]
            now = {seat for seat in {at[card].seat for card in closed} if rng.random() < 0.5}
            for card in closed:
                if at[card].seat in now:
                    engine.apply(CardPlaced(at[card], card, manual=True))
                    pending.remove(card)
    for card in pending:
        engine.apply(CardPlaced(at[card], card, manual=True))
    engine.finish_hand()
    hand = engine.current_hand()
    assert hand.alerts == [], hand.alerts
    for seat_no in hand.live_seats:
        assert _row(hand, seat_no) == rows[seat_no], seat_no
