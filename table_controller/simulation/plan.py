"""Simulated hands, planned: players, the (possibly wrong) deal, then clearing the table.

Theory of operation
-------------------
Hand ``n`` of a run with seed ``s`` is drawn from its own ``Random(f"{s}:{n}")``,
so any hand can be replayed alone and both modes (fast and daemon) deal exactly
the same cards. Per hand:

1. :func:`choose_kind` draws at most one kind from the per-kind rates. **At most
   one error per hand** keeps attribution exact: every alert of a hand is either
   the injected error's, a consequence of it (a *secondary* alert), or false.
2. 2-8 players at random seats get a clean physical deal
   (:func:`~table_controller.simulation.physical.deal_random`: folds, burns, rule
   15); kinds that need 7th street get a hand without folds.
3. A deal kind rewrites the events (:mod:`.errors`). If the deal gives it no
   chance, or only a placement a card-only table cannot see
   (:mod:`.kinds`), the injection is tried again on the same deal and then on new
   deals (up to :data:`INJECT_ATTEMPTS` each); a kind that still finds no place
   leaves the hand clean, counted as *not injectable*.
With ``betting`` (``--betting``) the players bet through the dealer's console
instead (:mod:`.players`): the hand opens with the console's ``hand`` line
(players and stacks), the betting decides the folds, the hand closes with the
console's ``end``, and the console kinds (:mod:`.console_errors`) can be drawn
too. A console table knows its players, so no placement is invisible to it.

4. The dealer then clears the table as physically left by those events: every
   card at the seats is picked up (seat by seat), then the muck, burn pile and
   board are gathered (:func:`clear_events`). The daemon's card-only hands end
   when the seats are clear, which also settles the showdown.

Pure: no clock, no I/O.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace

from table_controller.domain.cards import Card
from table_controller.domain.engine.settings import TableSettings
from table_controller.domain.engine.variants import Game
from table_controller.domain.events import (
    CardPlaced,
    CardRemoved,
    HandEnded,
    HandStarted,
    TableEvent,
    UnknownTag,
    UnknownTagRemoved,
)
from table_controller.domain.zones import MAX_SEATS, Zone, ZoneKind
from table_controller.simulation.errors import Injection
from table_controller.simulation.kinds import (
    DEAL_KINDS,
    KINDS,
    Level,
    ReaderSettings,
    first_difference,
)
from table_controller.simulation.physical import PhysicalDeal, deal_random
from table_controller.simulation.players import deal_betting

INJECT_ATTEMPTS = 20
"""Tries per deal, and deals per hand, to find a place for the drawn error."""

FOLD_CHANCE = 0.15
"""Chance that a player folds after each street's deal."""

BETTING_SETTINGS = TableSettings()
"""The console table of ``--betting`` runs: the default stakes (ante 1, bring-in 2,
5/10), hands opened and closed by the console (no ``auto_hands``)."""

ClearEvent = CardRemoved | UnknownTagRemoved
"""What clearing the table produces."""


class RateError(ValueError):
    """Rates that cannot be used (unknown kind, bad number, sum above 1)."""


@dataclass(frozen=True, slots=True)
class SimHand:
    """One planned hand: what is dealt, what clears it, and what must be flagged."""

    number: int
    seats: tuple[int, ...]
    kind: str | None
    """The injected kind, or None for a clean hand."""
    expected_code: str | None
    expected_seat: int | None
    events: tuple[TableEvent, ...]
    """The deal as the dealer makes it: no ``HandStarted`` at a card-only table;
    with betting, the console's ``HandStarted`` first and its actions between."""
    clear: tuple[ClearEvent, ...]
    not_injectable: str | None = None
    """A kind that was drawn but found no place in this hand (the hand is clean)."""
    evidence: int | None = None
    """Deal kinds: the index in ``events`` of the first card (or tag) put down
    differently from the clean deal: the placement the table must read to see the
    mistake (an RF channel may not read it; :mod:`.rf`)."""
    witnesses: tuple[tuple[int, ...], ...] = ()
    """Deal kinds: the cards the mistake is judged against (indices in ``events``), in
    groups of which the table must read one card each (an empty group: never dealt);
    :attr:`~.errors.Injection.witnesses`."""

    def hidden(self, unread: Mapping[int, str], rounds_unread: bool) -> str | None:
        """Why the table cannot see this hand's injected mistake, or None.

        ``unread``: hand event index -> why its placement was never read;
        ``rounds_unread``: the table infers unread cards (stack loss above 0), so a
        witness never dealt leaves the picture of a legal deal with a round unread.
        The rule (docs/simulation.md "Masked"): the card put down differently, or
        every card of a witness group, never read."""
        if self.evidence is not None and self.evidence in unread:
            return unread[self.evidence]
        for group in self.witnesses:
            if not group:
                if rounds_unread:
                    return "witness never dealt"
                continue
            if all(index in unread for index in group):
                return f"witness {unread[group[0]]}"
        return None

    @property
    def readers(self) -> ReaderSettings | None:
        """How the readers misbehave during this hand (reader kinds), or None."""
        return KINDS[self.kind].readers if self.kind is not None else None


def parse_rates(
    items: Sequence[str], kinds: Sequence[str], *, betting: bool = False
) -> dict[str, float]:
    """Rates from ``--rate`` arguments: ``0.05`` (every kind of ``kinds``) or
    ``kind=0.1``; later arguments override earlier ones. Raises :class:`RateError`."""
    rates: dict[str, float] = {}
    for item in items:
        name, sep, value = item.rpartition("=")
        rate = _rate(value, item)
        if not sep:
            rates.update(dict.fromkeys(kinds, rate))
        elif name in KINDS:
            if name not in kinds:
                raise RateError(_unavailable(name))
            rates[name] = rate
        else:
            raise RateError(f"unknown error kind {name!r}; known: {', '.join(KINDS)}")
    check_rates(rates, betting=betting)
    return {name: rate for name, rate in rates.items() if rate > 0}


def _rate(text: str, item: str) -> float:
    try:
        rate = float(text)
    except ValueError:
        raise RateError(f"bad rate {item!r}: expected a number or kind=number") from None
    if not 0.0 <= rate <= 1.0:
        raise RateError(f"bad rate {item!r}: a rate is between 0 and 1")
    return rate


def _unavailable(name: str) -> str:
    if KINDS[name].needs_betting:
        return f"{name} needs --betting (the players bet through the console)"
    return f"{name} needs --mode daemon (it acts on the readers)"


def check_rates(rates: Mapping[str, float], *, betting: bool = False) -> None:
    """At most one error per hand: the rates are chances of one draw and sum to <= 1.
    Console kinds need ``betting``."""
    unknown = [name for name in rates if name not in KINDS]
    if unknown:
        raise RateError(f"unknown error kind(s): {', '.join(unknown)}")
    if not betting:
        console = [name for name in rates if KINDS[name].needs_betting and rates[name] > 0]
        if console:
            raise RateError(_unavailable(console[0]))
    total = sum(rates.values())
    if total > 1.0 + 1e-9:
        raise RateError(
            f"the rates add up to {total:g}: at most one error is injected per hand,"
            " so they must add up to 1 or less"
        )


def choose_kind(rng: random.Random, rates: Mapping[str, float]) -> str | None:
    """One draw: kind ``k`` with probability ``rates[k]``, else None (clean)."""
    draw = rng.random()
    total = 0.0
    for name in KINDS:  # registry order: stable whatever order the rates came in
        total += rates.get(name, 0.0)
        if draw < total:
            return name
    return None


def plan_hand(
    number: int,
    seed: int,
    rates: Mapping[str, float],
    *,
    betting: bool = False,
    game: Game = Game.STUD,
) -> SimHand:
    """Hand ``number`` (1-based) of the run with ``seed`` (module docstring);
    ``betting``: the players bet through the console; ``game``: what they play
    (docs/rules.md "Variants": the deal is the same, the bring-in, first to act, bet
    sizes and showdown differ)."""
    rng = random.Random(f"{seed}:{number}")
    kind = choose_kind(rng, rates)
    spec = KINDS[kind] if kind is not None else None
    seventh = spec is not None and spec.needs_seventh
    for _deal in range(INJECT_ATTEMPTS):
        players = rng.randint(2, MAX_SEATS)
        seats = sorted(rng.sample(range(1, MAX_SEATS + 1), players))
        if betting:
            deal = deal_betting(tuple(seats), rng, betting_settings(game),
                                folding=not seventh, hand_id=number)
        else:
            folds: dict[int, int] | None = {} if seventh else None
            deal = deal_random(seats, rng, folds=folds, fold_chance=FOLD_CHANCE)
        if spec is None or spec.level is Level.READER:
            return _hand(number, deal.seats, kind, code=None, seat=None, events=deal.events,
                         betting=betting)
        assert spec.injector is not None
        for _try in range(INJECT_ATTEMPTS):
            injection = spec.injector(deal, rng)
            if injection is None:
                break  # this deal gives the kind no chance at all: deal again
            if betting or spec.visible is None or spec.visible(deal, injection):
                hand = _hand(number, deal.seats, kind, code=kind, seat=injection.seat,
                             events=injection.events, betting=betting)
                return replace(hand, evidence=_evidence(hand.events, deal, injection, betting),
                               witnesses=_witnesses(injection, betting))
    hand = _hand(number, deal.seats, None, code=None, seat=None, events=deal.events,
                 betting=betting)
    return replace(hand, not_injectable=kind)


def _hand(number: int, seats: tuple[int, ...], kind: str | None, *, code: str | None,
          seat: int | None, events: Sequence[TableEvent], betting: bool) -> SimHand:
    if betting:
        dealt = tuple(events)
        if not any(isinstance(e, HandEnded) for e in dealt):
            # The injection stopped the hand early: the dealer still closes it.
            dealt = (*dealt, HandEnded())
    else:
        dealt = _no_start(events)  # a card-only table has no console: no hand line
    return SimHand(number, seats, kind, code, seat, dealt, tuple(clear_events(dealt)))


def _evidence(events: Sequence[TableEvent], deal: PhysicalDeal,
              injection: Injection, betting: bool) -> int | None:
    """Index in ``events`` (the hand's events as dealt) of the first placement at or
    after the injection's first change; None if it changed no placement."""
    changed = first_difference(deal, injection)
    target = injection.events[changed:]
    for index, event in enumerate(target, start=changed):
        if isinstance(event, CardPlaced | UnknownTag):
            # A card-only hand's events lack the HandStarted the injection's have.
            dropped = 0 if betting else sum(
                isinstance(e, HandStarted) for e in injection.events[:index])
            at = index - dropped
            if 0 <= at < len(events) and events[at] == event:
                return at
            return None
    return None


def _witnesses(injection: Injection, betting: bool) -> tuple[tuple[int, ...], ...]:
    """The injection's witness groups as indices in the hand's events (a card-only
    hand's events lack the injection's ``HandStarted``)."""
    if betting:
        return injection.witnesses
    starts = [i for i, e in enumerate(injection.events) if isinstance(e, HandStarted)]
    return tuple(tuple(index - sum(1 for s in starts if s < index) for index in group)
                 for group in injection.witnesses)


def _no_start(events: Sequence[TableEvent]) -> tuple[TableEvent, ...]:
    return tuple(e for e in events if not isinstance(e, HandStarted))


def plan_hands(
    count: int,
    seed: int,
    rates: Mapping[str, float],
    *,
    betting: bool = False,
    game: Game = Game.STUD,
) -> Iterator[SimHand]:
    """Hands 1..``count`` of the run with ``seed``."""
    check_rates(rates, betting=betting)
    for number in range(1, count + 1):
        yield plan_hand(number, seed, rates, betting=betting, game=game)


def betting_settings(game: Game) -> TableSettings:
    """:data:`BETTING_SETTINGS` for ``game``."""
    if game is Game.STUD:
        return BETTING_SETTINGS
    return BETTING_SETTINGS.model_copy(update={"game": game})


def clear_events(events: Sequence[TableEvent]) -> list[ClearEvent]:
    """Clear what ``events`` left on the table: seats first (in seat order, down
    cards then up cards: the dealer picks up each hand), then muck, burn pile and
    board. Removals carry the deck of the copy removed (two decks may be in play)."""
    lying: dict[Zone, dict[tuple[Card, str | None] | str, None]] = {}
    for event in events:
        if isinstance(event, CardPlaced):
            lying.setdefault(event.zone, {})[(event.card, event.deck)] = None
        elif isinstance(event, CardRemoved):
            lying.get(event.zone, {}).pop((event.card, event.deck), None)
        elif isinstance(event, UnknownTag):
            lying.setdefault(event.zone, {})[event.uid] = None
    out: list[ClearEvent] = []
    for zone in sorted(lying, key=_clear_order):
        for item in lying[zone]:
            if isinstance(item, str):
                out.append(UnknownTagRemoved(zone, item))
            else:
                out.append(CardRemoved(zone, item[0], deck=item[1]))
    return out


def _clear_order(zone: Zone) -> tuple[int, int, int]:
    if zone.seat is not None:
        return (0, zone.seat, 0 if zone.kind is ZoneKind.DOWN else 1)
    piles = (ZoneKind.MUCK, ZoneKind.BURN, ZoneKind.BOARD)
    return (1, piles.index(zone.kind), 0)


__all__ = [
    "BETTING_SETTINGS",
    "DEAL_KINDS",
    "ClearEvent",
    "RateError",
    "SimHand",
    "betting_settings",
    "check_rates",
    "choose_kind",
    "clear_events",
    "parse_rates",
    "plan_hand",
    "plan_hands",
]
