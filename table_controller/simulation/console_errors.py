"""Console-error injection: mistakes at the dealer's console and the premature deal.

Each :class:`ConsoleErrorKind` is named by the alert code the engine must raise.
:func:`inject_console` rewrites a hand dealt to betting players
(:func:`~.players.deal_betting`) at one of its recorded decisions:

* ``premature_deal``: the dealer burns and deals the next street's first card
  before the last action of a betting round, then follows rule 14: the card is
  taken out of play (off the table), the round is finished, and the dealer
  burns and deals the street. The premature burn and card are cards nobody
  receives in the hand, so the street is then dealt exactly as planned (the
  cards rule 14 takes out besides never reach an antenna). Hands that run short
  of cards (rule 15) are left alone: two more cards seen would change the count
  of fresh cards the table reads.
* ``out_of_turn``: an action is entered for another live seat just before the
  seat to act acts; the engine rejects it and the hand goes on unchanged.
* ``illegal_bet``: a bet, raise or completion of a size the structure does not
  allow is entered first; rejected, then the operator enters the right one.
* ``wrong_bring_in``: another seat is named to bring it in before the low card
  acts (rule 9); the low card then acts, which takes that bet back.

Pure and seeded: randomness comes from the caller's :class:`random.Random`.
"""

from __future__ import annotations

import random
from enum import StrEnum

from table_controller.domain.cards import DECK, Card
from table_controller.domain.events import (
    BetAction,
    CardPlaced,
    CardRemoved,
    ConsoleAction,
    TableEvent,
)
from table_controller.domain.zones import BURN, Zone, ZoneKind
from table_controller.simulation.errors import Injection
from table_controller.simulation.physical import PhysicalDeal
from table_controller.simulation.players import Decision


class ConsoleErrorKind(StrEnum):
    """Injectable console errors; each value is the alert code that must follow."""

    PREMATURE_DEAL = "premature_deal"
    OUT_OF_TURN = "out_of_turn"
    ILLEGAL_BET = "illegal_bet"
    WRONG_BRING_IN = "wrong_bring_in"


_WAGERS = ("complete", "bet", "raise")


def inject_console(
    deal: PhysicalDeal, kind: ConsoleErrorKind, rng: random.Random
) -> Injection | None:
    """``deal`` (dealt to betting players) with one ``kind`` error, or ``None`` if
    its decisions give the kind no chance."""
    events = list(deal.events)
    decisions = list(deal.decisions)
    if kind is ConsoleErrorKind.PREMATURE_DEAL:
        return _premature(deal, events, decisions, rng)
    if kind is ConsoleErrorKind.OUT_OF_TURN:
        candidates = [d for d in decisions if d.waiting]
        if not candidates:
            return None
        chosen = rng.choice(candidates)
        seat = rng.choice(chosen.waiting)
        actions = ["call", "check", "fold"]
        if chosen is not decisions[0]:
            # A wager before anyone acted on 3rd street is a wrong bring-in (rule 9).
            actions += ["bet", "raise"]
        action = rng.choice(actions)
        # Before the decision's first event: a fold's cards mucked before the
        # operator keyed it already moved the turn on.
        events.insert(chosen.start,
                      ConsoleAction(seat, BetAction(action), at=events[chosen.index].at))
        return Injection(kind, tuple(events), seat, chosen.street)
    if kind is ConsoleErrorKind.ILLEGAL_BET:
        candidates = [d for d in decisions if _wager(d) is not None]
        if not candidates:
            return None
        chosen = rng.choice(candidates)
        wager = _wager(chosen)
        assert wager is not None
        name, totals = wager
        wrong = [t for t in (totals[0] - 1, totals[0] + 1, totals[-1] + 1, 2 * totals[-1])
                 if t > chosen.bet and t not in totals]
        amount = rng.choice(wrong)
        at = events[chosen.index].at
        events.insert(chosen.start, ConsoleAction(chosen.seat, BetAction(name), amount, at=at))
        return Injection(kind, tuple(events), chosen.seat, chosen.street)
    if kind is ConsoleErrorKind.WRONG_BRING_IN:
        first = next((d for d in decisions if d.forced_bring_in), None)
        if first is None:
            return None
        others = [s for s in first.waiting if deal.stacks is not None and deal.stacks[s] > 0]
        if not others:
            return None
        seat = rng.choice(others)
        at = events[first.index].at
        events.insert(first.start, ConsoleAction(seat, BetAction.BRING_IN, at=at))
        return Injection(kind, tuple(events), seat, 3)
    raise ValueError(f"unknown console error kind {kind!r}")  # pragma: no cover


def _wager(decision: Decision) -> tuple[str, tuple[int, ...]] | None:
    """The decision's legal bet/raise/completion (not all-in), if it had one."""
    for legal in decision.legal:
        if legal.action in _WAGERS and not legal.all_in:
            return legal.action, legal.totals
    return None


def _premature(
    deal: PhysicalDeal, events: list[TableEvent], decisions: list[Decision],
    rng: random.Random,
) -> Injection | None:
    """The next street's first card (after a burn) dealt before a round's last
    action, taken off the table again, then the round and the street as planned."""
    spare = [card for card in DECK if card not in _cards_seen(events)]
    if deal.reshuffled or deal.community is not None or len(spare) < 2:
        return None
    candidates: list[tuple[Decision, CardPlaced]] = []
    for decision in decisions:
        if not decision.ends_round:
            continue
        # After the action (and a fold's muck), the next street begins with its
        # burn and a card to a seat.
        index = decision.index + 1
        while index < len(events) and _is_muck_move(events[index]):
            index += 1
        if index + 1 >= len(events):
            continue
        burn, card = events[index], events[index + 1]
        if (
            isinstance(burn, CardPlaced) and burn.zone == BURN
            and isinstance(card, CardPlaced) and card.zone.seat is not None
        ):
            candidates.append((decision, card))
    if not candidates:
        return None
    decision, first = rng.choice(candidates)
    # Before the last action every seat still in is due a card: the first of them
    # in position order gets it (the last actor may be about to fold).
    seat = min((decision.seat, *decision.waiting))
    zone = Zone(first.zone.kind, seat)
    burn_card, early_card = rng.sample(spare, 2)
    at = events[decision.index].at
    early: list[TableEvent] = [
        CardPlaced(BURN, burn_card, at),
        CardPlaced(zone, early_card, at),
        CardRemoved(zone, early_card, at),  # rule 14: out of play, set aside
    ]
    start = decision.start  # before a fold's cards mucked ahead of the action, too
    rewritten: list[TableEvent] = [*events[:start], *early, *events[start:]]
    street = decision.street + 1
    return Injection(ConsoleErrorKind.PREMATURE_DEAL, tuple(rewritten), seat, street)


def _cards_seen(events: list[TableEvent]) -> set[Card]:
    return {e.card for e in events if isinstance(e, CardPlaced | CardRemoved)}


def _is_muck_move(event: TableEvent) -> bool:
    """A fold's card leaving its seat or landing on the muck."""
    if isinstance(event, CardRemoved):
        return event.zone.seat is not None
    return isinstance(event, CardPlaced) and event.zone.kind is ZoneKind.MUCK
