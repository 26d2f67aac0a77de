"""The daemon's cached deal expectation (issue 20, the per-card cost).

:class:`DealExpectation` answers :func:`due_zones`, :func:`returning_cards` and
:func:`face_up_holes` of the engine's hand, computed again only when
``DealingEngine.changes`` moved or the hand is another object. The daemon asks at
every reader report and every tick, so a stale answer would decide cards by an old
deal order: these tests hold the cache to the uncached functions after every input
of whole hands, and show it does not recompute between two inputs.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from table_controller.demo.dealer import plan_hand
from table_controller.domain.cards import Card
from table_controller.domain.engine import due
from table_controller.domain.engine.dealing import DealingEngine
from table_controller.domain.engine.due import (
    DealExpectation,
    due_zones,
    face_up_holes,
    returning_cards,
)
from table_controller.domain.engine.settings import TableSettings
from table_controller.domain.events import CardPlaced, CardRemoved, HandStarted
from table_controller.domain.zones import Zone

SEATS = range(1, 9)


def _check(cache: DealExpectation, engine: DealingEngine, burn_before_third: bool) -> None:
    zones, returning, face_up = cache.of(engine.hand, engine.changes)
    assert zones == due_zones(engine.hand, SEATS, burn_before_third=burn_before_third)
    assert dict(returning) == returning_cards(engine.hand)
    assert dict(face_up) == face_up_holes(engine.hand)


@settings(max_examples=25)
@given(seed=st.integers(0, 10_000), burn_before_third=st.booleans(),
       players=st.integers(2, 8))
def test_the_cache_equals_the_functions_after_every_input(
    seed: int, burn_before_third: bool, players: int
) -> None:
    """Two hands of a card-only table (auto hands: the hand opens on its first card, a
    new hand closes the last), cards lifted and put back included."""
    engine = DealingEngine(TableSettings(auto_hands=True))
    cache = DealExpectation(SEATS, burn_before_third=burn_before_third)
    rng = random.Random(seed)
    _check(cache, engine, burn_before_third)
    for _ in range(2):
        for motion in plan_hand(rng, players=players).all_motions:
            for event in motion.events:
                if engine.starts_hand(event):
                    engine.apply(HandStarted((), at=event.at))
                    _check(cache, engine, burn_before_third)
                engine.apply(event)
                _check(cache, engine, burn_before_third)
                _check(cache, engine, burn_before_third)  # asked again, unchanged
        engine.finish_hand()
        _check(cache, engine, burn_before_third)


def test_a_peek_put_back_is_seen_at_once() -> None:
    """The returning cards follow a card lifted from its seat and put back."""
    engine = DealingEngine(TableSettings())
    cache = DealExpectation(SEATS)
    engine.apply(HandStarted((1, 2)))
    ace = Card.parse("As")
    engine.apply(CardPlaced(Zone.down(1), ace))
    assert dict(cache.of(engine.hand, engine.changes)[1]) == {}
    engine.apply(CardRemoved(Zone.down(1), ace))
    assert dict(cache.of(engine.hand, engine.changes)[1]) == {ace: Zone.down(1)}
    engine.apply(CardPlaced(Zone.down(1), ace))
    assert dict(cache.of(engine.hand, engine.changes)[1]) == {}


def test_computed_once_per_engine_change(monkeypatch: pytest.MonkeyPatch) -> None:
    """Between two inputs the answer is the one computed before (the point of it)."""
    calls: list[int] = []
    original = due.due_zones

    def counted(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(due, "due_zones", counted)
    engine = DealingEngine(TableSettings())
    engine.apply(HandStarted((1, 2)))
    cache = DealExpectation(SEATS)
    first = cache.of(engine.hand, engine.changes)
    assert cache.of(engine.hand, engine.changes) is first
    assert len(calls) == 1
    engine.apply(CardPlaced(Zone.down(1), Card.parse("Kd")))
    second = cache.of(engine.hand, engine.changes)
    assert len(calls) == 2
    assert second[0] == (Zone.down(2), Zone.down(1), Zone.down(2))
