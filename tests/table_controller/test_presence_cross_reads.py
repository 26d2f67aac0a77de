"""Presence decides a cross-read by strength (docs/presence.md rule 1 and rule 3, issue 19).

A card read by its own antenna and by a neighbour's: within the settle window the
stronger read decides its zone whichever reader reports first; equal strengths are a
named tie; without strengths the zone that read it most wins. Unit tests on the
tracker, one per decision, then the engine on what presence emits: a card in flight
between a seat's zones never clears the seat.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from table_controller.domain.cards import Card
from table_controller.domain.engine.dealing import replay_events
from table_controller.domain.engine.settings import TableSettings
from table_controller.domain.events import CardPlaced, CardRemoved, ZoneEvent
from table_controller.domain.zones import BURN, MUCK, Zone
from table_controller.table.deck import load_decks
from table_controller.table.layout import load_layout
from table_controller.table.presence import (
    DEFAULT_SETTLE_TIME,
    TIE_MARGIN_DB,
    CrossReadTie,
    PresenceTracker,
)

ROOT = Path(__file__).resolve().parents[2]
LAYOUT = load_layout(ROOT / "hardware" / "layouts" / "table-8-long-rows.toml")
REGISTRY = load_decks([ROOT / "hardware" / "decks" / "example-deck.toml"])
SETTLE = DEFAULT_SETTLE_TIME

SEAT1_DOWN = (1, 0)
SEAT1_UP = (1, 1)
SEAT2_UP = (1, 4)
BURN_ANT = (10, 0)
MUCK_ANT = (10, 1)
AS = Card.parse("As")
KD = Card.parse("Kd")
RED_AS = REGISTRY.uid_for(AS, "red")
RED_KD = REGISTRY.uid_for(KD, "red")
OWN, CROSS = -45.0, -55.0  # the own antenna and a neighbour 10 dB weaker


@pytest.fixture
def tracker() -> PresenceTracker:
    return PresenceTracker(LAYOUT, REGISTRY, hold_time=1.5, settle_time=SETTLE)


def arrive(t: PresenceTracker, antenna: tuple[int, int], uid: str, now: float,
           rssi: float | None = None) -> list[ZoneEvent]:
    return t.tag_arrived(antenna[0], antenna[1], uid, now, rssi)


def leave(t: PresenceTracker, antenna: tuple[int, int], uid: str, now: float) -> list[ZoneEvent]:
    return t.tag_left(antenna[0], antenna[1], uid, now)


def test_a_card_first_seen_waits_out_the_settle_window_and_keeps_its_time(
        tracker: PresenceTracker) -> None:
    # Rule 1: nothing until the window ends; then placed, dated at the sighting.
    assert arrive(tracker, SEAT1_DOWN, RED_AS, 1.0, OWN) == []
    assert tracker.next_deadline() == pytest.approx(1.0 + SETTLE)
    assert tracker.present() == ()
    assert tracker.tick(1.0 + SETTLE) == [CardPlaced(Zone.down(1), AS, 1.0, "red")]
    assert tracker.next_deadline() is None


def test_the_own_read_first_wins_over_a_weaker_cross_read(tracker: PresenceTracker) -> None:
    arrive(tracker, SEAT1_DOWN, RED_AS, 1.00, OWN)
    arrive(tracker, SEAT1_UP, RED_AS, 1.03, CROSS)
    assert tracker.tick(2.0) == [CardPlaced(Zone.down(1), AS, 1.00, "red")]
    assert tracker.stats.settled_by_strength == 1
    assert tracker.stats.cross_reads == 1


def test_a_cross_read_first_loses_to_the_stronger_own_read(tracker: PresenceTracker) -> None:
    # Rule 1: the neighbour's reader scanned first; the card is still a hole card.
    arrive(tracker, SEAT1_UP, RED_AS, 1.00, CROSS)
    arrive(tracker, SEAT1_DOWN, RED_AS, 1.12, OWN)
    assert tracker.tick(2.0) == [CardPlaced(Zone.down(1), AS, 1.00, "red")]
    assert tracker.cards_in(Zone.up(1)) == ()


def test_a_later_report_commits_the_window_first(tracker: PresenceTracker) -> None:
    # Every report expires what is due by its time first: cards stay in deal order.
    arrive(tracker, SEAT2_UP, RED_AS, 1.0, CROSS)
    arrive(tracker, SEAT1_UP, RED_AS, 1.1, OWN)
    assert arrive(tracker, SEAT1_DOWN, RED_KD, 1.5, OWN) == [
        CardPlaced(Zone.up(1), AS, 1.0, "red")]
    assert tracker.tick(1.5 + SETTLE) == [CardPlaced(Zone.down(1), KD, 1.5, "red")]


def test_equal_strengths_are_a_named_tie_and_one_card(tracker: PresenceTracker) -> None:
    arrive(tracker, BURN_ANT, RED_AS, 1.0, -45.0)
    arrive(tracker, MUCK_ANT, RED_AS, 1.1, -45.0 - TIE_MARGIN_DB / 2)
    assert tracker.tick(2.0) == [CardPlaced(BURN, AS, 1.0, "red")]
    assert tracker.ties() == (CrossReadTie(AS, BURN, MUCK, 1.0, -45.0, -45.0 - TIE_MARGIN_DB / 2),)
    assert tracker.stats.cross_read_ties == 1
    assert tracker.cards_in(MUCK) == ()
    # The tie keeps the first zone for good: the muck's read is a cross-read after.
    leave(tracker, MUCK_ANT, RED_AS, 3.0)
    assert tracker.tick(10.0) == []
    assert tracker.cards_in(BURN) == (AS,)


def test_without_strengths_the_zone_that_read_it_most_wins(tracker: PresenceTracker) -> None:
    # An old reader (no RSSI): the neighbour reported first, the own antenna twice.
    arrive(tracker, SEAT1_UP, RED_AS, 1.00)
    arrive(tracker, SEAT1_DOWN, RED_AS, 1.05)
    leave(tracker, SEAT1_DOWN, RED_AS, 1.10)
    arrive(tracker, SEAT1_DOWN, RED_AS, 1.20)
    assert tracker.tick(2.0) == [CardPlaced(Zone.down(1), AS, 1.00, "red")]
    assert tracker.stats.settled_by_count == 1


def test_without_strengths_the_first_zone_keeps_a_tie_in_reads(tracker: PresenceTracker) -> None:
    arrive(tracker, SEAT1_UP, RED_AS, 1.00)
    arrive(tracker, SEAT1_DOWN, RED_AS, 1.05)
    assert tracker.tick(2.0) == [CardPlaced(Zone.up(1), AS, 1.00, "red")]


def test_a_read_a_tables_width_away_within_the_window_is_a_move(
        tracker: PresenceTracker) -> None:
    # The window commits what it saw (seat1.up, lost there at 1.1), then the move.
    arrive(tracker, SEAT1_UP, RED_AS, 1.0, OWN)
    leave(tracker, SEAT1_UP, RED_AS, 1.1)
    assert arrive(tracker, MUCK_ANT, RED_AS, 1.2, OWN) == [
        CardPlaced(Zone.up(1), AS, 1.0, "red")]
    # Where it landed settles too (rule 1), then it moves there, dated as it happened.
    assert tracker.tick(1.2 + SETTLE) == [
        CardRemoved(Zone.up(1), AS, 1.1, "red"), CardPlaced(MUCK, AS, 1.2, "red")]


def test_a_card_dropped_on_the_muck_lands_there_not_on_the_board_that_read_it_first(
        tracker: PresenceTracker) -> None:
    arrive(tracker, SEAT1_UP, RED_AS, 1.0, OWN)
    tracker.tick(2.0)
    leave(tracker, SEAT1_UP, RED_AS, 5.0)  # folded: picked up ...
    board = LAYOUT.antennas_of(Zone.parse("board"))[0]
    assert arrive(tracker, board, RED_AS, 5.10, CROSS) == []  # ... the board reads it first
    assert arrive(tracker, MUCK_ANT, RED_AS, 5.15, OWN) == []
    assert tracker.tick(6.0) == [
        CardRemoved(Zone.up(1), AS, 5.0, "red"), CardPlaced(MUCK, AS, 5.10, "red")]


def test_a_card_lost_within_its_window_is_placed_then_held(tracker: PresenceTracker) -> None:
    arrive(tracker, SEAT1_DOWN, RED_AS, 1.0, OWN)
    leave(tracker, SEAT1_DOWN, RED_AS, 1.15)
    assert tracker.tick(1.0 + SETTLE) == [CardPlaced(Zone.down(1), AS, 1.0, "red")]
    assert tracker.present()[0].held
    assert tracker.tick(1.15 + 1.5) == [CardRemoved(Zone.down(1), AS, 1.15, "red")]


def test_a_stronger_read_next_door_moves_a_placed_card_at_once(
        tracker: PresenceTracker) -> None:
    # Rule 3: placed on the cross-read alone (the own read came after the window),
    # then the own antenna reads it far stronger: the card lies there. Within one
    # seat the new zone comes first (in flight: the seat is never bare).
    arrive(tracker, SEAT1_UP, RED_AS, 1.0, CROSS)
    assert tracker.tick(1.0 + SETTLE) == [CardPlaced(Zone.up(1), AS, 1.0, "red")]
    assert arrive(tracker, SEAT1_DOWN, RED_AS, 1.6, OWN) == [
        CardPlaced(Zone.down(1), AS, 1.6, "red"), CardRemoved(Zone.up(1), AS, 1.6, "red")]
    assert tracker.stats.stronger_moves == 1


def test_a_weaker_read_next_door_stays_a_cross_read_while_the_own_antenna_flickers(
        tracker: PresenceTracker) -> None:
    arrive(tracker, BURN_ANT, RED_AS, 1.0, OWN)
    tracker.tick(2.0)
    arrive(tracker, MUCK_ANT, RED_AS, 3.0, CROSS)  # the cross-read, flickering
    leave(tracker, MUCK_ANT, RED_AS, 5.0)
    arrive(tracker, MUCK_ANT, RED_AS, 5.2, CROSS)
    # The own antenna misses a scan just after the cross-read came back: no move.
    assert leave(tracker, BURN_ANT, RED_AS, 5.3) == []
    assert arrive(tracker, BURN_ANT, RED_AS, 5.45, OWN) == []
    assert tracker.tick(10.0) == []
    assert tracker.cards_in(BURN) == (AS,)


def test_restored_cards_are_placed_at_once() -> None:
    tracker = PresenceTracker(LAYOUT, REGISTRY, settle_time=SETTLE)
    assert tracker.tag_arrived(*SEAT1_DOWN, RED_AS, 1.0, settle=False) == [
        CardPlaced(Zone.down(1), AS, 1.0, "red")]


def test_a_bad_settle_time_or_margin_is_refused() -> None:
    with pytest.raises(ValueError, match="settle_time"):
        PresenceTracker(LAYOUT, REGISTRY, hold_time=0.5, settle_time=2.0)
    with pytest.raises(ValueError, match="tie_margin_db"):
        PresenceTracker(LAYOUT, REGISTRY, tie_margin_db=float("nan"))


def test_a_card_in_flight_between_a_seats_zones_does_not_end_the_auto_hand() -> None:
    # The hand's only card, corrected from seat1.up to seat1.down (the order presence
    # emits a move within a seat): one hand goes on, the card a hole card. (Seen face
    # up first, the engine rightly flags it then: rule 1's window is what keeps a
    # cross-read from getting this far.)
    moved = [CardPlaced(Zone.up(1), AS, 1.0, "red"), CardPlaced(Zone.down(1), AS, 1.6, "red"),
             CardRemoved(Zone.up(1), AS, 1.6, "red"),
             CardPlaced(Zone.down(2), KD, 2.0, "red")]
    [hand] = replay_events(moved, TableSettings(auto_hands=True))
    assert hand.where[AS] == [Zone.down(1)]
    assert hand.where[KD] == [Zone.down(2)]
    assert sorted(hand.players) == [1, 2]
