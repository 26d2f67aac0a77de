"""Live equity from the engine's state (table_controller/domain/equity/live.py): pure parts.

What the daemon's secure feed shows after every card (docs/equity.md "Live equity"):
which spot a hand is at (live seats, dead cards, the rule-15 community card, the
seed), the numbers for it, and the readings.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from table_controller.domain.cards import Card
from table_controller.domain.engine.dealing import DealingEngine, HandState
from table_controller.domain.engine.settings import TableSettings
from table_controller.domain.equity import Game, compute_equity, hand_reading, showing_reading
from table_controller.domain.equity.live import (
    SEED_STRIDE,
    EquitySpot,
    compute_live,
    equity_spot,
    public_readings,
    secure_readings,
    table_game,
)
from table_controller.simulation.hand_log import write_hand_log
from table_controller.simulation.physical import PhysicalDeal, deal_random
from table_controller.tools.cli import main


def c(text: str) -> tuple[Card, ...]:
    return tuple(Card.parse(code) for code in text.split())


def positions(deal: PhysicalDeal) -> Iterator[HandState]:
    """The hand after every event of ``deal`` (the same object, changing)."""
    engine = DealingEngine(TableSettings(seats=8))
    for event in deal.events:
        engine.apply(event)
        assert engine.hand is not None
        yield engine.hand


@pytest.mark.parametrize("game", list(Game))
def test_the_game_comes_from_the_table_settings(game: Game) -> None:
    # The daemon, replay and the simulator ask table_game (issue 10's game setting).
    assert table_game(TableSettings(seats=8, game=game)) is game
    assert table_game(TableSettings(seats=8)) is Game.STUD


def test_no_spot_before_every_live_seat_has_three_cards() -> None:
    deal = deal_random((1, 2, 3), random.Random(1), fold_chance=0.0)
    spots = [equity_spot(hand, Game.STUD) for hand in positions(deal)]
    first = next(i for i, spot in enumerate(spots) if spot is not None)
    # 3rd street: nine cards (and no burn before it by default) -> the ninth card.
    engine = DealingEngine(TableSettings(seats=8))
    for event in deal.events[: first + 1]:
        engine.apply(event)
    assert engine.hand is not None
    assert all(len(seat.all_cards) == 3 for seat in engine.hand.seats.values())
    assert all(spot is None for spot in spots[:first])


@settings(max_examples=40)
@given(seed=st.integers(0, 10_000), players=st.integers(2, 8))
def test_spot_is_what_the_table_saw(seed: int, players: int) -> None:
    """Live seats hold their cards in the order received; dead cards are every other
    card on the table (burns, mucked and folded cards); seed = hand x 1000 + seen."""
    deal = deal_random(tuple(range(1, players + 1)), random.Random(seed), fold_chance=0.2)
    for hand in positions(deal):
        spot = equity_spot(hand, Game.STUD)
        live = hand.live_seats
        if spot is None:
            assert (len(live) < 2 or hand.finished
                    or any(len(hand.seats[s].all_cards) < 3 for s in live))
            continue
        assert [seat for seat, _ in spot.seats] == list(live)
        for seat, cards in spot.seats:
            assert cards == tuple(hand.seats[seat].all_cards)
        held = {card for _, cards in spot.seats for card in cards}
        on_table = {card for card, zones in hand.where.items() if zones}
        assert set(spot.dead) == on_table - held - {hand.community}
        assert not set(spot.dead) & held
        assert spot.community == hand.community
        seen = len(held) + len(spot.dead) + (spot.community is not None)
        assert spot.seed == hand.number * SEED_STRIDE + seen


def test_folded_and_burned_cards_are_dead() -> None:
    # Seat 3 folds after 4th street: its four cards reach the muck.
    deal = deal_random((1, 2, 3), random.Random(7), folds={3: 4})
    last = None
    for hand in positions(deal):
        spot = equity_spot(hand, Game.STUD)
        if spot is not None and 3 not in dict(spot.seats):
            last = spot
            break
    assert last is not None
    assert set(deal.cards[3]) <= set(last.dead)
    assert set(deal.burns[4]) <= set(last.dead)  # the 4th-street burn was read


@settings(max_examples=25)
@given(seed=st.integers(0, 10_000))
def test_compute_live_is_compute_equity_with_the_spot_seed(seed: int) -> None:
    deal = deal_random((1, 2, 3), random.Random(seed), fold_chance=0.1)
    spots = [s for hand in positions(deal) if (s := equity_spot(hand, Game.STUD))]
    if not spots:
        return
    spot = random.Random(seed).choice(spots)
    if spot.community is not None:
        return
    live = compute_live(spot)
    direct = compute_equity(dict(spot.seats), spot.dead, spot.game, seed=spot.seed)
    assert live.problem is None
    assert {s: e.equity for s, e in live.seats.items()} == direct.equity
    assert {s: e.win for s, e in live.seats.items()} == direct.win
    assert live.exact == direct.exact
    assert live.seed == direct.seed
    # Replay gives the same numbers, bit for bit (the seed comes from the spot).
    assert compute_live(spot) == live


def test_outs_heads_up_on_fifth_street() -> None:
    spot = EquitySpot(
        hand=4, game=Game.STUD,
        seats=((2, c("Ah Ad Kc 7s 3d")), (5, c("2c 2d 9h Js 4h"))),
        dead=(), community=None, seed=4010,
    )
    live = compute_live(spot)
    assert live.exact
    assert live.outs is not None
    behind, cards = live.outs
    assert behind == 5
    # Seat 5's pair of deuces passes the aces with trips or two pair: the two
    # deuces left and the three nines, jacks and fours left.
    assert set(cards) == set(c("2h 2s 9c 9d 9s Jc Jd Jh 4c 4d 4s"))
    assert live.seats[2].equity > live.seats[5].equity


def test_community_card_out_is_a_showdown() -> None:
    spot = EquitySpot(
        hand=9, game=Game.STUD,
        seats=((1, c("Ah Ad Kc 7s 3d 9c")), (2, c("2c 2d 9h Js 4h 5c"))),
        dead=(), community=Card.parse("Ac"), seed=9016,
    )
    live = compute_live(spot)
    assert live.problem is None
    assert live.exact
    assert live.community
    assert live.seats[1].equity == 1.0
    assert live.seats[1].win == 1.0
    assert live.seats[2].equity == 0.0


def test_a_spot_the_deck_cannot_be_is_a_problem_not_an_exception() -> None:
    spot = EquitySpot(
        hand=1, game=Game.STUD,
        seats=((1, c("Ah Ad Kc")), (2, c("Ah 2d 9h"))),  # Ah twice
        dead=(), community=None, seed=1006,
    )
    live = compute_live(spot)
    assert live.seats == {}
    assert live.problem is not None
    assert "Ah" in live.problem


def test_readings_secure_from_all_cards_public_from_up_cards_only() -> None:
    deal = deal_random((1, 2), random.Random(3), fold_chance=0.0)
    *_, hand = positions(deal)  # the hand after the last card
    readings = secure_readings(hand, Game.STUD)
    showing = public_readings({s: seat.up for s, seat in hand.seats.items()}, Game.STUD)
    for seat_no, seat in hand.seats.items():
        assert readings[seat_no] == hand_reading(seat.all_cards, Game.STUD)
        assert showing[seat_no] == showing_reading(seat.up, Game.STUD)
    assert public_readings({1: [], 2: list(c("9h 9d"))}, Game.STUD) == {
        2: "Pair of nines showing"
    }


SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


def test_replay_summary_shows_each_street_equity_and_reading(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["replay", str(SCRIPTS / "clean-hand.jsonl")]) == 0
    out = capsys.readouterr().out
    streets = [line for line in out.splitlines() if " street: seat " in line]
    assert [line.split()[0] for line in streets] == ["3rd", "4th", "5th", "6th", "7th"]
    assert "seat 4 100.00% (Four of a kind, kings) [exact, 1 run-outs]" in streets[-1]
    assert "outs for seat 2: " in out
    # The JSON door (the docs/conformance.md contract) is unchanged: no equity in it.
    assert main(["replay", str(SCRIPTS / "clean-hand.jsonl"), "--json"]) == 0
    report = capsys.readouterr().out
    assert "equity" not in report
    assert "street: seat" not in report


def test_simulate_hand_log_has_equities_and_readings(tmp_path: Path) -> None:
    with (tmp_path / "log.txt").open("w") as out:
        assert write_hand_log(out, 3, 1, {"missing_burn": 0.0}) == 3
    text = (tmp_path / "log.txt").read_text()
    assert text.count("hand ") >= 3
    assert "3rd street: seat " in text
    assert "result: " in text
    # The same seed writes the same log (seeded Monte Carlo, same plan).
    with (tmp_path / "again.txt").open("w") as out:
        write_hand_log(out, 3, 1, {"missing_burn": 0.0})
    assert (tmp_path / "again.txt").read_text() == text
