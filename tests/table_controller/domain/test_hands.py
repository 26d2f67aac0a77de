"""Hand evaluation, board ranking, bring-in and first to act (table_controller.domain.hands)."""

from __future__ import annotations

from itertools import combinations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from table_controller.domain.cards import DECK, Card, Suit, parse_cards
from table_controller.domain.hands import (
    HandCategory,
    HandValue,
    ShowingValue,
    batch_evaluate,
    best_five,
    bring_in_seat,
    describe,
    describe_showing,
    evaluate,
    first_to_act,
    showing_value,
)

C = HandCategory


def value(text: str) -> HandValue:
    return evaluate(parse_cards(text))


# --- named examples: one or more per category, with the dealer's words -----------

EXAMPLES = [
    ("AsKsQsJsTs 2c 3d", C.STRAIGHT_FLUSH, "royal flush"),
    ("9h8h7h6h5h Ah Ad", C.STRAIGHT_FLUSH, "straight flush, nine high"),
    ("5d4d3d2dAd Kc Qc", C.STRAIGHT_FLUSH, "straight flush, five high"),
    ("9c9d9h9s Ac 2d 3h", C.FOUR_OF_A_KIND, "four of a kind, nines"),
    ("KcKdKh 4s4c 2d 2h", C.FULL_HOUSE, "kings full of fours"),
    ("7c7d7h QsQc Qd 2h", C.FULL_HOUSE, "queens full of sevens"),
    ("Kd9d5d3d2d Ks Kh", C.FLUSH, "flush, king high"),
    ("AcKdQhJsTc 2c 2d", C.STRAIGHT, "straight, ace high"),
    ("As2c3d4h5s 9h Tc", C.STRAIGHT, "straight, five high"),
    ("JcJdJh 2s 3c 8d 9h", C.THREE_OF_A_KIND, "three of a kind, jacks"),
    ("AcAd 7h7s 2c 3c 4d", C.TWO_PAIR, "two pair, aces and sevens"),
    ("TcTd 3h 5s 9c Kd 2h", C.PAIR, "pair of tens"),
    ("AcKd9h5s3c 2d 7h", C.HIGH_CARD, "ace high"),
    ("2c 3d 4h 5s 7c 8d 9h", C.HIGH_CARD, "nine high"),
]


@pytest.mark.parametrize(("text", "category", "words"), EXAMPLES)
def test_named_examples(text: str, category: HandCategory, words: str) -> None:
    hand = value(text)
    assert hand.category is category
    assert describe(hand) == words
    assert str(hand) == words


def test_category_labels_read_as_english() -> None:
    assert C.FULL_HOUSE.label == "full house"
    assert C.HIGH_CARD.label == "high card"


def test_categories_rank_in_poker_order() -> None:
    ladder = [value(text) for text, _, _ in reversed(EXAMPLES)]
    categories = [hand.category for hand in ladder]
    assert categories == sorted(categories)
    best_of_each: dict[HandCategory, HandValue] = {}
    for hand in ladder:
        best_of_each[hand.category] = max(hand, best_of_each.get(hand.category, hand))
    ordered = [best_of_each[c] for c in sorted(best_of_each)]
    assert ordered == sorted(ordered)


# --- ties, kickers and the wheel -------------------------------------------------


def test_wheel_is_the_lowest_straight() -> None:
    wheel, six_high = value("Ac2d3h4s5c"), value("2c3d4h5s6c")
    assert wheel.category is six_high.category is C.STRAIGHT
    assert wheel < six_high
    assert wheel.ranks == (5,)
    assert wheel > value("AcAdKhKsQc")  # any straight beats two pair


def test_steel_wheel_is_the_lowest_straight_flush() -> None:
    assert value("Ah2h3h4h5h") < value("2h3h4h5h6h")
    assert value("Ah2h3h4h5h") > value("AcAdAhAsKc")


def test_equal_hands_in_different_suits_split() -> None:
    assert value("AcKd9h5s3c") == value("AdKh9s5c3d")
    assert value("KcKdKh4s4c 2d 3h") == value("KsKdKh4d4h 2c 3c")


def test_cards_beyond_the_best_five_do_not_count() -> None:
    # Same straight; the extra cards differ but none of them plays.
    assert value("9c8d7h6s5c 2d 2h") == value("9s8c7d6h5d Kc Kd")
    # Two pair: a third pair's rank is the best kicker, the rest do not count.
    assert value("AcAd 7h7s 5c5d 4h") == value("AhAs 7c7d 5h 3c 2d")
    # Two sets: the lower set plays as the pair.
    assert value("KcKdKh 4s4c4d 2h") == value("KcKdKh 4s4c")


def test_kickers_decide_within_a_category() -> None:
    assert value("AcAd Kh 5s 3c") > value("AhAs Qh Js Tc")
    assert value("AcAd Kh 5s 4c") > value("AhAs Kc 5d 3c")
    assert value("AcAd 7h7s Kc") > value("AhAs 7c7d Qc")
    assert value("8c8d8h Ks 2c") > value("8s8d8h Qs Jc")
    assert value("QcQdQh 9s9c") < value("KcKdKh 2s2c")
    assert value("2c2d2h2s Ac") > value("KcKdKhQsQc")


def test_five_six_and_seven_card_inputs() -> None:
    assert value("AcAd7h7s2c").category is C.TWO_PAIR
    assert value("AcAd7h7s2c7d").category is C.FULL_HOUSE
    assert value("AcAd7h7s2c7d2s") == value("7c7d7hAsAd")


@pytest.mark.parametrize("text", ["AcKdQhJs", "AcKdQhJsTc9c8c7c", ""])
def test_wrong_card_count_is_rejected(text: str) -> None:
    with pytest.raises(ValueError, match="5 to 7 cards"):
        evaluate(parse_cards(text))


def test_repeated_card_is_rejected() -> None:
    with pytest.raises(ValueError, match="twice"):
        evaluate(parse_cards("AcAcKdQhJs"))


def test_best_five_names_the_cards_that_play() -> None:
    assert best_five(parse_cards("KcKdKh4s4c2d2h")) == tuple(parse_cards("KhKdKc4s4c"))
    assert best_five(parse_cards("As2c3d4h5s9hTc")) == tuple(parse_cards("5s4h3d2cAs"))
    assert best_five(parse_cards("Kd9d5d3d2dKs7d")) == tuple(parse_cards("Kd9d7d5d3d"))


def test_batch_evaluate_matches_evaluate_for_mixed_lengths() -> None:
    hands = [parse_cards(text) for text, _, _ in EXAMPLES]
    hands += [hand[:5] for hand in hands] + [hand[:6] for hand in hands]
    indices = [[card.index for card in hand] for hand in hands]
    assert batch_evaluate(indices) == [evaluate(hand).strength for hand in hands]
    seven_only = [ix for ix in indices if len(ix) == 7]
    assert batch_evaluate(seven_only) == [evaluate(h).strength for h in hands if len(h) == 7]


# --- properties ------------------------------------------------------------------

seven_cards = st.lists(st.sampled_from(DECK), min_size=7, max_size=7, unique=True)


@given(st.data())
def test_order_of_cards_does_not_matter(data: st.DataObject) -> None:
    cards = data.draw(st.lists(st.sampled_from(DECK), min_size=5, max_size=7, unique=True))
    shuffled = data.draw(st.permutations(cards))
    assert evaluate(shuffled) == evaluate(cards)
    assert showing_value(shuffled) == showing_value(cards)
    board = cards[:4]
    assert showing_value(data.draw(st.permutations(board))) == showing_value(board)


@given(seven_cards)
def test_seven_cards_are_worth_their_best_five(cards: list[Card]) -> None:
    subsets = [evaluate(five) for five in combinations(cards, 5)]
    assert len(subsets) == 21
    assert evaluate(cards) == max(subsets)


@given(seven_cards)
def test_adding_a_card_never_lowers_the_value(cards: list[Card]) -> None:
    assert evaluate(cards[:5]) <= evaluate(cards[:6]) <= evaluate(cards)


@given(seven_cards)
def test_best_five_is_a_subset_with_the_same_value(cards: list[Card]) -> None:
    five = best_five(cards)
    assert len(five) == 5
    assert set(five) <= set(cards)
    assert evaluate(five) == evaluate(cards)


@given(seven_cards)
def test_description_names_the_category(cards: list[Card]) -> None:
    hand = evaluate(cards)
    words = describe(hand)
    expected_word = {
        C.HIGH_CARD: " high",
        C.PAIR: "pair of ",
        C.TWO_PAIR: "two pair, ",
        C.THREE_OF_A_KIND: "three of a kind, ",
        C.STRAIGHT: "straight, ",
        C.FLUSH: "flush, ",
        C.FULL_HOUSE: " full of ",
        C.FOUR_OF_A_KIND: "four of a kind, ",
        C.STRAIGHT_FLUSH: "flush",
    }[hand.category]
    assert expected_word in words


# --- the board: showing values and the dealer's announcements ---------------------


def showing(text: str) -> ShowingValue:
    return showing_value(parse_cards(text))


def test_rules_example_ladder_of_boards() -> None:
    # docs/rules.md: pair of aces > pair of kings > A-K > A-Q.
    ladder = [showing("AcAd"), showing("KcKd"), showing("AsKs"), showing("AhQh")]
    assert ladder == sorted(ladder, reverse=True)


def test_four_up_cards_never_make_a_straight_or_flush() -> None:
    suited_run = showing_value(parse_cards("9h8h7h6h"))
    assert suited_run.category is C.HIGH_CARD
    assert suited_run < showing_value(parse_cards("2c2d3h4s"))


def test_board_groups_outrank_high_cards() -> None:
    assert showing("2c2d2h 3s") > showing("AcAdKhKs")
    assert showing("AcAdKhKs") > showing("AhAs Kd Qc")
    assert showing("3c3d3h3s") > showing("AcAdAh Ks")
    assert showing("7c7d Ah") > showing("7h7s Kh")


def test_suits_never_break_a_board_tie() -> None:
    assert showing("AsKs") == showing("AcKd")
    assert showing("9s9h 2s") == showing("9c9d 2c")


def test_five_up_cards_count_straights_and_flushes() -> None:
    # A community card (rule 15) or a last card dealt up (rule 17).
    assert showing_value(parse_cards("9h8c7h6h5d")).category is C.STRAIGHT
    assert showing_value(parse_cards("Kh9h7h4h2h")).category is C.FLUSH
    assert showing("9h8c7h6h5d") > showing("AcAdAhKs")


def test_board_sizes_compare_as_poker() -> None:
    assert showing("As") > showing("5c4d3h2s")
    assert showing("AsKs") < showing("AsKdQc")


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("As", "ace high"),
        ("AsKd", "ace-king high"),
        ("Kd As 7c", "ace-king high"),
        ("9s9d", "pair of nines"),
        ("9s 4c 9d", "pair of nines"),
        ("AsAd7c7h", "two pair, aces and sevens"),
        ("JcJdJh", "three of a kind, jacks"),
        ("5c5d5h5s", "four of a kind, fives"),
        ("9h8h7h6h", "nine-eight high"),  # never a possible straight or flush
        ("9h8c7h6h5d", "straight, nine high"),
    ],
)
def test_describe_showing(text: str, words: str) -> None:
    assert describe_showing(parse_cards(text)) == words


@pytest.mark.parametrize("text", ["", "AsKsQsJsTs9s8s7s"])
def test_showing_value_rejects_bad_sizes(text: str) -> None:
    with pytest.raises(ValueError, match="1 to 7 cards"):
        showing_value(parse_cards(text))


# --- bring-in and first to act ---------------------------------------------------


def test_bring_in_is_the_lowest_rank_with_ace_high() -> None:
    ups = {1: Card.parse("Ac"), 2: Card.parse("3d"), 3: Card.parse("Kh")}
    assert bring_in_seat(ups, [1, 2, 3], "suit") == 2


def test_bring_in_tie_by_suit_clubs_lowest() -> None:
    ups = {1: Card.parse("2s"), 2: Card.parse("2h"), 3: Card.parse("2c"), 4: Card.parse("2d")}
    assert bring_in_seat(ups, [1, 2, 3, 4], "suit") == 3


def test_bring_in_tie_by_position_follows_seat_order() -> None:
    ups = {1: Card.parse("2s"), 4: Card.parse("2c"), 6: Card.parse("2h"), 7: Card.parse("Kd")}
    assert bring_in_seat(ups, [6, 7, 1, 4], "position") == 6
    assert bring_in_seat(ups, [7, 1, 4, 6], "position") == 1
    assert bring_in_seat(ups, [7, 1, 4, 6], "suit") == 4


def test_bring_in_rejects_seats_outside_the_order() -> None:
    with pytest.raises(ValueError, match=r"seats \[9\]"):
        bring_in_seat({9: Card.parse("2c")}, [1, 2], "suit")
    with pytest.raises(ValueError, match="no seats"):
        bring_in_seat({}, [1, 2], "suit")


def test_first_to_act_is_the_high_board() -> None:
    up = {1: parse_cards("AsKd"), 2: parse_cards("9c9d"), 3: parse_cards("AhKc")}
    assert first_to_act(up, [1, 2, 3]) == 2


def test_first_to_act_ties_go_by_position_not_suit() -> None:
    up = {2: parse_cards("AcKc"), 5: parse_cards("AsKs"), 7: parse_cards("QhQd")[:1]}
    assert first_to_act(up, [5, 7, 2]) == 5
    assert first_to_act(up, [7, 2, 5]) == 2


@given(
    st.lists(st.sampled_from(DECK), min_size=8, max_size=24, unique=True),
    st.integers(min_value=1, max_value=3),
)
def test_first_to_act_holds_the_maximum_board(cards: list[Card], per_seat: int) -> None:
    seats = len(cards) // per_seat
    up = {seat + 1: cards[seat * per_seat : (seat + 1) * per_seat] for seat in range(seats)}
    order = list(up)
    chosen = first_to_act(up, order)
    best = max(showing_value(board) for board in up.values())
    assert showing_value(up[chosen]) == best
    # ... and no seat before it in the order shows as much.
    for seat in order[: order.index(chosen)]:
        assert showing_value(up[seat]) < best


def test_cards_are_interned() -> None:
    """Card(rank, suit), parse, copies and pickles are all the one DECK object (equality
    is identity, the hash the object's own); cards stay immutable and ordered by rank
    then suit (rule 1's bring-in order)."""
    import copy
    import pickle

    ace = Card(14, Suit.SPADES)
    assert ace is DECK[51] is Card.parse("As") is Card(14, 3)
    assert copy.copy(ace) is ace
    assert copy.deepcopy([ace])[0] is ace
    assert pickle.loads(pickle.dumps(ace)) is ace
    assert (ace.rank, ace.suit, ace.index, ace.code) == (14, Suit.SPADES, 51, "As")
    assert sorted(parse_cards("As 2d 2c Kh")) == parse_cards("2c 2d Kh As")
    assert Card.parse("2s") > Card.parse("2h")
    assert Card.parse("3c") >= Card.parse("2s")
    with pytest.raises(AttributeError, match="immutable"):
        ace.rank = 2
    for rank, suit in ((1, 0), (15, 0), (2, 4), ("A", 0)):
        with pytest.raises(ValueError, match="no card of rank"):
            Card(rank, suit)  # type: ignore[arg-type]


def test_cards_built_outside_the_deck_are_still_valued() -> None:
    # Card(...) returns the interned DECK card; it counts like a parsed one.
    built = [Card(14, Suit.SPADES), Card(14, Suit.HEARTS), Card(9, Suit.CLUBS)]
    hand = built + parse_cards("9d 2c")
    assert evaluate(hand) == value("AsAh9c9d2c")
    assert showing_value(built) == showing("AsAh9c")
    with pytest.raises(ValueError, match="twice"):
        evaluate([Card(14, Suit.SPADES), *parse_cards("As Kd Qh Js")])
