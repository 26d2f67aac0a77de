"""The arrival order (daemon/arrival_order.py): cards of two readers read the other way
round are applied in the dealer's order; a real dealing error is still judged.

Pure: a real :class:`DealingEngine` and the decision object, driven the way the core
drives them (admit, then every due card; expire at the window's end). The flood runs
(bench/bench_daemon_flood.py) showed the swaps this undoes: frames of two readers
50 ms apart stamped the other way round by a link thread woken late.
"""

from __future__ import annotations

from table_controller.daemon.arrival_order import ARRIVAL_WINDOW, ArrivalOrder, dealer_expects
from table_controller.domain.cards import Card
from table_controller.domain.engine.alerts import Alert, AlertCode
from table_controller.domain.engine.dealing import DealingEngine
from table_controller.domain.engine.hand import Reshuffle
from table_controller.domain.engine.outputs import EngineOutput
from table_controller.domain.engine.settings import TableSettings
from table_controller.domain.events import CardPlaced, CardRemoved, HandStarted, ZoneEvent
from table_controller.domain.zones import BURN, Zone

PLAYERS = (2, 4, 5)


def _card(zone: Zone, card: str) -> CardPlaced:
    return CardPlaced(zone, Card.parse(card))


def _clean_deal() -> list[CardPlaced]:
    """3rd street (down, down, up) and 4th street (burn, then up: rule 13)."""
    return [
        _card(Zone.down(2), "As"), _card(Zone.down(4), "Ah"), _card(Zone.down(5), "3d"),
        _card(Zone.down(2), "Kd"), _card(Zone.down(4), "Kc"), _card(Zone.down(5), "2c"),
        _card(Zone.up(2), "7h"), _card(Zone.up(4), "7c"), _card(Zone.up(5), "Qs"),
        _card(BURN, "9h"),
        _card(Zone.up(2), "4d"), _card(Zone.up(4), "Ks"), _card(Zone.up(5), "Js"),
    ]


def _stamped(events: list[CardPlaced], gap: float = 0.05) -> list[CardPlaced]:
    return [CardPlaced(e.zone, e.card, at=1.0 + i * gap) for i, e in enumerate(events)]


def _engine() -> DealingEngine:
    engine = DealingEngine(TableSettings())
    engine.apply(HandStarted(PLAYERS))
    return engine


def _through_order(engine: DealingEngine, events: list[ZoneEvent],
                   end: float | None = None) -> tuple[list[EngineOutput], ArrivalOrder]:
    """Feed ``events`` as the core does; ``end``: then let every window run out."""
    order = ArrivalOrder()
    out: list[EngineOutput] = []

    def due() -> None:
        while (event := order.due(lambda e: dealer_expects(engine, e))) is not None:
            out.extend(engine.apply(event))

    for event in events:
        for now in order.admit([event]):
            out.extend(engine.apply(now))
        due()
    if end is not None:
        while (event := order.expire(end)) is not None:
            out.extend(engine.apply(event))
            due()
    return out, order


def _alerts(outputs: list[EngineOutput]) -> list[AlertCode]:
    return [o.code for o in outputs if isinstance(o, Alert)]


def _swap(events: list[CardPlaced], i: int) -> list[CardPlaced]:
    swapped = list(events)
    swapped[i], swapped[i + 1] = swapped[i + 1], swapped[i]
    return swapped


def test_a_clean_deal_goes_through_in_its_order_and_holds_nothing() -> None:
    engine = _engine()
    outputs, order = _through_order(engine, list(_stamped(_clean_deal())))
    assert _alerts(outputs) == []
    assert not order.holding
    assert order.reordered == 0


def test_two_seat_cards_read_the_other_way_round_raise_no_alert() -> None:
    swapped = _stamped(_swap(_clean_deal(), 1))  # seat 4's down card before seat 2's
    # Applied as they came, the engine calls it a dealing error (out_of_order)...
    direct = _engine()
    assert _alerts([o for e in swapped for o in direct.apply(e)]) != []
    # ... held for the card that was due, it is none.
    engine = _engine()
    outputs, order = _through_order(engine, list(swapped))
    assert _alerts(outputs) == []
    assert order.reordered == 1
    assert [engine.current_hand().seats[s].received for s in PLAYERS] == [4, 4, 4]


def test_a_street_card_read_before_its_burn_raises_no_alert() -> None:
    swapped = _stamped(_swap(_clean_deal(), 9))  # 4th street's first card before the burn
    # The engine alone holds a street's missing_burn for one card (rule 13, a burn read
    # late: docs/engine.md "Reads that fail"), so it raises none either.
    direct = _engine()
    assert _alerts([o for e in swapped for o in direct.apply(e)]) == []
    engine = _engine()
    outputs, _order = _through_order(engine, list(swapped))
    assert _alerts(outputs) == []


def test_a_real_dealing_error_is_still_judged_when_the_window_ends() -> None:
    misdealt = _stamped(_clean_deal()[:4] + _clean_deal()[5:6])  # seat 4's 2nd card skipped
    direct = _engine()
    expected = _alerts([o for e in misdealt for o in direct.apply(e)])
    assert expected != []
    engine = _engine()
    held, order = _through_order(engine, list(misdealt))
    assert _alerts(held) == []  # seat 5's card waits for seat 4's...
    assert order.next_deadline() == misdealt[-1].at + ARRIVAL_WINDOW
    outputs: list[EngineOutput] = []
    while (event := order.expire(misdealt[-1].at + ARRIVAL_WINDOW)) is not None:
        outputs.extend(engine.apply(event))
    assert _alerts(outputs) == expected  # ... and is judged once its window ends
    assert order.expired == 1


def test_anything_else_lets_the_held_cards_go_first_in_their_order() -> None:
    order = ArrivalOrder()
    first, second = _card(Zone.up(2), "As"), _card(Zone.up(4), "Ah")
    gone = CardRemoved(Zone.up(2), Card.parse("Kd"))
    assert order.admit([first, second]) == []
    assert order.admit([gone]) == [first, second, gone]
    assert not order.holding


def test_past_the_limit_the_oldest_held_card_goes_as_it_came() -> None:
    order = ArrivalOrder(max_held=2)
    cards = [_card(Zone.up(2), c) for c in ("As", "Ah", "Ad")]
    order.admit(cards)
    assert order.due(lambda _e: False) == cards[0]
    assert order.due(lambda _e: False) is None


def test_a_seat_read_late_in_an_auto_hands_first_round_stays_in_the_hand() -> None:
    """The flood runs' ``card_to_inactive_seat`` with cards lost: an auto hand learns
    its players from the first round, which the first seat's second card closes;
    seat 5's first card read after it left seat 5 out of the hand, and all its cards."""
    first_round = [_card(Zone.down(2), "As"), _card(Zone.down(4), "Ah"),
                   _card(Zone.down(5), "3d")]
    second = [_card(Zone.down(2), "Kd"), _card(Zone.down(4), "Kc"), _card(Zone.down(5), "2c")]
    swapped = _stamped([*first_round[:2], second[0], first_round[2], *second[1:]])
    direct = DealingEngine(TableSettings(auto_hands=True))
    assert AlertCode.CARD_TO_INACTIVE_SEAT in _alerts(
        [o for e in swapped for o in direct.apply(e)])
    engine = DealingEngine(TableSettings(auto_hands=True))
    # The second round waits for its window (nobody knows the first one is over).
    outputs, order = _through_order(engine, list(swapped), end=swapped[-1].at + ARRIVAL_WINDOW)
    assert _alerts(outputs) == []
    assert sorted(engine.current_hand().seats) == [2, 4, 5]
    assert [engine.current_hand().seats[s].received for s in PLAYERS] == [2, 2, 2]
    assert not order.holding
    assert order.reordered == 1


def test_a_full_table_s_second_round_is_not_held() -> None:
    """Every seat joined: the first round is over, the second round's first card is due."""
    engine = DealingEngine(TableSettings(auto_hands=True, seats=2))
    outputs, order = _through_order(engine, _stamped([
        _card(Zone.down(1), "As"), _card(Zone.down(2), "Ah"), _card(Zone.down(1), "Kd")]))
    assert _alerts(outputs) == []
    assert not order.holding
    assert engine.current_hand().seats[1].received == 2


def test_after_a_scramble_the_burn_is_due_not_the_seat_card() -> None:
    """Rule 15 (the deck runs short on 7th street): the scrambled cards are burnt from
    first. Held as unexpected, that burn came after the next seat card: a false
    ``missing_burn`` in every flood run of 8-player hands (bench, hand 1)."""
    engine = _engine()
    _through_order(engine, list(_stamped(_clean_deal())))
    engine.current_hand().reshuffle = Reshuffle.BURN_DUE
    assert dealer_expects(engine, _card(BURN, "9c"))
    assert not dealer_expects(engine, _card(Zone.up(2), "5d"))
