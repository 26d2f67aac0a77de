"""The error kinds the simulator can inject, as one registry.

A kind is one physical mistake (or one reader-level disturbance) with what the
table must do about it:

* **deal** kinds rewrite a clean hand's card events (:mod:`.errors`): the engine
  must raise the kind's alert code (at the kind's seat, when it names one);
* **console** kinds (hands whose players bet, ``--betting``) are mistakes at the
  dealer's console and the premature deal (:mod:`.console_errors`): the engine
  must raise the kind's alert code at the kind's seat;
* **reader** kinds disturb the emulated readers for the whole hand (daemon mode
  only): they stand for the physical world around the cards and must raise *no*
  dealing alert and put no wrong card on the table.

A new kind plugs in by adding one :class:`KindSpec` to :data:`KINDS`: a deal kind
with its injector (and, if a card-only table cannot see every placement of it,
a ``visible`` check), a reader kind with its reader settings.

Card-only tables (the daemon: no console, hands found from the cards) learn the
players from the first round, in any order, so a few placements of an error are
invisible to them by design; ``visible`` rejects those and the planner injects
the error somewhere else in the hand (see :func:`card_only_visible`).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from table_controller.domain.events import CardPlaced, TableEvent, UnknownTag
from table_controller.simulation.console_errors import ConsoleErrorKind, inject_console
from table_controller.simulation.errors import NEEDS_SEVENTH, ErrorKind, Injection, inject
from table_controller.simulation.physical import PhysicalDeal


class Level(StrEnum):
    """Where a kind acts: on the cards dealt, or on the readers."""

    DEAL = "deal"
    CONSOLE = "console"
    READER = "reader"


Injector = Callable[[PhysicalDeal, random.Random], Injection | None]
"""Rewrites a clean deal with one error, or None if the deal gives it no chance."""

VisibleCheck = Callable[[PhysicalDeal, Injection], bool]
"""Whether a card-only table can see this injection at all."""


@dataclass(frozen=True, slots=True)
class ReaderSettings:
    """How the emulated readers misbehave during a reader-kind hand."""

    dropout_probability: float = 0.0
    """Chance per scan that a tag on an antenna is not seen (stacked cards, a hand
    over the antenna): the firmware reports it gone, then back."""
    frame_drop_probability: float = 0.0
    """Chance that a whole frame is lost on the wire."""
    byte_error_rate: float = 0.0
    """Per-byte chance of a flipped byte (the frame then fails its CRC)."""


@dataclass(frozen=True, slots=True)
class KindSpec:
    """One injectable kind (module docstring)."""

    name: str
    level: Level
    stands_for: str
    """The physical mistake, in a dealer's words."""
    injector: Injector | None = None
    visible: VisibleCheck | None = None
    needs_seventh: bool = False
    """Deal the hand with no folds, so that it reaches 7th street."""
    readers: ReaderSettings | None = None

    @property
    def expects_alert(self) -> bool:
        """Deal and console kinds must be flagged; reader kinds must not raise anything."""
        return self.level is not Level.READER

    @property
    def needs_betting(self) -> bool:
        """Console kinds happen only at a table whose players bet (``--betting``)."""
        return self.level is Level.CONSOLE


def first_difference(deal: PhysicalDeal, injection: Injection) -> int:
    """Index (in the injected events) of the first event the injection changed."""
    for index, (a, b) in enumerate(zip(deal.events, injection.events, strict=False)):
        if a != b:
            return index
    return min(len(deal.events), len(injection.events))


def _first_round_over(events: Sequence[TableEvent], before: int) -> bool:
    """Whether some seat got its second card among ``events[:before]``: a card-only
    table stops learning players from the first round at that moment."""
    seen: set[int] = set()
    for event in events[:before]:
        if isinstance(event, CardPlaced) and event.zone.seat is not None:
            if event.zone.seat in seen:
                return True
            seen.add(event.zone.seat)
    return False


def card_only_visible(kind: ErrorKind) -> VisibleCheck | None:
    """The visibility check of ``kind`` at a card-only table (None: always visible).

    * ``out_of_order`` in the first round: the players are being learnt from that
      round in any order (two readers may report cards a scan cycle apart).
    * ``card_to_inactive_seat`` during the first round: the seat simply joins.
    * ``unknown_card`` before the first card: no hand is open yet, so the alert
      belongs to no hand (or to the previous one) and cannot be attributed.
    """
    if kind is ErrorKind.OUT_OF_ORDER:
        def out_of_order(deal: PhysicalDeal, injection: Injection) -> bool:
            index = first_difference(deal, injection)
            return _first_round_over(injection.events, index)
        return out_of_order
    if kind is ErrorKind.CARD_TO_INACTIVE_SEAT:
        def inactive(deal: PhysicalDeal, injection: Injection) -> bool:
            index = first_difference(deal, injection)
            return _first_round_over(injection.events, index)
        return inactive
    if kind is ErrorKind.UNKNOWN_CARD:
        def unknown(deal: PhysicalDeal, injection: Injection) -> bool:
            index = first_difference(deal, injection)
            assert isinstance(injection.events[index], UnknownTag)
            return any(isinstance(e, CardPlaced) for e in injection.events[:index])
        return unknown
    return None


def _deal_injector(kind: ErrorKind) -> Injector:
    def injector(deal: PhysicalDeal, rng: random.Random) -> Injection | None:
        return inject(deal, kind, rng)
    return injector


_STANDS_FOR: Final[dict[ErrorKind, str]] = {
    ErrorKind.HOLE_CARD_EXPOSED: "one of a player's two hole cards is dealt face up",
    ErrorKind.BOTH_HOLE_CARDS_EXPOSED: "both hole cards are dealt face up (dead hand)",
    ErrorKind.UPCARD_DEALT_DOWN: "a 3rd-6th street upcard is dealt face down",
    ErrorKind.LAST_CARD_EXPOSED: "a 7th-street card is dealt face up",
    ErrorKind.MISSING_BURN: "a street is dealt without burning a card first",
    ErrorKind.EXTRA_BURN: "two cards are burned for one street",
    ErrorKind.OUT_OF_ORDER: "two players' cards of a round are dealt in the wrong order",
    ErrorKind.CARD_TO_INACTIVE_SEAT: "a card is dealt to an empty seat",
    ErrorKind.UNKNOWN_CARD: "a foreign tag (a card of another deck, a chip) lands at a seat",
    ErrorKind.DUPLICATE_CARD: "a second deck's copy of a card on the table is dealt",
    ErrorKind.CARD_FROM_MUCK: "a mucked card is taken back and dealt to a seat",
    ErrorKind.TOO_MANY_CARDS: "a player is dealt an eighth card",
    ErrorKind.SHORT_HAND: "the dealer misses the last player on 7th street",
}

_CONSOLE_STANDS_FOR: Final[dict[ConsoleErrorKind, str]] = {
    ConsoleErrorKind.PREMATURE_DEAL:
        "the next street's first card is dealt before the betting round is complete",
    ConsoleErrorKind.OUT_OF_TURN: "an action is entered for a seat that is not to act",
    ConsoleErrorKind.ILLEGAL_BET: "a bet, raise or completion of a wrong amount is entered",
    ConsoleErrorKind.WRONG_BRING_IN: "a seat other than the low card is named to bring it in",
}


def _console_injector(kind: ConsoleErrorKind) -> Injector:
    def injector(deal: PhysicalDeal, rng: random.Random) -> Injection | None:
        return inject_console(deal, kind, rng)
    return injector


READER_FLICKER: Final = "reader_flicker"
WIRE_NOISE: Final = "wire_noise"

FLICKER_SETTINGS: Final = ReaderSettings(dropout_probability=0.2)
"""One scan in five misses each tag: far worse than a real board, and the presence
hold must still hide every gap."""

NOISE_SETTINGS: Final = ReaderSettings(frame_drop_probability=0.02, byte_error_rate=2e-4)
"""Two frames in a hundred lost, one byte in 5,000 flipped: a badly shielded cable."""


def _build() -> dict[str, KindSpec]:
    kinds: dict[str, KindSpec] = {}
    for kind in ErrorKind:
        kinds[kind.value] = KindSpec(
            name=kind.value,
            level=Level.DEAL,
            stands_for=_STANDS_FOR[kind],
            injector=_deal_injector(kind),
            visible=card_only_visible(kind),
            needs_seventh=kind in NEEDS_SEVENTH,
        )
    for console in ConsoleErrorKind:
        kinds[console.value] = KindSpec(
            name=console.value,
            level=Level.CONSOLE,
            stands_for=_CONSOLE_STANDS_FOR[console],
            injector=_console_injector(console),
        )
    kinds[READER_FLICKER] = KindSpec(
        name=READER_FLICKER,
        level=Level.READER,
        stands_for="tags missing from some scans (stacked cards, a hand over an antenna)",
        readers=FLICKER_SETTINGS,
    )
    kinds[WIRE_NOISE] = KindSpec(
        name=WIRE_NOISE,
        level=Level.READER,
        stands_for="a noisy USB cable: frames lost or corrupted on the wire",
        readers=NOISE_SETTINGS,
    )
    return kinds


KINDS: Final[dict[str, KindSpec]] = _build()
"""Every injectable kind by name (deal kinds first, in :class:`ErrorKind` order, then
console kinds, then reader kinds)."""

DEAL_KINDS: Final = tuple(name for name, spec in KINDS.items() if spec.level is Level.DEAL)
CONSOLE_KINDS: Final = tuple(
    name for name, spec in KINDS.items() if spec.level is Level.CONSOLE
)
READER_KINDS: Final = tuple(name for name, spec in KINDS.items() if spec.level is Level.READER)
