"""Reads that fail on card-only tables (docs/conformance.md "Reads that fail", issue 19).

Real readers miss cards: the muck pile is usually not read at all, a player looks
at a hole card, a dead tag is entered by hand. The engine infers what the readers
cannot see; a correctly dealt hand still raises no alert (docs/engine.md "Reads
that fail" is the decision table these tests follow row by row).
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from table_controller.domain.cards import Card
from table_controller.domain.engine.dealing import replay_events
from table_controller.domain.engine.report import hand_report
from table_controller.domain.events import CardPlaced, CardRemoved, TableEvent
from table_controller.domain.zones import MUCK, Zone, ZoneKind
from table_controller.simulation.physical import deal_random
from tests.table_controller.stud_script import (
    BURNS,
    STREETS,
    THIRD,
    Table,
    codes,
    deal_street,
    deal_third,
    notice_codes,
)

# Seat 5's 3rd-street cards in the shared hand (stud_script.THIRD).
SEAT5 = [("down", "7h"), ("down", "7c"), ("up", "Qs")]


def _unread_fold(t: Table, seat: int, cards: list[tuple[str, str]]) -> Table:
    """``seat`` folds into a muck no reader reads: its cards just leave."""
    for face, card in cards:
        t.remove(f"seat{seat}.{face}", card)
    return t


def test_unread_fold_then_next_street_is_a_fold_without_alert() -> None:
    """Row 1: every card gone, seen nowhere else, then the deal goes on without it."""
    t = deal_third(Table([2, 4, 5]))
    _unread_fold(t, 5, SEAT5)
    t.burn(BURNS[4]).up(2, "4d").up(4, "Ks")
    report = t.report()
    assert report["players"]["5"]["status"] == "folded"
    assert report["alerts"] == []
    assert notice_codes(report) == ["fold_unread"]
    assert report["first_to_act"] == {"4": 4}  # Ks-2c over 3d-4d; seat 5 not counted


def test_unread_fold_of_the_last_seat_in_order_completes_the_street() -> None:
    """The folded seat is the last one due: the next street's burn shows the fold."""
    t = deal_third(Table([2, 4, 5]))
    deal_street(t, 4)
    _unread_fold(t, 5, [*SEAT5, ("up", "Js")])
    t.burn(BURNS[5]).up(2, "5d").up(4, "8c")
    t.burn(BURNS[6]).up(2, "6d").up(4, "8h")
    report = t.report()
    assert report["players"]["5"]["status"] == "folded"
    assert report["alerts"] == []
    assert sorted(report["first_to_act"]) == ["4", "5", "6"]


def test_unread_fold_at_the_end_of_the_script() -> None:
    """The hand ends with the seat's cards gone: it folded."""
    t = deal_third(Table([2, 4, 5]))
    _unread_fold(t, 5, SEAT5)
    report = t.report()
    assert report["players"]["5"]["status"] == "folded"
    assert report["alerts"] == []


def test_cards_reaching_the_muck_after_an_unread_fold_change_nothing() -> None:
    t = deal_third(Table([2, 4, 5]))
    _unread_fold(t, 5, SEAT5)
    t.burn(BURNS[4]).up(2, "4d").up(4, "Ks")
    t.place("muck", "7h").place("muck", "Qs")  # the muck antenna reads two of them late
    t.burn(BURNS[5]).up(2, "5d").up(4, "8c")
    report = t.report()
    assert report["players"]["5"]["status"] == "folded"
    assert report["alerts"] == []


def test_unread_folds_leave_the_last_seat_standing_as_winner() -> None:
    """Two seats fold into an unread muck: the third wins without a showdown."""
    t = deal_third(Table([2, 4, 5]))
    deal_street(t, 4)
    _unread_fold(t, 2, [("down", "As"), ("down", "Ah"), ("up", "3d"), ("up", "4d")])
    _unread_fold(t, 5, [*SEAT5, ("up", "Js")])
    report = t.report()
    assert [report["players"][s]["status"] for s in ("2", "4", "5")] == [
        "folded", "active", "folded"]
    assert report["winners"] == [4]
    assert report["alerts"] == []


def test_a_peek_is_no_event() -> None:
    """Row 2: a card leaves and comes back to its zone before any other card."""
    t = deal_third(Table([2, 4, 5]))
    t.remove("seat5.down", "7h").place("seat5.down", "7h")
    _unread_fold(t, 2, [])  # nothing
    deal_street(t, 4)
    t.remove("seat4.down", "Kd").remove("seat4.down", "Kc")  # looks at both hole cards
    t.place("seat4.down", "Kc").place("seat4.down", "Kd")
    for street in (5, 6, 7):
        deal_street(t, street)
    report = t.report()
    assert report["alerts"] == []
    assert report["notices"] == []
    assert all(p["status"] == "active" for p in report["players"].values())
    assert report["winners"] == [4]  # kings full of eights
    assert report["players"]["4"]["down"] == ["Kd", "Kc", "Kh"]


def test_looking_at_every_card_before_the_upcard_is_a_peek() -> None:
    """A seat with only its hole cards lifts them while the others are dealt: it is
    not passed over (the dealer still owes it a card), so nothing is inferred."""
    t = Table([2, 4, 5])
    t.round("down", THIRD[1]).round("down", THIRD[2])
    t.remove("seat2.down", "As").remove("seat2.down", "Ah")
    t.up(2, "3d")  # the dealer gives seat 2 its upcard while it looks
    t.place("seat2.down", "As").place("seat2.down", "Ah")
    t.up(4, "2c").up(5, "Qs")
    report = t.report()
    assert report["alerts"] == []
    assert report["players"]["2"]["status"] == "active"
    assert report["bring_in"] == 4


def test_all_cards_lifted_then_dealt_to_is_not_a_fold() -> None:
    """The dealer deals to a seat whose cards are all up in the air: it plays on."""
    t = deal_third(Table([2, 4, 5]))
    t.burn(BURNS[4])
    t.remove("seat2.down", "As")  # seat 2 holds one hole card while 4th is dealt
    t.up(2, "4d").up(4, "Ks").up(5, "Js")
    t.place("seat2.down", "As")
    report = t.report()
    assert report["alerts"] == []
    assert report["players"]["2"]["status"] == "active"


def test_a_card_never_seen_again_while_the_seat_plays_on_is_card_left_table() -> None:
    """Row 3: a palmed card: reported at the latest when the hand ends, once."""
    t = deal_third(Table([2, 4, 5]))
    deal_street(t, 4)
    t.remove("seat5.down", "7c")
    for street in (5, 6, 7):
        deal_street(t, street)
    report = t.report()
    assert codes(report) == ["card_left_table"]
    alert = report["alerts"][0]
    assert alert["seat"] == 5
    assert alert["rule"] is None
    assert "7c" not in alert["message"]  # a hole card is never named in an alert
    assert report["players"]["5"]["status"] == "active"


def test_a_card_missing_at_the_end_of_the_script_is_reported() -> None:
    """Removed and the script ends while the seat keeps its other cards."""
    t = deal_third(Table([2, 4, 5]))
    t.remove("seat4.up", "2c")
    assert codes(t.report()) == ["card_left_table"]


def test_a_palmed_card_of_a_seat_that_folds_later_is_not_reported() -> None:
    """The seat did not stay in the hand: looking at a card and then mucking with it
    in hand is the same picture to the readers."""
    t = deal_third(Table([2, 4, 5]))
    t.remove("seat5.down", "7c")
    deal_street(t, 4)
    _unread_fold(t, 5, [("down", "7h"), ("up", "Qs"), ("up", "Js")])
    t.burn(BURNS[5]).up(2, "5d").up(4, "8c")
    report = t.report()
    assert report["alerts"] == []
    assert report["players"]["5"]["status"] == "folded"


def test_gathering_the_cards_at_showdown_is_no_fold_and_no_missing_card() -> None:
    """Rule 10: at showdown picking up means nothing; the showdown still decides."""
    t = deal_third(Table([2, 4, 5]))
    for street in (4, 5, 6, 7):
        deal_street(t, street)
    for seat in (2, 4, 5):
        for face, cards in (("down", THIRD[1]), ("down", THIRD[2]), ("down", STREETS[7]),
                            ("up", THIRD[3]), ("up", STREETS[4]), ("up", STREETS[5]),
                            ("up", STREETS[6])):
            t.remove(f"seat{seat}.{face}", cards[seat])
    report = t.report()
    assert report["alerts"] == []
    assert report["winners"] == [4]
    assert all(p["status"] == "active" for p in report["players"].values())


def test_a_manual_card_counts_as_read_there() -> None:
    """Row 4: ``"manual": true`` marks a dead tag's card entered by hand."""
    t = deal_third(Table([2, 4, 5]))
    t.lines[-1]["manual"] = True  # seat 5's Qs upcard has a dead tag
    for street in (4, 5, 6, 7):
        deal_street(t, street)
    report = t.report()
    assert report["alerts"] == []
    assert notice_codes(report) == ["manual_card"]
    assert report["players"]["5"]["up"][0] == "Qs"
    assert report["winners"] == [4]


def test_manual_is_only_a_boolean_on_place_lines() -> None:
    import pytest

    from table_controller.records.script import ScriptError, parse_script

    bad = ['{"op":"hand","players":[1,2]}',
           '{"op":"place","zone":"seat1.down","card":"As","manual":"yes"}']
    with pytest.raises(ScriptError, match="line 2"):
        parse_script(bad)
    bad[1] = '{"op":"remove","zone":"seat1.down","card":"As","manual":true}'
    with pytest.raises(ScriptError, match="line 2"):
        parse_script(bad)


def test_an_auto_hand_with_a_dead_tag_still_clears() -> None:
    """A manual card is never seen leaving: the table still clears for the next hand."""
    t = Table([], auto_hands=True)
    t.lines.pop()  # no hand line: the first card starts the hand
    t.down(1, "As").down(2, "Ks").down(1, "Ah").down(2, "Kh")
    t.lines.append({"op": "place", "zone": "seat1.up", "card": "2c", "manual": True})
    t.up(2, "3c")
    for zone, card in (("seat1.down", "As"), ("seat1.down", "Ah"), ("seat2.down", "Ks"),
                       ("seat2.down", "Kh"), ("seat2.up", "3c")):
        t.remove(zone, card)
    t.down(1, "Qs")  # a new hand
    hands = replay_report_of(t)
    assert len(hands) == 2


def replay_report_of(t: Table) -> list[dict[str, Any]]:
    from table_controller.records.script import parse_script

    script = parse_script(t.text().splitlines())
    return [hand_report(h) for h in replay_events((e for _, e in script.events),
                                                  script.settings)]


# ----------------------------------------------------------------- properties

def _without_muck_reads(events: list[TableEvent], rng: random.Random, depth: int,
                        peeks: float) -> list[TableEvent]:
    """The readers' view of a physical deal: the muck reads only its first
    ``depth`` cards, and some hole cards are looked at (lifted, put back before
    the next card) at random."""
    out: list[TableEvent] = []
    mucked = 0
    for event in events:
        if isinstance(event, CardPlaced) and event.zone == MUCK:
            mucked += 1
            if mucked > depth:
                continue
        out.append(event)
        if (isinstance(event, CardPlaced) and event.zone.kind is ZoneKind.DOWN
                and rng.random() < peeks):
            out += [CardRemoved(event.zone, event.card), CardPlaced(event.zone, event.card)]
    return out


@settings(max_examples=150)
@given(
    seed=st.integers(0, 2**32 - 1),
    seats=st.lists(st.integers(1, 8), min_size=2, max_size=8, unique=True),
    depth=st.sampled_from([0, 1, 3, 52]),
    peeks=st.sampled_from([0.0, 0.3]),
)
def test_legal_deals_with_unread_mucks_and_peeks_raise_no_alert(
    seed: int, seats: list[int], depth: int, peeks: float
) -> None:
    """Any legal deal, the muck read to any depth (0: no muck antenna) and hole cards
    looked at: no alert, every fold seen, every live seat's cards as dealt."""
    rng = random.Random(seed)
    deal = deal_random(sorted(seats), rng)
    events = _without_muck_reads(list(deal.events), rng, depth, peeks)
    (hand,) = replay_events(events)
    report = hand_report(hand)
    assert report["alerts"] == [], (deal.folds, report["alerts"])
    river_unread = {s for s, street in deal.folds.items() if street == 7} - _read_folds(events)
    for seat in deal.seats:
        status = report["players"][str(seat)]["status"]
        if seat in river_unread:
            # A fold after the last card into an unread muck looks exactly like the
            # showdown's gathering (docs/engine.md "Reads that fail": what a
            # card-only table cannot know): the seat goes to the showdown.
            assert status == "active"
            continue
        assert status == ("folded" if seat in deal.folds else "active"), (seat, deal.folds)
        if seat not in deal.folds:
            got = [Card.parse(c) for c in report["players"][str(seat)]["down"]]
            assert got == list(deal.down(seat))
            assert [Card.parse(c) for c in report["players"][str(seat)]["up"]] == list(
                deal.up(seat))
    if len(deal.live_seats) == 1 and not river_unread:
        assert report["winners"] == list(deal.live_seats)


def _read_folds(events: list[TableEvent]) -> set[int]:
    """Seats one of whose cards the muck antenna read (the fold was seen)."""
    seat_of: dict[Card, int] = {}
    read: set[int] = set()
    for event in events:
        if isinstance(event, CardPlaced):
            if event.zone == MUCK and event.card in seat_of:
                read.add(seat_of[event.card])
            elif event.zone.seat is not None:
                seat_of[event.card] = event.zone.seat
    return read


def test_at_a_shown_showdown_a_seat_gone_unshown_mucked() -> None:
    """A river fold into an unread muck: the other seats turn their hole cards up
    at the showdown, so the seat whose cards went unshown mucked them."""
    t = deal_third(Table([2, 4, 5]))
    for street in (4, 5, 6, 7):
        deal_street(t, street)
    # Seat 4 (kings full) folds on the river; seats 2 and 5 show down.
    for face, card in (("down", "Kd"), ("down", "Kc"), ("down", "Kh"), ("up", "2c"),
                       ("up", "Ks"), ("up", "8c"), ("up", "8h")):
        t.remove(f"seat4.{face}", card)
    for seat, cards in ((2, ["As", "Ah", "Td"]), (5, ["7h", "7c", "2d"])):
        for card in cards:
            t.remove(f"seat{seat}.down", card).place(f"seat{seat}.up", card)
    report = t.report()
    assert report["alerts"] == []
    assert report["players"]["4"]["status"] == "folded"
    assert report["winners"] == [5]  # jacks full of sevens beat seat 2's diamond flush


def test_a_card_away_past_the_peek_allowance_while_the_deal_goes_on_alerts_at_once() -> None:
    """With event times (the daemon's), a card gone longer than the allowance while
    other cards are dealt is reported then, once, not only at the end."""
    from table_controller.domain.engine.dealing import PEEK_ALLOWANCE

    t = deal_third(Table([2, 4, 5]))
    t.lines.append({"op": "remove", "zone": "seat5.down", "card": "7c", "at": 100.0})
    t.lines.append({"op": "place", "zone": "burn", "card": "9h", "at": 101.0})
    t.lines.append({"op": "place", "zone": "seat2.up", "card": "4d", "at": 102.0})
    t.lines.append({"op": "place", "zone": "seat4.up", "card": "Ks",
                    "at": 100.0 + PEEK_ALLOWANCE + 1})
    engine = t.engine()
    hand = engine.current_hand()
    assert [a.code.value for a in hand.alerts] == ["card_left_table"]
    assert hand.alerts[0].seat == 5
    t.up(5, "Js")
    assert codes(t.report()) == ["card_left_table"]  # once, also at the end


def test_a_long_look_within_the_allowance_is_nothing() -> None:
    t = deal_third(Table([2, 4, 5]))
    t.lines.append({"op": "remove", "zone": "seat5.down", "card": "7c", "at": 100.0})
    t.lines.append({"op": "place", "zone": "burn", "card": "9h", "at": 103.0})
    t.lines.append({"op": "place", "zone": "seat2.up", "card": "4d", "at": 105.0})
    t.lines.append({"op": "place", "zone": "seat5.down", "card": "7c", "at": 108.0})
    t.up(4, "Ks").up(5, "Js")
    report = t.report()
    assert report["alerts"] == []


def test_another_players_peek_ending_is_no_card_dealt() -> None:
    """Seat 5 picks up all its cards to look at them while seat 2 puts back the hole
    card it was looking at: no card was dealt, so seat 5 has not folded; its cards
    come back."""
    t = deal_third(Table([2, 4, 5]))
    t.remove("seat2.down", "As")
    _unread_fold(t, 5, SEAT5)
    t.place("seat2.down", "As")
    for face, card in SEAT5:
        t.place(f"seat5.{face}", card)
    deal_street(t, 4)
    report = t.report()
    assert report["alerts"] == []
    assert report["notices"] == []
    assert report["players"]["5"]["status"] == "active"


# ------------------------------------------- a down card no reader read (unread_stacks)

def _stacked(t: Table, missing: set[tuple[int, str]]) -> Table:
    """Drop the place lines of ``missing`` (seat, card): those tags were never read."""
    t.lines = [line for line in t.lines
               if not (line.get("op") == "place" and "seat" in str(line.get("zone"))
                       and (int(str(line["zone"])[4]), line["card"]) in missing)]
    return t


def _full_hand(**table: Any) -> Table:
    t = deal_third(Table([2, 4, 5], **table))
    for street in (4, 5, 6, 7):
        deal_street(t, street)
    return t


@pytest.mark.parametrize("missing", [
    (4, "Kc"),  # a middle seat's 2nd hole card
    (2, "Ah"),  # the first seat's: 3rd street's up round starts with its own card
    (5, "7c"),  # the last seat's
    (4, "Kh"),  # a middle seat's river card
    (5, "2d"),  # the last seat's river card: only the showdown shows it
    (2, "As"),  # a first hole card
])
def test_a_stacked_down_card_never_read_is_inferred(missing: tuple[int, str]) -> None:
    report = _stacked(_full_hand(unread_stacks=True), {missing}).report()
    assert report["alerts"] == [], report["alerts"]
    assert notice_codes(report) == ["card_unread"]
    assert report["notices"][0]["seat"] == missing[0]
    assert missing[1] not in report["notices"][0]["message"]
    assert report["bring_in"] == 4
    assert sorted(report["first_to_act"]) == ["4", "5", "6", "7"]
    assert all(p["status"] == "active" for p in report["players"].values())
    # Seat 4's kings full hold on its six cards read, whichever of them is missing.
    assert report["winners"] == [4]


def test_without_unread_stacks_a_missing_down_card_is_out_of_order() -> None:
    """The default (and the contract's replay): the deal order is checked strictly."""
    report = _stacked(_full_hand(), {(4, "Kc")}).report()
    assert "out_of_order" in codes(report)


@pytest.mark.parametrize("missing", [
    (4, "Ks"),  # a middle seat's 4th-street card: a row of up cards
    (2, "5d"),  # the first seat's 5th
    (5, "Jc"),  # the last seat's 6th: the 7th street's burn shows the round is over
    (4, "2c"),  # the first up card (a dead tag: it lies alone on its antenna)
    (5, "7h"),  # the last seat's first card (a dead tag)
])
def test_an_up_card_or_any_card_never_read_is_inferred(missing: tuple[int, str]) -> None:
    """Up cards too (rules 7, 13, 18): the seat was dealt it, no reader read it."""
    report = _stacked(_full_hand(unread_stacks=True), {missing}).report()
    assert report["alerts"] == [], report["alerts"]
    assert notice_codes(report) == ["card_unread"]
    assert report["notices"][0]["seat"] == missing[0]
    assert missing[1] not in report["notices"][0]["message"]
    assert sorted(report["first_to_act"]) == ["4", "5", "6", "7"]
    assert all(p["status"] == "active" for p in report["players"].values())


@pytest.mark.parametrize("missing", [
    {(2, "Ah"), (4, "Kc")},  # two seats' 2nd hole cards
    {(4, "Ks"), (5, "Js")},  # the last two seats' 4th-street cards: the burn ends the round
    {(2, "Td"), (5, "2d")},  # two rivers, the last one only the showdown shows
    {(2, "Ah"), (2, "5d"), (2, "Td")},  # three cards of one seat
])
def test_several_cards_never_read_in_one_round_or_one_seat_are_inferred(
        missing: set[tuple[int, str]]) -> None:
    report = _stacked(_full_hand(unread_stacks=True), missing).report()
    assert report["alerts"] == [], report["alerts"]
    assert sorted(n["seat"] for n in report["notices"]) == sorted(s for s, _c in missing)
    assert set(notice_codes(report)) == {"card_unread"}
    assert sorted(report["first_to_act"]) == ["4", "5", "6", "7"]


def test_a_seat_passed_over_whose_card_comes_late_in_the_round_is_out_of_order() -> None:
    """Rule 7's order: seat 4 got its 4th-street card before seat 2. Seat 2 is unread
    only provisionally; its card arriving before the round is over makes it a real
    ``out_of_order``, at the seat dealt out of turn, and no other alert follows."""
    t = deal_third(Table([2, 4, 5], unread_stacks=True))
    t.burn(BURNS[4]).up(4, "Ks").up(2, "4d").up(5, "Js")
    for street in (5, 6, 7):
        deal_street(t, street)
    report = t.report()
    assert [(a["code"], a["seat"], a["street"]) for a in report["alerts"]] == [
        ("out_of_order", 4, 4)]
    assert report["winners"] == [4]


@pytest.mark.parametrize("street", [3, 5, 7])
def test_the_last_two_seats_swapped_is_out_of_order_too(street: int) -> None:
    """Seat 5 dealt before seat 4, the last card of the round: every seat then holds
    the round's card, yet the next street is not burned for (nor, on 3rd street, is
    the card the next round's face): seat 4's card is late, not the next round's."""
    t = Table([2, 4, 5], unread_stacks=True)
    if street == 3:
        t.round("down", THIRD[1]).down(2, "Ah").down(5, "7c").down(4, "Kc")
        t.round("up", THIRD[3])
    else:
        deal_third(t)
    for later in (4, 5, 6, 7):
        if later == street:
            t.burn(BURNS[later]).place(f"seat2.{'down' if later == 7 else 'up'}",
                                       STREETS[later][2])
            face = "down" if later == 7 else "up"
            t.place(f"seat5.{face}", STREETS[later][5]).place(f"seat4.{face}",
                                                             STREETS[later][4])
        else:
            deal_street(t, later)
    report = t.report()
    assert [(a["code"], a["seat"]) for a in report["alerts"]] == [("out_of_order", 5)]


def test_an_unread_hole_card_read_later_takes_its_place() -> None:
    """A hole card never read on its stack, lifted for a peek and put back on top,
    is read at 5th street: it is that unread card, not a card dealt."""
    t = _stacked(_full_hand(unread_stacks=True), {(4, "Kc")})
    at = next(i for i, line in enumerate(t.lines) if line.get("card") == STREETS[5][2])
    t.lines.insert(at, {"op": "place", "zone": "seat4.down", "card": "Kc"})
    report = t.report()
    assert report["alerts"] == [], report["alerts"]
    assert report["players"]["4"]["down"] == ["Kd", "Kc", "Kh"]
    assert report["winners"] == [4]


def test_a_dead_burn_card_gives_its_one_alert() -> None:
    """A burn card whose tag is dead: the street looks unburned (rule 13), once."""
    t = _full_hand(unread_stacks=True)
    t.lines = [line for line in t.lines if line.get("card") != BURNS[5]]
    assert codes(t.report()) == ["missing_burn"]


def test_unread_stacks_does_not_hide_an_exposed_hole_card() -> None:
    """Seat 2's 2nd card dealt face up in round 2 (the others still have one card):
    rule 5, not an unread card."""
    t = Table([2, 4, 5], unread_stacks=True)
    t.round("down", THIRD[1])
    t.up(2, "Ah").down(4, "Kc").down(5, "7c")
    t.down(2, "3d").up(4, "2c").up(5, "Qs")  # seat 2's 3rd card down instead (rule 5)
    report = t.report()
    assert codes(report) == ["hole_card_exposed"]


def _drop_stacked(events: list[TableEvent], rng: random.Random, chance: float
                  ) -> tuple[list[TableEvent], set[Card]]:
    """At most one card per seat never read: a 2nd hole card or a river card, the ones
    that land on a stack (the 1st lies alone on its antenna); at most one seat's per
    round (two seats missing the same round's card look, when the next round starts,
    exactly like a hole card dealt face up: docs/engine.md says what is inferred)."""
    count: dict[int, int] = {}
    dropped: dict[int, Card] = {}
    rounds: set[int] = set()
    out: list[TableEvent] = []
    for event in events:
        if isinstance(event, CardPlaced) and event.zone.seat is not None and (
                event.zone.kind is ZoneKind.DOWN or event.zone.kind is ZoneKind.UP):
            seat = event.zone.seat
            count[seat] = count.get(seat, 0) + 1
            if (count[seat] in (2, 7) and event.zone.kind is ZoneKind.DOWN
                    and seat not in dropped and count[seat] not in rounds
                    and rng.random() < chance):
                dropped[seat] = event.card
                rounds.add(count[seat])
                continue
        if (isinstance(event, CardRemoved) and event.zone.seat is not None
                and dropped.get(event.zone.seat) == event.card):
            continue  # never read arriving, never read leaving
        out.append(event)
    return out, set(dropped.values())


@settings(max_examples=150)
@given(
    seed=st.integers(0, 2**32 - 1),
    seats=st.lists(st.integers(1, 8), min_size=2, max_size=8, unique=True),
    depth=st.sampled_from([0, 52]),
    chance=st.sampled_from([0.2, 0.6]),
)
def test_legal_deals_with_unread_stacked_cards_raise_no_alert(
    seed: int, seats: list[int], depth: int, chance: float
) -> None:
    """``unread_stacks``: any legal deal, a stacked down card of any seat never read (at
    most one per seat), the muck read or not: no alert, a card_unread notice per card
    missed at a seat still in the hand when it was dealt, the folds seen."""
    from table_controller.domain.engine.settings import TableSettings

    rng = random.Random(seed)
    deal = deal_random(sorted(seats), rng)
    events, dropped = _drop_stacked(list(deal.events), rng, chance)
    events = _without_muck_reads(events, rng, depth, 0.0)
    (hand,) = replay_events(events, TableSettings(unread_stacks=True))
    report = hand_report(hand)
    assert report["alerts"] == [], (deal.folds, dropped, report["alerts"])
    assert len([n for n in report["notices"] if n["code"] == "card_unread"]) <= len(dropped)
    river_unread = {s for s, street in deal.folds.items() if street == 7} - _read_folds(events)
    for seat in deal.seats:
        status = report["players"][str(seat)]["status"]
        if seat not in river_unread:
            assert status == ("folded" if seat in deal.folds else "active"), seat


def test_a_hand_closed_at_the_console_is_not_inventoried() -> None:
    """`end` (or the daemon closing a hand that ended while it was down): where the
    cards went is not known, so no card_left_table; the next hand line still
    inventories the hand it closes (the contract's "at the latest")."""
    t = deal_third(Table([2, 4, 5]))
    t.remove("seat5.down", "7c")
    t.lines.append({"op": "end"})
    assert t.report()["alerts"] == []


# ------------------------------- unread cards in an auto hand, and the property

def _auto(missing: set[str], extra: list[tuple[str, str]] | None = None) -> dict[str, Any]:
    """Seats 2, 4, 5 dealt a whole hand on a card-only table (players learnt from the
    first round, ``auto_hands``), the ``missing`` cards never read; ``extra`` (zone,
    card) lines inserted after round 2."""
    t = _full_hand()
    lines = [line for line in t.lines if line.get("op") == "place"
             and line["card"] not in missing]
    if extra:
        at = 6 - len([c for c in missing if c in {*THIRD[1].values(), *THIRD[2].values()}])
        lines[at:at] = [{"op": "place", "zone": z, "card": c} for z, c in extra]
    t.lines = [{"op": "table", "auto_hands": True, "unread_stacks": True}, *lines]
    return t.report()


@pytest.mark.parametrize("missing", [{"As"}, {"Kd"}, {"7h"}, {"Kd", "Ah"}])
def test_a_first_round_card_never_read_in_an_auto_hand_is_inferred(missing: set[str]) -> None:
    """The seat missing its first card joins with its 2nd, in its round-2 turn (a seat
    before it may miss its own 2nd card meanwhile)."""
    report = _auto(missing)
    assert report["alerts"] == [], report["alerts"]
    assert notice_codes(report) == ["card_unread"] * len(missing)
    assert sorted(report["players"]) == ["2", "4", "5"]
    assert report["bring_in"] == 4
    if not missing & {"Kd", "Kc"}:  # (seat 4's kings unread: the showdown cannot know)
        assert report["winners"] == [4]


def test_a_card_to_an_empty_seat_in_round_two_is_still_card_to_inactive_seat() -> None:
    """Rule 7: a face-down card at seat 7 in its round-2 turn could be a player whose
    first card went unread; round 3 passing it over shows it was not dealt in."""
    report = _auto(set(), [("seat7.down", "2h")])
    assert [(a["code"], a["seat"]) for a in report["alerts"]] == [
        ("card_to_inactive_seat", 7)]
    assert sorted(report["players"]) == ["2", "4", "5"]
    assert report["winners"] == [4]


def _unread_anywhere(events: list[TableEvent], rng: random.Random, chance: float,
                     whole: int | None = None) -> tuple[list[TableEvent], dict[int, int]]:
    """Cards that lie on a stack or in a row never read (down cards 2 and 7, up cards
    4-6), any number of them per seat and per round, except every live seat's card of
    one round (docs/engine.md "Reads that fail": that picture is a real error's, a
    hole card dealt up or a burn made twice), unless that round is ``whole``: then
    every card of that round is unread. Returns the events and each seat's count of
    cards dealt."""
    count: dict[int, int] = {}
    dropped: set[Card] = set()
    by_round: dict[int, list[tuple[int, Card]]] = {}
    for event in events:
        if isinstance(event, CardPlaced) and event.zone.seat is not None and (
                event.zone.kind in (ZoneKind.DOWN, ZoneKind.UP)):
            seat = event.zone.seat
            count[seat] = count.get(seat, 0) + 1
            by_round.setdefault(count[seat], []).append((seat, event.card))
    for number, cards in by_round.items():
        if number not in (2, 4, 5, 6, 7):
            continue
        if number == whole:
            dropped |= {card for _seat, card in cards}
            continue
        chosen = {card for _seat, card in cards if rng.random() < chance}
        if len(chosen) < len(cards):  # (a round's card read at one seat at least)
            dropped |= chosen
    out = [e for e in events if not (isinstance(e, CardPlaced | CardRemoved)
                                     and e.zone.seat is not None and e.card in dropped)]
    return out, count


@settings(max_examples=150)
@given(
    seed=st.integers(0, 2**32 - 1),
    seats=st.lists(st.integers(1, 8), min_size=2, max_size=8, unique=True),
    depth=st.sampled_from([0, 52]),
    chance=st.sampled_from([0.1, 0.3, 0.6]),
)
def test_legal_deals_with_any_cards_on_a_stack_or_row_unread_raise_no_alert(
    seed: int, seats: list[int], depth: int, chance: float
) -> None:
    """``unread_stacks``: any legal deal, any cards at stack depth 2+ or in the row of
    up cards never read (several per seat and per round), the muck read or not: no
    alert, and at every street's end (its burn, the hand's end) every live seat's
    count, read and unread, is the cards the dealer gave it (rules 7, 13, 18)."""
    _check_unread_deal(seed, seats, depth, chance, None)


@settings(max_examples=150)
@given(
    seed=st.integers(0, 2**32 - 1),
    seats=st.lists(st.integers(1, 8), min_size=2, max_size=8, unique=True),
    depth=st.sampled_from([0, 52]),
    chance=st.sampled_from([0.0, 0.1, 0.3]),
    whole=st.sampled_from([2, 4, 5, 6, 7]),
)
def test_legal_deals_with_a_whole_round_unread_raise_no_alert(
    seed: int, seats: list[int], depth: int, chance: float, whole: int
) -> None:
    """As above with every seat's card of one round (3rd street's 2nd, 4th-7th
    street) never read besides: the judgement that waits for the next cards
    (docs/engine.md "Reads that fail") confirms the round unread, no alert, and the
    counts at every street's end are the dealt ones."""
    _check_unread_deal(seed, seats, depth, chance, whole)


def _check_unread_deal(seed: int, seats: list[int], depth: int, chance: float,
                       whole: int | None) -> None:
    from table_controller.domain.engine.dealing import DealingEngine
    from table_controller.domain.engine.settings import TableSettings

    rng = random.Random(seed)
    deal = deal_random(sorted(seats), rng, fold_chance=0.1)
    physical = list(deal.events)
    events, _count = _unread_anywhere(physical, rng, chance, whole)
    events = _without_muck_reads(events, rng, depth, 0.0)
    engine = DealingEngine(TableSettings(unread_stacks=True))
    dealt: dict[int, int] = {}
    physical_burns = [i for i, e in enumerate(physical)
                      if isinstance(e, CardPlaced) and e.zone.kind is ZoneKind.BURN]
    counts_at_burn: list[dict[int, int]] = []
    for i, event in enumerate(physical):
        if i in physical_burns:
            counts_at_burn.append(dict(dealt))
        if isinstance(event, CardPlaced) and event.zone.seat is not None and (
                event.zone.kind in (ZoneKind.DOWN, ZoneKind.UP)):
            dealt[event.zone.seat] = dealt.get(event.zone.seat, 0) + 1
    burn = 0
    for event in events:
        engine.apply(event)
        if isinstance(event, CardPlaced) and event.zone.kind is ZoneKind.BURN and burn < 4:
            # Streets 4-7's burns show the round is over (rule 13): its counts are
            # final. (A short deck's burn after the scramble, rule 15, is mid-round.)
            hand = engine.current_hand()
            expected = counts_at_burn[burn]
            for seat_no in hand.live_seats:
                assert hand.seats[seat_no].received == expected[seat_no], (burn, seat_no)
            burn += 1
    engine.finish_hand()
    hand = engine.current_hand()
    report = hand_report(hand)
    assert report["alerts"] == [], (deal.folds, report["alerts"])
    if len(hand.live_seats) >= 2:  # (a hand won by folds needs no last count)
        for seat_no in hand.live_seats:
            assert hand.seats[seat_no].received == dealt[seat_no], seat_no


def test_the_public_state_counts_an_unread_down_card_and_names_no_unread_card() -> None:
    """The public snapshot: an unread hole card is one more face-down card (a count);
    an unread up card is not in ``up`` but a slot of unknown face in ``up_row``
    (tests/table_controller/domain/test_unread_up_slot.py); neither is named."""
    from table_controller.daemon.projection import public_state

    t = _stacked(deal_third(Table([2, 4, 5], unread_stacks=True)), {(4, "Kc")})
    deal_street(t, 4, {2: "4d", 5: "Js"})  # seat 4's Ks never read either
    engine = t.engine()
    hand = engine.current_hand()
    assert hand.seats[4].received == 4
    assert hand.seats[4].unread == 2
    state = public_state("t1", 8, hand)
    seat4 = next(seat for seat in state.seats if seat.seat == 4)
    assert seat4.down_count == 2
    assert [str(card) for card in seat4.up] == ["2c"]
    assert len(seat4.up_row) == 2
    text = state.model_dump_json()
    assert "Kc" not in text
    assert "Ks" not in text
    assert codes(t.report()) == []


def test_an_up_card_dealt_down_in_its_turn_is_not_taken_for_an_unread_hole_card() -> None:
    """Seat 4's 2nd hole card was never read; its 5th-street card, dealt face down in
    its turn, is upcard_dealt_down (rule 7's turn decides), not that hole card read."""
    t = _stacked(deal_third(Table([2, 4, 5], unread_stacks=True)), {(4, "Kc")})
    deal_street(t, 4)
    t.burn(BURNS[5]).up(2, "5d").down(4, "8c").up(5, "Jh")
    assert [(a["code"], a["seat"]) for a in t.report()["alerts"]] == [
        ("upcard_dealt_down", 4)]


def _hole_card_read_late(seat: int, hole: int, street: int, point: int, face: str
                         ) -> Table:
    """The clean three-handed hand with ``seat``'s hole card ``hole`` (1, 2) never read
    on its stack, then read at last (back from a peek) on ``street``'s round (3: its
    up round) with ``face``, just before the ``point``-th card of that round (0-based
    in seat order; 3: after the round, before the next street's burn)."""
    t = deal_third(Table([2, 4, 5], unread_stacks=True), {1: THIRD[1], 2: THIRD[2],
                                                          3: {}})
    card = THIRD[hole][seat]
    _stacked(t, {(seat, card)})
    for number in (3, 4, 5, 6, 7):
        at = 3 if number == 3 else number
        if number > 3:
            t.burn(BURNS[number])
        cards = THIRD[3] if number == 3 else STREETS[number]
        for index, (owner, dealt) in enumerate(sorted(cards.items())):
            if at == street and index == point:
                t.place(f"seat{seat}.{face}", card)
            t.place(f"seat{owner}.{'down' if number == 7 else 'up'}", dealt)
        if at == street and point == 3:
            t.place(f"seat{seat}.{face}", card)
    return t


_SEATS = (2, 4, 5)


@pytest.mark.parametrize("seat", _SEATS)
@pytest.mark.parametrize("hole", [1, 2])
@pytest.mark.parametrize("street", [3, 4, 5, 6])
def test_an_unread_hole_card_read_face_down_anywhere_in_an_up_round_raises_no_alert(
        seat: int, hole: int, street: int) -> None:
    """The class of the grid's hand 9802 (issue 19): a hole card never read, read face
    down at last on any up round, before the seat's up card (in its turn too: held
    until the next card, the seat's own up card, decides), after it, or after the round.
    The one place left out: right after the seat was passed over in the hole round
    (the late-arrival picture, ``out_of_order`` by design: ``_late_arrival``)."""
    for point in range(4):
        if street == 3 and point == 0 and hole == 2 and seat != _SEATS[-1]:
            continue  # right after the next seat's hole card: the late-arrival picture
        report = _hole_card_read_late(seat, hole, street, point, "down").report()
        assert report["alerts"] == [], (point, report["alerts"])
        # (No notice where the card comes before the hole round was seen to be over.)
        assert notice_codes(report) in ([], ["card_unread"])
        assert report["winners"] == [4]
        assert sorted(report["players"][str(seat)]["down"]) == sorted(
            [THIRD[1][seat], THIRD[2][seat], STREETS[7][seat]])


@pytest.mark.parametrize("seat", _SEATS)
@pytest.mark.parametrize("hole", [1, 2])
@pytest.mark.parametrize("street", [3, 4, 5, 6, 7])
def test_an_unread_hole_card_seen_at_its_seats_up_antenna_after_its_card_raises_no_alert(
        seat: int, hole: int, street: int) -> None:
    """The class of hand 2638 (readers reporting no strength): the hole card read at
    last by the seat's *up* antenna where no up card can be due there (its card of
    the round is in, the next street not burned for; on 7th street it holds seven):
    that hole card, held face down (not shown on the public state), no alert."""
    from table_controller.daemon.projection import public_state

    card = THIRD[hole][seat]
    for point in range(_SEATS.index(seat) + 1, 4):
        t = _hole_card_read_late(seat, hole, street, point, "up")
        report = t.report()
        assert report["alerts"] == [], (point, report["alerts"])
        assert report["winners"] == [4]
        hand = t.engine().current_hand()
        assert card not in public_state("t1", 8, hand).model_dump_json()


def test_an_up_card_dealt_down_in_its_turn_at_the_rounds_end_is_still_raised() -> None:
    """The real error of the same picture, at the last seat: the next street's burn
    (not the seat's up card) follows, so it was the card dealt (rule 16's faces)."""
    t = _stacked(deal_third(Table([2, 4, 5], unread_stacks=True)), {(5, "7c")})
    deal_street(t, 4)
    t.burn(BURNS[5]).up(2, "5d").up(4, "8c").down(5, "Jh")
    deal_street(t, 6)
    assert [(a["code"], a["seat"]) for a in t.report()["alerts"]] == [
        ("upcard_dealt_down", 5)]


def test_a_hole_card_read_right_after_the_seat_was_passed_over_is_no_late_card() -> None:
    """Hand 7045's picture: seat 4's hole card and its 4th-street up card unread; seat
    4's hole card, read face down right after seat 5's up card, is that hole card (its
    up card late *and* face down would be two errors: out_of_order and
    upcard_dealt_down); the seat's 4th card stays unread."""
    t = _stacked(deal_third(Table([2, 4, 5], unread_stacks=True)), {(4, "Kc")})
    t.burn(BURNS[4]).up(2, "4d").up(5, "Js").down(4, "Kc")
    for street in (5, 6, 7):
        deal_street(t, street)
    report = t.report()
    assert report["alerts"] == [], report["alerts"]
    assert [(n["code"], n["seat"]) for n in report["notices"]] == [
        ("card_unread", 4), ("card_unread", 4)]
    assert report["players"]["4"]["down"] == ["Kd", "Kc", "Kh"]


# ------------------- every live seat's card of one round unread (unread_stacks, issue 19)

@pytest.mark.parametrize("number", [2, 4, 5, 6, 7])
def test_every_live_seats_card_of_one_round_unread_raises_no_alert(number: int) -> None:
    """Round 2 (the first seat's door card looks like its 2nd hole card dealt up,
    rule 5) and 4th-6th street (the next street's burn looks like a second burn,
    rule 13): taken as the round unread until the cards that follow decide; a
    correct deal is confirmed (the door card's next seat gets its up card; the river
    comes face down), so no alert, and the notices come once it is decided."""
    round_cards = THIRD[2] if number == 2 else STREETS[number]
    t = _stacked(_full_hand(unread_stacks=True), set(round_cards.items()))
    report = t.report()
    assert report["alerts"] == [], report["alerts"]
    assert notice_codes(report) == ["card_unread"] * 3
    assert sorted(n["seat"] for n in report["notices"]) == [2, 4, 5]
    assert report["bring_in"] == 4
    assert sorted(report["first_to_act"]) == ["4", "5", "6", "7"]
    assert report["winners"] == [4]


def test_a_whole_round_unread_publishes_no_notice_before_it_is_decided() -> None:
    """Nothing is published on the judgement while it is open: the three
    ``card_unread`` notices of 4th street come with the river, which decides it."""
    from table_controller.domain.engine.alerts import Notice
    from table_controller.domain.engine.dealing import DealingEngine
    from table_controller.domain.engine.settings import TableSettings
    from table_controller.domain.zones import BURN, Zone

    engine = DealingEngine(TableSettings(unread_stacks=True))
    t = _stacked(_full_hand(unread_stacks=True), set(STREETS[4].items()))
    outputs: list[tuple[str, str]] = []
    for line in t.lines[1:]:
        if line["op"] == "hand":
            from table_controller.domain.events import HandStarted
            engine.apply(HandStarted(players=(2, 4, 5)))
            continue
        zone = str(line["zone"])
        table_zone = BURN if zone == "burn" else Zone(ZoneKind(zone.split(".")[1]),
                                                       int(zone[4]))
        for output in engine.apply(CardPlaced(table_zone, Card.parse(str(line["card"])))):
            if isinstance(output, Notice):
                outputs.append((str(line["card"]), output.code.value))
    assert outputs == [(STREETS[7][2], "card_unread")] * 3


def test_a_hole_card_dealt_up_at_the_first_seat_is_still_raised_a_card_later() -> None:
    """Rule 5: seat 2's 2nd card dealt face up. Taken at first as the door card of a
    round unread; seat 4's card face down (its 2nd hole card) shows the round was
    still going on: ``hole_card_exposed`` at seat 2, then the deal goes on cleanly
    (seat 2's 3rd card face down)."""
    t = Table([2, 4, 5], unread_stacks=True)
    t.round("down", THIRD[1])
    t.up(2, "Ah").down(4, "Kc").down(5, "7c")
    t.down(2, "3d").up(4, "2c").up(5, "Qs")
    for street in (4, 5, 6, 7):
        deal_street(t, street)
    report = t.report()
    assert [(a["code"], a["seat"], a["street"]) for a in report["alerts"]] == [
        ("hole_card_exposed", 2, 3)]
    assert report["notices"] == []


def test_a_hole_card_dealt_up_with_the_next_seats_card_unread_is_still_raised() -> None:
    """As above, seat 4's 2nd hole card never read: seat 5's card face down decides."""
    t = Table([2, 4, 5], unread_stacks=True)
    t.round("down", THIRD[1])
    t.up(2, "Ah").down(5, "7c")
    t.down(2, "3d").up(4, "2c").up(5, "Qs")
    report = t.report()
    assert codes(report) == ["hole_card_exposed"]
    assert [n["seat"] for n in report["notices"]] == [4]


@pytest.mark.parametrize("street", [4, 5, 6])
def test_a_second_burn_on_4th_to_6th_street_is_still_raised_by_6th_street(street: int
                                                                          ) -> None:
    """Rule 13: two cards burned for ``street``. Taken at first as that street's
    cards unread (then the burn would be the next street's); the 6th street's first
    card lands face up where that reading has the river, face down: the round was
    no round unread. ``extra_burn`` for ``street``, raised then, and nothing else."""
    t = deal_third(Table([2, 4, 5], unread_stacks=True))
    for later in (4, 5, 6, 7):
        deal_street(t, later)
        if later == street:
            at = next(i for i, line in enumerate(t.lines) if line.get("card") == BURNS[later])
            t.lines.insert(at + 1, {"op": "place", "zone": "burn", "card": "2h"})
    report = t.report()
    assert [(a["code"], a["street"]) for a in report["alerts"]] == [("extra_burn", street)]
    assert report["notices"] == []
    assert sorted(report["first_to_act"]) == ["4", "5", "6", "7"]
    assert report["winners"] == [4]


def test_a_second_burn_in_a_hand_won_before_6th_street_is_not_told_from_a_round_unread(
) -> None:
    """The limit (docs/engine.md "Reads that fail"): a second burn on 4th street in a
    hand that ends before 6th street is exactly the picture of 4th street's cards all
    unread; the reading that costs a correct deal no alert stands."""
    t = deal_third(Table([2, 4, 5], unread_stacks=True))
    t.burn(BURNS[4]).burn("2h").round("up", STREETS[4])
    for seat, cards in ((2, ["As", "Ah", "3d", "4d"]), (5, ["7h", "7c", "Qs", "Js"])):
        _unread_fold(t, seat, [("up" if c in ("3d", "4d", "Qs", "Js") else "down", c)
                               for c in cards])
    report = t.report()
    assert report["alerts"] == []
    assert report["winners"] == [4]


def test_without_unread_stacks_a_second_burn_is_raised_at_once() -> None:
    """The default and the contract's replay: nothing is deferred."""
    t = deal_third(Table([2, 4, 5]))
    t.burn(BURNS[4]).burn("2h")
    report = t.report()
    assert codes(report) == ["extra_burn"]


@settings(max_examples=120)
@given(
    seed=st.integers(0, 2**32 - 1),
    seats=st.lists(st.integers(1, 8), min_size=2, max_size=8, unique=True),
    hole=st.sampled_from([0, 1]),
    later=st.integers(0, 10),
    face=st.sampled_from([ZoneKind.DOWN, ZoneKind.UP]),
)
def test_legal_deals_with_a_hole_card_read_late_in_the_seats_turn_raise_no_alert(
    seed: int, seats: list[int], hole: int, later: int, face: ZoneKind
) -> None:
    """Any legal deal (folds too) where one seat's hole card is never read on its
    stack and then read at last just before one of the seat's own up cards (in its
    turn: held until that up card decides), face down, or, face up (its up antenna),
    just after one: no alert (docs/engine.md "Reads that fail")."""
    from table_controller.domain.engine.settings import TableSettings

    rng = random.Random(seed)
    deal = deal_random(sorted(seats), rng)
    events = list(deal.events)
    placed = [i for i, e in enumerate(events) if isinstance(e, CardPlaced)]
    seat = sorted(seats)[rng.randrange(len(seats))]
    down = [i for i in placed if events[i].zone == Zone(ZoneKind.DOWN, seat)]
    ups = [i for i in placed if events[i].zone == Zone(ZoneKind.UP, seat)]
    if len(down) < 2 or not ups:
        return  # the seat folded before it had an up card: no such picture
    hidden = events[down[hole]]
    assert isinstance(hidden, CardPlaced)
    up_at = ups[later % len(ups)]
    at = up_at if face is ZoneKind.DOWN else up_at + 1
    before = events[at - 1]
    if (hole == 1 and isinstance(before, CardPlaced) and before.zone.kind is ZoneKind.DOWN
            and before.zone.seat != seat and placed.index(at - 1) < 2 * len(seats)):
        return  # right after the next seat's hole card: the late-arrival picture (above)
    read = CardPlaced(Zone(face, seat), hidden.card, at=events[up_at].at)
    events = [*events[:at], read, *events[at:]]
    del events[down[hole]]
    (hand,) = replay_events(events, TableSettings(unread_stacks=True))
    report = hand_report(hand)
    assert report["alerts"] == [], (seat, hole, at, face, report["alerts"])
