"""Equity and readings of a live hand, from the rules engine's state (pure).

What the daemon's secure feed, the replay summary and the simulator's hand log
show next to each seat (docs/equity.md "Live equity"). No I/O, no clock: the
same hand state gives the same numbers, so a journal replayed later shows
exactly what the live table showed.

* :func:`equity_spot` reads a :class:`~table_controller.domain.engine.dealing.HandState`
  into an :class:`EquitySpot`: every live seat's cards (down and up, in the order
  received), the dead cards (what the table saw out of play: folded and mucked
  cards, burns that were read, any other card lying on the table), the rule-15
  community card once it is out, and the Monte Carlo seed. ``None`` where equity
  does not apply (fewer than two live seats, a live seat with fewer than three
  cards, a finished hand, a card seen twice).
* :func:`compute_live` computes it (:func:`~table_controller.domain.equity.compute_equity`,
  outs heads-up): a few ms exact, up to ~50 ms sampled; the daemon runs it off
  the engine thread (``table_controller/daemon/equity_feed.py``).
* :class:`StreetLog` writes the readable lines (``replay``'s summary, ``simulate
  --hand-log``): each live seat's equity and hand once every street is complete.
* :func:`secure_readings` (every seat's hand in words: secure only) and
  :func:`public_readings` (up cards only: the public one) are cheap and computed
  with every state.

**Seed** (Monte Carlo spots): ``hand number * 1000 + cards seen`` (the live seats'
cards, the dead cards and the community card): it changes with every card, and a
replay of the journal derives the same one, hence the same numbers bit for bit.

**The game** comes from one place, :func:`table_game`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Final

import numpy as np

from table_controller.domain.cards import Card
from table_controller.domain.engine.dealing import HandState, SeatStatus
from table_controller.domain.engine.settings import TableSettings
from table_controller.domain.equity.core import EquityError, compute_equity
from table_controller.domain.equity.evaluate import Game, Scores
from table_controller.domain.equity.model import UNITS, pot_units, prepare
from table_controller.domain.equity.outs import outs
from table_controller.domain.equity.readings import current_value, hand_reading, showing_reading

__all__ = [
    "SEED_STRIDE",
    "EquitySpot",
    "LiveEquity",
    "SeatEquity",
    "StreetLog",
    "compute_live",
    "equity_spot",
    "public_readings",
    "secure_readings",
    "table_game",
    "warm_up",
]

SEED_STRIDE: Final = 1000
"""Seed = hand number * SEED_STRIDE + cards seen (at most 52, so no two positions
of one hand share a seed)."""

_MIN_CARDS: Final = 3
_FULL: Final = 7


def table_game(settings: TableSettings) -> Game:
    """The game dealt at the table: the one place the daemon, replay and simulator ask."""
    return Game(settings.game)


@dataclass(frozen=True, slots=True)
class EquitySpot:
    """One moment of a hand, as equity sees it (compared whole: same spot, same numbers).

    ``seats``: (seat, its cards) for every live seat, in seat order; ``community``:
    the rule-15 community card once it is out (it is in no seat's cards).
    """

    hand: int
    game: Game
    seats: tuple[tuple[int, tuple[Card, ...]], ...]
    dead: tuple[Card, ...]
    community: Card | None
    seed: int


@dataclass(frozen=True, slots=True)
class SeatEquity:
    """One seat's share: ``equity = win + tie`` (docs/equity.md); ``stderr`` when sampled."""

    equity: float
    win: float
    tie: float
    stderr: float | None


@dataclass(frozen=True, slots=True)
class LiveEquity:
    """The equity of a spot: per seat, how it was computed, and the outs heads-up.

    ``problem`` names why there are no numbers (the spot was refused: ``seats`` is
    then empty); ``outs``: (seat behind, the cards that put it ahead) or ``None``;
    ``readings``: each live seat's hand in words (computed with the numbers, off
    the engine thread).
    """

    spot: EquitySpot
    seats: dict[int, SeatEquity]
    exact: bool
    runouts: int
    seed: int | None
    community: bool
    outs: tuple[int, tuple[Card, ...]] | None
    problem: str | None = None
    readings: dict[int, str] = field(default_factory=dict)


def equity_spot(hand: HandState | None, game: Game) -> EquitySpot | None:
    """The spot of ``hand`` now, or ``None`` where equity does not apply (module docstring)."""
    if hand is None or hand.finished or hand.second_copies:
        return None
    live = hand.live_seats
    if len(live) < 2:
        return None
    seats = tuple((seat, tuple(hand.seats[seat].all_cards)) for seat in live)
    if any(len(cards) < _MIN_CARDS for _, cards in seats):
        return None  # 3rd street still being dealt: no spot yet
    held = {card for _, cards in seats for card in cards}
    community = hand.community
    # What the table saw out of play: every other card lying on it now (muck,
    # burns, folded seats, the board). Cards gathered off the table (rule 15's
    # reshuffle) are unseen again.
    dead = tuple(sorted(card for card, zones in hand.where.items()
                        if zones and card not in held and card != community))
    seen = len(held) + len(dead) + (community is not None)
    return EquitySpot(
        hand=hand.number,
        game=game,
        seats=seats,
        dead=dead,
        community=community,
        seed=hand.number * SEED_STRIDE + seen,
    )


def compute_live(spot: EquitySpot) -> LiveEquity:
    """Equity, win, tie, outs and readings of ``spot`` (pure; a refused spot gives
    ``problem``, and still its readings)."""
    return replace(_numbers(spot), readings=spot_readings(spot))


def spot_readings(spot: EquitySpot) -> dict[int, str]:
    """Each live seat's hand in words (the community card counted once it is out)."""
    extra = (spot.community,) if spot.community is not None else ()
    return {seat: _hand_reading((*dict.fromkeys(cards), *extra), spot.game)
            for seat, cards in spot.seats}


def _numbers(spot: EquitySpot) -> LiveEquity:
    try:
        if spot.community is not None:
            return _showdown_now(spot)
        seats = dict(spot.seats)
        result = compute_equity(seats, spot.dead, spot.game, seed=spot.seed)
        behind = outs(prepare(seats, spot.dead, spot.game))
    except EquityError as exc:
        return LiveEquity(spot, {}, False, 0, None, False, None, problem=str(exc))
    stderr = result.stderr or {}
    return LiveEquity(
        spot=spot,
        seats={
            seat: SeatEquity(result.equity[seat], result.win[seat], result.tie[seat],
                             stderr.get(seat))
            for seat in result.equity
        },
        exact=result.exact,
        runouts=result.runouts,
        seed=result.seed,
        community=result.community,
        outs=(behind.seat, behind.cards) if behind is not None else None,
    )


def _showdown_now(spot: EquitySpot) -> LiveEquity:
    """The community card is out: every seat's seven cards are known, one run-out."""
    assert spot.community is not None
    hands = [(*cards, spot.community) for _, cards in spot.seats]
    if any(len(cards) != _FULL for cards in hands):
        raise EquityError("with the community card out every live seat holds six cards")
    values = [current_value(cards, spot.game) for cards in hands]
    primary = np.array([[value[0]] for value in values], dtype=np.int64)
    low = (np.array([[value[1]] for value in values], dtype=np.int64)
           if spot.game is Game.STUD8 else None)
    units = pot_units(Scores(primary, low))[:, 0]
    seats = {}
    for (seat, _), share in zip(spot.seats, units, strict=True):
        equity = int(share) / UNITS
        win = 1.0 if int(share) == UNITS else 0.0
        seats[seat] = SeatEquity(equity, win, equity - win, None)
    return LiveEquity(spot, seats, True, 1, None, True, None)


READING_CACHE: Final = 64
"""Readings remembered per process (by cards and game): a state is published after
every card with every seat's readings, and most seats' cards did not change since
the last one; a few hands' worth, so the cache is full (and stops growing) early."""


@lru_cache(maxsize=READING_CACHE)
def _hand_reading(cards: tuple[Card, ...], game: Game) -> str:
    return hand_reading(cards, game)


@lru_cache(maxsize=READING_CACHE)
def _showing_reading(up_cards: tuple[Card, ...], game: Game) -> str:
    return showing_reading(up_cards, game)


def secure_readings(hand: HandState | None, game: Game) -> dict[int, str]:
    """Every active seat's best hand now, in words (from down cards: secure only)."""
    if hand is None:
        return {}
    readings = {}
    for seat_no, seat in hand.seats.items():
        cards = list(dict.fromkeys(seat.all_cards))
        if seat.status is not SeatStatus.ACTIVE or not cards:
            continue
        if hand.community is not None and len(cards) == _FULL - 1:
            cards.append(hand.community)
        readings[seat_no] = _hand_reading(tuple(cards), game)
    return readings


def public_readings(up_cards: Mapping[int, list[Card]], game: Game) -> dict[int, str]:
    """What each seat's up cards show (``Pair of nines showing``): the public reading.

    Takes only up cards (seat -> its up cards), like :func:`showing_reading`; seats
    without an up card get none.
    """
    return {seat: _showing_reading(tuple(cards), game)
            for seat, cards in up_cards.items() if cards}


def warm_up(game: Game, *, equity: bool = True) -> None:
    """Build the tables the readings (and with ``equity`` the equity: about a second
    and 16 MB, once per process) need, so the first card of the day does not wait."""
    cards = [Card.parse(code) for code in ("As", "Kd", "Qh", "Jc", "9s", "2d", "2h")]
    hand_reading(cards, game)
    showing_reading(cards[:4], game)
    if equity:
        compute_equity({1: cards[:3], 2: cards[3:6]}, (), game, samples=1)


class StreetLog:
    """Readable equity lines for a hand log: shown to it after every input, it says
    each live seat's equity and hand once per street, when every live seat holds
    that street's cards (so five lines at most per hand)."""

    def __init__(self) -> None:
        """A log that has seen no hand yet."""
        self._game = Game.STUD
        self._hand: HandState | None = None
        self._streets: set[int] = set()

    def observe(self, hand: HandState | None, settings: TableSettings) -> list[str]:
        """The lines ``hand``'s new position adds (none unless a street just completed)."""
        if hand is not self._hand:
            self._hand, self._streets = hand, set()
        self._game = table_game(settings)
        spot = equity_spot(hand, self._game)
        if spot is None or hand is None:
            return []
        counts = {len(cards) for _, cards in spot.seats}
        if len(counts) != 1:
            return []
        street = counts.pop() + (spot.community is not None)
        if street in self._streets:
            return []  # the same street after a fold or a burn
        self._streets.add(street)
        return self._lines(street, spot, hand)

    def _lines(self, street: int, spot: EquitySpot, hand: HandState) -> list[str]:
        live = compute_live(spot)
        readings = secure_readings(hand, self._game)
        name = {3: "3rd", 4: "4th", 5: "5th", 6: "6th", 7: "7th"}[street]
        if live.problem is not None:
            return [f"  {name} street: no equity ({live.problem})"]
        parts = [f"seat {seat} {live.seats[seat].equity * 100:.2f}% ({readings.get(seat, '-')})"
                 for seat, _ in spot.seats]
        how = (f"exact, {live.runouts:,} run-outs" if live.exact
               else f"Monte Carlo, {live.runouts:,} samples, seed {live.seed}")
        lines = [f"  {name} street: " + ", ".join(parts) + f" [{how}]"]
        if live.outs is not None:
            seat, cards = live.outs
            lines.append(f"    outs for seat {seat}: {len(cards)}"
                         f" ({' '.join(card.code for card in cards) or 'none'})")
        return lines
