"""Presence decides a cross-read by strength (docs/presence.md rule 1 and rule 3, issue 19).

A card read by its own antenna and by a neighbour's: within the settle window the
stronger read decides its zone whichever reader reports first; reads strength cannot
tell apart (equal, or a reader without strengths) are decided by the deal order (the
zone due soonest, the muck for a card from a seat), else a named tie. Unit tests on the
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

ROOT = Path(__file__).resolve().parents[3]
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
    # Two neighbouring up rows, neither due (no expectation given): a tie.
    arrive(tracker, SEAT1_UP, RED_AS, 1.0, -45.0)
    arrive(tracker, SEAT2_UP, RED_AS, 1.1, -45.0 - TIE_MARGIN_DB / 2)
    assert tracker.tick(2.0) == [CardPlaced(Zone.up(1), AS, 1.0, "red")]
    assert tracker.ties() == (
        CrossReadTie(AS, Zone.up(1), Zone.up(2), 1.0, -45.0, -45.0 - TIE_MARGIN_DB / 2),)
    assert tracker.stats.cross_read_ties == 1
    assert tracker.cards_in(Zone.up(2)) == ()
    # The tie keeps the first zone for good: seat 2's read is a cross-read after.
    leave(tracker, SEAT2_UP, RED_AS, 3.0)
    assert tracker.tick(10.0) == []
    assert tracker.cards_in(Zone.up(1)) == (AS,)


def test_without_strengths_the_zone_due_wins_whichever_read_came_first(
        tracker: PresenceTracker) -> None:
    # A reader with no RSSI: the neighbour reported first, twice as often even; the
    # dealer is due to deal seat 1's down card (round 1, docs/rules.md): it lies there.
    tracker.expect([Zone.down(1), Zone.down(2)])
    arrive(tracker, SEAT1_UP, RED_AS, 1.00)
    leave(tracker, SEAT1_UP, RED_AS, 1.05)
    arrive(tracker, SEAT1_UP, RED_AS, 1.10)
    arrive(tracker, SEAT1_DOWN, RED_AS, 1.12)
    assert tracker.tick(2.0) == [CardPlaced(Zone.down(1), AS, 1.00, "red")]
    assert tracker.stats.settled_by_deal == 1
    assert tracker.ties() == ()


def test_without_strengths_the_seat_due_decides_between_two_up_rows(
        tracker: PresenceTracker) -> None:
    # 4th street: seat 1 has had its card, seat 2 is due (then seat 3, ...).
    tracker.expect([Zone.up(2), Zone.up(3)])
    arrive(tracker, SEAT1_UP, RED_AS, 1.00)  # seat 1's row reaching over
    arrive(tracker, SEAT2_UP, RED_AS, 1.05)
    assert tracker.tick(2.0) == [CardPlaced(Zone.up(2), AS, 1.00, "red")]


def test_two_cards_settling_in_one_tick_follow_the_deal_in_turn(
        tracker: PresenceTracker) -> None:
    # One tick commits both: the first placement moves the expectation past seat 1.
    tracker.expect([Zone.up(1), Zone.up(2), Zone.up(3)])
    arrive(tracker, SEAT1_UP, RED_AS, 1.00)
    arrive(tracker, SEAT2_UP, RED_AS, 1.02)  # a cross-read of the As next door
    arrive(tracker, SEAT1_UP, RED_KD, 1.10)  # the Kd cross-read by seat 1 ...
    arrive(tracker, SEAT2_UP, RED_KD, 1.12)  # ... lies at seat 2, due next
    assert tracker.tick(2.0) == [CardPlaced(Zone.up(1), AS, 1.00, "red"),
                                 CardPlaced(Zone.up(2), KD, 1.10, "red")]


def test_a_burn_due_decides_burn_against_the_muck(tracker: PresenceTracker) -> None:
    # Rule 13: the street's burn comes before its first card.
    tracker.expect([BURN, Zone.up(1)])
    arrive(tracker, MUCK_ANT, RED_AS, 1.00)
    arrive(tracker, BURN_ANT, RED_AS, 1.05)
    assert tracker.tick(2.0) == [CardPlaced(BURN, AS, 1.00, "red")]


def test_equal_strengths_are_decided_by_the_deal_too(tracker: PresenceTracker) -> None:
    tracker.expect([MUCK])  # (never due in a real deal: the rule alone is tested)
    arrive(tracker, BURN_ANT, RED_AS, 1.0, -45.0)
    arrive(tracker, MUCK_ANT, RED_AS, 1.1, -45.5)
    assert tracker.tick(2.0) == [CardPlaced(MUCK, AS, 1.0, "red")]
    assert tracker.stats.settled_by_deal == 1


def test_without_strengths_and_nothing_due_the_first_zone_keeps_a_named_tie(
        tracker: PresenceTracker) -> None:
    arrive(tracker, SEAT1_UP, RED_AS, 1.00)
    arrive(tracker, SEAT1_DOWN, RED_AS, 1.05)
    assert tracker.tick(2.0) == [CardPlaced(Zone.up(1), AS, 1.00, "red")]
    assert tracker.ties() == (CrossReadTie(AS, Zone.up(1), Zone.down(1), 1.0, None, None),)
    assert tracker.stats.cross_read_ties == 1


def test_a_card_from_a_seat_lands_in_the_muck_not_the_burn_without_strengths(
        tracker: PresenceTracker) -> None:
    # A fold: the burn antenna reports it first, the muck's after; no strengths.
    tracker.expect([BURN])  # a burn is due next, but this card comes from a seat
    arrive(tracker, SEAT1_UP, RED_AS, 1.0)
    tracker.tick(2.0)
    leave(tracker, SEAT1_UP, RED_AS, 5.0)
    assert arrive(tracker, BURN_ANT, RED_AS, 5.10) == []
    assert arrive(tracker, MUCK_ANT, RED_AS, 5.15) == []
    assert tracker.tick(6.0) == [
        CardRemoved(Zone.up(1), AS, 5.0, "red"), CardPlaced(MUCK, AS, 5.10, "red")]


def test_a_card_first_seen_among_the_piles_with_nothing_due_there_is_mucked(
        tracker: PresenceTracker) -> None:
    # A folded card its seat never read, pushed to the muck after the street's burn:
    # the burn antenna reports it first; no burn is due, so it is no burn.
    tracker.expect([Zone.up(1), Zone.up(2)])
    arrive(tracker, BURN_ANT, RED_AS, 1.00)
    arrive(tracker, MUCK_ANT, RED_AS, 1.05)
    assert tracker.tick(2.0) == [CardPlaced(MUCK, AS, 1.00, "red")]
    assert tracker.ties() == ()


def test_an_unknown_tag_is_no_card_of_the_deal(tracker: PresenceTracker) -> None:
    tracker.expect([Zone.down(1)])
    arrive(tracker, SEAT1_UP, "E0040150DEADBEEF", 1.00)
    arrive(tracker, SEAT1_DOWN, "E0040150DEADBEEF", 1.05)
    (event,) = tracker.tick(2.0)
    assert event.zone == Zone.up(1)  # the first zone keeps it, the tie named
    assert tracker.stats.cross_read_ties == 1


def test_without_strengths_a_placed_card_read_next_door_stays_put_while_held(
        tracker: PresenceTracker) -> None:
    # A card lying in seat 1's down zone; the dealer's hand shadows it and seat 1's
    # up antenna starts reading it meanwhile: no move, the card stays a hole card.
    arrive(tracker, SEAT1_DOWN, RED_AS, 1.0)
    tracker.tick(2.0)
    assert leave(tracker, SEAT1_DOWN, RED_AS, 3.0) == []
    assert arrive(tracker, SEAT1_UP, RED_AS, 3.1) == []
    assert arrive(tracker, SEAT1_DOWN, RED_AS, 3.3) == []
    assert tracker.tick(3.3 + SETTLE) == []
    assert leave(tracker, SEAT1_UP, RED_AS, 4.0) == []
    assert tracker.tick(10.0) == []
    assert tracker.cards_in(Zone.down(1)) == (AS,)
    assert tracker.cards_in(Zone.up(1)) == ()


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


def test_a_fold_read_in_the_muck_before_the_seat_reports_it_gone_is_no_tie(
        tracker: PresenceTracker) -> None:
    # Readers scan on their own: the muck's reader reads a folded card while the
    # seat's reader has not yet reported it gone, and the seat's next inventory still
    # lists it. That late report is no candidate zone (rule 3): the card is mucked,
    # no tie is named (found by the daemon-mode simulation on a loaded machine).
    arrive(tracker, SEAT1_UP, RED_AS, 1.0)
    tracker.tick(2.0)
    assert arrive(tracker, MUCK_ANT, RED_AS, 5.00) == []
    assert tracker.inventory(SEAT1_UP[0], SEAT1_UP[1], [RED_AS], 5.05) == []
    assert tracker.inventory(SEAT1_UP[0], SEAT1_UP[1], [], 5.10) == []
    assert tracker.tick(6.0) == [
        CardRemoved(Zone.up(1), AS, 5.10, "red"), CardPlaced(MUCK, AS, 5.00, "red")]
    assert tracker.ties() == ()
