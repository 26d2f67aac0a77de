"""PokerKit as an independent reference: play a physical deal through its stud state.

Used by the differential test (tests/table_controller/domain/test_engine_vs_pokerkit.py)
and the benchmark (bench/bench_engine.py). PokerKit is a test-only dependency.

The deal is replayed card for card: the same cards to the same players in the
same physical order (one card at a time, position order, PokerKit player index
``i`` = the ``i``-th seat in ascending seat order), the same burn card per street,
the same folds during the betting of the street they happen on, everybody else
checking or calling. What we read back:

* ``bring_in``: the player due to post the bring-in (``opener_index`` of 3rd street);
* ``openers``: ``opener_index`` at the start of each later betting round;
* ``winners``: players receiving chips from a pot (``ChipsPushing`` amounts).

PokerKit decides rule 15 its own way: it deals a community card only when the deck
*plus the burn and muck piles* cannot serve every live player, and it reuses mucked
cards; docs/rules.md only scrambles the burn cards, so with seven or eight players a
table may need a community card where PokerKit still deals hole cards. Such a hand
is reported ``diverged`` at 7th street and only its earlier streets are comparable.
"""

from __future__ import annotations

import random
import warnings
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import pokerkit

from table_controller.domain.cards import DECK, Card
from table_controller.domain.engine.dealing import HandState
from table_controller.domain.hands import Game
from table_controller.simulation import PhysicalDeal, deal_random

ANTE, BRING_IN, SMALL_BET, BIG_BET = 1, 2, 4, 8
STACK = 1_000_000

AUTOMATIONS = (
    pokerkit.Automation.ANTE_POSTING,
    pokerkit.Automation.BET_COLLECTION,
    pokerkit.Automation.BLIND_OR_STRADDLE_POSTING,
    pokerkit.Automation.HOLE_CARDS_SHOWING_OR_MUCKING,
    pokerkit.Automation.HAND_KILLING,
    pokerkit.Automation.CHIPS_PUSHING,
    pokerkit.Automation.CHIPS_PULLING,
)
"""Everything but dealing, burning and betting, which the replay does itself."""

GAME_CLASSES: dict[Game, Any] = {
    Game.STUD: pokerkit.FixedLimitSevenCardStud,
    Game.RAZZ: pokerkit.FixedLimitRazz,
    Game.STUD8: pokerkit.FixedLimitSevenCardStudHighLowSplitEightOrBetter,
}
"""PokerKit's class of each game (docs/rules.md "Variants")."""

_FULL_DECK = tuple(pokerkit.Card.parse("".join(card.code for card in DECK)))
_TO_PK: dict[Card, Any] = dict(zip(DECK, _FULL_DECK, strict=True))


@dataclass(slots=True)
class PokerKitResult:
    """What PokerKit decided for one hand, in seat numbers."""

    bring_in: int | None = None
    openers: dict[int, int] = field(default_factory=dict)
    winners: list[int] = field(default_factory=list)
    winners_high: list[int] = field(default_factory=list)
    """Players paid by a high hand (``hand_type_index`` 0); empty when PokerKit
    mucked all but one hand and pushed the pot without a hand type."""
    winners_low: list[int] = field(default_factory=list)
    """stud8: players paid by the eight-or-better low (``hand_type_index`` 1)."""
    community: bool = False
    diverged: bool = False


FOLD_CHANCES = (0.0, 0.05, 0.15, 0.3)
"""How often a player folds after a street's deal in the differential hands."""


def random_hand(seed: int) -> PhysicalDeal:
    """The differential tests' hand for ``seed``: 2-8 players on random seats,
    random cards, random folds after a street's deal, the rest to showdown."""
    rng = random.Random(seed)
    seats = sorted(rng.sample(range(1, 9), rng.randint(2, 8)))
    return deal_random(seats, rng, fold_chance=rng.choice(FOLD_CHANCES), hand_id=seed)


def compare_dealing(
    deal: PhysicalDeal, hand: HandState, ref: PokerKitResult
) -> tuple[list[str], int]:
    """The bring-in and later first-to-act differences of ``hand`` from PokerKit's
    ``ref`` (docs/rules.md bring-in and first-to-act rules), and how many streets were
    compared. The 7th-street opener of a community-card hand is skipped: PokerKit
    ranks the up cards without the community card (rule 15)."""
    problems: list[str] = []
    if hand.bring_in != ref.bring_in:
        problems.append(f"bring-in {hand.bring_in} vs PokerKit {ref.bring_in}")
    streets = 0
    for street, opener in sorted(ref.openers.items()):
        if street == 7 and deal.community is not None:
            continue
        streets += 1
        if hand.first_to_act.get(street) != opener:
            problems.append(
                f"street {street} first to act {hand.first_to_act.get(street)} vs PokerKit {opener}"
            )
    return problems, streets


def describe(deal: PhysicalDeal, problems: list[str]) -> str:
    """One mismatch line: the hand's seats, cards, folds and community card, then
    what differed, so a failing seed can be read without re-running it."""
    return (
        f"seats {deal.seats} cards "
        f"{ {s: [c.code for c in cs] for s, cs in deal.cards.items()} } folds "
        f"{dict(deal.folds)} community {deal.community}: " + "; ".join(problems)
    )


def _queue(deal: PhysicalDeal, street: int) -> deque[tuple[int, Any]]:
    """(player index, card) in physical deal order for ``street``."""
    index = {seat: i for i, seat in enumerate(deal.seats)}
    per_seat = deal.street_cards(street)
    rounds = 3 if street == 3 else 1
    out: deque[tuple[int, Any]] = deque()
    for r in range(rounds):
        for seat in deal.seats:
            cards = per_seat.get(seat, ())
            if r < len(cards):
                out.append((index[seat], _TO_PK[cards[r]]))
    return out


def play(deal: PhysicalDeal, game: Game = Game.STUD) -> PokerKitResult:
    """Replay ``deal`` through PokerKit's class for ``game`` (``FixedLimitSevenCardStud``,
    ``FixedLimitRazz`` or ``FixedLimitSevenCardStudHighLowSplitEightOrBetter``)."""
    with warnings.catch_warnings():
        # PokerKit warns when a card is not the one it would "recommend" (we inject
        # reused burn cards) and when a player folds facing no bet: both are wanted.
        warnings.simplefilter("ignore")
        return _play(deal, game)


def _play(deal: PhysicalDeal, game: Game) -> PokerKitResult:
    players = len(deal.seats)
    seat_of = dict(enumerate(deal.seats))
    index = {seat: i for i, seat in seat_of.items()}
    fold_street = {index[seat]: street for seat, street in deal.folds.items()}
    state = GAME_CLASSES[game].create_state(
        AUTOMATIONS,
        True,
        ANTE,
        BRING_IN,
        SMALL_BET,
        BIG_BET,
        STACK,
        players,
        mode=pokerkit.Mode.CASH_GAME,  # cash games let a player fold facing no bet
    )
    # A full deck, so PokerKit's own rule-15 arithmetic sees the physical counts.
    state.deck_cards = deque(_FULL_DECK)
    result = PokerKitResult()
    queue: deque[tuple[int, Any]] = deque()
    queued_street = -1
    completer: int | None = None
    while state.status:
        street = 3 + (state.street_index or 0)
        # Cheap state flags first (the can_x() checks are costly): the benchmark
        # should time PokerKit, not this driver.
        burning = state.card_burning_status
        boarding = any(state.board_dealing_counts)
        holing = not boarding and any(state.hole_dealing_statuses)
        if queued_street != street and (burning or boarding or holing):
            queue = _queue(deal, street)
            queued_street = street
        if burning:
            burns = deal.burns.get(street, ())
            state.burn_card(_TO_PK[burns[0]] if burns else None)
        elif boarding:
            result.community = True
            if deal.community is None:
                result.diverged = True
                return result
            state.deal_board(_TO_PK[deal.community])
        elif holing:
            if not queue:
                result.diverged = True  # PokerKit deals hole cards where we used the board
                return result
            player, card = queue.popleft()
            state.deal_hole((card,), player)
        elif state.bring_in_status and state.can_post_bring_in():
            assert state.opener_index is not None
            result.bring_in = seat_of[state.opener_index]
            state.post_bring_in()
            bringer = result.bring_in
            if fold_street.get(index[bringer]) == 3:
                # PokerKit will not let the bring-in fold first: someone completes
                # so the action comes back to the bring-in, who then folds.
                completer = next(
                    (i for i in _after(index[bringer], players) if fold_street.get(i) != 3),
                    None,
                )
        elif state.actor_index is not None:
            if street not in result.openers and street > 3:
                assert state.opener_index is not None
                result.openers[street] = seat_of[state.opener_index]
            actor = state.actor_index
            if actor == completer and state.can_complete_bet_or_raise_to():
                completer = None
                state.complete_bet_or_raise_to()
            elif fold_street.get(actor) == street and state.can_fold():
                state.fold()
            else:
                state.check_or_call()
        else:  # pragma: no cover - would mean the driver above is wrong
            raise AssertionError(f"stuck PokerKit state on street {street}")
    won: set[int] = set()
    halves: tuple[set[int], set[int]] = (set(), set())
    for operation in state.operations:
        if isinstance(operation, pokerkit.ChipsPushing):
            paid = {i for i, amount in enumerate(operation.amounts) if amount > 0}
            won.update(paid)
            if operation.hand_type_index is not None:
                halves[operation.hand_type_index].update(paid)
    result.winners = sorted(seat_of[i] for i in won)
    result.winners_high = sorted(seat_of[i] for i in halves[0])
    result.winners_low = sorted(seat_of[i] for i in halves[1])
    return result


def _after(player: int, players: int) -> list[int]:
    """Player indices clockwise after ``player``."""
    return [(player + k) % players for k in range(1, players)]
