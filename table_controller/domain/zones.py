"""Zones: the places on the table a reader antenna watches (docs/conformance.md).

``seatN.down`` and ``seatN.up`` for seats 1..8, plus the dealer's ``burn``,
``muck`` and ``board``. Zones are interned like cards.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Final

MAX_SEATS: Final = 8
"""Seven Card Stud is dealt to at most eight players (docs/rules.md)."""


class ZoneKind(Enum):
    """What kind of place a zone is."""

    DOWN = "down"
    UP = "up"
    BURN = "burn"
    MUCK = "muck"
    BOARD = "board"


_KIND_NUMBER: Final = {"down": 0, "up": 1, "burn": 2, "muck": 3, "board": 4}


class ZoneParseError(ValueError):
    """A zone name is not one of the names in docs/conformance.md."""


@dataclass(frozen=True, slots=True)
class Zone:
    """A zone: ``kind`` plus the seat (1..8) for ``down``/``up`` zones, else ``None``."""

    kind: ZoneKind
    seat: int | None = None

    def __hash__(self) -> int:
        # Cheaper than the generated hash of (enum, seat), which runs Enum.__hash__.
        return (self.seat or 0) * 8 + _KIND_NUMBER[self.kind.value]

    @property
    def name(self) -> str:
        """The zone's name as written in scripts, layouts and topics."""
        if self.seat is None:
            return self.kind.value
        return f"seat{self.seat}.{self.kind.value}"

    @property
    def is_seat(self) -> bool:
        """True for a seat's ``down`` or ``up`` zone."""
        return self.seat is not None

    def __str__(self) -> str:
        return self.name

    @staticmethod
    def parse(name: str) -> Zone:
        """Return the zone called ``name``; raises :class:`ZoneParseError` if unknown."""
        zone = _BY_NAME.get(name)
        if zone is None:
            raise ZoneParseError(
                f"unknown zone {name!r}: expected seatN.down or seatN.up (N = 1..{MAX_SEATS}),"
                " burn, muck or board"
            )
        return zone

    @staticmethod
    def down(seat: int) -> Zone:
        """Seat ``seat``'s face-down zone."""
        return _BY_NAME[f"seat{seat}.down"]

    @staticmethod
    def up(seat: int) -> Zone:
        """Seat ``seat``'s face-up zone."""
        return _BY_NAME[f"seat{seat}.up"]


def _all_zones() -> tuple[Zone, ...]:
    seats = [
        Zone(kind, seat)
        for seat in range(1, MAX_SEATS + 1)
        for kind in (ZoneKind.DOWN, ZoneKind.UP)
    ]
    return (*seats, Zone(ZoneKind.BURN), Zone(ZoneKind.MUCK), Zone(ZoneKind.BOARD))


ALL_ZONES: Final[tuple[Zone, ...]] = _all_zones()
"""Every zone name the contract knows, seats first."""

_BY_NAME: Final[dict[str, Zone]] = {zone.name: zone for zone in ALL_ZONES}

BURN: Final = _BY_NAME["burn"]
MUCK: Final = _BY_NAME["muck"]
BOARD: Final = _BY_NAME["board"]
