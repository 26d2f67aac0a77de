"""A rejected console command changes nothing (issue 24, item 1; docs/console.md).

Any console input the engine refuses, sent at any point of a card-only hand or of a
hand with a console, leaves the engine exactly as if it had not been sent: every later
output, the hand report and the public and secure state are byte-identical. The one
trace a refusal may leave is the alert the floor is told of (``out_of_turn``,
``illegal_bet``, ``illegal_action``), which the engine records as an alert of the hand
(also on a card-only hand: a script's illegal first ``act`` is reported, per the
contract); a card-only hand stays card-only.
"""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from table_controller.daemon.projection import public_state, secure_state
from table_controller.domain.engine.alerts import Alert
from table_controller.domain.engine.dealing import DealingEngine
from table_controller.domain.engine.outputs import ConsoleResult, ReplyCode
from table_controller.domain.engine.report import hand_report
from table_controller.domain.engine.settings import TableSettings
from table_controller.domain.events import (
    BetAction,
    ConsoleAction,
    FloorRuling,
    HandEnded,
    HandStarted,
    TableEvent,
)
from table_controller.simulation import deal_random
from table_controller.simulation.players import deal_betting

SETTINGS = TableSettings()
AUTO = TableSettings(auto_hands=True)
"""The demo's and the daemon's card-only table: hands start with their first card."""
KINDS = ("card-only", "console", "auto")
RULING_ALERTS = {"out_of_turn", "illegal_bet", "illegal_action"}
"""Alerts a refused console action raises for the floor."""

commands = st.one_of(
    st.builds(ConsoleAction, seat=st.integers(0, 9), action=st.sampled_from(list(BetAction)),
              amount=st.one_of(st.none(), st.integers(-5, 400))),
    st.builds(FloorRuling, seat=st.integers(0, 9), ruling=st.sampled_from(["kill", "live"]),
              reason=st.sampled_from(["", "absent"])),
    st.just(HandEnded()),
    st.builds(lambda players, chips: HandStarted(
        tuple(players), dict.fromkeys(players, chips) if chips else None, console=True),
        st.lists(st.integers(1, 8), min_size=0, max_size=4, unique=True),
        st.sampled_from([0, 1, 100])),  # (negative stacks never reach the engine: ops.py)
)
"""Console inputs of every kind, most of them refused at most points of a hand."""


def hand_events(seed: int, kind: str) -> tuple[list[TableEvent], TableSettings]:
    """One physically dealt hand and its table: card-only with a hand line, with players
    betting at the console, or an auto hand (no hand line: the demo's table)."""
    rng = random.Random(seed)
    seats = tuple(sorted(rng.sample(range(1, 9), rng.randint(2, 6))))
    if kind == "console":
        return list(deal_betting(seats, rng, SETTINGS).events), SETTINGS
    events = list(deal_random(seats, rng, rules=SETTINGS.rules, fold_chance=0.2).events)
    if kind == "auto":
        return [e for e in events if not isinstance(e, HandStarted)], AUTO
    return events, SETTINGS


def dump(outputs: Sequence[object]) -> list[str]:
    return [repr(output) for output in outputs]


def snapshot(engine: DealingEngine) -> str:
    """Everything a consumer sees of the engine: the hand report, both states, the
    betting (if any), as JSON."""
    hand = engine.hand
    state: dict[str, Any] = {
        "report": hand_report(hand) if hand is not None else None,
        "public": public_state("t", 8, hand, SETTINGS.game).model_dump(mode="json"),
        "secure": secure_state("t", 8, hand, SETTINGS.game).model_dump(mode="json"),
        "console": hand is not None and hand.console is not None,
        "phase": None if hand is None else repr(hand.phase),
        "betting": None,
    }
    if hand is not None and hand.console is not None:
        betting = hand.console.betting
        state["betting"] = {
            "street": betting.street, "to_act": betting.to_act,
            "bets": sorted(betting.bets.items()), "stacks": sorted(betting.stacks.items()),
            "pot": betting.pot, "legal": repr(betting.legal_actions()),
            "live": sorted(betting.live_seats), "log": repr(betting.log),
        }
    return json.dumps(state, sort_keys=True, default=repr)


def run(events: Sequence[TableEvent], at: int, command: TableEvent | None,
        table: TableSettings = SETTINGS) -> tuple[DealingEngine, list[str], list[object]]:
    """Apply ``events`` with ``command`` sent before ``events[at]``; return the engine,
    the outputs after the command, and the command's own outputs."""
    engine = DealingEngine(table)
    for event in events[:at]:
        engine.apply(event)
    return (engine, *after(engine, events, at, command))


def after(engine: DealingEngine, events: Sequence[TableEvent], at: int,
          command: TableEvent | None) -> tuple[list[str], list[object]]:
    if command is not None and at:
        # Sent at the time of the input before it: time passing is no change.
        command = dataclasses.replace(command, at=events[at - 1].at)  # type: ignore[type-var]
    own: list[object] = [] if command is None else list(engine.apply(command))
    later: list[str] = []
    for event in events[at:]:
        later += dump(engine.apply(event))
    later += dump(engine.finish_hand())
    return later, own


def check_refusal(events: Sequence[TableEvent], at: int, command: TableEvent,
                  table: TableSettings = SETTINGS) -> ReplyCode | None:
    """Send ``command`` before ``events[at]``; if refused, assert it changed nothing
    and return its reply code (None: accepted)."""
    engine, later, own = run(events, at, command, table)
    replies = [out for out in own if isinstance(out, ConsoleResult)]
    assert len(replies) == 1, own  # every console input gets exactly one answer
    if replies[0].accepted:
        return None  # an accepted command may change things: not this property
    base, base_later, _ = run(events, at, None, table)
    raised = [out for out in own if isinstance(out, Alert)]
    hand = engine.hand
    assert hand is not None
    assert {a.code.value for a in raised} <= RULING_ALERTS, own
    assert [out for out in own if not isinstance(out, ConsoleResult | Alert)] == [], own
    # The refusal's own alert is the one trace it leaves (recorded in the hand).
    hand.alerts[:] = [a for a in hand.alerts if not any(a is r for r in raised)]
    assert later == base_later, command
    assert snapshot(engine) == snapshot(base), command
    return replies[0].code


@settings(max_examples=300)
@given(seed=st.integers(0, 10**6), kind=st.sampled_from(KINDS), where=st.floats(0, 1),
       command=commands)
def test_a_refused_command_changes_nothing(seed: int, kind: str, where: float,
                                           command: TableEvent) -> None:
    events, table = hand_events(seed, kind)
    at = 1 + int(where * (len(events) - 1))  # after the first event, up to the end
    check_refusal(events, at, command, table)


SWEEP = (
    *(ConsoleAction(seat, action, amount) for seat in (1, 4, 9)
      for action in BetAction for amount in (None, 1000)),
    FloorRuling(9, "kill"), HandEnded(), HandStarted((1, 2), console=True),
)
"""Every action from seats in and out of the hand, with no amount and a huge one."""


def test_every_refusal_at_every_point_of_some_hands_changes_nothing() -> None:
    """A sweep: each command of :data:`SWEEP` before every third event of two console
    hands, a card-only hand and an auto hand; the refusals met cover every way the
    console refuses."""
    seen: dict[ReplyCode, int] = {}
    for seed, kind in ((3, "console"), (5, "console"), (8, "card-only"), (9, "auto")):
        events, table = hand_events(seed, kind)
        for at in range(1, len(events) + 1, 3):
            for command in SWEEP:
                code = check_refusal(events, at, command, table)
                if code is not None:
                    seen[code] = seen.get(code, 0) + 1
    assert {ReplyCode.UNKNOWN_SEAT, ReplyCode.OUT_OF_TURN, ReplyCode.ILLEGAL_BET,
            ReplyCode.ILLEGAL_ACTION, ReplyCode.NO_BETTING_ROUND, ReplyCode.HAND_OVER,
            ReplyCode.HAND_IN_PROGRESS} <= set(seen), seen


@pytest.mark.parametrize("kind", ["card-only", "auto"])
def test_the_readme_example_act_on_a_card_only_demo_hand_changes_nothing(kind: str) -> None:
    """The issue's case: ``act 4 call`` to a card-only hand without seat 4 (the demo's
    table is an auto hand), then the hand dealt to the end: no premature_deal, the
    hand ends with its winner."""
    events, table = hand_events(7, kind)
    seats = {e.zone.seat for e in events if hasattr(e, "zone") and e.zone.seat}
    absent = next(s for s in range(1, 9) if s not in seats)
    for at in range(1, len(events)):
        engine, later, own = run(events, at, ConsoleAction(absent, BetAction.CALL), table)
        (reply,) = own
        assert isinstance(reply, ConsoleResult)
        assert not reply.accepted
        assert reply.code in {ReplyCode.UNKNOWN_SEAT, ReplyCode.NO_BETTING_ROUND}, reply
        hand = engine.hand
        assert hand is not None
        assert hand.console is None  # still a card-only hand
        assert "premature_deal" not in " ".join(later)
        base, base_later, _ = run(events, at, None, table)
        assert later == base_later
        assert snapshot(engine) == snapshot(base)
        assert hand.winners


def test_an_out_of_turn_act_on_a_card_only_hand_changes_nothing() -> None:
    events, _ = hand_events(11, "card-only")
    hand_line = events[0]
    assert isinstance(hand_line, HandStarted)
    for at in range(1, len(events)):
        for seat in hand_line.players:
            engine, later, own = run(events, at, ConsoleAction(seat, BetAction.BET, 999))
            reply = next(o for o in own if isinstance(o, ConsoleResult))
            if reply.accepted:
                continue
            assert engine.hand is not None
            assert engine.hand.console is None
            raised = [o for o in own if isinstance(o, Alert)]
            assert {a.code.value for a in raised} <= RULING_ALERTS
            engine.hand.alerts[:] = [a for a in engine.hand.alerts
                                     if not any(a is r for r in raised)]
            base, base_later, _ = run(events, at, None)
            assert later == base_later
            assert snapshot(engine) == snapshot(base)


def test_an_accepted_kill_on_a_card_only_hand_starts_no_betting() -> None:
    """The README's `kill 3 --reason absent` on the demo's card-only table: the ruling
    applies (the seat is dead) but no betting starts: no premature_deal later, and the
    cards decide the winner as before."""
    events, table = hand_events(3, "card-only")
    hand_line = events[0]
    assert isinstance(hand_line, HandStarted)
    at = next(i for i, e in enumerate(events) if getattr(getattr(e, "zone", None), "seat", 0)
              and i > 3 * len(hand_line.players))  # on 4th street
    engine, later, own = run(events, at, FloorRuling(hand_line.players[0], "kill", "absent"),
                              table)
    reply = next(o for o in own if isinstance(o, ConsoleResult))
    assert reply.accepted
    assert "premature_deal" not in " ".join(later)
    hand = engine.hand
    assert hand is not None
    assert hand.seats[hand_line.players[0]].status.value == "dead"
    assert hand.winners
    assert public_state("t", 8, hand, SETTINGS.game).pot is None  # no chips shown


@pytest.mark.parametrize("seed", range(12))
def test_rulings_on_a_card_only_hand_never_raise_a_betting_alert(seed: int) -> None:
    events, table = hand_events(seed, "card-only")
    hand_line = events[0]
    assert isinstance(hand_line, HandStarted)
    for at in range(2, len(events), 5):
        for ruling in (FloorRuling(hand_line.players[-1], "kill", "absent"),
                       FloorRuling(hand_line.players[0], "live")):
            _engine, later, own = run(events, at, ruling, table)
            text = " ".join(later + [repr(o) for o in own])
            for code in ("premature_deal", "out_of_turn", "illegal_bet", "upcards_lifted"):
                assert code not in text, (seed, at, ruling)
