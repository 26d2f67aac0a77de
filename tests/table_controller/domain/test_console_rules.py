"""The dealer's console inside the engine: one test per rule that needs both cards
and betting (docs/rules.md 6-10, 14, 18, 19) and per console alert code
(docs/conformance.md: premature_deal, wrong_bring_in, out_of_turn, illegal_bet)."""

from __future__ import annotations

from stud_script import BURNS, THIRD, Table, codes, deal_street, deal_third, notice_codes

from table_controller.domain.engine.outputs import ConsoleResult
from table_controller.domain.events import ConsoleAction


def table(**stacks: int) -> Table:
    given = {2: 100, 4: 100, 5: 100}
    given.update({int(k[1:]): v for k, v in stacks.items()})
    return deal_third(Table([2, 4, 5], stacks=given))


def test_bring_in_and_a_betting_round_then_the_next_street_opens() -> None:
    t = table().act(4, "bring_in").act(5, "call").act(2, "complete").act(4, "call")
    t.act(5, "call")
    deal_street(t, 4)
    engine = t.engine()
    hand = engine.hand
    assert hand is not None
    assert hand.console is not None
    betting = hand.console.betting
    assert hand.alerts == []
    assert betting.pot == 3 + 15  # three antes, three completions
    assert betting.to_act == 4  # K-high is high on 4th street
    assert betting.stacks == {2: 95, 4: 95, 5: 95}


def test_rule9_wrong_bring_in_corrected_when_the_low_card_acts_next() -> None:
    t = table().act(5, "bring_in").act(4, "bring_in")
    engine = t.engine()
    hand = engine.hand
    assert hand is not None
    assert hand.console is not None
    assert codes({"alerts": [a.as_dict() for a in hand.alerts]}) == ["wrong_bring_in"]
    alert = hand.alerts[0]
    assert (alert.seat, alert.street, alert.rule) == (5, 3, 9)
    betting = hand.console.betting
    assert betting.bets == {2: 0, 4: 2, 5: 0}  # seat 5 took its bet back
    assert betting.to_act == 5


def test_rule9_wrong_bring_in_stands_once_the_next_player_acted() -> None:
    t = table().act(5, "bring_in").act(2, "call")
    engine = t.engine()
    hand = engine.hand
    assert hand is not None
    assert hand.console is not None
    betting = hand.console.betting
    assert betting.bets == {2: 2, 4: 0, 5: 2}
    assert betting.to_act == 4  # the true low card may act, with no obligation
    assert [a.code.value for a in hand.alerts] == ["wrong_bring_in"]


def test_out_of_turn_is_rejected_alerted_and_changes_nothing() -> None:
    t = table().act(4, "bring_in")
    engine = t.engine()
    before = engine.hand.console.betting.bets  # type: ignore[union-attr]
    outputs = engine.apply(ConsoleAction(2, "call"))
    (result,) = [o for o in outputs if isinstance(o, ConsoleResult)]
    assert not result.accepted
    assert result.code == "out_of_turn"
    hand = engine.hand
    assert hand is not None
    assert hand.console is not None
    assert [a.code.value for a in hand.alerts] == ["out_of_turn"]
    assert hand.console.betting.bets == before
    assert hand.console.betting.to_act == 5


def test_illegal_bet_size_is_rejected() -> None:
    t = table().act(4, "complete", 7)
    hand = t.engine().hand
    assert hand is not None
    assert [a.code.value for a in hand.alerts] == ["illegal_bet"]
    assert hand.alerts[0].rule == 3


def test_rule14_premature_deal_and_its_correction() -> None:
    t = table().act(4, "bring_in").act(5, "call")
    t.burn(BURNS[4]).up(2, "4d")  # seat 2 has not acted yet: premature
    report_codes = codes(t.report())
    assert report_codes == ["premature_deal"]
    alert = t.report()["alerts"][0]
    assert (alert["seat"], alert["street"], alert["rule"]) == (2, 4, 14)
    # The card is taken out of play; betting finishes; the dealer burns and deals.
    t.remove("seat2.up", "4d").act(2, "call")
    t.burn("Tc").round("up", {2: "Qd", 4: "Ks", 5: "Js"})
    report = t.report()
    assert codes(report) == ["premature_deal"]
    assert report["players"]["2"]["up"] == ["3d", "Qd"]
    assert report["first_to_act"]["4"] == 4


def test_rule7_folded_with_no_bet_keeps_receiving_until_a_bet_kills_it() -> None:
    t = table().act(4, "bring_in").act(5, "call").act(2, "call")
    deal_street(t, 4)  # 4th: seat 4 (K-high) first
    t.act(4, "check").act(5, "fold")  # folding with nothing to call
    t.act(2, "check")
    deal_street(t, 5)  # seat 5 still gets its card (rule 7)
    report = t.report()
    assert report["alerts"] == []
    assert report["players"]["5"]["status"] == "folded"


def test_rule7_card_to_a_seat_that_folded_facing_a_bet() -> None:
    t = table().act(4, "bring_in").act(5, "call").act(2, "complete").act(4, "call")
    t.act(5, "fold")  # facing the completion
    t.muck(5, [("down", "7h"), ("down", "7c"), ("up", "Qs")])
    deal_street(t, 4)  # the dealer deals seat 5 anyway
    report = t.report()
    assert codes(report) == ["card_to_inactive_seat"]
    assert report["alerts"][0]["seat"] == 5


def test_rule10_picking_up_the_up_cards_facing_a_bet_is_a_fold() -> None:
    t = table().act(4, "bring_in").act(5, "call").act(2, "call")
    deal_street(t, 4)
    t.act(4, "bet")
    t.remove("seat5.up", "Qs").remove("seat5.up", "Js")  # seat 5 lifts its board
    report = t.report()
    # A fold by rule 10, already applied: a notice, nobody must act.
    assert codes(report) == []
    assert notice_codes(report) == ["upcards_lifted"]
    assert report["notices"][0]["rule"] == 10
    assert report["notices"][0]["seat"] == 5
    assert report["players"]["5"]["status"] == "folded"


def test_rule10_lifting_up_cards_with_nothing_to_call_means_nothing() -> None:
    t = table().act(4, "bring_in").act(5, "call").act(2, "call")
    deal_street(t, 4)
    t.remove("seat5.up", "Qs")
    report = t.report()
    assert report["alerts"] == []
    assert report["players"]["5"]["status"] == "active"


def test_rule6_floor_kills_an_absent_players_hand() -> None:
    t = table().act(4, "bring_in")
    t.lines.append({"op": "kill", "seat": 5, "reason": "absent when the action reached him"})
    engine = t.engine()
    hand = engine.hand
    assert hand is not None
    assert hand.console is not None
    assert hand.seats[5].status.value == "dead"
    assert hand.console.betting.to_act == 2
    assert 5 not in hand.console.betting.live_seats


def test_rule8_low_card_all_in_for_the_ante() -> None:
    t = table(s4=0)
    engine = t.engine()
    hand = engine.hand
    assert hand is not None
    assert hand.bring_in == 5
    engine.apply(ConsoleAction(5, "fold"))  # may fold, bring in or complete
    assert hand.console is not None
    assert hand.seats[5].status.value == "folded"
    assert hand.alerts == []


def test_rule18_short_hand_ruled_live_by_the_floor() -> None:
    t = table().act(4, "bring_in").act(5, "call").act(2, "call")
    for street in (4, 5, 6):
        deal_street(t, street)
    t.burn(BURNS[7]).down(2, "Td").down(4, "Kh")  # seat 5 misses its river card
    t.lines.append({"op": "live", "seat": 5})
    report = t.report()
    assert "short_hand" not in codes(report)
    assert report["players"]["5"]["status"] == "active"


def test_rule19_call_into_a_hand_beaten_on_board() -> None:
    third = {1: {2: "As", 4: "Kd", 5: "2h"}, 2: {2: "Ah", 4: "Kc", 5: "3c"},
             3: {2: "8c", 4: "2c", 5: "Jh"}}
    t = deal_third(Table([2, 4, 5], stacks={2: 100, 4: 100, 5: 100}), third)
    t.act(4, "bring_in").act(5, "call").act(2, "call")
    for street, cards in ((4, {2: "8d", 4: "3d", 5: "4h"}), (5, {2: "8h", 4: "5d", 5: "6h"}),
                          (6, {2: "8s", 4: "7c", 5: "Td"})):
        t.burn(BURNS[street]).round("up", cards)
        t.act(2, "check").act(4, "check").act(5, "check")
    t.burn(BURNS[7]).round("down", {2: "Qd", 4: "Qc", 5: "Jd"})
    t.act(2, "bet").act(4, "call")  # seat 4's kings cannot beat four eights showing
    report = t.report()
    # A legal call: a notice, not an alert (nobody must act).
    assert codes(report) == []
    assert notice_codes(report) == ["beaten_on_board"]
    assert report["notices"][0]["seat"] == 4
    assert report["notices"][0]["rule"] == 19


def test_pot_goes_to_the_last_seat_standing() -> None:
    t = table().act(4, "bring_in").act(5, "fold").act(2, "complete").act(4, "fold")
    engine = t.engine()
    hand = engine.hand
    assert hand is not None
    assert hand.console is not None
    assert hand.winners == [2]
    # Stacks are after the ante: seat 2's uncalled 3 come back, and it wins the
    # three antes, seat 4's bring-in and its own matching 2.
    assert hand.console.betting.stacks == {2: 100 - 5 + 3 + 7, 4: 98, 5: 100}


def test_showdown_pays_the_best_hand() -> None:
    t = table().act(4, "bring_in").act(5, "call").act(2, "call")
    for street in (4, 5, 6, 7):
        deal_street(t, street)
        first = {4: 4, 5: 5, 6: 5, 7: 5}[street]
        order = [first] + [s for s in (2, 4, 5) if s > first] + [s for s in (2, 4, 5) if s < first]
        for seat in order:
            t.act(seat, "check")
    report = t.report()
    assert report["alerts"] == []
    assert report["winners"] == [4]  # four kings


def test_console_input_without_a_hand_is_rejected() -> None:
    from table_controller.domain.engine.dealing import DealingEngine

    outputs = DealingEngine().apply(ConsoleAction(1, "call"))
    assert outputs == [ConsoleResult(False, "hand_over", "no hand is in progress")]


def test_act_before_third_street_is_dealt() -> None:
    t = Table([2, 4, 5], stacks={2: 10, 4: 10, 5: 10}).round("down", THIRD[1]).act(2, "bet")
    engine = t.engine()
    hand = engine.hand
    assert hand is not None
    assert hand.alerts == []
    outputs = engine.apply(ConsoleAction(2, "bet"))
    assert next(o for o in outputs if isinstance(o, ConsoleResult)).code == "no_betting_round"



def test_end_is_refused_while_a_betting_round_is_open() -> None:
    from table_controller.domain.events import HandEnded

    engine = table().act(4, "bring_in").engine()
    outputs = engine.apply(HandEnded())
    (result,) = [o for o in outputs if isinstance(o, ConsoleResult)]
    assert not result.accepted
    assert result.code == "illegal_action"
    hand = engine.hand
    assert hand is not None
    assert not hand.finished
