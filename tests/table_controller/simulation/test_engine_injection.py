"""Property: any single dealing error injected into a clean physical deal is flagged
with the right alert code (and seat), per docs/conformance.md's alert list."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from table_controller.domain.engine.dealing import replay_events
from table_controller.domain.engine.report import hand_report
from table_controller.simulation import deal_random
from table_controller.simulation.errors import NEEDS_SEVENTH, ErrorKind, inject


def flagged(kind: ErrorKind, seed: int, players: int) -> None:
    rng = random.Random(seed)
    seats = sorted(rng.sample(range(1, 9), players))
    folds = {} if kind in NEEDS_SEVENTH else None
    deal = deal_random(seats, rng, folds=folds, fold_chance=0.15)
    injection = inject(deal, kind, rng)
    if injection is None:
        return  # this deal gives the mistake no chance (e.g. no empty seat)
    (hand,) = replay_events(injection.events)
    report = hand_report(hand)
    codes = [(a["code"], a["seat"]) for a in report["alerts"]]
    assert any(code == kind.value for code, _ in codes), (kind, codes)
    if injection.seat is not None:
        assert (kind.value, injection.seat) in codes, (kind, injection.seat, codes)


@settings(max_examples=600)
@given(
    kind=st.sampled_from(list(ErrorKind)),
    seed=st.integers(0, 2**32 - 1),
    players=st.integers(2, 8),
)
def test_any_single_injected_error_is_flagged_with_its_code(
    kind: ErrorKind, seed: int, players: int
) -> None:
    flagged(kind, seed, players)


def test_every_kind_is_injectable_and_flagged() -> None:
    rng = random.Random(7)
    for kind in ErrorKind:
        done = 0
        for _ in range(200):
            players = rng.randint(2, 7)
            seed = rng.randrange(2**32)
            probe = random.Random(seed)
            seats = sorted(probe.sample(range(1, 9), players))
            deal = deal_random(seats, probe, folds={} if kind in NEEDS_SEVENTH else None)
            if inject(deal, kind, probe) is not None:
                flagged(kind, seed, players)
                done += 1
        assert done >= 50, f"{kind} injected only {done} times"


def test_clean_deals_raise_nothing() -> None:
    rng = random.Random(99)
    for _ in range(500):
        seats = sorted(rng.sample(range(1, 9), rng.randint(2, 8)))
        deal = deal_random(seats, rng)
        (hand,) = replay_events(deal.events)
        assert hand.alerts == []
        # The community card of rule 15 is announced as a notice; nothing else.
        expected = ["community_card"] if deal.community is not None else []
        assert [n.code.value for n in hand.notices] == expected
