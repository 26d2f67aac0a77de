"""Hand readings: one formatter for every category, high and low, private and public."""

from __future__ import annotations

import inspect
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from table_controller.domain.cards import DECK, parse_cards
from table_controller.domain.equity.evaluate import Game
from table_controller.domain.equity.readings import (
    Reading,
    hand_reading,
    high_reading,
    low_reading,
    say,
    showing_reading,
)
from table_controller.domain.hands import HandCategory, evaluate

HIGH = [
    ("AsKsQsJsTs2c", "Royal flush"),
    ("9h8h7h6h5h", "Nine-high straight flush"),
    ("5d4d3d2dAd9c", "Five-high straight flush"),  # the steel wheel
    ("9c9d9h9sKd", "Four of a kind, nines"),
    ("KdKhKs4c4d", "Full house, kings full of fours"),
    ("KdKhKs4c4d4h", "Full house, kings full of fours"),  # two sets: the lower is the pair
    ("Ah9h7h4h2h", "Flush, ace high"),
    ("7c6d5h4s3c", "Seven-high straight"),
    ("AcKdQhJsTc", "Ace-high straight"),  # broadway
    ("Ac2d3h4s5c", "Five-high straight"),  # the wheel
    ("JcJdJhAs2c", "Three of a kind, jacks"),
    ("KcKd5h5sAc", "Two pair, kings and fives"),
    ("KcKd5h5s5c", "Full house, fives full of kings"),
    ("TcTd9h4s2c", "Pair of tens"),
    ("AsKd9h4s2c", "Ace-king high"),
    ("AsQd9h4s2c", "Ace-queen high"),  # the kicker names the hand
    ("AsKd9h", "Ace-king high"),  # 3rd street
    ("9s9hKd", "Pair of nines"),
    ("9s9h9dKd", "Three of a kind, nines"),
    ("9s9h4d4c", "Two pair, nines and fours"),
    ("9s9h9d9c", "Four of a kind, nines"),
    ("8h7h6h5h", "Eight-seven high"),  # four to a straight flush is no hand yet
]


@pytest.mark.parametrize(("codes", "text"), HIGH)
def test_high_readings(codes: str, text: str) -> None:
    assert hand_reading(parse_cards(codes), Game.STUD) == text


def test_every_high_category_is_read() -> None:
    seen = {high_reading(parse_cards(codes)).category for codes, _ in HIGH}
    assert seen == set(HandCategory)


RAZZ = [
    ("As2d3h4c5s", "Five-four low"),  # the wheel is the best razz hand
    ("Ah2d4c6s8h", "Eight-six low"),
    ("Ah2d4c6s8hKdKc", "Eight-six low"),
    ("KsQd7h2cAs", "King-queen low"),
    ("9s9h4d2c3s", "Pair of nines"),  # pairs count against a low
    ("4s4h4d4c2s2h3c", "Two pair, fours and deuces"),
    ("AsAh2d2c3s3hKd", "Pair of aces"),  # four ranks: one pair, the lowest (aces)
    ("3s3h2d2cAsAhAd", "Two pair, deuces and aces"),  # three ranks: the two lowest pair
    ("KdKhKs4c4d", "Full house, kings full of fours"),
    ("7h4d2c", "Seven-four low"),
    ("7h7d2c", "Pair of sevens"),
    ("5h5d5c5s", "Four of a kind, fives"),
    ("5h5d5c", "Three of a kind, fives"),
]


@pytest.mark.parametrize(("codes", "text"), RAZZ)
def test_razz_readings(codes: str, text: str) -> None:
    assert hand_reading(parse_cards(codes), Game.RAZZ) == text


STUD8 = [
    ("Ah2d4c6s8hKdKc", "Pair of kings; Eight-six low"),
    ("As2d3h4c5s", "Five-high straight; Five-four low"),
    ("AsKd9h4s2c9d", "Pair of nines; No low"),  # the nine makes no low: only four low ranks
    ("Ah2h4h6h8h", "Flush, ace high; Eight-six low"),  # the ace is high in the high half
    ("7h4d2c", "Seven-four high; No low"),  # no five cards yet
]


@pytest.mark.parametrize(("codes", "text"), STUD8)
def test_stud8_readings_name_both_halves(codes: str, text: str) -> None:
    assert hand_reading(parse_cards(codes), Game.STUD8) == text


def test_public_reading_names_the_board() -> None:
    assert showing_reading(parse_cards("9h9d"), Game.STUD) == "Pair of nines showing"
    assert showing_reading(parse_cards("AsKd"), Game.STUD) == "Ace-king high showing"
    assert showing_reading(parse_cards("As"), Game.STUD) == "Ace high showing"
    assert showing_reading(parse_cards("7h4d"), Game.RAZZ) == "Seven-four low showing"
    assert showing_reading([], Game.STUD) == "Nothing showing"
    # Rule 12: four to a flush or a straight showing is never named.
    assert showing_reading(parse_cards("8h7h6h5h"), Game.STUD) == "Eight-seven high showing"
    # stud8: the low is named only when the up cards alone make one.
    assert showing_reading(parse_cards("8h6d"), Game.STUD8) == "Eight-six high showing"
    assert showing_reading(parse_cards("As2d3h4c6s"), Game.STUD8) == (
        "Ace-six high showing, Six-four low showing"
    )


def test_public_reading_takes_only_up_cards() -> None:
    """The public API has no parameter through which a down card could enter."""
    assert list(inspect.signature(showing_reading).parameters) == ["up_cards", "game"]


def test_low_reading_of_eight_or_better_needs_five_low_ranks() -> None:
    assert low_reading(parse_cards("As2d3h4c9s"), eight_or_better=True).category is None
    assert say(low_reading(parse_cards("As2d3h4c9s"), eight_or_better=False)) == "Nine-four low"
    assert say(Reading("low", None, ())) == "No low"


@settings(max_examples=300)
@given(st.lists(st.sampled_from(DECK), min_size=5, max_size=7, unique=True))
def test_reading_of_a_hand_matches_its_value(cards: list) -> None:
    """The reading is a function of the evaluator's value: same value, same words;
    and it names the category the evaluator found."""
    reading = high_reading(cards)
    assert reading.category == evaluate(cards).category
    best = max(combinations(cards, 5), key=evaluate)
    assert say(high_reading(list(best))) == say(reading)


@settings(max_examples=200)
@given(st.lists(st.sampled_from(DECK), min_size=1, max_size=7, unique=True),
       st.sampled_from(list(Game)))
def test_every_reading_is_one_capitalised_line(cards: list, game: Game) -> None:
    for text in (hand_reading(cards, game), showing_reading(cards, game)):
        assert text
        assert text[0].isupper()
        assert "\n" not in text
