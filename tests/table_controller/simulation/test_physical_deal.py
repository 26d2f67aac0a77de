"""The physical deal generator on its own: order, faces, burns, folds, rule 15, inputs."""

from __future__ import annotations

import random

import pytest

from table_controller.domain.cards import DECK, Card, parse_cards
from table_controller.domain.engine.settings import RuleProfile
from table_controller.domain.events import CardPlaced, CardRemoved, HandStarted, TableEvent
from table_controller.domain.zones import BOARD, BURN, MUCK, Zone
from table_controller.simulation import deal_cards, deal_random, deal_streets, random_folds


def _ops(events: tuple[TableEvent, ...]) -> list[str]:
    out = []
    for event in events:
        if isinstance(event, CardPlaced):
            out.append(f"+{event.zone.name}:{event.card.code}")
        elif isinstance(event, CardRemoved):
            out.append(f"-{event.zone.name}:{event.card.code}")
        else:
            assert isinstance(event, HandStarted)
            out.append(f"hand{list(event.players)}")
    return out


def test_third_street_is_three_rounds_in_position_order_then_a_burn_per_street() -> None:
    cards = {
        2: parse_cards("As Ah 3d 4d 5d 6d Td"),
        4: parse_cards("Kd Kc 2c Ks 8c 8h Kh"),
    }
    deal = deal_cards(cards, rng=random.Random(3))
    ops = _ops(deal.events)
    assert ops[:7] == [
        "hand[2, 4]",
        "+seat2.down:As", "+seat4.down:Kd",
        "+seat2.down:Ah", "+seat4.down:Kc",
        "+seat2.up:3d", "+seat4.up:2c",
    ]
    burns = [op for op in ops if op.startswith("+burn")]
    assert len(burns) == 4
    assert [ops.index(b) for b in burns] == [7, 10, 13, 16]
    assert ops[-2:] == ["+seat2.down:Td", "+seat4.down:Kh"]
    assert deal.down(2) == tuple(parse_cards("As Ah Td"))
    assert deal.up(4) == tuple(parse_cards("2c Ks 8c 8h"))
    # Burn cards are cards nobody received.
    burned = {card for street in deal.burns.values() for card in street}
    assert not burned & {card for got in cards.values() for card in got}
    assert [event.at for event in deal.events] == sorted(event.at for event in deal.events)


def test_burn_before_third_profile_adds_a_first_burn() -> None:
    deal = deal_random([1, 5], random.Random(1), rules=RuleProfile(burn_before_third=True),
                       folds={})
    ops = _ops(deal.events)
    assert ops[1].startswith("+burn:")
    assert sorted(deal.burns) == [3, 4, 5, 6, 7]


def test_a_fold_mucks_card_by_card_after_the_street_and_stops_the_deal_to_that_seat() -> None:
    deal = deal_random([1, 2, 3], random.Random(9), folds={2: 4})
    ops = _ops(deal.events)
    got = deal.cards[2]
    assert len(got) == 4
    start = ops.index(f"-seat2.down:{got[0].code}")
    assert ops[start : start + 8] == [
        f"-seat2.down:{got[0].code}", f"+muck:{got[0].code}",
        f"-seat2.down:{got[1].code}", f"+muck:{got[1].code}",
        f"-seat2.up:{got[2].code}", f"+muck:{got[2].code}",
        f"-seat2.up:{got[3].code}", f"+muck:{got[3].code}",
    ]
    # The muck comes right after 4th street's last card and before the next burn.
    assert ops[start - 1] == f"+seat3.up:{deal.cards[3][3].code}"
    assert ops[start + 8].startswith("+burn:")
    assert deal.folds == {2: 4}
    assert deal.down(2) == deal.up(2) == ()
    assert len(deal.cards[1]) == len(deal.cards[3]) == 7


def test_hand_stops_when_one_seat_is_left() -> None:
    deal = deal_random([3, 6, 7], random.Random(2), folds={3: 3, 7: 3})
    assert deal.last_street == 3
    assert deal.live_seats == (6,)
    assert isinstance(deal.events[-1], CardPlaced)
    assert deal.events[-1].zone == MUCK


def test_eight_players_at_seventh_street_get_a_community_card() -> None:
    deal = deal_random(range(1, 9), random.Random(4), folds={})
    assert deal.community is not None
    assert deal.reshuffled  # one fresh card left: the burns are gathered first
    last = deal.events[-1]
    assert isinstance(last, CardPlaced)
    assert last.zone == BOARD
    assert all(len(cards) == 6 for cards in deal.cards.values())
    assert len(deal.burns[7]) == 1


def test_seven_players_at_seventh_street_reshuffle_the_burns() -> None:
    deal = deal_random(range(1, 8), random.Random(5), folds={})
    assert deal.community is None
    assert deal.reshuffled
    assert all(len(cards) == 7 for cards in deal.cards.values())
    assert len(deal.burns[7]) == 2
    removed = [e for e in deal.events if isinstance(e, CardRemoved) and e.zone == BURN]
    assert len(removed) == 4  # 4th, 5th, 6th and the first 7th-street burn
    every = [card for cards in deal.cards.values() for card in cards]
    assert len(set(every)) == len(every) == 49


def test_given_cards_of_seven_players_use_the_burns_only_for_the_last_seats() -> None:
    order = list(DECK)
    random.Random(6).shuffle(order)
    cards = {seat: order[(seat - 1) * 7 : seat * 7] for seat in range(1, 8)}
    deal = deal_cards(cards, rng=random.Random(7))
    assert {s: list(c) for s, c in deal.cards.items()} == cards
    assert deal.reshuffled


def test_deal_streets_is_the_hand_history_form() -> None:
    streets = {
        3: {1: parse_cards("Td3c4d"), 2: parse_cards("Kd3h4c"), 3: parse_cards("As8d5c")},
        4: {1: parse_cards("6d"), 3: parse_cards("9s")},
    }
    deal = deal_streets(streets, folds={2: 3, 1: 4})
    assert deal.street_cards(4) == {1: (Card.parse("6d"),), 3: (Card.parse("9s"),)}
    assert deal.folds == {2: 3, 1: 4}
    assert deal.live_seats == (3,)
    assert deal.last_street == 4


@pytest.mark.parametrize(
    ("cards", "folds", "message"),
    [
        ({1: parse_cards("AsKsQs")}, {}, "2 to 8 players"),
        ({1: parse_cards("AsKsQs"), 2: parse_cards("AsKdQd")}, {}, "given twice"),
        ({1: parse_cards("AsKs"), 2: parse_cards("AdKdQd")}, {}, "3 to 7 cards"),
        ({1: parse_cards("AsKsQsJs"), 2: parse_cards("AdKdQd")}, {}, "no card for street 4"),
        ({1: parse_cards("AsKsQs"), 2: parse_cards("AdKdQd")}, {1: 3, 2: 3}, "every seat"),
        ({1: parse_cards("AsKsQs"), 2: parse_cards("AdKdQd")}, {1: 9}, "bad fold"),
    ],
)
def test_impossible_inputs_are_refused(
    cards: dict[int, list[Card]], folds: dict[int, int], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        deal_cards(cards, folds=folds)


def test_random_folds_always_leave_a_seat_and_are_seeded() -> None:
    for seed in range(200):
        folds = random_folds([1, 2, 3], random.Random(seed), chance=0.9)
        assert len(folds) < 3
        assert random_folds([1, 2, 3], random.Random(seed), chance=0.9) == folds
    assert deal_random([1, 2], random.Random(8)).events == deal_random(
        [1, 2], random.Random(8)
    ).events


def test_zones_are_the_contract_names() -> None:
    deal = deal_random(range(1, 9), random.Random(10))
    names = {e.zone.name for e in deal.events if isinstance(e, CardPlaced | CardRemoved)}
    allowed = {Zone.down(s).name for s in range(1, 9)} | {Zone.up(s).name for s in range(1, 9)}
    assert names <= allowed | {"burn", "muck", "board"}
