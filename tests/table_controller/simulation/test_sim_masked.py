"""The one masking rule of fast and daemon mode (``simulation.rf.masked``,
docs/simulation.md "Masked"): a mistake is hidden when its own card, or every card of
a witness group, was never read, or when its own card was cross-read with reads not
told apart."""

from __future__ import annotations

from table_controller.simulation.kinds import DEAL_KINDS
from table_controller.simulation.plan import SimHand, parse_rates, plan_hands
from table_controller.simulation.rf import CROSS_READ_UNTOLD, masked


def _mistake() -> SimHand:
    hands = plan_hands(40, 19, parse_rates(["0.5"], DEAL_KINDS[:1]))
    return next(h for h in hands if h.evidence is not None)


def test_a_mistake_whose_card_was_read_alone_is_not_masked() -> None:
    hand = _mistake()
    assert masked(hand, {}, set(), rounds_unread=False) is None


def test_its_card_never_read_masks_it_with_the_reason() -> None:
    hand = _mistake()
    assert hand.evidence is not None
    assert masked(hand, {hand.evidence: "stack"}, set(), rounds_unread=False) == "stack"


def test_its_card_cross_read_untold_masks_it() -> None:
    hand = _mistake()
    assert hand.evidence is not None
    assert masked(hand, {}, {hand.evidence}, rounds_unread=False) == CROSS_READ_UNTOLD
    other = {hand.evidence + 1000}  # another placement cross-read: no matter
    assert masked(hand, {}, other, rounds_unread=False) is None


def test_never_read_wins_over_cross_read() -> None:
    hand = _mistake()
    assert hand.evidence is not None
    unread, untold = {hand.evidence: "dead"}, {hand.evidence}
    assert masked(hand, unread, untold, rounds_unread=True) == "dead"
