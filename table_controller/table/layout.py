"""Table layouts: which reader antenna watches which zone.

A table has 2..8 seats. Each seat has two zones (``seatN.down`` for hole cards,
``seatN.up`` for the face-up row) and the dealer area has ``burn``, ``muck`` and
``board``. Readers are USB-serial boards with a 16-bit reader id and antenna
ports 0..15; a layout file maps every (reader id, port) to one zone.

Several antennas may cover one zone (a long up-card row can need two), even
on different readers; presence tracking treats a tag seen by any of them as one
card in that zone. The reverse is not allowed: one antenna watches one zone.

The file format is documented in ``hardware/README.md``. :func:`load_layout`
validates everything and raises one :class:`ConfigError` naming file and key.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Final, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    PlainValidator,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from table_controller.domain.zones import BOARD, BURN, MAX_SEATS, MUCK, Zone
from table_controller.table.config_file import (
    ConfigError,
    KeyedValueError,
    error_from_validation,
    read_toml,
)

__all__ = [
    "MAX_PORT",
    "MAX_READER_ID",
    "MIN_SEATS",
    "ConfigError",
    "ReaderConfig",
    "TableLayout",
    "load_layout",
]

MIN_SEATS: Final = 2
"""A stud table needs at least two players."""

MAX_READER_ID: Final = 0xFFFF
"""Reader ids are unsigned 16-bit integers (the firmware's id field)."""

MAX_PORT: Final = 15
"""Antenna ports on a reader board are numbered 0..15."""

FEIG_MAX_ADR: Final = 254
FEIG_MAX_PORT: Final = 7
"""A FEIG ISC reader: bus address 0..254 (255 is broadcast), antenna outputs 0..7."""

DEALER_ZONES: Final = (BURN, MUCK, BOARD)
"""Zones every layout must cover besides the seats."""

_SEAT_ZONE = re.compile(r"seat(\d+)\.(down|up)")


def _zone_from_name(value: object) -> Zone:
    """Parse a zone name, with a sharper message for a seat number out of range."""
    if isinstance(value, Zone):
        return value
    if not isinstance(value, str):
        raise ValueError(f"expected a zone name as a string, got {value!r}")
    match = _SEAT_ZONE.fullmatch(value)
    if match and not 1 <= int(match.group(1)) <= MAX_SEATS:
        raise ValueError(f"zone {value!r}: seat {match.group(1)} is outside 1..{MAX_SEATS}")
    return Zone.parse(value)


def _port_from_key(value: object) -> int:
    """Antenna ports are TOML keys, hence strings: accept plain decimal 0..15 only."""
    if isinstance(value, bool):
        raise ValueError(f"antenna port must be a number 0..{MAX_PORT}, got {value!r}")
    if isinstance(value, str):
        if not value.isdecimal():
            raise ValueError(f"antenna port must be a number 0..{MAX_PORT}, got {value!r}")
        value = int(value)
    if not isinstance(value, int):
        raise ValueError(f"antenna port must be a number 0..{MAX_PORT}, got {value!r}")
    if not 0 <= value <= MAX_PORT:
        raise ValueError(f"antenna port {value} is outside 0..{MAX_PORT}")
    return value


# Serialized back to its name, so a layout dumps to the same shape it was read from.
ZoneName = Annotated[Zone, PlainValidator(_zone_from_name), PlainSerializer(lambda z: z.name)]
AntennaPort = Annotated[int, BeforeValidator(_port_from_key)]
ReaderId = Annotated[int, Field(strict=True, ge=0, le=MAX_READER_ID)]


class ReaderConfig(BaseModel):
    """One reader board: its id, the serial device it is on, and its antennas.

    ``device`` is a path (``/dev/serial/by-id/...``, stable across reboots) or
    any URL pyserial accepts; the daemon may override it (the demo uses ptys).
    """

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    id: ReaderId
    device: str = Field(min_length=1)
    description: str = ""
    kind: Literal["stud", "feig-isc"] = Field(
        default="stud",
        description="Which reader this is: 'stud' (our firmware, docs/protocol.md) or"
        " 'feig-isc' (a FEIG ISC HF reader polled in host mode, docs/readers-feig.md:"
        " its id is its bus address COM-ADR, 0..254, its ports its antenna outputs 0..7).")
    antennas: dict[AntennaPort, ZoneName] = Field(min_length=1)

    @model_validator(mode="after")
    def _fits_its_kind(self) -> ReaderConfig:
        if self.kind == "feig-isc":
            if self.id > FEIG_MAX_ADR:
                raise ValueError(f"a feig-isc reader's id is its COM-ADR, 0..{FEIG_MAX_ADR},"
                                 f" not {self.id}")
            too_high = sorted(port for port in self.antennas if port > FEIG_MAX_PORT)
            if too_high:
                raise ValueError(f"a feig-isc reader has antenna outputs 0..{FEIG_MAX_PORT}"
                                 f" (ANT_SEL), not {too_high[0]}")
        return self

    @field_validator("antennas", mode="before")
    @classmethod
    def _no_port_twice(cls, value: Any) -> Any:
        # TOML rejects a literal duplicate key itself, but "1" and "01" are
        # different keys naming the same port; catch that before pydantic
        # silently lets the second overwrite the first.
        if isinstance(value, Mapping):
            seen: dict[int, str] = {}
            for key in value:
                try:
                    port = _port_from_key(key)
                except ValueError:
                    continue  # reported against its own key by the key validator
                if port in seen:
                    raise KeyedValueError(
                        str(key), f"antenna port {port} is mapped twice (also as {seen[port]!r})"
                    )
                seen[port] = str(key)
        return value


class TableLayout(BaseModel):
    """A validated table layout with lookups from (reader id, port) to zone."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    name: str = ""
    seats: int = Field(strict=True, ge=MIN_SEATS, le=MAX_SEATS)
    readers: tuple[ReaderConfig, ...] = Field(min_length=1)

    _zone_of: dict[tuple[int, int], Zone] = PrivateAttr(default_factory=dict)
    _antennas_of: dict[Zone, tuple[tuple[int, int], ...]] = PrivateAttr(default_factory=dict)
    _reader_by_id: dict[int, ReaderConfig] = PrivateAttr(default_factory=dict)

    @model_validator(mode="after")
    def _check_and_index(self) -> TableLayout:
        devices: dict[str, int] = {}
        antennas_of: dict[Zone, list[tuple[int, int]]] = {}
        for index, reader in enumerate(self.readers):
            if reader.id in self._reader_by_id:
                raise KeyedValueError(
                    f"readers[{index}].id", f"reader id {reader.id} is defined twice"
                )
            if reader.device in devices:
                raise KeyedValueError(
                    f"readers[{index}].device",
                    f"device {reader.device!r} is also used by reader {devices[reader.device]}",
                )
            self._reader_by_id[reader.id] = reader
            devices[reader.device] = reader.id
            for port, zone in reader.antennas.items():
                if zone.seat is not None and zone.seat > self.seats:
                    raise KeyedValueError(
                        f"readers[{index}].antennas.{port}",
                        f"zone {zone.name!r} is beyond this table's {self.seats} seats",
                    )
                self._zone_of[(reader.id, port)] = zone
                antennas_of.setdefault(zone, []).append((reader.id, port))
        for seat in range(1, self.seats + 1):
            for zone in (Zone.down(seat), Zone.up(seat)):
                if zone not in antennas_of:
                    raise KeyedValueError(
                        "readers", f"no antenna covers {zone.name!r} (seat {seat} of {self.seats})"
                    )
        for zone in DEALER_ZONES:
            if zone not in antennas_of:
                raise KeyedValueError("readers", f"no antenna covers dealer zone {zone.name!r}")
        self._antennas_of = {zone: tuple(ports) for zone, ports in antennas_of.items()}
        return self

    def zone_for(self, reader_id: int, antenna: int) -> Zone | None:
        """The zone antenna ``antenna`` of reader ``reader_id`` watches, or None if unmapped."""
        return self._zone_of.get((reader_id, antenna))

    def reader(self, reader_id: int) -> ReaderConfig | None:
        """The reader with id ``reader_id``, or None if the layout has no such reader."""
        return self._reader_by_id.get(reader_id)

    def zones_of_reader(self, reader_id: int) -> tuple[Zone, ...]:
        """The distinct zones reader ``reader_id`` watches, in port order (empty if unknown)."""
        reader = self._reader_by_id.get(reader_id)
        if reader is None:
            return ()
        return tuple(dict.fromkeys(zone for _, zone in sorted(reader.antennas.items())))

    def antennas_of(self, zone: Zone) -> tuple[tuple[int, int], ...]:
        """Every (reader id, port) covering ``zone``, in file order (empty if none)."""
        return self._antennas_of.get(zone, ())

    @property
    def zones(self) -> tuple[Zone, ...]:
        """Every zone this table has: the seats' zones in seat order, then the dealer's."""
        seat_zones = [z for s in range(1, self.seats + 1) for z in (Zone.down(s), Zone.up(s))]
        return (*seat_zones, *DEALER_ZONES)

    @property
    def antenna_map(self) -> Mapping[tuple[int, int], Zone]:
        """The whole (reader id, port) -> zone map (read-only view)."""
        return dict(self._zone_of)


def load_layout(path: Path | str) -> TableLayout:
    """Load and validate the layout file at ``path``.

    Raises :class:`ConfigError` (one line: file, key, problem) on any error:
    unreadable file, bad TOML, unknown key or zone, seat outside 1..8 or beyond
    ``seats``, reader id or device twice, port outside 0..15 or mapped twice, a
    seat without its down or up zone, a missing dealer zone.
    """
    data = read_toml(path)
    try:
        return TableLayout.model_validate(data)
    except ValidationError as err:
        raise error_from_validation(path, err) from None
