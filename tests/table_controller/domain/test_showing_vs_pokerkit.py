"""Differential test: who acts first on 4th-7th street, ours against PokerKit's.

docs/rules.md: the highest hand showing acts first, ties by position, suits never count.
PokerKit's Seven Card Stud opens later streets with ``Opening.HIGH_HAND``: it looks up
each player's up cards in its private ``_HighHandOpeningLookup`` and takes
``entries.index(max(entries))``, i.e. the first player in position order among the
best. Two checks:

* 12,000 random tables (2-8 seats, 1-4 up cards each) against that lookup and rule,
  with seat numbers and a dealer position that differ from PokerKit's 0-based
  player order, so a position bug cannot hide;
* whole hands (2-6 players) dealt through PokerKit's own ``FixedLimitSevenCardStud``
  state, reading ``opener_index`` on 4th, 5th, 6th and 7th street, to prove the lookup above is what
  the state machine really uses.
"""

from __future__ import annotations

import random
from collections import deque
from typing import Any

import pytest

from table_controller.domain.cards import DECK, Card
from table_controller.domain.hands import first_to_act

pokerkit = pytest.importorskip("pokerkit")

TABLES = 12_000
GAME_HANDS = 600


def _to_pokerkit(cards: list[Card]) -> list[Any]:
    return list(pokerkit.Card.parse("".join(card.code for card in cards)))


def _from_pokerkit(card: object) -> Card:
    return Card.parse(repr(card))


def _random_table(rng: random.Random) -> tuple[list[int], dict[int, list[Card]]]:
    """A seat order (dealer anywhere, some seats empty) and k up cards per seat."""
    players = rng.randint(2, 8)
    up_count = rng.randint(1, 4)
    seats = sorted(rng.sample(range(1, 9), players))
    start = rng.randrange(players)
    seat_order = seats[start:] + seats[:start]
    cards = iter(rng.sample(DECK, players * up_count))
    up = {seat: [next(cards) for _ in range(up_count)] for seat in seat_order}
    return seat_order, up


def test_first_to_act_matches_pokerkit_high_hand_lookup() -> None:
    from pokerkit.state import _HighHandOpeningLookup

    lookup = _HighHandOpeningLookup()
    rng = random.Random(20261129)
    ties = 0
    for _ in range(TABLES):
        seat_order, up = _random_table(rng)
        entries = [lookup.get_entry(_to_pokerkit(up[seat])) for seat in seat_order]
        best = max(entries)
        ties += entries.count(best) > 1
        # PokerKit's own tie rule (state.py, Opening.HIGH_HAND): first index of the max.
        expected = seat_order[entries.index(best)]
        assert first_to_act(up, seat_order) == expected, (seat_order, up)
    # The position tie-break must actually have been exercised.
    assert ties > 100


def _automations() -> tuple[object, ...]:
    a = pokerkit.Automation
    return (
        a.ANTE_POSTING,
        a.BET_COLLECTION,
        a.BLIND_OR_STRADDLE_POSTING,
        a.CARD_BURNING,
        a.HOLE_CARDS_SHOWING_OR_MUCKING,
        a.HAND_KILLING,
        a.CHIPS_PUSHING,
        a.CHIPS_PULLING,
    )


def test_first_to_act_matches_pokerkit_stud_state_openers() -> None:
    rng = random.Random(7)
    checked_streets = 0
    for _ in range(GAME_HANDS):
        # Seven players need 49 cards plus 4 burns: more than a deck (rule 15 territory,
        # which PokerKit does not model), so whole hands go up to six players.
        players = rng.randint(2, 6)
        state = pokerkit.FixedLimitSevenCardStud.create_state(
            _automations(), True, 1, 2, 4, 8, 1_000_000, players
        )
        # Deal from our seeded shuffle (PokerKit's own shuffle is unseeded).
        state.deck_cards = deque(_to_pokerkit(rng.sample(DECK, 52)))
        seen_streets: set[int] = set()
        while state.status:
            if state.can_deal_hole():
                state.deal_hole()
            elif state.can_post_bring_in():
                state.post_bring_in()
            elif state.can_check_or_call():
                street = state.street_index
                if street not in seen_streets and street >= 1:  # 4th street on
                    seen_streets.add(street)
                    up = {
                        i: [_from_pokerkit(c) for c in state.get_up_cards(i)]
                        for i in range(players)
                    }
                    assert first_to_act(up, list(range(players))) == state.opener_index, up
                    checked_streets += 1
                state.check_or_call()
            else:  # pragma: no cover - would mean the driver above is wrong
                pytest.fail(f"stuck PokerKit state: {state}")
    assert checked_streets == GAME_HANDS * 4


def test_unequal_up_card_counts_deliberately_differ_from_pokerkit() -> None:
    """PokerKit never compares boards of different sizes, and its lookup puts every
    4-card high-card board above every 1-card board. Ours compares them as poker
    (an ace alone beats 5-4-3-2), which matters only after irregular deals."""
    from pokerkit.state import _HighHandOpeningLookup

    from table_controller.domain.cards import parse_cards

    lookup = _HighHandOpeningLookup()
    ace, low_four = parse_cards("As"), parse_cards("5c4d3h2s")
    assert lookup.get_entry(_to_pokerkit(low_four)) > lookup.get_entry(_to_pokerkit(ace))
    assert first_to_act({1: low_four, 2: ace}, [1, 2]) == 2
