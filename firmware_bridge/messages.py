"""Message types of the reader link and their payload encodings (docs/protocol.md).

Each message is a frozen dataclass that validates its fields on construction, so a
:class:`Message` in hand is always encodable and always within the physical limits
(antenna 0..15, UID 4..10 bytes as uppercase hex, reader id u16).
:func:`encode_payload` and :func:`decode_payload` are the only places that know the
byte layout; frames around them live in :mod:`firmware_bridge.frames`.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import Enum, IntEnum
from typing import Final

from firmware_bridge.frames import PROTOCOL_VERSION

MAX_ANTENNAS: Final = 16
"""A reader's RF multiplexer has at most 16 ports, numbered 0..15."""

ALL_ANTENNAS: Final = 0xFF
"""Antenna byte meaning "every antenna" (REQUEST_INVENTORY) or "no antenna" (READER_FAULT)."""

MIN_UID_BYTES: Final = 4
MAX_UID_BYTES: Final = 10
"""ISO 14443A UIDs are 4, 7 or 10 bytes; ISO 15693 UIDs are 8 bytes."""

MAX_INVENTORY_TAGS: Final = 64
"""Most tags one INVENTORY may list: a full deck on one antenna, with room to spare."""

MIN_RSSI_DBM: Final = -127
MAX_RSSI_DBM: Final = 20
"""A read's strength (RSSI) travels as a signed byte in dBm, -127..+20: below -127 no
HF front end reports, above +20 dBm no tag answers (the reader's own carrier is
about +23 dBm). Anything else on the wire is a malformed frame."""

RSSI_FLAG: Final = 0x80
"""Set in the antenna byte of TAG_ARRIVED / INVENTORY: strengths follow the UIDs.

Declared up front rather than guessed from the length: a COBS-framed body with a
zero byte appended (one stray 0x01 on the line before a delimiter) still passes
CRC-16/CCITT-FALSE, so "one byte more than the UIDs" must not be enough to read a
strength; without the flag such a frame is malformed, as it always was."""

NO_RSSI: Final = -128
"""The strength byte 0x80: "not measured" for one tag of an INVENTORY that carries
strengths (decoded as ``None``)."""

MAX_FAULT_TEXT_BYTES: Final = 64
"""Longest READER_FAULT text, in UTF-8 bytes: a short human hint, not a log."""

U16_MAX: Final = 0xFFFF
U32_MAX: Final = 0xFFFF_FFFF


class MessageType(IntEnum):
    """Message type byte. Reader-to-host types are below 0x80, host-to-reader above."""

    HELLO = 0x01
    TAG_ARRIVED = 0x02
    TAG_LEFT = 0x03
    INVENTORY = 0x04
    HEARTBEAT = 0x05
    READER_FAULT = 0x06
    IDENTIFY = 0x81
    REQUEST_INVENTORY = 0x82


class Direction(Enum):
    """Which way a message travels; a decoder accepts one direction only."""

    READER_TO_HOST = "reader_to_host"
    HOST_TO_READER = "host_to_reader"

    def accepts(self, msg_type: int) -> bool:
        """True if ``msg_type`` travels in this direction."""
        return (msg_type < 0x80) == (self is Direction.READER_TO_HOST)


class FaultCode(IntEnum):
    """Known READER_FAULT codes. Unknown codes still decode (as plain ``int``)."""

    ANTENNA_OPEN = 0x01
    """Antenna port open circuit (cable off, antenna broken)."""
    ANTENNA_SHORT = 0x02
    """Antenna port short circuit or badly detuned (metal near the antenna)."""
    RF_FRONTEND = 0x03
    """The HF front end (PN5180 / ST25R3911B) stopped answering or reported an error."""
    EVENT_OVERFLOW = 0x04
    """The firmware's event queue overflowed: events were lost, reconcile by inventory."""
    OVER_TEMPERATURE = 0x05
    """RF power stage too hot; the reader throttles scanning."""
    WATCHDOG_RESET = 0x06
    """The reader rebooted after a watchdog reset (sent after HELLO)."""


class MessageError(ValueError):
    """A message field is out of range (raised on construction and by the encoder)."""


class PayloadError(ValueError):
    """A payload does not decode. ``truncated`` says it ended early (else: malformed)."""

    def __init__(self, message: str, *, truncated: bool) -> None:
        super().__init__(message)
        self.truncated = truncated


# ---------------------------------------------------------------------------
# Field validation


def normalize_uid(uid: str | bytes) -> str:
    """Return ``uid`` as uppercase hex; raises :class:`MessageError` if not 4..10 bytes."""
    if isinstance(uid, bytes):
        raw = uid
    else:
        try:
            raw = bytes.fromhex(uid)
        except ValueError as exc:
            raise MessageError(f"tag UID {uid!r} is not hex") from exc
    if not MIN_UID_BYTES <= len(raw) <= MAX_UID_BYTES:
        raise MessageError(
            f"tag UID of {len(raw)} bytes; expected {MIN_UID_BYTES}..{MAX_UID_BYTES}"
        )
    return raw.hex().upper()


def _check_antenna(antenna: int) -> None:
    if not 0 <= antenna < MAX_ANTENNAS:
        raise MessageError(f"antenna {antenna} outside 0..{MAX_ANTENNAS - 1}")


def _check_uint(name: str, value: int, maximum: int) -> None:
    if not 0 <= value <= maximum:
        raise MessageError(f"{name} {value} outside 0..{maximum}")


def _check_rssi(rssi: int | None) -> None:
    if rssi is not None and (isinstance(rssi, bool) or not isinstance(rssi, int)
                             or not MIN_RSSI_DBM <= rssi <= MAX_RSSI_DBM):
        raise MessageError(f"strength {rssi!r} dBm outside {MIN_RSSI_DBM}..{MAX_RSSI_DBM}")


def _check_uid(uid: str) -> None:
    if normalize_uid(uid) != uid:
        raise MessageError(f"tag UID {uid!r} must be uppercase hex of 4..10 bytes")


# ---------------------------------------------------------------------------
# Messages


@dataclass(frozen=True, slots=True)
class Hello:
    """Reader identity, sent at boot, on replug and in answer to IDENTIFY."""

    reader_id: int
    firmware_version: tuple[int, int, int]
    antenna_count: int
    protocol_version: int = PROTOCOL_VERSION

    def __post_init__(self) -> None:
        _check_uint("reader id", self.reader_id, U16_MAX)
        _check_uint("protocol version", self.protocol_version, 0xFF)
        if not 1 <= self.antenna_count <= MAX_ANTENNAS:
            raise MessageError(f"antenna count {self.antenna_count} outside 1..{MAX_ANTENNAS}")
        if len(self.firmware_version) != 3:
            raise MessageError("firmware version is (major, minor, patch)")
        for part in self.firmware_version:
            _check_uint("firmware version part", part, 0xFF)


@dataclass(frozen=True, slots=True)
class TagArrived:
    """A tag appeared on ``antenna`` (after the firmware's own debounce, if any).

    ``rssi``: the read's strength in dBm where the reader measures one (an optional
    trailing byte on the wire; None from a reader that does not)."""

    antenna: int
    uid: str
    rssi: int | None = None

    def __post_init__(self) -> None:
        _check_antenna(self.antenna)
        _check_uid(self.uid)
        _check_rssi(self.rssi)


@dataclass(frozen=True, slots=True)
class TagLeft:
    """A tag is no longer seen on ``antenna``."""

    antenna: int
    uid: str

    def __post_init__(self) -> None:
        _check_antenna(self.antenna)
        _check_uid(self.uid)


@dataclass(frozen=True, slots=True)
class Inventory:
    """The complete list of tags the reader currently reports on one antenna.

    ``scan_cycle`` is the reader's scan-cycle counter when the list was taken.
    ``rssi``: one strength (dBm, or None: not measured) per UID, in the same order,
    where the reader measures them (an optional trailing block on the wire).
    """

    antenna: int
    scan_cycle: int
    uids: tuple[str, ...]
    rssi: tuple[int | None, ...] | None = None

    def __post_init__(self) -> None:
        _check_antenna(self.antenna)
        _check_uint("scan cycle", self.scan_cycle, U32_MAX)
        if len(self.uids) > MAX_INVENTORY_TAGS:
            raise MessageError(f"{len(self.uids)} tags exceed {MAX_INVENTORY_TAGS} per inventory")
        for uid in self.uids:
            _check_uid(uid)
        if self.rssi is not None:
            if len(self.rssi) != len(self.uids):
                raise MessageError(f"{len(self.rssi)} strengths for {len(self.uids)} tags")
            for rssi in self.rssi:
                _check_rssi(rssi)

    def strengths(self) -> dict[str, float]:
        """The measured strength (dBm) per UID; empty from a reader that measures none."""
        if self.rssi is None:
            return {}
        return {uid: float(r) for uid, r in zip(self.uids, self.rssi, strict=True)
                if r is not None}


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """Periodic liveness: milliseconds since boot (wraps after 49.7 days) and scan cycles."""

    uptime_ms: int
    scan_cycles: int

    def __post_init__(self) -> None:
        _check_uint("uptime", self.uptime_ms, U32_MAX)
        _check_uint("scan cycles", self.scan_cycles, U32_MAX)


@dataclass(frozen=True, slots=True)
class ReaderFault:
    """A reader-side fault: ``code`` (see :class:`FaultCode`), antenna or ``None``, short text."""

    code: int
    antenna: int | None
    text: str

    def __post_init__(self) -> None:
        _check_uint("fault code", self.code, 0xFF)
        if self.antenna is not None:
            _check_antenna(self.antenna)
        if len(self.text.encode("utf-8")) > MAX_FAULT_TEXT_BYTES:
            raise MessageError(f"fault text longer than {MAX_FAULT_TEXT_BYTES} UTF-8 bytes")


@dataclass(frozen=True, slots=True)
class Identify:
    """Host to reader: "who are you?". The reader answers with :class:`Hello`."""

    protocol_version: int = PROTOCOL_VERSION

    def __post_init__(self) -> None:
        _check_uint("protocol version", self.protocol_version, 0xFF)


@dataclass(frozen=True, slots=True)
class RequestInventory:
    """Host to reader: send INVENTORY for ``antenna``, or for every antenna if ``None``."""

    antenna: int | None = None

    def __post_init__(self) -> None:
        if self.antenna is not None:
            _check_antenna(self.antenna)


ReaderMessage = Hello | TagArrived | TagLeft | Inventory | Heartbeat | ReaderFault
"""Messages a reader sends."""

HostMessage = Identify | RequestInventory
"""Messages the host sends."""

Message = ReaderMessage | HostMessage
"""Any message of the protocol."""


# ---------------------------------------------------------------------------
# Payload layouts (big-endian)

_HELLO: Final = struct.Struct(">HBBBBB")  # reader id, protocol, antennas, fw major/minor/patch
_HEARTBEAT: Final = struct.Struct(">II")  # uptime ms, scan cycles
_INVENTORY_HEAD: Final = struct.Struct(">BIB")  # antenna, scan cycle, tag count
_FAULT_HEAD: Final = struct.Struct(">BBB")  # code, antenna (0xFF none), text length


def _uid_field(uid: str) -> bytes:
    raw = bytes.fromhex(uid)
    return bytes((len(raw),)) + raw


def _rssi_byte(rssi: int | None) -> bytes:
    return (NO_RSSI if rssi is None else rssi).to_bytes(1, "big", signed=True)


def message_type(message: Message) -> MessageType:
    """The type byte of ``message``."""
    return _TYPE_OF[type(message)]


def encode_payload(message: Message) -> bytes:
    """The payload bytes of ``message`` (fields were validated when it was built)."""
    match message:
        case Hello():
            major, minor, patch = message.firmware_version
            return _HELLO.pack(
                message.reader_id,
                message.protocol_version,
                message.antenna_count,
                major,
                minor,
                patch,
            )
        case TagArrived():
            if message.rssi is None:
                return bytes((message.antenna,)) + _uid_field(message.uid)
            return (bytes((message.antenna | RSSI_FLAG,)) + _uid_field(message.uid)
                    + _rssi_byte(message.rssi))
        case TagLeft():
            return bytes((message.antenna,)) + _uid_field(message.uid)
        case Inventory():
            flag = 0 if message.rssi is None else RSSI_FLAG
            head = _INVENTORY_HEAD.pack(message.antenna | flag, message.scan_cycle,
                                        len(message.uids))
            body = head + b"".join(_uid_field(uid) for uid in message.uids)
            if message.rssi is None:
                return body
            return body + b"".join(_rssi_byte(r) for r in message.rssi)
        case Heartbeat():
            return _HEARTBEAT.pack(message.uptime_ms, message.scan_cycles)
        case ReaderFault():
            text = message.text.encode("utf-8")
            antenna = ALL_ANTENNAS if message.antenna is None else message.antenna
            return _FAULT_HEAD.pack(message.code, antenna, len(text)) + text
        case Identify():
            return bytes((message.protocol_version,))
        case RequestInventory():
            return bytes((ALL_ANTENNAS if message.antenna is None else message.antenna,))


class _Reader:
    """A cursor over a payload that raises :class:`PayloadError` instead of IndexError."""

    __slots__ = ("data", "offset")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.offset = 0

    def take(self, count: int) -> bytes:
        end = self.offset + count
        if end > len(self.data):
            raise PayloadError(
                f"payload ends at {len(self.data)} bytes, needs {end}", truncated=True
            )
        chunk = self.data[self.offset : end]
        self.offset = end
        return chunk

    def unpack(self, layout: struct.Struct) -> tuple[int, ...]:
        return layout.unpack(self.take(layout.size))

    def byte(self) -> int:
        return self.take(1)[0]

    def uid(self) -> str:
        length = self.byte()
        if not MIN_UID_BYTES <= length <= MAX_UID_BYTES:
            raise PayloadError(f"UID length {length} outside 4..10", truncated=False)
        return self.take(length).hex().upper()

    def antenna(self) -> int:
        return self.check_antenna(self.byte())

    def check_antenna(self, value: int) -> int:
        if value >= MAX_ANTENNAS:
            raise PayloadError(f"antenna {value} outside 0..15", truncated=False)
        return value

    def rssi(self, *, allow_none: bool) -> int | None:
        value = int.from_bytes(self.take(1), "big", signed=True)
        if value == NO_RSSI and allow_none:
            return None
        if not MIN_RSSI_DBM <= value <= MAX_RSSI_DBM:
            raise PayloadError(f"strength {value} dBm outside {MIN_RSSI_DBM}..{MAX_RSSI_DBM}",
                               truncated=False)
        return value

    def finish(self) -> None:
        extra = len(self.data) - self.offset
        if extra:
            raise PayloadError(f"{extra} unexpected bytes after the payload", truncated=False)


def decode_payload(msg_type: MessageType, payload: bytes) -> Message:
    """Decode ``payload`` of a known type; raises :class:`PayloadError` (truncated/malformed)."""
    reader = _Reader(payload)
    message: Message
    try:
        match msg_type:
            case MessageType.HELLO:
                reader_id, protocol, antennas, major, minor, patch = reader.unpack(_HELLO)
                message = Hello(reader_id, (major, minor, patch), antennas, protocol)
            case MessageType.TAG_ARRIVED:
                first = reader.byte()
                antenna, uid = reader.check_antenna(first & ~RSSI_FLAG), reader.uid()
                # The flag says the read's strength follows (a reader without one
                # sends the payload as before).
                rssi = reader.rssi(allow_none=False) if first & RSSI_FLAG else None
                message = TagArrived(antenna, uid, rssi)
            case MessageType.TAG_LEFT:
                message = TagLeft(reader.antenna(), reader.uid())
            case MessageType.INVENTORY:
                first, cycle, count = reader.unpack(_INVENTORY_HEAD)
                antenna = first & ~RSSI_FLAG
                if antenna >= MAX_ANTENNAS or count > MAX_INVENTORY_TAGS:
                    raise PayloadError("inventory antenna or count out of range", truncated=False)
                # From a list: tuple() of a generator resizes a 10-slot tuple, which
                # strands one on CPython's tuple free list per call (item 26).
                uids = tuple([reader.uid() for _ in range(count)])
                strengths: tuple[int | None, ...] | None = None
                if first & RSSI_FLAG:
                    # The strength block the flag announced: one byte per tag.
                    strengths = tuple([reader.rssi(allow_none=True) for _ in range(count)])
                message = Inventory(antenna, cycle, uids, strengths)
            case MessageType.HEARTBEAT:
                uptime, cycles = reader.unpack(_HEARTBEAT)
                message = Heartbeat(uptime, cycles)
            case MessageType.READER_FAULT:
                code, antenna, length = reader.unpack(_FAULT_HEAD)
                text = reader.take(length).decode("utf-8")
                message = ReaderFault(code, None if antenna == ALL_ANTENNAS else antenna, text)
            case MessageType.IDENTIFY:
                message = Identify(reader.byte())
            case MessageType.REQUEST_INVENTORY:
                antenna = reader.byte()
                message = RequestInventory(None if antenna == ALL_ANTENNAS else antenna)
        reader.finish()
    except (MessageError, UnicodeDecodeError) as exc:
        raise PayloadError(str(exc), truncated=False) from exc
    return message


_TYPE_OF: Final[dict[type, MessageType]] = {
    Hello: MessageType.HELLO,
    TagArrived: MessageType.TAG_ARRIVED,
    TagLeft: MessageType.TAG_LEFT,
    Inventory: MessageType.INVENTORY,
    Heartbeat: MessageType.HEARTBEAT,
    ReaderFault: MessageType.READER_FAULT,
    Identify: MessageType.IDENTIFY,
    RequestInventory: MessageType.REQUEST_INVENTORY,
}
