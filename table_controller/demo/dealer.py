"""A virtual dealer: random clean hands dealt through emulated readers, in real time.

Theory of operation
-------------------
:func:`plan_hand` is pure: from a seeded :class:`random.Random` it picks 2-8
players, deals a clean hand with :func:`deal_random` (folds go to the muck),
then adds what a dealer does once the hand is over: the seats are cleared (see
:func:`_clear_motions`: a showdown or a hand won by folds), and the muck, burn
pile and board are gathered to be shuffled. Each step is a :class:`Motion`: the
events of one movement of the dealer's hand (a card dealt, a card moved to the
muck, a pile scooped up) and the pause after it, at speed 1.

:class:`VirtualDealer` plays the plans on an :class:`EmulatedTable` from its own
thread. The daemon has no console: a hand starts with the first card on a clear
table and ends when the seats are cleared. So once the seats are cleared the
dealer waits until the table, as published on MQTT, shows the hand's result
(and, after a hand won by folds, no card at any seat); only then does it gather
the piles, pause to "shuffle" (longer than the daemon's presence hold, so the
gathered cards are gone before the next deal), and deal the next hand.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final, Protocol

from table_controller.domain.cards import Card
from table_controller.domain.events import CardPlaced, CardRemoved
from table_controller.domain.zones import MAX_SEATS, MUCK, Zone, ZoneKind
from table_controller.simulation.emulated_table import EmulatedTable
from table_controller.simulation.physical import PhysicalDeal, deal_random

CARD_PAUSE: Final = (0.4, 0.6)
"""Seconds between two cards dealt, at speed 1 (drawn uniformly)."""

MUCK_PAUSE: Final = (0.15, 0.25)
"""Seconds between two cards pushed into the muck: quicker than dealing."""

SCRAMBLE_PAUSE: Final = 1.5
"""Seconds to pick up the burn pile and scramble it with the last card (rule 15)."""

SEAT_PAUSE: Final = 0.3
"""Seconds between picking up two seats' hands at the end of a hand."""

GATHER_PAUSE: Final = 0.3
"""Seconds after scooping the muck, burn pile and board off the table."""

SHUFFLE_PAUSE: Final = 2.0
"""Seconds of "shuffling" between hands, at speed 1."""

CLEAR_TIMEOUT: Final = 90.0
"""Seconds to wait for the table to show clear before giving up on the daemon."""

DEFAULT_FOLD_CHANCE: Final = 0.15
"""Chance that a player folds after each street's deal."""

_PILES: Final = (ZoneKind.MUCK, ZoneKind.BURN, ZoneKind.BOARD)

PhysicalEvent = CardPlaced | CardRemoved
"""What a dealer's hands do to the table: put a card on a zone, take one off."""


@dataclass(frozen=True, slots=True)
class Motion:
    """One movement of the dealer: ``events`` applied at once, then ``pause`` seconds.

    ``settle``: cards left the table; whatever the speed, the dealer then waits
    for the daemon to notice (its presence hold) before the next motion.
    """

    events: tuple[PhysicalEvent, ...]
    pause: float
    settle: bool = False


@dataclass(frozen=True, slots=True)
class HandPlan:
    """A whole hand as the dealer will play it: the deal, clearing the seats, and
    gathering the dealer's piles."""

    deal: PhysicalDeal
    motions: tuple[Motion, ...]
    """The deal, then clearing the seats."""
    gather: Motion
    """Scooping the muck, burn pile and board, once the hand's result is out: not
    before, or a card pushed into the muck an instant earlier could leave it
    before its reader saw it arrive."""

    @property
    def all_motions(self) -> tuple[Motion, ...]:
        """Every motion of the hand in order, the gathering last."""
        return (*self.motions, self.gather)

    @property
    def showdown(self) -> bool:
        """Whether two or more hands are live at the end (the result comes when the
        seats are cleared; otherwise it came with the last fold)."""
        return len(self.deal.live_seats) >= 2

    @property
    def players(self) -> tuple[int, ...]:
        """Seats dealt in."""
        return self.deal.seats

    @property
    def cards_dealt(self) -> int:
        """How many cards were dealt to seats, the burn pile and the board."""
        return sum(
            1 for m in self.all_motions for e in m.events
            if isinstance(e, CardPlaced) and e.zone.kind is not ZoneKind.MUCK
        )


def plan_hand(
    rng: random.Random,
    *,
    seats: int = MAX_SEATS,
    fold_chance: float = DEFAULT_FOLD_CHANCE,
    players: int | None = None,
) -> HandPlan:
    """A random clean hand for ``players`` (default: 2..``seats`` at random) of the
    ``seats`` seats, dealt and cleared (pure)."""
    count = rng.randint(2, seats) if players is None else players
    chosen = sorted(rng.sample(range(1, seats + 1), count))
    deal = deal_random(chosen, rng, fold_chance=fold_chance)
    motions = _deal_motions(deal, rng)
    motions += _clear_motions(deal, rng)
    return HandPlan(deal, tuple(motions), _gather_motion(motions))


def _deal_motions(deal: PhysicalDeal, rng: random.Random) -> list[Motion]:
    """The deal as motions: a removal followed by the same card's placement is one move."""
    motions: list[Motion] = []
    # A clean physical deal is made of card placements and removals only.
    events = [e for e in deal.events if isinstance(e, CardPlaced | CardRemoved)]
    index = 0
    while index < len(events):
        event = events[index]
        following = events[index + 1] if index + 1 < len(events) else None
        if following is not None and _is_move(event, following):
            motions.append(Motion((event, following), rng.uniform(*MUCK_PAUSE)))
            index += 2
            continue
        if isinstance(event, CardPlaced):
            motions.append(Motion((event,), rng.uniform(*CARD_PAUSE)))
            index += 1
            continue
        # Cards taken off the table for good: rule 15's burn pile picked up to be
        # scrambled with the last card. The daemon reports a removal only after
        # its presence hold, so the next card waits until it has (settle).
        taken: list[PhysicalEvent] = [event]
        index += 1
        while index < len(events) and isinstance(events[index], CardRemoved):
            following = events[index + 1] if index + 1 < len(events) else None
            if _is_move(events[index], following):
                break
            taken.append(events[index])
            index += 1
        motions.append(Motion(tuple(taken), SCRAMBLE_PAUSE, settle=True))
    return motions


def _is_move(event: PhysicalEvent, following: PhysicalEvent | None) -> bool:
    """Whether ``event`` and ``following`` move one card from one zone to another.

    A card taken off a zone and put back on the *same* zone (rule 15: a burn card
    picked up with the burn pile and burned again) is not a move: done at once it
    would be invisible to the readers, so it stays two motions.
    """
    return (
        isinstance(event, CardRemoved)
        and isinstance(following, CardPlaced)
        and following.card == event.card
        and following.zone != event.zone
    )


def _clear_motions(deal: PhysicalDeal, rng: random.Random) -> list[Motion]:
    """The dealer clears the seats once the deal is over.

    Several live hands mean a showdown: each is picked up off its seat, one seat
    at a time, straight to the dealer. They must not go through the muck: a hand
    mucked while another is live is a fold, while hands leaving the table
    together are a showdown, settled when the last one leaves. A hand won by
    folds already has its result, so the winner's cards are pushed into the muck
    like the rest (after the result, mucking is clearing, not folding).
    """
    motions = []
    if len(deal.live_seats) < 2:
        for seat in deal.live_seats:
            for zone, cards in ((Zone.down(seat), deal.down(seat)),
                                (Zone.up(seat), deal.up(seat))):
                for card in cards:
                    motions.append(Motion((CardRemoved(zone, card), CardPlaced(MUCK, card)),
                                          rng.uniform(*MUCK_PAUSE)))
        return motions
    for seat in deal.live_seats:
        removals = tuple(
            CardRemoved(zone, card)
            for zone, cards in ((Zone.down(seat), deal.down(seat)), (Zone.up(seat), deal.up(seat)))
            for card in cards
        )
        motions.append(Motion(removals, SEAT_PAUSE))
    return motions


def _gather_motion(motions: Sequence[Motion]) -> Motion:
    """Scoop the muck, burn pile and board off the table: every card that
    ``motions`` left lying there."""
    where: dict[Card, Zone] = {}
    for motion in motions:
        for event in motion.events:
            if isinstance(event, CardPlaced):
                where[event.card] = event.zone
            elif where.get(event.card) == event.zone:
                del where[event.card]
    removals = tuple(
        CardRemoved(zone, card) for card, zone in where.items() if zone.kind in _PILES
    )
    return Motion(removals, GATHER_PAUSE, settle=True)


class TableWatch(Protocol):
    """What the dealer needs to know of the table as the daemon publishes it."""

    def hand_cleared(self, hand_results: int, *, empty_seats: bool) -> bool:
        """True when ``hand_results`` hands have ended and, if ``empty_seats``, the
        published state shows no card at any seat."""


class VirtualDealer:
    """Deals planned hands on ``table`` from a thread (see the module docstring).

    ``hands=None`` deals until :meth:`stop`. ``speed`` divides every pause.
    ``players`` fixes the number of players (default: 2-8 at random per hand).
    ``settle_time`` is the least pause after cards leave the table (the daemon's
    presence hold plus a margin): see :attr:`Motion.settle`.
    ``say`` receives one line per hand dealt. ``failed`` is set (with a reason
    in :attr:`failure`) when the table did not clear in time.
    """

    def __init__(
        self,
        table: EmulatedTable,
        watch: TableWatch,
        *,
        seed: int,
        speed: float = 1.0,
        hands: int | None = None,
        settle_time: float = 0.0,
        fold_chance: float = DEFAULT_FOLD_CHANCE,
        players: int | None = None,
        clear_timeout: float = CLEAR_TIMEOUT,
        say: Callable[[str], None] | None = None,
    ) -> None:
        if speed <= 0:
            raise ValueError("speed must be positive")
        self.table = table
        self.watch = watch
        self.speed = speed
        self.hands = hands
        self.settle_time = settle_time
        self.fold_chance = fold_chance
        self.players = players
        self.clear_timeout = clear_timeout
        self._rng = random.Random(seed)
        self._say = say or (lambda _line: None)
        self._stop = threading.Event()
        self.done = threading.Event()
        """Set when the dealer's thread has finished (all hands, stop, or failure)."""
        self.failure: str | None = None
        self.hands_dealt = 0
        self.hands_completed = 0
        self.on_motion: Callable[[Motion], None] | None = None
        """Called after each motion is applied (the benchmark records cards)."""
        self._thread = threading.Thread(target=self._run, name="virtual-dealer", daemon=True)

    def start(self) -> VirtualDealer:
        """Start dealing."""
        self._thread.start()
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Stop after the current motion and wait for the thread."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                if self.hands is not None and self.hands_dealt >= self.hands:
                    return
                plan = plan_hand(self._rng, seats=self.table.layout.seats,
                                 fold_chance=self.fold_chance, players=self.players)
                self.hands_dealt += 1
                self._say(
                    f"dealer: hand {self.hands_dealt}, {len(plan.players)} players "
                    f"(seats {', '.join(str(s) for s in plan.players)})"
                )
                if not self._play(plan.motions):
                    return
                if not self._wait_clear(self.hands_dealt, empty_seats=not plan.showdown):
                    return
                if not self._play([plan.gather]):
                    return
                self.hands_completed += 1
                shuffle = max(SHUFFLE_PAUSE / self.speed, self.settle_time)
                if self.hands is not None and self.hands_dealt >= self.hands:
                    return
                self._stop.wait(shuffle)
        finally:
            self.done.set()

    def _play(self, motions: Sequence[Motion]) -> bool:
        for motion in motions:
            if self._stop.is_set():
                return False
            self.table.apply_all(motion.events)
            if self.on_motion is not None:
                self.on_motion(motion)
            pause = motion.pause / self.speed
            self._stop.wait(max(pause, self.settle_time) if motion.settle else pause)
        return True

    def _wait_clear(self, hand_results: int, *, empty_seats: bool) -> bool:
        """Poll the published table until the hand is over and cleared; False on stop
        or timeout. A showdown's result is published when the last hand leaves the
        table, and its hands stay on show in the state, so only a hand won by folds
        (its result came earlier) waits for the state's seats to empty."""
        deadline = time.monotonic() + self.clear_timeout
        while not self.watch.hand_cleared(hand_results, empty_seats=empty_seats):
            if self._stop.wait(0.05):
                return False
            if time.monotonic() >= deadline:
                self.failure = (
                    f"the table did not show hand {hand_results}'s result and a clear"
                    f" table within {self.clear_timeout:.0f} s"
                )
                return False
        return True
