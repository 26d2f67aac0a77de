"""Alerts vs notices (issue 9, item 19) and the console's hand/end around a hand in
progress (item 21), through the engine alone.

* A legal hand dealt and played correctly raises **no alert** (docs/conformance.md):
  random physical deals, card-only and with players betting through the console
  (the simulator's players, who also call into hands beaten on board, rule 19,
  and fold by having their cards mucked before the operator keys the fold, rule
  10), checked by hypothesis.
* Notices never carry a down card, and a notice computed from one is secret.
* A console ``hand`` never drops a hand in progress without its result.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from stud_script import (
    BURNS,
    STREETS,
    THIRD,
    Table,
    codes,
    deal_street,
    deal_third,
    notice_codes,
)

from table_controller.daemon.projection import notice_payloads, public_state
from table_controller.domain.cards import Card
from table_controller.domain.engine.alerts import (
    NOTICE_CODES,
    SECRET_CODES,
    Alert,
    AlertCode,
    Notice,
)
from table_controller.domain.engine.dealing import DealingEngine, HandState
from table_controller.domain.engine.outputs import (
    ConsoleResult,
    EngineOutput,
    GameEvent,
    GameEventKind,
)
from table_controller.domain.engine.report import hand_report
from table_controller.domain.engine.settings import TableSettings
from table_controller.domain.events import CardPlaced, ConsoleAction, HandEnded, HandStarted
from table_controller.domain.zones import Zone
from table_controller.simulation.physical import deal_random
from table_controller.simulation.plan import BETTING_SETTINGS, clear_events
from table_controller.simulation.players import BettingPlayers
from table_controller.tools.cli import main

_HEAVY = settings(max_examples=120)


def _results(outputs: list[EngineOutput]) -> list[ConsoleResult]:
    return [o for o in outputs if isinstance(o, ConsoleResult)]


def _kinds(outputs: list[EngineOutput]) -> list[GameEventKind]:
    return [o.kind for o in outputs if isinstance(o, GameEvent)]


def _check_notices_keep_secrets(hand: HandState) -> None:
    """No notice names a card that was dealt face down; a secret one has no public
    payload; the public state lists no notice."""
    down_names = {card.name.lower() for seat in hand.seats.values() for card in seat.down}
    for notice in hand.notices:
        assert notice.code in NOTICE_CODES
        text = notice.message.lower()
        assert not any(name in text for name in down_names), notice
        public, secure = notice_payloads("t1", hand, notice)
        assert (public is None) == (notice.code in SECRET_CODES)
        assert secure.code == notice.code.value
    state = public_state("t1", 8, hand)
    assert {a.code for a in state.alerts} <= {a.code.value for a in hand.alerts}


# ------------------------------------------------------------- item 19: property


@_HEAVY
@given(st.integers(0, 2**32 - 1))
def test_correctly_dealt_and_played_betting_hands_raise_no_alert(seed: int) -> None:
    """docs/rules.md 10, 15, 19: what a legal hand may raise is a notice, never an alert.

    The simulator's players bet through the console; some call into hands beaten
    on board (rule 19), some folds reach the muck before the operator keys them,
    up cards first half the time (rule 10). Every console input is accepted.
    """
    rng = random.Random(seed)
    seats = tuple(sorted(rng.sample(range(1, 9), rng.randint(2, 8))))
    players = BettingPlayers(seats, rng, BETTING_SETTINGS)
    deal = deal_random(seats, rng, betting=players)
    engine = DealingEngine(BETTING_SETTINGS)
    for event in (*deal.events, *clear_events(deal.events)):
        for output in engine.apply(event):
            assert not isinstance(output, Alert), (seed, event, output)
            if isinstance(output, ConsoleResult):
                assert output.accepted, (seed, event, output)
    hand = engine.hand
    assert hand is not None
    assert hand.finished
    report = hand_report(hand)
    assert report["alerts"] == []
    assert all(n["code"] in {c.value for c in NOTICE_CODES} for n in report["notices"])
    _check_notices_keep_secrets(hand)


@_HEAVY
@given(st.integers(0, 2**32 - 1), st.sampled_from([0.0, 0.05, 0.2]))
def test_correctly_dealt_card_only_hands_raise_no_alert(seed: int, fold: float) -> None:
    """Card-only tables (the daemon without a console, hands from the cards): a
    legal deal raises no alert; a short deck's community card is a notice."""
    rng = random.Random(seed)
    seats = sorted(rng.sample(range(1, 9), rng.randint(2, 8)))
    deal = deal_random(seats, rng, fold_chance=fold)
    engine = DealingEngine(TableSettings(auto_hands=True))
    events = [e for e in deal.events if not isinstance(e, HandStarted)]
    outputs = [o for e in (*events, *clear_events(deal.events)) for o in engine.apply(e)]
    assert [o for o in outputs if isinstance(o, Alert)] == []
    notices = [o.code for o in outputs if isinstance(o, Notice)]
    assert notices == ([AlertCode.COMMUNITY_CARD] if deal.community is not None else [])
    assert engine.hand is not None
    _check_notices_keep_secrets(engine.hand)


def test_every_code_is_decided_and_secret_codes_are_notices() -> None:
    """The decision table of docs/engine.md: every code is an alert or a notice."""
    assert SECRET_CODES <= NOTICE_CODES
    assert {c.value for c in NOTICE_CODES} == {
        "community_card", "beaten_on_board", "upcards_lifted", "fold_unread", "manual_card",
        "card_unread", "cross_read_tie"}  # (the last the daemon's, from presence: issue 19)
    assert set(AlertCode) - NOTICE_CODES  # the rest stay alerts


# ------------------------------------------------ item 19: regressions, one per case


def _facing_a_completion() -> Table:
    """Seats 2, 4, 5 (stud_script.THIRD): seat 4 brings it in, seat 5 completes;
    seat 2 is to act, facing the completion."""
    t = deal_third(Table([2, 4, 5], stacks={2: 100, 4: 100, 5: 100}))
    return t.act(4, "bring_in").act(5, "complete")


def test_fold_keyed_after_the_cards_reached_the_muck_is_a_confirmation() -> None:
    """Was: the fold the operator keys after the dealer pulled the cards in was
    refused as out_of_turn, an alert on a legal hand."""
    t = _facing_a_completion().muck(2, [("down", "As"), ("down", "Ah"), ("up", "3d")])
    t.act(2, "fold").act(4, "call")
    report = t.report()
    assert codes(report) == []
    assert notice_codes(report) == []  # the down cards went first: a plain fold
    assert report["players"]["2"]["status"] == "folded"
    engine = t.engine()
    hand = engine.hand
    assert hand is not None
    assert hand.console is not None
    assert hand.console.betting.round_complete  # seat 4's call closed 3rd street


def test_up_cards_lifted_facing_a_bet_is_a_notice_and_the_fold_after_it_accepted() -> None:
    """Was: upcards_lifted (rule 10) alerted, then the operator's fold out_of_turn."""
    t = _facing_a_completion().muck(2, [("up", "3d"), ("down", "As"), ("down", "Ah")])
    engine = t.engine()
    outputs = engine.apply(ConsoleAction(2, "fold"))
    assert _results(outputs) == [ConsoleResult(True, None, "seat 2 has folded already")]
    assert [o for o in outputs if not isinstance(o, ConsoleResult)] == []  # changes nothing
    hand = engine.hand
    assert hand is not None
    assert hand.alerts == []
    assert [(n.code, n.seat, n.rule) for n in hand.notices] == [
        (AlertCode.UPCARDS_LIFTED, 2, 10)]


def test_fold_keyed_after_the_muck_that_ended_the_hand_is_accepted() -> None:
    """Was: refused as hand_over once the mucked cards had left one seat standing."""
    t = deal_third(Table([2, 4], stacks={2: 100, 4: 100}),
                   {n: {s: c for s, c in THIRD[n].items() if s in (2, 4)} for n in THIRD})
    t.act(4, "complete").muck(2, [("down", "As"), ("down", "Ah"), ("up", "3d")])
    engine = t.engine()
    hand = engine.hand
    assert hand is not None
    assert hand.winners == [4]
    assert _results(engine.apply(ConsoleAction(2, "fold")))[0].accepted
    assert not _results(engine.apply(ConsoleAction(2, "call")))[0].accepted  # not a fold
    assert hand.alerts == []


def test_fold_keyed_for_cards_mucked_before_the_first_console_input_counts() -> None:
    """Found by ``stud-table simulate --hands 20000 --betting`` (seed 1, hand 3818):
    the console's betting starts at the hand's first console input, so a seat
    whose cards reached the muck before it is still in the betting; its fold
    must count there (it was taken as a mere confirmation, and the next seat's
    bring-in was then flagged wrong_bring_in, with out_of_turn on every action)."""
    t = deal_third(Table([2, 4, 5], stacks={2: 100, 4: 0, 5: 100}))
    # Rule 8: seat 4 (2c, the low card) is all-in for the ante: seat 5 may fold.
    t.muck(5, [("up", "Qs"), ("down", "7h"), ("down", "7c")])
    t.act(5, "fold")
    engine = t.engine()
    hand = engine.hand
    assert hand is not None
    assert hand.console is not None
    assert 5 not in hand.console.betting.live_seats
    assert hand.console.betting.to_act == 2  # the option passes on to the left
    (result,) = _results(engine.apply(ConsoleAction(2, "bring_in")))
    assert result == ConsoleResult(True, None, "seat 2 bring_in")
    assert hand.alerts == []


def test_beaten_on_board_is_secret_everywhere_public() -> None:
    """Rule 19's notice compares the caller's hole cards with a board: it is never
    in the public state or on the public notices topic (it used to be a public alert)."""
    third = {1: {2: "As", 4: "Kd", 5: "2h"}, 2: {2: "Ah", 4: "Kc", 5: "3c"},
             3: {2: "8c", 4: "2c", 5: "Jh"}}
    t = deal_third(Table([2, 4, 5], stacks={2: 100, 4: 100, 5: 100}), third)
    t.act(4, "bring_in").act(5, "call").act(2, "call")
    for street, cards in ((4, {2: "8d", 4: "3d", 5: "4h"}), (5, {2: "8h", 4: "5d", 5: "6h"}),
                          (6, {2: "8s", 4: "7c", 5: "Td"})):
        deal_street(t, street, cards)
        t.act(2, "check").act(4, "check").act(5, "check")
    deal_street(t, 7, {2: "Qd", 4: "Qc", 5: "Jd"})
    t.act(2, "bet").act(4, "call")  # seat 4's kings cannot beat four eights showing
    engine = t.engine()
    hand = engine.hand
    assert hand is not None
    assert hand.alerts == []
    (notice,) = hand.notices
    assert notice.code is AlertCode.BEATEN_ON_BOARD
    assert notice.secret
    public, secure = notice_payloads("t1", hand, notice)
    assert public is None
    assert (secure.code, secure.seat, secure.rule) == ("beaten_on_board", 4, 19)
    assert "beaten" not in public_state("t1", 8, hand).model_dump_json()


# ------------------------------------------------------------------- item 21


def _card_only_third() -> DealingEngine:
    """A card-only table (the daemon's ``auto_hands``) with 3rd street dealt."""
    engine = DealingEngine(TableSettings(auto_hands=True))
    for number in (1, 2, 3):
        face = "up" if number == 3 else "down"
        for seat, card in THIRD[number].items():
            engine.apply(CardPlaced(Zone.parse(f"seat{seat}.{face}"), _card(card)))
    return engine


def _card(code: str) -> Card:
    return Card.parse(code)


def test_console_hand_during_a_card_only_hand_is_refused_and_changes_nothing() -> None:
    """Was: accepted; the card-only hand was dropped without a result and every
    later card of it alerted in the new hand."""
    engine = _card_only_third()
    hand = engine.hand
    assert hand is not None
    before = hand_report(hand)
    outputs = engine.apply(HandStarted((1, 2, 4), console=True))
    (result,) = _results(outputs)
    assert not result.accepted
    assert result.code == "hand_in_progress"
    assert "card-only hand 1 is in progress (3rd street being dealt)" in result.message
    assert "`end`" in result.message
    assert outputs == [result]
    assert engine.hand is hand
    assert hand_report(hand) == before
    # The dealer goes on with 4th street: the same hand, no alert.
    engine.apply(CardPlaced(Zone.parse("burn"), _card("9h")))
    engine.apply(CardPlaced(Zone.parse("seat2.up"), _card("4d")))
    assert hand.alerts == []


def test_end_closes_a_card_only_hand_visibly_then_hand_starts() -> None:
    engine = _card_only_third()
    outputs = engine.apply(HandEnded())
    (result,) = _results(outputs)
    assert result.accepted
    assert result.message == "hand 1 closed on 3rd street, before its showdown, without a result"
    assert _kinds(outputs) == [GameEventKind.ANNOUNCEMENT, GameEventKind.HAND_RESULT]
    announcement = next(o for o in outputs if isinstance(o, GameEvent))
    assert announcement.text == (
        "Hand 1 was closed at the console on 3rd street, before its showdown: it has no"
        " result.")
    outputs = engine.apply(HandStarted((1, 2, 4), console=True))
    assert _results(outputs)[0].accepted
    assert engine.hand is not None
    assert engine.hand.number == 2


def test_end_before_any_card_is_visible() -> None:
    """Was: accepted and nothing visible happened."""
    engine = DealingEngine()
    engine.apply(HandStarted((1, 2), console=True))
    outputs = engine.apply(HandEnded())
    (result,) = _results(outputs)
    assert result == ConsoleResult(
        True, None, "hand 1 closed before any card was dealt, without a result")
    assert _kinds(outputs) == [GameEventKind.ANNOUNCEMENT, GameEventKind.HAND_RESULT]
    hand_result = [o for o in outputs if isinstance(o, GameEvent)][-1]
    assert hand_result.winners == ()
    assert engine.hand is not None
    assert engine.hand.finished


def test_console_hand_replaces_a_hand_without_cards_visibly() -> None:
    engine = DealingEngine()
    engine.apply(HandStarted((1, 2), console=True))
    outputs = engine.apply(HandStarted((1, 2, 4), console=True))
    (result,) = _results(outputs)
    assert result.message == (
        "hand 1 closed before any card was dealt, without a result; hand 2 started")
    assert _kinds(outputs) == [GameEventKind.ANNOUNCEMENT, GameEventKind.HAND_RESULT,
                               GameEventKind.HAND_STARTED]


def test_console_hand_after_a_card_only_showdown_ends_it_with_its_result() -> None:
    """The deal is complete: the new hand closes the old one with its result."""
    engine = _card_only_third()
    for street in (4, 5, 6, 7):
        engine.apply(CardPlaced(Zone.parse("burn"), _card(BURNS[street])))
        face = "down" if street == 7 else "up"
        for seat, card in STREETS[street].items():
            engine.apply(CardPlaced(Zone.parse(f"seat{seat}.{face}"), _card(card)))
    old = engine.hand
    assert old is not None
    assert not old.finished  # a card-only hand ends when the table is cleared
    outputs = engine.apply(HandStarted((1, 2, 4), console=True))
    (result,) = _results(outputs)
    assert result.accepted
    assert result.message.startswith("hand 1 closed: seat ")
    assert result.message.endswith("; hand 2 started")
    assert old.winners
    assert old.alerts == []
    assert _kinds(outputs)[0] is GameEventKind.HAND_RESULT


def test_a_short_hand_killed_at_showdown_gives_one_result_not_two() -> None:
    """Found by test_no_hand_ends_without_a_visible_result (seed 8): two seats left,
    one with seven cards and one with six when the hand is closed; killing the
    short hand (rule 18) left one seat, which won, and the showdown then published
    a second hand_result."""
    t = deal_third(Table([2, 4, 5]))
    for street in (4, 5, 6):
        deal_street(t, street)
    t.muck(5, [("down", "7h"), ("down", "7c"), ("up", "Qs"), ("up", "Js"), ("up", "Jh"),
               ("up", "Jc")])
    t.burn(BURNS[7]).down(2, STREETS[7][2])  # seat 4's 7th card never comes
    engine = t.engine()
    outputs = engine.apply(HandEnded())
    assert [a.code for a in outputs if isinstance(a, Alert)] == [AlertCode.SHORT_HAND]
    results = [o for o in outputs if isinstance(o, GameEvent)
               and o.kind is GameEventKind.HAND_RESULT]
    assert [r.winners for r in results] == [(2,)]


def test_console_hand_while_a_betting_round_is_open_is_refused() -> None:
    t = deal_third(Table([2, 4, 5], stacks={2: 100, 4: 100, 5: 100})).act(4, "bring_in")
    engine = t.engine()
    (result,) = _results(engine.apply(HandStarted((1, 2), console=True)))
    assert result.code == "hand_in_progress"
    assert "the betting on 3rd street is not complete" in result.message


def test_script_hand_lines_still_start_the_next_hand() -> None:
    """docs/conformance.md: a hand ends at the next ``hand`` line, whatever its state."""
    t = deal_third(Table([2, 4, 5])).hand([2, 4])
    first, second = (t.report(0), t.report(1))
    assert first["winners"] == []
    assert first["alerts"] == []
    assert sorted(first["players"]) == ["2", "4", "5"]
    assert sorted(second["players"]) == ["2", "4"]
    engine = deal_third(Table([2, 4, 5])).engine()
    outputs = engine.apply(HandStarted((2, 4)))
    texts = [o.text for o in outputs if isinstance(o, GameEvent)]
    assert texts[0] == "Hand 1 was closed on 3rd street, before its showdown: it has no result."


def test_replay_reports_notices_apart_from_alerts(capsys: pytest.CaptureFixture[str]) -> None:
    """``stud-table replay``: the JSON report has ``notices`` (docs/conformance.md) and the
    text summary lists them with ``-``, alerts with ``!``."""
    script = Path(__file__).resolve().parents[2] / "scripts" / "rule15-gather-then-two-burns.jsonl"
    assert main(["replay", str(script), "--json"]) == 0
    (hand,) = json.loads(capsys.readouterr().out)["hands"]
    assert [a["code"] for a in hand["alerts"]] == ["extra_burn"]
    assert [(n["code"], n["street"], n["rule"]) for n in hand["notices"]] == [
        ("community_card", 7, 15)]
    assert main(["replay", str(script)]) == 0
    text = capsys.readouterr().out
    assert "  ! extra_burn (table, street 7)" in text
    assert "  - community_card (table, street 7): The deck is short" in text


@_HEAVY
@given(st.integers(0, 2**32 - 1), st.floats(0.0, 1.0), st.booleans())
def test_no_hand_ends_without_a_visible_result(seed: int, cut: float, end_first: bool) -> None:
    """Item 21 as a property: a card-only deal interrupted anywhere by the console
    (``end``, or ``hand``) either refuses and changes nothing, or closes the hand
    with exactly one ``hand_result`` (an empty one when it had no result)."""
    rng = random.Random(seed)
    seats = sorted(rng.sample(range(1, 9), rng.randint(2, 8)))
    deal = deal_random(seats, rng, fold_chance=0.1)
    events = [e for e in deal.events if not isinstance(e, HandStarted)]
    engine = DealingEngine(TableSettings(auto_hands=True))
    outputs: list[EngineOutput] = []
    for event in events[: 1 + int(cut * (len(events) - 1))]:
        outputs += engine.apply(event)
    hand = engine.hand
    assert hand is not None
    before = hand_report(hand)
    was_finished = hand.finished
    console: list[EngineOutput] = []
    if end_first:
        console += engine.apply(HandEnded())
    console += engine.apply(HandStarted((1, 2), console=True))
    results = _results(console)
    if not results[-1].accepted:  # refused: only the hand command, and nothing changed
        assert not end_first
        assert results[-1].code == "hand_in_progress"
        assert engine.hand is hand
        assert hand_report(hand) == before
        return
    assert all(r.accepted for r in results)
    assert hand.finished
    assert hand.result is not None
    kinds = _kinds(outputs + console)
    assert kinds.count(GameEventKind.HAND_RESULT) == 1
    if not was_finished:
        assert GameEventKind.HAND_RESULT in _kinds(console)
    assert engine.hand is not hand


def test_regression_console_hand_with_a_broke_player_and_no_ante_is_refused() -> None:
    """Issue 9 item 15 (daemon side): a console ``hand`` giving a player 0 chips at a
    table with no ante made the betting engine raise, so the daemon answered
    ``internal_error`` and alerted ``engine_error``. The engine refuses it with a
    reason instead, and nothing changes; the same check refuses a script's line."""
    engine = DealingEngine(TableSettings(ante=0))
    outputs = engine.apply(HandStarted((1, 2), {1: 0, 2: 100}, console=True))
    assert [(r.accepted, r.code) for r in _results(outputs)] == [(False, "bad_stacks")]
    assert "seat 1" in _results(outputs)[0].message
    assert engine.hand is None
    accepted = engine.apply(HandStarted((1, 2), {1: 5, 2: 100}, console=True))
    assert [r.accepted for r in _results(accepted)] == [True]
