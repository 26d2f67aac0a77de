"""A :class:`StudHand` -> a physical table script (docs/conformance.md JSON Lines).

Theory of operation
-------------------
The cards come from :func:`~table_controller.simulation.deal_streets`: 3rd
street round by round (down, down, up) in position order, a burn before every
later street drawn from cards nobody in the hand received, one card per street
to the seats still in. That deal mucks a street's folders in one batch after the
street's deal; here those muck moves are taken out and put back one seat at a
time, right after that seat's ``fold`` action, so the script reads like the
table: deal a street, bet it (``act`` lines), a folder's cards go to the muck
(``remove`` from the seat, ``place`` in ``muck``, card by card), next street.

PHH verbs become console actions by context: ``pb`` -> ``bring_in``; ``cbr X``
-> ``complete`` on 3rd street until someone completes, ``bet`` on a later
street nobody has bet yet, else ``raise`` (always with ``"amount": X``, the
total for the round, the same meaning in both formats); ``cc`` -> ``check`` when
the player has already matched the round's highest wager, else ``call``;
``f`` -> ``fold``. ``sm`` (showdown) has no console action and is dropped.

A file that says ``_betting = "unknown"`` (an export of a card-only table: its bets are
placeholders or absent) becomes a **card-only** script: no ``act`` line at all, each
fold is only the seat's cards going to the muck after that street's deal, as the table
saw it. A console line made up from placeholders would make the replay's engine
judge betting nobody did (``out_of_turn``, ``premature_deal``, issue 22).

Every line gets an ``at`` (seconds from the hand start, ``pace`` apart) so that
``stud-table replay --mqtt`` can republish an imported hand at a dealer's pace.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from table_controller.domain.cards import Card
from table_controller.domain.engine.settings import RuleProfile, TableSettings, settings_problem
from table_controller.domain.engine.variants import Game
from table_controller.domain.events import CardPlaced, CardRemoved, HandStarted, TableEvent
from table_controller.domain.zones import MAX_SEATS, MUCK, Zone, ZoneKind
from table_controller.handhistory.model import STREETS, Bet, PhhError, StudHand
from table_controller.records.script import event_to_op
from table_controller.simulation.physical import PhysicalDeal, deal_streets

DEFAULT_PACE = 1.0
"""Seconds between two script lines of an imported hand."""


@dataclass(frozen=True, slots=True)
class ImportedHand:
    """A hand turned into a table script: settings, the physical deal, the op lines."""

    hand: StudHand
    settings: TableSettings
    deal: PhysicalDeal
    ops: tuple[dict[str, Any], ...]
    """The ``hand`` op and every ``place``/``remove``/``act`` op, in table order."""

    def script_lines(self) -> list[str]:
        """The whole script: the ``table`` line then :attr:`ops`, one JSON object each."""
        return [json.dumps(op) for op in (table_op(self.settings), *self.ops)]

    def script_text(self) -> str:
        """:meth:`script_lines` joined, with a final newline."""
        return "\n".join(self.script_lines()) + "\n"


def table_settings(hand: StudHand, rules: RuleProfile | None = None) -> TableSettings:
    """The table line for ``hand``: stakes, seats (``seat_count``, else 8) and rules."""
    if len(set(hand.antes)) > 1:
        raise PhhError(f"antes differ between players ({list(hand.antes)}): a table has one ante")
    seats = hand.seat_count if hand.seat_count is not None else MAX_SEATS
    seats = min(max(seats, *hand.seats), MAX_SEATS)
    try:
        return TableSettings(
            seats=seats,
            ante=hand.antes[0],
            bring_in=hand.bring_in,
            small_bet=max(hand.small_bet, 1),
            big_bet=max(hand.big_bet, 1),
            rules=rules or RuleProfile(),
            game=hand.game,
        )
    except ValidationError as exc:  # one line, not pydantic's several (issue 9)
        raise PhhError(f"the stakes do not make a table: {settings_problem(exc)}") from None


def table_op(settings: TableSettings) -> dict[str, Any]:
    """The docs/conformance.md ``table`` op of ``settings`` (rules only where not default;
    ``game`` only for razz and stud8, so a stud script reads as before)."""
    op: dict[str, Any] = {
        "op": "table",
        "seats": settings.seats,
        "ante": settings.ante,
        "bring_in": settings.bring_in,
        "small_bet": settings.small_bet,
        "big_bet": settings.big_bet,
    }
    rules = settings.rules.model_dump(exclude_defaults=True)
    if rules:
        op["rules"] = rules
    if settings.game is not Game.STUD:
        op["game"] = settings.game.value
    return op


def import_hand(
    hand: StudHand,
    *,
    rules: RuleProfile | None = None,
    rng: random.Random | None = None,
    pace: float = DEFAULT_PACE,
) -> ImportedHand:
    """Turn ``hand`` into a physical deal and its script (see the module docstring).

    ``rng`` picks the burn cards (default ``Random(0)``: the same file always
    gives the same script). Raises :class:`PhhError` when the hand cannot be
    dealt as written.
    """
    settings = table_settings(hand, rules)
    hand_id = hand.hand if isinstance(hand.hand, int) else None
    try:
        deal = deal_streets(
            hand.streets(),
            folds=hand.folds(),
            community=hand.community,
            rules=settings.rules,
            rng=rng or random.Random(0),
            hand_id=hand_id,
        )
    except ValueError as exc:
        raise PhhError(f"the hand cannot be dealt physically: {exc}") from None
    stacks = {
        seat: max(chips - ante, 0)
        for seat, chips, ante in zip(hand.seats, hand.starting_stacks, hand.antes, strict=True)
    }
    start = HandStarted(hand.seats, stacks, 0.0, hand_id)
    ops = [event_to_op(start), *_table_ops(hand, deal.events)]
    for number, op in enumerate(ops):
        op["at"] = round(number * pace, 6)
    return ImportedHand(hand, settings, deal, tuple(ops))


def _table_ops(hand: StudHand, events: Sequence[TableEvent]) -> list[dict[str, Any]]:
    streets = hand.streets()
    bets: dict[int, list[Bet]] = {}
    for bet in hand.bets:
        bets.setdefault(bet.street, []).append(bet)
    held: dict[int, list[tuple[Zone, Card]]] = {seat: [] for seat in hand.seats}
    chips = _Chips(hand)
    out: list[dict[str, Any]] = []
    due = [s for s in STREETS if s in streets or s in bets]
    community_dealt = False
    for event in events:
        if isinstance(event, HandStarted) or _is_muck_move(event):
            continue
        out.append(event_to_op(event))
        if isinstance(event, CardPlaced) and event.zone.seat is not None:
            held[event.zone.seat].append((event.zone, event.card))
        if isinstance(event, CardPlaced) and event.zone.kind is ZoneKind.BOARD:
            community_dealt = True
        while due and _street_dealt(due[0], streets, held, community_dealt):
            out += _betting_ops(hand, due.pop(0), bets, held, chips)
    for street in due:  # betting recorded after the last card dealt
        out += _betting_ops(hand, street, bets, held, chips)
    return out


@dataclass(slots=True)
class _Chips:
    """Chips behind each seat as the recorded betting goes, and who folded."""

    behind: dict[int, int]
    folded: set[int]

    def __init__(self, hand: StudHand) -> None:
        self.behind = {
            seat: max(chips - ante, 0)
            for seat, chips, ante in zip(hand.seats, hand.starting_stacks, hand.antes,
                                         strict=True)
        }
        self.folded = set()

    def reach(self, seat: int, put: Mapping[int, int]) -> int:
        """The most any other seat still in can have in this round."""
        return max((put.get(other, 0) + chips for other, chips in self.behind.items()
                    if other != seat and other not in self.folded), default=0)

    def pay(self, seat: int, put: dict[int, int], total: int) -> None:
        """``seat`` brings its round total up to ``total`` (all-in if short)."""
        paid = min(max(total - put.get(seat, 0), 0), self.behind[seat])
        self.behind[seat] -= paid
        put[seat] = put.get(seat, 0) + paid


def betting_unknown(hand: StudHand) -> bool:
    """True for a hand whose file says its betting is unknown (a card-only table)."""
    return not hand.betting_known or hand.extra.get("_betting") == "unknown"


def _is_muck_move(event: TableEvent) -> bool:
    """A folded seat's card leaving the seat or landing in the muck (re-added at the fold)."""
    if isinstance(event, CardRemoved):
        return event.zone.seat is not None
    return isinstance(event, CardPlaced) and event.zone.kind is ZoneKind.MUCK


def _street_dealt(
    street: int,
    streets: Mapping[int, Mapping[int, Sequence[Card]]],
    held: Mapping[int, Sequence[object]],
    community_dealt: bool,
) -> bool:
    if street == 7 and community_dealt:
        return True
    seats = streets.get(street)
    if not seats:
        return False
    need = 3 if street == 3 else street
    return all(len(held[seat]) >= need for seat in seats)


def _betting_ops(
    hand: StudHand,
    street: int,
    bets: Mapping[int, Iterable[Bet]],
    held: Mapping[int, Sequence[tuple[Zone, Card]]],
    chips: _Chips,
) -> list[dict[str, Any]]:
    """The ``act`` lines of one street's betting, each fold followed by its muck moves."""
    out: list[dict[str, Any]] = []
    put: dict[int, int] = {}
    highest = 0
    completed = False
    card_only = betting_unknown(hand)
    for bet in bets.get(street, ()):
        if card_only:
            if bet.verb == "f":  # a fold is the cards going to the muck, nothing else
                chips.folded.add(bet.seat)
                for zone, card in held[bet.seat]:
                    out.append({"op": "remove", "zone": zone.name, "card": card.code})
                    out.append({"op": "place", "zone": MUCK.name, "card": card.code})
            continue
        act: dict[str, Any] = {"op": "act", "seat": bet.seat}
        if bet.verb == "pb":
            act["action"] = "bring_in"
            chips.pay(bet.seat, put, hand.bring_in)
            highest = max(highest, hand.bring_in)
        elif bet.verb == "cbr":
            assert bet.amount is not None
            if street == 3 and not completed:
                act["action"] = "complete"
                completed = True
            elif street > 3 and highest == 0:
                act["action"] = "bet"
            else:
                act["action"] = "raise"
            reach = chips.reach(bet.seat, put)
            if bet.amount == reach and chips.behind[bet.seat] + put.get(bet.seat, 0) > reach:
                # A wager of exactly what the others can still match (PHH, like
                # PokerKit, writes the raise capped at their stacks): the fixed-limit
                # size moves the same chips once the uncalled part comes back, and
                # it is the size the console takes (razz-hand-85: a raise to 750000
                # where the raise is to 1200000 and the caller has 750000).
                pass
            else:
                act["amount"] = bet.amount
            chips.pay(bet.seat, put, bet.amount)
            highest = max(highest, bet.amount)
        elif bet.verb == "cc":
            act["action"] = "check" if put.get(bet.seat, 0) >= highest else "call"
            chips.pay(bet.seat, put, highest)
        elif bet.verb == "f":
            act["action"] = "fold"
            chips.folded.add(bet.seat)
        else:
            continue  # "sm": showing down is no console action
        out.append(act)
        if bet.verb == "f":
            for zone, card in held[bet.seat]:
                out.append({"op": "remove", "zone": zone.name, "card": card.code})
                out.append({"op": "place", "zone": MUCK.name, "card": card.code})
    return out
