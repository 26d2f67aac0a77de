"""The hand as the unit of the engine (issue 10): its phases, outputs returned per
input, and the regressions the review of the console found.

* Phases: an auto hand goes FORMING -> DEALING -> ENDED -> CLEARED; a listed hand
  starts DEALING; the flags it replaced (``finished``, ``forming``, ``cleared``)
  are read off the phase.
* No hand is not ``None`` plus asserts: ``current_hand`` raises ``NoHandError``.
* Every input's outputs are returned by that input, and only its own.
* Review regressions: a raise the stack caps (docs/betting.md "All-in"), a stud8
  hand won by folds (docs/conformance.md: ``winners`` is the union of the halves), and
  console reply codes as one str-valued enum.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from stud_script import THIRD, Table, deal_third

from table_controller.domain.cards import DECK, Card
from table_controller.domain.engine.dealing import DealingEngine, NoHandError
from table_controller.domain.engine.hand import HandState, Phase, Reshuffle
from table_controller.domain.engine.outputs import ConsoleResult, GameEvent, ReplyCode
from table_controller.domain.engine.settings import TableSettings
from table_controller.domain.events import (
    CONSOLE_ACTIONS,
    CardPlaced,
    CardRemoved,
    ConsoleAction,
    HandEnded,
    HandStarted,
    TableEvent,
)
from table_controller.domain.zones import ALL_ZONES, Zone


def _zone(text: str) -> Zone:
    return Zone.parse(text)


def _place(engine: DealingEngine, zone: str, card: str) -> list[object]:
    return list(engine.apply(CardPlaced(_zone(zone), Card.parse(card))))


def _results(outputs: list[object]) -> list[ConsoleResult]:
    return [out for out in outputs if isinstance(out, ConsoleResult)]


# ------------------------------------------------------------------ phases


def test_no_hand_is_an_error_not_none_with_asserts() -> None:
    engine = DealingEngine()
    assert engine.hand is None  # readers: nothing to show yet
    with pytest.raises(NoHandError, match="no hand has started"):
        engine.current_hand()
    # A card before any hand (no auto hands) changes nothing and raises nothing.
    assert _place(engine, "seat2.down", "As") == []
    assert engine.finish_hand() == []


def test_listed_hand_phases_dealing_then_ended() -> None:
    engine = DealingEngine()
    engine.apply(HandStarted((2, 4)))
    hand = engine.current_hand()
    assert hand.phase is Phase.DEALING
    assert (hand.finished, hand.forming, hand.cleared) == (False, False, False)
    for card, zone in (("As", "seat2.down"), ("Kd", "seat4.down"), ("Ah", "seat2.down"),
                       ("Kc", "seat4.down"), ("3d", "seat2.up"), ("2c", "seat4.up")):
        _place(engine, zone, card)
    assert hand.phase is Phase.DEALING
    engine.finish_hand()  # closed before 7th street: no showdown, but ended
    assert hand.phase is Phase.ENDED
    assert hand.finished
    assert not hand.cleared


def test_auto_hand_phases_forming_dealing_ended_cleared() -> None:
    engine = DealingEngine(TableSettings(auto_hands=True))
    _place(engine, "seat2.down", "As")
    hand = engine.current_hand()
    assert hand.phase is Phase.FORMING
    assert hand.auto
    _place(engine, "seat4.down", "Kd")
    assert hand.phase is Phase.FORMING  # still the first round: seat 4 joined
    _place(engine, "seat2.down", "Ah")  # a second card: the player list is closed
    assert hand.phase is Phase.DEALING
    assert hand.players == (2, 4)
    # Seat 4 mucks: seat 2 wins, the hand has its result but cards lie on the table.
    engine.apply(CardRemoved(_zone("seat4.down"), Card.parse("Kd")))
    _place(engine, "muck", "Kd")
    assert hand.phase is Phase.ENDED
    assert hand.winners == [2]
    # The table is cleared: the next card starts the next hand.
    for card in ("As", "Ah"):
        engine.apply(CardRemoved(_zone("seat2.down"), Card.parse(card)))
    assert hand.phase is Phase.CLEARED
    _place(engine, "seat5.down", "7h")
    assert engine.current_hand() is not hand
    assert engine.current_hand().phase is Phase.FORMING


def test_reshuffle_is_one_state_not_two_flags() -> None:
    engine = DealingEngine()
    engine.apply(HandStarted((2, 4)))
    hand = engine.current_hand()
    assert hand.reshuffle is Reshuffle.NONE
    assert (hand.reshuffled, hand.reshuffle_burn_due) == (False, False)
    # A 7th-street burn with no rule-15 gathering leaves it NONE (it used to be the
    # place a stray "burn_due = False" could not tell "never" from "done").
    hand.reshuffle = Reshuffle.BURN_DUE
    assert (hand.reshuffled, hand.reshuffle_burn_due) == (True, True)
    hand.reshuffle = Reshuffle.DONE
    assert (hand.reshuffled, hand.reshuffle_burn_due) == (True, False)


# ---------------------------------------------------------------- outputs


def test_each_input_returns_its_own_outputs() -> None:
    """Issue 10: applying an input returns what it caused, and only that."""
    engine = DealingEngine()
    started = engine.apply(HandStarted((2, 4, 5), console=True))
    assert [type(out).__name__ for out in started] == ["GameEvent", "ConsoleResult"]
    seen: list[int] = []
    for number in (1, 2, 3):
        for seat in (2, 4, 5):
            face = "up" if number == 3 else "down"
            outputs = _place(engine, f"seat{seat}.{face}", THIRD[number][seat])
            cards = [out.card for out in outputs if isinstance(out, GameEvent)
                     and out.card is not None]
            assert cards == [Card.parse(THIRD[number][seat])]  # nothing of the card before
            seen.append(len(outputs))
    first = engine.apply(ConsoleAction(4, "bring_in"))
    second = engine.apply(ConsoleAction(5, "call"))
    assert first is not second
    assert [r.message for r in _results(first)] == ["seat 4 bring_in"]
    assert [r.message for r in _results(second)] == ["seat 5 call"]


# ------------------------------------------------------- review regressions


def _short_stack_facing_a_completion() -> DealingEngine:
    """Seat 5 (8 chips after the ante) called the bring-in, seat 2 completed to 5:
    seat 5 has 6 chips behind facing 5, so its raise (to 10) is capped at 8."""
    t = deal_third(Table([2, 4, 5], stacks={2: 100, 4: 100, 5: 8}))
    t.act(4, "bring_in").act(5, "call").act(2, "complete").act(4, "call")
    return t.engine()


def test_issue10_review_a_raise_the_stack_caps_is_an_all_in_raise() -> None:
    """docs/betting.md "All-in": the fixed size stops at the stack, so ``raise``
    without an amount is the all-in raise to 8, accepted, no alert."""
    engine = _short_stack_facing_a_completion()
    outputs = engine.apply(ConsoleAction(5, "raise"))
    assert _results(outputs) == [ConsoleResult(True, None, "seat 5 raise")]
    hand = engine.current_hand()
    assert hand.alerts == []
    assert hand.console is not None
    assert hand.console.betting.bets[5] == 8
    assert hand.console.betting.stacks[5] == 0


def test_issue10_review_a_raise_past_the_stack_is_refused_saying_why() -> None:
    """A raise to more than the stack holds is refused (``illegal_bet``, nothing
    changes) with a reply naming the stack and the all-in the player can make."""
    engine = _short_stack_facing_a_completion()
    hand = engine.current_hand()
    assert hand.console is not None
    before = (hand.console.betting.bets, hand.console.betting.stacks)
    (result,) = _results(engine.apply(ConsoleAction(5, "raise", 10)))
    assert (result.accepted, result.code) == (False, ReplyCode.ILLEGAL_BET)
    assert result.message == (
        "raise to 10 is more than seat 5's stack: 6 chips behind, so the raise is all-in"
        " to 8; enter `raise 8` or `allin`"
    )
    assert (hand.console.betting.bets, hand.console.betting.stacks) == before
    (ok,) = _results(engine.apply(ConsoleAction(5, "raise", 8)))
    assert ok.accepted


def test_issue10_review_stud8_hand_won_by_folds_names_the_winner_high() -> None:
    """docs/conformance.md: ``winners`` is the winners of either half. A stud8 pot won by
    everyone else folding goes whole to the last seat: its high half; no low."""
    t = deal_third(Table([2, 4, 5], stacks={2: 100, 4: 100, 5: 100}, game="stud8"))
    t.act(4, "bring_in").act(5, "fold").act(2, "complete").act(4, "fold")
    report = t.report()
    assert report["alerts"] == []
    assert (report["winners"], report["winners_high"], report["winners_low"]) == (
        [2], [2], [])


def test_issue10_review_card_only_stud8_hand_won_by_a_muck_names_the_winner_high() -> None:
    t = deal_third(Table([2, 4], game="stud8"), {n: {2: c[2], 4: c[4]} for n, c in
                                                  THIRD.items()})
    t.muck(4, [("down", THIRD[1][4]), ("down", THIRD[2][4]), ("up", THIRD[3][4])])
    report = t.report()
    assert (report["winners"], report["winners_high"], report["winners_low"]) == (
        [2], [2], [])


def test_issue10_review_stud8_hand_closed_without_a_result_has_empty_halves() -> None:
    t = Table([2, 4], game="stud8")
    t.hand([2, 4])  # the first hand closes before any card: no result
    report = t.report()
    assert (report["winners"], report["winners_high"], report["winners_low"]) == ([], [], [])


def test_issue10_review_stud_report_is_unchanged_by_the_halves_fix() -> None:
    t = deal_third(Table([2, 4, 5], stacks={2: 100, 4: 100, 5: 100}))
    t.act(4, "bring_in").act(5, "fold").act(2, "complete").act(4, "fold")
    report = t.report()
    assert report["winners"] == [2]
    assert "winners_high" not in report
    assert "winners_low" not in report


def test_issue10_review_reply_codes_are_one_str_enum_on_the_wire() -> None:
    """Every rejected console input's code is a ReplyCode, and it serialises as the
    plain string it always was (the wire is unchanged)."""
    engine = DealingEngine(TableSettings(ante=0))
    rejected = [
        *_results(engine.apply(ConsoleAction(2, "call"))),  # no hand: hand_over
        # 0 chips at a table with no ante: bad_stacks
        *_results(engine.apply(HandStarted((2, 4), stacks={2: 0, 4: 5}, console=True))),
    ]
    engine.apply(HandStarted((2, 4, 5), console=True))
    rejected += _results(engine.apply(ConsoleAction(2, "call")))  # no_betting_round
    rejected += _results(engine.apply(ConsoleAction(7, "call")))  # unknown_seat
    t = deal_third(Table([2, 4, 5], stacks={2: 100, 4: 100, 5: 100}))
    engine2 = t.engine()
    rejected += _results(engine2.apply(ConsoleAction(2, "call")))  # out_of_turn
    rejected += _results(engine2.apply(ConsoleAction(4, "check")))  # illegal_action
    rejected += _results(engine2.apply(ConsoleAction(4, "complete", 7)))  # illegal_bet
    codes = [result.code for result in rejected]
    assert all(isinstance(code, ReplyCode) for code in codes), codes
    assert json.dumps(codes) == json.dumps([
        "hand_over", "bad_stacks", "no_betting_round", "unknown_seat", "out_of_turn",
        "illegal_action", "illegal_bet"])


def test_issue10_reply_codes_cover_docs_console_table() -> None:
    """docs/console.md's two tables of reply codes (console commands; the floor's
    ack, resolve and dealer) and the enum are the same vocabulary."""
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[3] / "docs" / "console.md").read_text()

    def column(header: str, index: int) -> set[str]:
        section = doc[doc.index(header):]
        section = section[:section.index("\n\n")]
        return {line.split("|")[index].strip().strip("`") for line in section.splitlines()[2:]}

    table = column("| `code` | from | meaning |", 1) | column("| refused | code | reason", 2)
    assert table == {code.value for code in ReplyCode}


def test_issue10_daemon_reply_codes_are_the_enum() -> None:
    """The codes the daemon, the op parser, the command parser and the publisher
    answer with are ReplyCode members, not strings spelled again."""
    from table_controller.daemon import core, floor
    from table_controller.mqtt import console_commands, publisher
    from table_controller.records import ops

    named = [ops.INVALID, ops.UNKNOWN_SEAT, console_commands.BAD_JSON,
             console_commands.UNKNOWN_COMMAND, publisher.BUSY_CODE, core.BAD_RESPONSE_TOPIC,
             floor.UNKNOWN_ALERT, floor.ALERT_RESOLVED, floor.ALERT_ACKNOWLEDGED,
             floor.NO_DEALER]
    assert all(isinstance(code, ReplyCode) for code in named), named



# ------------------------------------------------------- the phase machine

_ORDER = {Phase.FORMING: 0, Phase.DEALING: 1, Phase.ENDED: 2, Phase.CLEARED: 3}
_CARDS = st.sampled_from(DECK[:12])
_ZONES = st.sampled_from(ALL_ZONES)
_EVENTS = st.one_of(
    st.builds(CardPlaced, _ZONES, _CARDS),
    st.builds(CardPlaced, _ZONES, _CARDS),
    st.builds(CardRemoved, _ZONES, _CARDS),
    st.builds(HandStarted, st.lists(st.integers(1, 8), max_size=5, unique=True).map(tuple)),
    st.builds(ConsoleAction, st.integers(1, 8), st.sampled_from(CONSOLE_ACTIONS)),
    st.builds(HandEnded),
)


@settings(max_examples=200)
@given(st.booleans(), st.lists(_EVENTS, max_size=60))
def test_phases_only_move_forward_and_an_ended_result_stays(
    auto: bool, events: list[TableEvent]
) -> None:
    """docs/engine.md's state machine: a hand's phase never goes back (FORMING ->
    DEALING -> ENDED -> CLEARED, steps may be skipped), FORMING and CLEARED are auto
    hands' only, and once a hand has ENDED no input changes its winners or result.
    Every input returns a list of its own."""
    engine = DealingEngine(TableSettings(auto_hands=auto))
    phases: dict[int, Phase] = {}
    ended: dict[int, tuple[list[int], str | None]] = {}
    hands: dict[int, HandState] = {}
    returned: list[list[object]] = []
    for event in [*events, None]:
        outputs = engine.finish_hand() if event is None else engine.apply(event)
        assert all(outputs is not earlier for earlier in returned)
        returned.append(outputs)
        for key, hand in [*hands.items(), *(
                [(id(engine.hand), engine.hand)] if engine.hand is not None else [])]:
            hands[key] = hand
            before = phases.get(key, hand.phase)
            assert _ORDER[hand.phase] >= _ORDER[before], (before, hand.phase)
            phases[key] = hand.phase
            if hand.phase in (Phase.FORMING, Phase.CLEARED):
                assert hand.auto
            if key in ended:
                assert (hand.winners, hand.result) == ended[key]
            elif hand.finished:
                ended[key] = (list(hand.winners), hand.result)


def test_issue10_a_kill_after_the_hand_was_closed_does_not_pay_the_pot_again() -> None:
    """Found by the phase property: a console hand closed with ``end`` before its
    deal (no result), then a card that kills a seat (its second hole card turned
    up at another seat) made the console's betting pay the pot to the last seat,
    overwriting the closed hand's result. ENDED is final: the result stays."""
    engine = DealingEngine(TableSettings(auto_hands=True))
    _place(engine, "seat1.down", "2c")
    _place(engine, "seat2.up", "2d")
    engine.apply(ConsoleAction(1, "bring_in"))  # attaches the console: no round yet
    (closed,) = _results(engine.apply(HandEnded()))
    hand = engine.current_hand()
    assert closed.accepted
    assert (hand.phase, hand.winners, hand.result) == (Phase.ENDED, [], "no winner")
    _place(engine, "seat2.up", "2c")  # seat 1's card turned up at seat 2
    assert (hand.phase, hand.winners, hand.result) == (Phase.ENDED, [], "no winner")


def test_withdrawn_alerts_leave_the_hand_and_are_returned() -> None:
    """The daemon's interrupted hand (docs/daemon.md "Start-up reconciliation"): what
    the engine made of guessed moves is taken back through the hand, not by editing
    its list from outside."""
    engine = DealingEngine()
    engine.apply(HandStarted((2, 4)))
    _place(engine, "seat4.down", "As")  # out of order: seat 2 is due
    hand = engine.current_hand()
    raised = list(hand.alerts)
    assert raised
    assert hand.withdraw_alerts(0) == raised
    assert hand.alerts == []
    assert hand.withdraw_alerts(0) == []
