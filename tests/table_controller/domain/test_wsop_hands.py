"""The 13 real WSOP Seven Card Stud hands, dealt physically through the engine.

Data: tests/data/phh-wsop-2023-event43/stud-hand-*.phh (PHH, which is TOML),
2023 WSOP Event #43 final table, published with PokerKit (MIT). Player ``pN`` sits
in seat N (p1 is nearest the dealer's left). Each hand is turned into table events
by :func:`table_controller.simulation.deal_streets`: 3rd street round by round
(down, down, up), a burn before every later street drawn from cards nobody
received, one card per street to the seats still in, and every ``pN f`` turned
into seat N's cards going to the muck right after the deal of the street being
bet. Checked against the recorded hand:

* no alert at all (these are clean deals);
* the bring-in seat is the ``pN pb`` player;
* the seats that win are exactly the players whose stack grew
  (``finishing_stacks`` against ``starting_stacks``), whether the hand ended at a
  showdown or by everyone else folding;
* every seat's reconstructed down and up cards are the ones dealt.

Each hand is dealt with several burn choices, with and without the
``burn_before_third`` profile setting.
"""

from __future__ import annotations

import random
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from table_controller.domain.cards import Card, parse_cards
from table_controller.domain.engine.dealing import SeatStatus, replay_events
from table_controller.domain.engine.settings import RuleProfile, TableSettings
from table_controller.simulation import PhysicalDeal, deal_streets

REPO = Path(__file__).resolve().parents[3]
DATA = REPO / "tests" / "data" / "phh-wsop-2023-event43"
"""The real hands ship with the repository (tests/data/README.md: source, licence)."""

HANDS = ("05", "06", "07", "08", "09", "10", "11", "69", "71", "72", "73", "74", "75")
"""The 13 ``F7S`` hands of the data set (its README)."""

SHOWDOWN_HANDS = {"06", "09", "11", "69", "73"}
"""Hands with ``sm`` (show/muck) actions: they reach a showdown."""

BURN_SEEDS = (0, 1, 2)

_DEAL = re.compile(r"^d dh p(\d) ((?:[2-9TJQKA][cdhs])+)$")
_ACT = re.compile(r"^p(\d) (\w+)")


@dataclass(frozen=True, slots=True)
class WsopHand:
    """One PHH hand, reduced to what a physical deal and its checks need."""

    name: str
    streets: dict[int, dict[int, list[Card]]]
    folds: dict[int, int]
    bring_in: int
    stack_grew: list[int]
    showdown: bool


def _data_dir() -> Path:
    if not DATA.is_dir():
        pytest.fail(
            f"WSOP hand data not found at {DATA.resolve()}: they ship with the"
            " repository (tests/data/phh-wsop-2023-event43)."
        )
    return DATA


def load(name: str) -> WsopHand:
    """Parse ``stud-hand-NAME.phh`` into per-street cards, folds and results."""
    path = _data_dir() / f"stud-hand-{name}.phh"
    if not path.is_file():
        pytest.fail(f"missing WSOP hand file {path.resolve()}")
    raw: dict[str, Any] = tomllib.loads(path.read_text(encoding="utf-8"))
    assert raw["variant"] == "F7S", path
    streets: dict[int, dict[int, list[Card]]] = {}
    received: dict[int, int] = {}
    folds: dict[int, int] = {}
    bring_in: int | None = None
    street = 3
    showdown = False
    for action in raw["actions"]:
        dealt = _DEAL.match(action)
        if dealt:
            seat, cards = int(dealt.group(1)), parse_cards(dealt.group(2))
            count = received.get(seat, 0) + len(cards)
            received[seat] = count
            street = 3 if count <= 3 else count
            streets.setdefault(street, {})[seat] = cards
            continue
        acted = _ACT.match(action)
        assert acted, f"{path.name}: unexpected action {action!r}"
        seat, verb = int(acted.group(1)), acted.group(2)
        if verb == "pb":
            bring_in = seat
        elif verb == "f":
            folds[seat] = street  # a fold during the betting that follows this deal
        elif verb == "sm":
            showdown = True
    assert bring_in is not None, f"{path.name} has no bring-in"
    start, finish = raw["starting_stacks"], raw["finishing_stacks"]
    grew = [i + 1 for i, (a, b) in enumerate(zip(start, finish, strict=True)) if b > a]
    return WsopHand(name, streets, folds, bring_in, grew, showdown)


def test_data_set_is_the_thirteen_stud_hands() -> None:
    found = sorted(p.name for p in _data_dir().glob("stud-hand-*.phh"))
    assert found == [f"stud-hand-{name}.phh" for name in HANDS]
    assert {name for name in HANDS if load(name).showdown} == SHOWDOWN_HANDS


def _deal(hand: WsopHand, seed: int, rules: RuleProfile) -> PhysicalDeal:
    return deal_streets(hand.streets, folds=hand.folds, rules=rules, rng=random.Random(seed))


@pytest.mark.parametrize("burn_before_third", [False, True], ids=["default", "burn3"])
@pytest.mark.parametrize("name", HANDS)
def test_wsop_hand_dealt_physically(name: str, burn_before_third: bool) -> None:
    hand = load(name)
    rules = RuleProfile(burn_before_third=burn_before_third)
    for seed in BURN_SEEDS:
        deal = _deal(hand, seed, rules)
        # The physical sequence really is the recorded hand.
        assert deal.folds == hand.folds
        for street, per_seat in hand.streets.items():
            assert {s: list(c) for s, c in deal.street_cards(street).items()
                    if s in per_seat} == per_seat
        [state] = replay_events(deal.events, TableSettings(rules=rules))
        assert state.alerts == [], [a.message for a in state.alerts]
        assert state.bring_in == hand.bring_in
        assert sorted(state.winners) == hand.stack_grew
        assert state.finished
        for seat in deal.seats:
            got = state.seats[seat]
            expected_status = SeatStatus.FOLDED if seat in hand.folds else SeatStatus.ACTIVE
            assert got.status is expected_status, seat
            assert tuple(got.down) == deal.down(seat), seat
            assert tuple(got.up) == deal.up(seat), seat
        if hand.showdown:
            # Every later street of a showdown hand had a first-to-act.
            assert sorted(state.first_to_act) == [4, 5, 6, 7]
