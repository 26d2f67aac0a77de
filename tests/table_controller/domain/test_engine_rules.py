"""One focused test per seed rule (docs/rules.md) and per alert code (docs/conformance.md).

Each test deals a hand the way a dealer would, with exactly one thing going
wrong (or one rule in play), and asserts the exact alert, the seat statuses and
the reconstructed cards.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from stud_script import BURNS, STREETS, THIRD, Table, clean_hand, codes, deal_street, deal_third

from table_controller.domain.cards import Card
from table_controller.domain.engine.dealing import replay_events
from table_controller.domain.engine.settings import TableSettings
from table_controller.domain.events import CardPlaced, HandStarted, TableEvent
from table_controller.domain.zones import BURN, Zone


def only_alert(report: dict[str, Any]) -> dict[str, Any]:
    assert len(report["alerts"]) == 1, report["alerts"]
    alert: dict[str, Any] = report["alerts"][0]
    assert alert["message"], "every alert carries a message a dealer understands"
    return alert


# ------------------------------------------------------------- clean baseline


def test_clean_hand_reconstructs_every_seat_and_raises_nothing() -> None:
    report = clean_hand().report()
    assert report["alerts"] == []
    assert report["players"] == {
        "2": {"down": ["As", "Ah", "Td"], "up": ["3d", "4d", "5d", "6d"], "status": "active"},
        "4": {"down": ["Kd", "Kc", "Kh"], "up": ["2c", "Ks", "8c", "8h"], "status": "active"},
        "5": {"down": ["7h", "7c", "2d"], "up": ["Qs", "Js", "Jh", "Jc"], "status": "active"},
    }
    assert report["bring_in"] == 4  # 2c is the low card (rule 1)
    # 4th: K-high beats Q-high and 4-high; 5th: pair of jacks; 6th/7th: trip jacks.
    assert report["first_to_act"] == {"4": 4, "5": 5, "6": 5, "7": 5}
    assert report["winners"] == [4]  # four kings
    assert report["community"] is None


def test_unfinished_hand_has_no_winner_and_no_first_to_act_for_undealt_streets() -> None:
    report = deal_street(deal_third(Table([2, 4, 5])), 4).report()
    assert report["winners"] == []
    assert report["first_to_act"] == {"4": 4}
    assert report["alerts"] == []


def test_bring_in_is_null_before_third_street_completes() -> None:
    t = Table([2, 4, 5]).round("down", THIRD[1]).round("down", THIRD[2]).up(2, "3d")
    assert t.report()["bring_in"] is None


# ------------------------------------------------------------------ rule 1, 2


def test_rule1_bring_in_ties_broken_by_suit_by_default() -> None:
    third = {1: THIRD[1], 2: THIRD[2], 3: {2: "2d", 4: "2c", 5: "2s"}}
    assert deal_third(Table([2, 4, 5]), third).report()["bring_in"] == 4  # clubs lowest


def test_rule1_bring_in_ties_broken_by_position_in_that_profile() -> None:
    third = {1: THIRD[1], 2: THIRD[2], 3: {2: "2d", 4: "2c", 5: "2s"}}
    t = deal_third(Table([2, 4, 5], rules={"bring_in_tiebreak": "position"}), third)
    assert t.report()["bring_in"] == 2  # nearest the dealer's left


def test_rule1_later_streets_high_hand_ties_broken_by_position_not_suit() -> None:
    t = deal_third(Table([2, 4, 5]))
    deal_street(t, 4, {2: "Qd", 4: "2h", 5: "Qh"})
    # Seat 2 shows 3d Qd, seat 5 Qs Qh (pair) -> seat 5. Then a tie on 5th:
    report = t.report()
    assert report["first_to_act"]["4"] == 5
    t2 = deal_third(Table([2, 4, 5]), {1: THIRD[1], 2: THIRD[2], 3: {2: "Kh", 4: "2c", 5: "Ks"}})
    deal_street(t2, 4, {2: "5s", 4: "3h", 5: "5h"})
    # K-5 against K-5: suits never break it, position does (seat 2 first).
    assert t2.report()["first_to_act"]["4"] == 2


# -------------------------------------------------------------------- rule 5


def test_rule5_one_hole_card_exposed_third_card_expected_down() -> None:
    t = Table([2, 4, 5]).round("down", THIRD[1])
    t.down(2, "Ah").up(4, "Kc").down(5, "7c")  # seat 4's 2nd card lands face up
    t.up(2, "3d").down(4, "2c").up(5, "Qs")  # seat 4's 3rd card comes face down
    report = t.report()
    alert = only_alert(report)
    assert alert == {**alert, "code": "hole_card_exposed", "seat": 4, "street": 3, "rule": 5}
    assert report["players"]["4"] == {"down": ["Kd", "2c"], "up": ["Kc"], "status": "active"}
    # Seat 4's exposed Kc is its up card: the low card is now seat 2's 3d.
    assert report["bring_in"] == 2


def test_rule5_exposed_card_that_would_be_low_moves_action_to_the_left() -> None:
    t = Table([2, 4, 5]).round("down", THIRD[1])
    t.down(2, "Ah").up(4, "2c").down(5, "7c")  # the exposed hole card is the lowest
    t.up(2, "3d").down(4, "Kc").up(5, "Qs")
    report = t.report()
    assert codes(report) == ["hole_card_exposed"]
    assert report["bring_in"] == 5  # first hand to seat 4's left


def test_rule5_both_hole_cards_exposed_hand_is_dead() -> None:
    t = Table([2, 4, 5])
    t.down(2, "As").up(4, "Kd").down(5, "7h")
    t.down(2, "Ah").up(4, "Kc").down(5, "7c")
    t.up(2, "3d").up(5, "Qs")  # the dealer skips the dead hand
    report = t.report()
    assert codes(report) == ["hole_card_exposed", "both_hole_cards_exposed"]
    alert = report["alerts"][1]
    assert (alert["seat"], alert["street"], alert["rule"]) == (4, 3, 5)
    assert report["players"]["4"]["status"] == "dead"
    assert report["bring_in"] == 2  # the dead hand takes no part


def test_rule5_tournament_profile_calls_a_misdeal() -> None:
    t = Table([2, 4, 5], rules={"tournament": True})
    t.up(2, "As")
    report = t.report()
    assert "misdeal" in codes(report)
    assert "hole_card_exposed" in codes(report)


def test_third_card_landing_up_after_an_exposed_hole_card_is_flagged() -> None:
    t = Table([2, 4, 5]).round("down", THIRD[1])
    t.down(2, "Ah").up(4, "Kc").down(5, "7c")
    t.up(2, "3d").up(4, "2c").up(5, "Qs")
    assert codes(t.report()) == ["hole_card_exposed", "hole_card_exposed"]


# -------------------------------------------------------------------- rule 7


def test_rule7_folded_hand_keeps_receiving_cards_in_turn_without_alert() -> None:
    t = deal_third(Table([2, 4, 5]))
    t.muck(5, [("up", "Qs")])  # seat 5 throws its up card in: learnt as a fold
    deal_street(t, 4)  # ...and the dealer keeps dealing it (no bet yet: rule 7)
    report = t.report()
    assert report["alerts"] == []
    assert report["players"]["5"]["status"] == "folded"
    assert report["players"]["5"]["up"] == ["Js"]


def test_rule7_card_to_folded_seat_out_of_turn_is_card_to_inactive_seat() -> None:
    t = deal_third(Table([2, 4, 5]))
    t.muck(2, [("down", "As"), ("down", "Ah"), ("up", "3d")])
    t.burn("9h").up(4, "Ks").up(5, "Js").up(2, "4d")
    report = t.report()
    alert = only_alert(report)
    assert (alert["code"], alert["seat"], alert["rule"]) == ("card_to_inactive_seat", 2, 7)


# -------------------------------------------------------------------- rule 8


def test_rule8_low_card_all_in_for_the_ante_passes_action_left() -> None:
    t = deal_third(Table([2, 4, 5], stacks={2: 100, 4: 0, 5: 100}))
    report = t.report()
    assert report["bring_in"] == 5
    assert report["alerts"] == []


# ------------------------------------------------------------------- rule 11


def test_rule11_card_off_the_table_counts_as_exposed() -> None:
    # The card flips off the table and the dealer sets it face up in seat 2's row:
    # RFID sees it arrive face up as seat 2's first card (rule 11 -> rule 5).
    t = Table([2, 4, 5]).up(2, "As")
    assert codes(t.report()) == ["hole_card_exposed"]


# ------------------------------------------------------------------- rule 13


def test_rule13_missing_burn() -> None:
    report = deal_street(deal_third(Table([2, 4, 5])), 4, burn=False).report()
    alert = only_alert(report)
    assert alert == {**alert, "code": "missing_burn", "seat": None, "street": 4, "rule": 13}
    assert report["players"]["4"]["up"] == ["2c", "Ks"]


def test_rule13_extra_burn() -> None:
    t = deal_third(Table([2, 4, 5])).burn("9h").burn("9c").round("up", STREETS[4])
    alert = only_alert(t.report())
    assert alert == {**alert, "code": "extra_burn", "seat": None, "street": 4, "rule": 13}


def test_rule13_extra_burn_corrected_to_its_proper_position() -> None:
    # Two burns; the dealer moves the second burn card to seat 2, where it belongs.
    t = deal_third(Table([2, 4, 5])).burn("9h").burn("4d")
    t.remove("burn", "4d").up(2, "4d").up(4, "Ks").up(5, "Js")
    report = t.report()
    assert codes(report) == ["extra_burn"]
    assert report["players"]["2"]["up"] == ["3d", "4d"]
    assert report["first_to_act"] == {"4": 4}


def test_rule13_missing_burn_corrected_by_burning_the_dealt_card() -> None:
    t = deal_third(Table([2, 4, 5])).up(2, "9h")  # no burn: 9h should have been burned
    t.remove("seat2.up", "9h").burn("9h")
    deal_street(t, 4, burn=False)
    report = t.report()
    assert codes(report) == ["missing_burn"]
    assert report["players"]["2"]["up"] == ["3d", "4d"]


def test_rule13_a_burn_read_just_after_the_streets_first_card_is_its_burn() -> None:
    # The burn's first read delayed past the first up card's (flicker, the dealer's
    # hand over the burn antenna): the same street's burn as the very next card.
    t = deal_third(Table([2, 4, 5])).up(2, "4d").burn("9h").up(4, "Ks").up(5, "Js")
    deal_street(t, 5)
    assert t.report()["alerts"] == []


def test_rule13_missing_burn_is_raised_at_the_next_card_dealt_unburned() -> None:
    t = deal_third(Table([2, 4, 5])).up(2, "4d").up(4, "Ks")
    assert codes(t.report()) == ["missing_burn"]
    t = deal_third(Table([2, 4, 5])).up(2, "4d")  # the script ends at the first card
    assert codes(t.report()) == ["missing_burn"]
    # A burn after a second card of the street is the next street's, too early.
    t = deal_third(Table([2, 4, 5])).up(2, "4d").up(4, "Ks").burn("9h").up(5, "Js")
    assert codes(t.report())[0] == "missing_burn"
    # Its place among the alerts is the card it was raised at.
    t = deal_third(Table([2, 4, 5])).up(2, "4d").up(4, "Ks").up(4, "Kd")
    assert codes(t.report())[0] == "missing_burn"


def test_burn_before_third_profile() -> None:
    report = deal_third(Table([2, 4, 5], rules={"burn_before_third": True})).report()
    assert codes(report) == ["missing_burn"]
    assert report["alerts"][0]["street"] == 3
    t = Table([2, 4, 5], rules={"burn_before_third": True}).burn("9h")
    assert deal_third(t).report()["alerts"] == []
    # Without the profile setting, a burn before 3rd street is one too many.
    assert codes(deal_third(Table([2, 4, 5]).burn("9h")).report()) == ["extra_burn"]


# ------------------------------------------------------------------- rule 15


def eight_handed_to_sixth() -> tuple[Table, Iterator[str]]:
    players = list(range(1, 9))
    t = Table(players)
    ranks = "23456789TJQKA"
    deck = [r + s for r in ranks for s in "cdhs"]
    deck.reverse()  # As Ah Ad Ac Ks ... 2c
    cards = iter(deck)
    for face in ("down", "down", "up"):
        t.round(face, {seat: next(cards) for seat in players})
    for _street in (4, 5, 6):
        t.burn(next(cards))
        t.round("up", {seat: next(cards) for seat in players})
    return t, cards


def test_rule15_community_card_is_used_by_every_player() -> None:
    t, cards = eight_handed_to_sixth()
    last = next(cards)
    assert next(cards, None) is None
    burns = [a["card"] for a in t.lines if a.get("zone") == "burn"]
    # The last card is mixed with the burn cards; the dealer burns one and turns
    # one up in the centre.
    for card in burns:
        t.remove("burn", card)
    t.burn(last)
    t.place("board", burns[0])
    report = t.report()
    # A correct procedure the dealer announces (rules 12, 15): a notice, no alert.
    assert codes(report) == []
    assert [n["code"] for n in report["notices"]] == ["community_card"]
    notice = report["notices"][0]
    assert (notice["seat"], notice["street"], notice["rule"]) == (None, 7, 15)
    assert report["community"] == burns[0]
    assert "7" in report["first_to_act"]
    assert report["winners"], "the hand reached showdown with the community card"
    for seat in report["players"].values():
        assert len(seat["down"]) + len(seat["up"]) == 6
        assert seat["status"] == "active"


def test_board_card_before_seventh_street_is_flagged() -> None:
    t = deal_third(Table([2, 4, 5])).place("board", "9h")
    alert = only_alert(t.report())
    assert (alert["code"], alert["rule"]) == ("unexpected_board_card", 15)


# ---------------------------------------------------------------- rule 16, 17


def test_rule17_last_card_exposed_more_than_two_players() -> None:
    t = clean_hand()
    t.lines = [line for line in t.lines if line.get("card") not in ("Td", "Kh", "2d")]
    t.down(2, "Td").up(4, "Kh").down(5, "2d")
    report = t.report()
    alert = only_alert(report)
    assert alert == {**alert, "code": "last_card_exposed", "seat": 4, "street": 7, "rule": 17}
    assert report["players"]["4"]["up"] == ["2c", "Ks", "8c", "8h", "Kh"]
    # The high hand on board uses all face-up cards: seat 4 now shows kings and
    # eights (five cards), still below seat 5's three jacks.
    assert report["first_to_act"]["7"] == 5


def test_rule16_all_in_player_last_card_exposed() -> None:
    t = clean_hand()
    t.lines[0]["stacks"] = {"2": 50, "4": 0, "5": 50}
    t.lines = [line for line in t.lines if line.get("card") not in ("Td", "Kh", "2d")]
    t.down(2, "Td").up(4, "Kh").down(5, "2d")
    alert = only_alert(t.report())
    assert (alert["code"], alert["rule"]) == ("last_card_exposed", 16)


def test_rule17b_heads_up_second_players_last_card_dealt_up_too() -> None:
    t = deal_third(Table([2, 4, 5]))
    t.muck(5, [("down", "7h"), ("down", "7c"), ("up", "Qs")])
    for street in (4, 5, 6):
        deal_street(t, street, {s: c for s, c in STREETS[street].items() if s != 5})
    t.burn(BURNS[7]).up(2, "Td").up(4, "Kh")
    report = t.report()
    assert codes(report) == ["last_card_exposed"]
    assert report["alerts"][0]["seat"] == 2


# ------------------------------------------------------------------- rule 18


def test_rule18_eighth_card_kills_the_hand() -> None:
    t = clean_hand().down(4, "3c")
    report = t.report()
    assert codes(report) == ["too_many_cards"]
    alert = report["alerts"][0]
    assert (alert["seat"], alert["street"], alert["rule"]) == (4, 7, 18)
    assert report["players"]["4"]["status"] == "dead"
    assert report["winners"] == [5]  # dead hands cannot win: jacks full is next


def test_rule18_short_hand_at_showdown_is_dead() -> None:
    t = clean_hand()
    t.lines = [line for line in t.lines if line.get("card") != "2d"]  # seat 5 missed
    report = t.report()
    assert codes(report) == ["short_hand"]
    alert = report["alerts"][0]
    assert (alert["seat"], alert["street"], alert["rule"]) == (5, 7, 18)
    assert report["players"]["5"]["status"] == "dead"


# ------------------------------------------------------ contract alert codes


def test_upcard_dealt_down() -> None:
    t = deal_third(Table([2, 4, 5])).burn("9h").up(2, "4d").down(4, "Ks").up(5, "Js")
    report = t.report()
    alert = only_alert(report)
    assert alert == {**alert, "code": "upcard_dealt_down", "seat": 4, "street": 4}
    assert report["players"]["4"]["down"] == ["Kd", "Kc", "Ks"]


def test_upcard_dealt_down_then_turned_up_is_corrected() -> None:
    t = deal_third(Table([2, 4, 5])).burn("9h").up(2, "4d").down(4, "Ks")
    t.remove("seat4.down", "Ks").up(4, "Ks").up(5, "Js")
    report = t.report()
    assert codes(report) == ["upcard_dealt_down"]
    assert report["players"]["4"]["up"] == ["2c", "Ks"]
    assert report["first_to_act"]["4"] == 4


def test_out_of_order() -> None:
    t = Table([2, 4, 5]).down(2, "As").down(5, "7h").down(4, "Kd")
    report = t.report()
    alert = only_alert(report)
    assert (alert["code"], alert["seat"], alert["street"]) == ("out_of_order", 5, 3)
    assert report["players"]["5"]["down"] == ["7h"]


def test_card_to_seat_not_in_the_hand() -> None:
    t = Table([2, 4, 5]).down(2, "As").down(3, "Kd")
    report = t.report()
    alert = only_alert(report)
    assert (alert["code"], alert["seat"], alert["rule"]) == ("card_to_inactive_seat", 3, 7)
    assert "3" not in report["players"]


def test_unknown_card() -> None:
    t = Table([2, 4, 5]).down(2, "As")
    t.lines.append({"op": "place", "zone": "seat4.down", "uid": "E0040150A1B2C3D4"})
    report = t.report()
    alert = only_alert(report)
    assert (alert["code"], alert["seat"]) == ("unknown_card", 4)
    assert "E004" not in alert["message"], "tag UIDs are never shown"
    assert report["players"]["4"]["down"] == []


def test_duplicate_card() -> None:
    t = Table([2, 4, 5]).down(2, "As").down(4, "As")
    alert = only_alert(t.report())
    assert (alert["code"], alert["seat"]) == ("duplicate_card", 4)


def test_card_from_muck() -> None:
    t = deal_third(Table([2, 4, 5])).muck(5, [("down", "7h"), ("down", "7c"), ("up", "Qs")])
    t.burn("9h").up(2, "4d").up(4, "Ks")
    t.remove("muck", "Qs").up(2, "Qs")
    report = t.report()
    assert "card_from_muck" in codes(report)
    alert = report["alerts"][codes(report).index("card_from_muck")]
    assert alert["seat"] == 2


def test_lifted_hole_card_stays_the_seats_card() -> None:
    t = deal_third(Table([2, 4, 5])).remove("seat2.down", "As")  # player looks at it
    report = t.report()
    assert report["players"]["2"]["down"] == ["As", "Ah"]
    t.down(2, "As")  # and puts it back
    report = t.report()
    assert report["alerts"] == []
    assert report["players"]["2"]["down"] == ["As", "Ah"]


def test_last_seat_standing_wins() -> None:
    t = deal_third(Table([2, 4, 5]))
    t.muck(2, [("down", "As"), ("down", "Ah"), ("up", "3d")])
    t.muck(4, [("down", "Kd"), ("down", "Kc"), ("up", "2c")])
    report = t.report()
    assert report["winners"] == [5]
    assert report["players"]["2"]["status"] == "folded"
    assert report["alerts"] == []


def test_split_pot() -> None:
    t = Table([1, 2])
    t.round("down", {1: "As", 2: "Ad"}).round("down", {1: "Ks", 2: "Kd"})
    t.round("up", {1: "Qs", 2: "Qd"})
    for street, cards in ((4, {1: "Jh", 2: "Jc"}), (5, {1: "9h", 2: "9c"}),
                          (6, {1: "3h", 2: "3c"}), (7, {1: "2h", 2: "2c"})):
        t.burn({4: "5c", 5: "5d", 6: "5h", 7: "5s"}[street])
        t.round("down" if street == 7 else "up", cards)
    assert t.report()["winners"] == [1, 2]


def test_two_hands_in_one_script() -> None:
    t = clean_hand()
    t.hand([1, 3])
    t.down(1, "As")
    t.lines.append({"op": "place", "zone": "seat3.down", "card": "Ks"})
    report_second = t.report(hand=1)
    assert report_second["players"]["1"]["down"] == ["As"]
    assert t.report(hand=0)["winners"] == [4]


@pytest.mark.parametrize("street", [4, 5, 6])
def test_every_later_street_needs_its_burn(street: int) -> None:
    t = deal_third(Table([2, 4, 5]))
    for s in (4, 5, 6):
        deal_street(t, s, burn=s != street)
    alert = only_alert(t.report())
    assert (alert["code"], alert["street"]) == ("missing_burn", street)


def test_two_copies_of_a_card_at_one_seat_never_crash_the_engine() -> None:
    # A second deck's Ks lands in seat 4's up row next to the first: flagged, and
    # the boards and showdown still evaluate (the copy counts once).
    t = deal_third(Table([2, 4, 5]))
    t.burn("9h").up(2, "4d").up(4, "Ks").up(5, "Js")
    t.lines.append({"op": "place", "zone": "seat4.up", "card": "Ks", "deck": "blue"})
    for street in (5, 6, 7):
        deal_street(t, street)
    report = t.report()
    assert "duplicate_card" in codes(report)
    assert report["winners"]


def test_rule15_gather_first_allows_one_burn_after_the_scramble() -> None:
    # Eight players, one fresh card left: the dealer gathers the burn pile first,
    # then burns twice before the community card. Found by stud-table simulate
    # (100,000 hands, seed 2026, hand 58957): only one burn follows a gather that
    # no 7th-street burn preceded.
    from pathlib import Path

    from table_controller.records.replay import replay_file

    script = Path(__file__).resolve().parents[2] / "scripts" / "rule15-gather-then-two-burns.jsonl"
    (hand,) = replay_file(script)["hands"]
    assert codes(hand) == ["extra_burn"]
    assert [n["code"] for n in hand["notices"]] == ["community_card"]
    assert hand["alerts"][0]["street"] == 7


def test_rule13_a_burn_read_long_after_the_streets_first_card_is_the_next_streets() -> None:
    # Heads-up, 4th street dealt unburned and the second seat's card never read (a
    # reads-that-fail table): the next burn comes after a betting round, seconds later,
    # so it is 5th street's and 4th street's missing burn stands (LATE_BURN_READ).
    settings = TableSettings(unread_stacks=True)
    deal = [("seat2.down", "As"), ("seat4.down", "Ah"), ("seat2.down", "Kd"),
            ("seat4.down", "Kc"), ("seat2.up", "7h"), ("seat4.up", "7c"),
            ("seat2.up", "4d")]
    for gap, expected in ((0.3, []), (4.0, ["missing_burn"])):
        events: list[TableEvent] = [HandStarted((2, 4))]
        events += [CardPlaced(Zone.parse(z), Card.parse(c), at=1.0 + i)
                   for i, (z, c) in enumerate(deal)]
        events.append(CardPlaced(BURN, Card.parse("9h"), at=7.0 + gap))
        [hand] = replay_events(events, settings)
        assert [a.code.value for a in hand.alerts] == expected, gap
