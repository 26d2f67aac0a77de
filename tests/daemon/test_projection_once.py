"""Both snapshots from one pass (issue 20, the per-card cost): ``state_payloads``.

The core publishes a card's public and secure state from :func:`state_payloads`,
which computes the fields the two share once. It must give exactly what
:func:`public_state` and :func:`secure_state` give (the models stay the schema):
the same models, the same JSON on the wire, and no secure field in the public one.
"""

from __future__ import annotations

import json
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from table_controller.daemon.projection import public_state, secure_state, state_payloads
from table_controller.domain.engine.dealing import DealingEngine
from table_controller.domain.engine.settings import TableSettings
from table_controller.domain.equity import Game
from table_controller.domain.equity.live import compute_live, equity_spot
from table_controller.domain.events import CardPlaced, CardRemoved, HandStarted
from table_controller.mqtt.payloads import PublicState, SecureState, to_json
from table_controller.simulation.physical import deal_random

NAMES = {1: ("Ann", "NO"), 3: ("Bo", None)}


def assert_same(engine: DealingEngine, *, with_equity: bool) -> None:
    """``state_payloads`` equals the two single projections, as models and as JSON."""
    hand = engine.hand
    spot = equity_spot(hand, Game.STUD)
    equity = compute_live(spot) if with_equity and spot is not None else None
    public, secure = state_payloads("t1", 8, hand, Game.STUD, spot=spot, equity=equity,
                                    names=NAMES)
    assert public == public_state("t1", 8, hand, Game.STUD, NAMES)
    assert secure == secure_state("t1", 8, hand, Game.STUD, spot=spot, equity=equity,
                                  names=NAMES)
    assert to_json(public) == to_json(public_state("t1", 8, hand, Game.STUD, NAMES))
    # The models are the schema: what is published validates as it is.
    assert PublicState.model_validate(json.loads(to_json(public))) == public
    assert SecureState.model_validate(json.loads(to_json(secure))) == secure
    # Rule 19's privacy: the public rows carry no down card (the model forbids the key).
    assert all("down" not in row for row in json.loads(to_json(public))["seats"])


@settings(max_examples=25)
@given(seed=st.integers(0, 2**32), players=st.integers(2, 8))
def test_both_snapshots_from_one_pass_equal_the_single_projections(
    seed: int, players: int
) -> None:
    """After every card movement of a random hand (a card-only table)."""
    engine = DealingEngine(TableSettings(seats=8, auto_hands=True))
    deal = deal_random(range(1, players + 1), random.Random(seed))
    assert_same(engine, with_equity=False)  # no hand yet
    for event in deal.events:
        if not isinstance(event, CardPlaced | CardRemoved):
            continue
        if engine.starts_hand(event):
            engine.apply(HandStarted((), at=event.at))
        engine.apply(event)
        assert_same(engine, with_equity=False)
    assert_same(engine, with_equity=True)


def test_equity_of_the_current_spot_is_shown_in_the_secure_snapshot_only() -> None:
    """Mid-hand, with the live equity of the spot: the secure rows carry it, equal to
    ``secure_state``'s; the public rows none of it."""
    engine = DealingEngine(TableSettings(seats=8, auto_hands=True))
    deal = deal_random(range(1, 5), random.Random(7))
    zone = [e for e in deal.events if isinstance(e, CardPlaced | CardRemoved)]
    for event in zone[:16]:
        if engine.starts_hand(event):
            engine.apply(HandStarted((), at=event.at))
        engine.apply(event)
    spot = equity_spot(engine.hand, Game.STUD)
    assert spot is not None
    equity = compute_live(spot)
    public, secure = state_payloads("t1", 8, engine.hand, spot=spot, equity=equity)
    assert any(row.equity is not None for row in secure.seats)
    assert "equity" not in json.loads(to_json(public))["seats"][0]
    assert secure == secure_state("t1", 8, engine.hand, spot=spot, equity=equity)
