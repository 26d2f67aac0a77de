"""The demo's pure parts: the virtual dealer's hand plans and the public table view.

The plans are checked against the real rules engine in the daemon's card-only
mode (a hand starts with the first card on a clear table): every planned hand
must be a clean hand with exactly one result, and leave the table empty.
"""

from __future__ import annotations

import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from table_controller.demo.dealer import HandPlan, plan_hand
from table_controller.demo.view import HIDDEN_CARD, TableView, render_screen
from table_controller.domain.cards import Card
from table_controller.domain.engine.alerts import Alert, Notice
from table_controller.domain.engine.dealing import DealingEngine
from table_controller.domain.engine.outputs import GameEvent, GameEventKind
from table_controller.domain.engine.settings import TableSettings
from table_controller.domain.events import CardPlaced, CardRemoved, HandStarted
from table_controller.domain.zones import Zone
from table_controller.mqtt.topics import TableTopics

TOPICS = TableTopics("demo")


def _settings() -> TableSettings:
    return TableSettings(seats=8, ante=1, bring_in=2, small_bet=5, big_bet=10, auto_hands=True)


def _play(engine: DealingEngine, plan: HandPlan) -> list[Any]:
    """Apply a plan the way the daemon's core does; return the engine's outputs."""
    outputs: list[Any] = []
    for motion in plan.all_motions:
        for event in motion.events:
            if engine.starts_hand(event):
                outputs += engine.apply(HandStarted((), at=event.at))
            outputs += engine.apply(event)
    return outputs


@settings(max_examples=40)
@given(seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_planned_hands_are_clean_for_the_card_only_engine(seed: int) -> None:
    rng = random.Random(seed)
    engine = DealingEngine(_settings())
    for number in range(1, 4):
        plan = plan_hand(rng)
        outputs = _play(engine, plan)
        # A clean hand raises no alert; rule 15's community card (a short deck at
        # 7th street) is a notice: announced, nobody must act (issue 9).
        assert [o for o in outputs if isinstance(o, Alert)] == []
        notices = [o.code.value for o in outputs if isinstance(o, Notice)]
        assert notices == (["community_card"] if plan.deal.community is not None else [])
        results = [o for o in outputs if isinstance(o, GameEvent)
                   and o.kind is GameEventKind.HAND_RESULT]
        assert len(results) == 1
        assert engine.hand is not None
        assert engine.hand.number == number
        assert engine.hand.cleared
        if plan.showdown:
            assert results[0].shown, "hands leaving the table together are a showdown"
        else:
            assert list(results[0].winners) == list(plan.deal.live_seats)


@settings(max_examples=60)
@given(seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_a_plan_leaves_the_table_empty_and_never_doubles_a_card(seed: int) -> None:
    plan = plan_hand(random.Random(seed))
    where: dict[Card, Zone] = {}
    for motion in plan.all_motions:
        # Within one motion the readers see only the end result: a card taken
        # off a zone and put back on it at once would be invisible.
        placed = {(e.zone, e.card) for e in motion.events if isinstance(e, CardPlaced)}
        removed = {(e.zone, e.card) for e in motion.events if isinstance(e, CardRemoved)}
        assert not placed & removed
        assert motion.pause >= 0
        if not placed and any(e.zone.seat is None for e in motion.events):
            # Dealer's piles leaving the table (rule-15 pickup, gathering): the
            # dealer waits out the daemon's presence hold before going on.
            assert motion.settle
        for event in motion.events:
            if isinstance(event, CardPlaced):
                assert event.card not in where, f"{event.card} placed twice"
                where[event.card] = event.zone
            else:
                assert isinstance(event, CardRemoved)
                assert where.pop(event.card) == event.zone
    assert where == {}
    assert 2 <= len(plan.players) <= 8
    assert plan.cards_dealt >= 3 * len(plan.players)


def _seat(seat: int, status: str, up: list[str], down: int) -> dict[str, Any]:
    return {"seat": seat, "status": status, "up": up, "down_count": down, "stack": None}


def _state(hand: int | None, seats: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    base = {"table": "demo", "hand": hand, "seq": 1, "ts": 0.0, "street": 4, "bring_in": 3,
            "to_act": None, "community": None, "alerts": [], "pot": None, "seats": seats}
    return {**base, **extra}


def test_view_lines_and_screen_show_only_public_cards() -> None:
    view = TableView("demo")
    assert view.update(TOPICS.events, {"hand": 5, "kind": "hand_started", "players": []}) == [
        "hand 5: started"
    ]
    assert view.update(TOPICS.events, {"hand": 5, "kind": "card_dealt_down", "seat": 3}) == []
    lines = view.update(TOPICS.events, {"hand": 5, "kind": "announcement", "seat": 3,
                                   "text": "Seat 3 is high with pair of fours."})
    assert lines == ["hand 5: Seat 3 is high with pair of fours."]
    seats = [_seat(1, "folded", [], 0), _seat(3, "active", ["4h", "4d"], 2),
             _seat(6, "empty", [], 0)]
    # The state that follows an announcement is summarised on one line.
    assert view.update(TOPICS.state, _state(5, seats)) == [
        f"hand 5:   1: folded | 3: {HIDDEN_CARD} {HIDDEN_CARD} 4h 4d"
    ]
    screen = "\n".join(render_screen(view, ["header"]))
    assert "header" in screen
    assert f"{HIDDEN_CARD} {HIDDEN_CARD} 4h 4d" in screen
    assert "bring-in: seat 3" in screen
    alert = {"hand": 5, "code": "missing_burn", "seat": None, "street": 5, "rule": 13,
             "message": "5th street dealt without a burn"}
    assert view.update(TOPICS.alerts, alert) == [
        "hand 5: ALERT missing_burn (5th street, rule 13): 5th street dealt without a burn"
    ]
    result = {"hand": 5, "kind": "hand_result", "winners": [3],
              "shown": [{"seat": 3, "cards": ["7h", "7c", "4h", "4d", "Ks", "2d", "9c"],
                         "description": "two pair, sevens and fours"}]}
    assert view.update(TOPICS.events, result) == [
        "hand 5 result: seat 3 wins with two pair, sevens and fours (7h 7c 4h 4d Ks 2d 9c)"
    ]
    assert view.hand_results == 1
    short = render_screen(view, ["header"], height=12)
    assert short[-1].startswith("  hand 5: seat 3 wins"), "results stay on a short terminal"
    assert len(short) < len(render_screen(view, ["header"]))


def test_view_knows_when_a_hand_is_cleared() -> None:
    view = TableView("demo")
    assert not view.hand_cleared(0, empty_seats=True), "no state yet"
    view.update(TOPICS.state, _state(None, [_seat(1, "empty", [], 0)]))
    assert view.hand_cleared(0, empty_seats=True)
    view.update(TOPICS.state, _state(1, [_seat(1, "active", ["Kd"], 2)]))
    assert not view.hand_cleared(1, empty_seats=False), "no result yet"
    view.update(TOPICS.events, {"hand": 1, "kind": "hand_result", "winners": [1], "shown": []})
    assert view.hand_cleared(1, empty_seats=False)
    assert not view.hand_cleared(1, empty_seats=True), "the winner's cards are still out"
    view.update(TOPICS.state, _state(1, [_seat(1, "active", [], 0)]))
    assert view.hand_cleared(1, empty_seats=True)
