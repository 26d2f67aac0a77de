"""Differential test: razz and stud8 card-only tables against PokerKit (docs/rules.md "Variants").

The stud test (test_engine_vs_pokerkit.py) for the two variants: each random hand
(2-8 players on random seats, random cards, random folds after a street's deal,
the rest to showdown; rule-15 reshuffles and community cards included) is dealt
physically by :func:`table_controller.simulation.deal_random`, replayed through the
engine with ``game`` set, and played through PokerKit's ``FixedLimitRazz`` or
``FixedLimitSevenCardStudHighLowSplitEightOrBetter`` with the same cards, burns and
folds. Compared:

* the bring-in seat (razz: the highest upcard, king high, ace low, ties to the
  highest suit; stud8: as stud);
* the first seat to act on every later street reached (razz: the lowest hand
  showing; stud8: the highest; ties by position);
* the showdown winners (PokerKit's own evaluation and pot pushing), or the last
  seat standing; in stud8 also the seats winning the high and the low half.

The same two documented differences as for stud are left out and counted (the
7th-street first to act of community-card hands, and hands where PokerKit, which
also reshuffles the muck, still deals hole cards where the table needs a
community card). CI plays a few hundred hands per game; ``--soak`` 10,000.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any

import pytest

from table_controller.domain.engine.dealing import HandState, replay_events
from table_controller.domain.engine.settings import TableSettings
from table_controller.domain.hands import Game
from table_controller.simulation import PhysicalDeal

pytest.importorskip("pokerkit")

import pokerkit

from table_controller.testing.pokerkit_stud import (
    PokerKitResult,
    compare_dealing,
    describe,
    play,
    random_hand,
)

CI_HANDS = 300
SOAK_HANDS = 10_000
VARIANTS = (Game.RAZZ, Game.STUD8)


@dataclass(slots=True)
class Tally:
    """What the hands covered, so a weak generator cannot pass unnoticed."""

    hands: int = 0
    showdowns: int = 0
    splits: int = 0
    lows: int = 0
    scoops_without_low: int = 0
    one_shown: int = 0
    """stud8 showdowns where PokerKit mucked all but one hand (no halves to compare)."""
    community: int = 0
    diverged: int = 0
    bring_in_folds: int = 0
    streets: int = 0
    mismatches: list[str] = field(default_factory=list)


def _compare(
    game: Game, deal: PhysicalDeal, hand: HandState, ref: PokerKitResult, tally: Tally
) -> None:
    problems, streets = compare_dealing(deal, hand, ref)
    tally.streets += streets
    if ref.diverged:
        tally.diverged += 1
    else:
        if sorted(hand.winners) != ref.winners:
            problems.append(f"winners {sorted(hand.winners)} vs PokerKit {ref.winners}")
        showdown = len(deal.live_seats) > 1
        if game is Game.STUD8 and showdown:
            tally.lows += bool(hand.winners_low)
            tally.scoops_without_low += not hand.winners_low
        if game is Game.STUD8 and showdown and not (ref.winners_high or ref.winners_low):
            # PokerKit killed every hand that could not win and pushed the pot to the
            # one left without a hand type: the halves come from PokerKit's own
            # evaluators on the showdown hands (one pot: card-only stacks are equal).
            tally.one_shown += 1
            high, low = _pokerkit_halves(deal)
            if (hand.winners_high, hand.winners_low) != (high, low):
                problems.append(f"high {hand.winners_high} low {hand.winners_low} vs PokerKit"
                                f" evaluators {high} {low}")
        elif game is Game.STUD8 and showdown:
            if hand.winners_high != ref.winners_high:
                problems.append(f"high {hand.winners_high} vs PokerKit {ref.winners_high}")
            if hand.winners_low != ref.winners_low:
                problems.append(f"low {hand.winners_low} vs PokerKit {ref.winners_low}")
    if problems:
        tally.mismatches.append(describe(deal, problems))
    tally.hands += 1
    tally.showdowns += len(deal.live_seats) > 1
    tally.splits += len(hand.winners) > 1
    tally.community += deal.community is not None
    tally.bring_in_folds += deal.folds.get(hand.bring_in or 0) == 3


def _pokerkit_halves(deal: PhysicalDeal) -> tuple[list[int], list[int]]:
    """The best high hands and eight-or-better lows of the seats at showdown, by
    PokerKit's ``StandardHighHand`` and ``EightOrBetterLowHand``."""
    highs: dict[int, Any] = {}
    lows: dict[int, Any] = {}
    for seat in deal.live_seats:
        cards = "".join(card.code for card in deal.cards[seat])
        board = deal.community.code if deal.community is not None else ""
        highs[seat] = pokerkit.StandardHighHand.from_game(cards, board)
        with contextlib.suppress(ValueError):  # no five different ranks of eight or lower
            lows[seat] = pokerkit.EightOrBetterLowHand.from_game(cards, board)
    best = max(highs.values())
    high = sorted(s for s, h in highs.items() if h == best)
    if not lows:
        return high, []
    best_low = max(lows.values())  # PokerKit orders low hands so the best is the max
    return high, sorted(s for s, h in lows.items() if h == best_low)


def run(game: Game, seeds: range) -> Tally:
    """Play every seed's hand through the engine and PokerKit; return the tally."""
    settings = TableSettings(game=game)
    tally = Tally()
    for seed in seeds:
        deal = random_hand(seed)
        [hand] = replay_events(deal.events, settings)
        assert not hand.alerts or [a.code.value for a in hand.alerts] == ["community_card"], (
            deal.seats,
            hand.alerts,
        )
        _compare(game, deal, hand, play(deal, game), tally)
    return tally


def _check(tally: Tally, game: Game, size: int) -> None:
    assert not tally.mismatches, (
        f"{game}: {len(tally.mismatches)} of {size} hands differ from PokerKit; first ones:\n"
        + "\n".join(tally.mismatches[:5])
    )
    assert tally.showdowns > size // 2
    if game is Game.STUD8 or size >= 1000:  # razz ties are rare: about 1 in 500 hands
        assert tally.splits > 0
    assert tally.bring_in_folds > 0
    assert tally.streets > size
    assert tally.diverged < max(size // 20, 3)
    if game is Game.STUD8:
        assert tally.lows > 0
        assert tally.scoops_without_low > 0


@pytest.mark.parametrize("game", VARIANTS)
def test_card_only_variant_matches_pokerkit(game: Game) -> None:
    tally = run(game, range(CI_HANDS))
    _check(tally, game, CI_HANDS)


@pytest.mark.soak
@pytest.mark.parametrize("game", VARIANTS)
def test_card_only_variant_matches_pokerkit_soak(game: Game) -> None:
    tally = run(game, range(SOAK_HANDS))
    _check(tally, game, SOAK_HANDS)
    assert tally.community > 0
    print(f"{game}: {tally}")
