"""FEIG OBID i-scan "ISC" host protocol: frames, CRC and the ISO 15693 inventory (pure).

A second reader kind beside our own (docs/protocol.md): a commercial multi-antenna HF
reader (FEIG's ID ISC.MR/LR families, or one of them with an antenna multiplexer) that
the host polls antenna by antenna. Written from FEIG's public system manuals (the
sections are cited where each rule is used; docs/readers-feig.md lists them):

* [MR101] OBID i-scan System-Manual ID ISC.MR/PR/PRH101, H60301-3e-ID-B:
  2.1 "Data Format and Protocol Frames" (page 17), 6.1 "[0xB0] Host commands for
  ISO15693 Mandatory and Optional Commands" (page 58), 6.1.1 "[0x01] Inventory"
  (page 59), ANNEX D "Index of Status Bytes" (page 121);
* [MR102] Manual ID ISC.MR102, H01113-4e-ID-B: 3.3 "CRC16 Calculation Algorithm"
  (page 20);
* [MU02] Manual ID ISC.MU02.02, H90701-3e-ID-B: 10.1.1 "[0x01] Inventory" (page 76),
  the MODE bit ``ANT``, the ``ANT_SEL`` bit field and the response with antenna
  numbers, which the same protocol family uses for readers with several antenna
  outputs.

Frames (reader and host alike, [MR101] 2.1). *Standard*: ``LENGTH COM-ADR CONTROL
[STATUS] DATA CRC16`` with LENGTH (6..255) counting every byte including itself and the
CRC. *Advanced*: ``STX(0x02) ALENGTH(2 bytes, MSB first) COM-ADR CONTROL [STATUS] DATA
CRC16`` with ALENGTH (8..65535) counting every byte. A response carries a STATUS byte
after CONTROL, a request does not. The reader answers in the advanced frame when the
response exceeds 255 bytes. CRC16 ([MR102] 3.3): polynomial x^16+x^12+x^5+1 processed
LSB first (0x8408), preset 0xFFFF, over every byte before the CRC, sent LSB first.
Multi-byte data fields are MSB first ([MR101] 2.1, "DATA").

Because a standard LENGTH is at least 6, a first byte 0x02 always means STX: the
decoder never has to guess the frame kind. The stream has no delimiter, so a
receiver that lost sync (noise, a frame cut in half) drops one byte and tries again
at the next: the CRC decides. No I/O and no clock here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Final

__all__ = [
    "BROADCAST_ADR",
    "CONTROL_ISO_HOST",
    "ISO_INVENTORY",
    "MAX_FRAME",
    "MODE_ANT",
    "MODE_MORE",
    "STATUS_MORE_DATA",
    "STATUS_NO_TRANSPONDER",
    "STATUS_OK",
    "STX",
    "FeigDecoder",
    "FeigDecoderStats",
    "FeigError",
    "FeigTag",
    "Frame",
    "InventoryResponse",
    "Side",
    "crc16",
    "crc16_bitwise",
    "decode_inventory",
    "encode_frame",
    "encode_inventory",
    "inventory_request",
]

STX: Final = 0x02
"""First byte of an advanced frame ([MR101] 2.1)."""

BROADCAST_ADR: Final = 0xFF
"""COM-ADR 255: "The Reader can be addressed via COM-ADR 255 at any time" ([MR101] 2.1)."""

CONTROL_ISO_HOST: Final = 0xB0
"""[0xB0] Host commands for ISO15693 ([MR101] 6.1)."""

ISO_INVENTORY: Final = 0x01
"""[0xB0][0x01] Inventory ([MR101] 6.1.1)."""

MODE_MORE: Final = 0x80
"""MODE bit 7 ``MORE``: b1 "more data requested" after STATUS 0x94 ([MR101] 6.1.1)."""

MODE_ANT: Final = 0x10
"""MODE bit 4 ``ANT``: b1 "Request with antenna number (ANT_SEL)" ([MU02] 10.1.1)."""

STATUS_OK: Final = 0x00
STATUS_NO_TRANSPONDER: Final = 0x01
STATUS_RF_COMMUNICATION_ERROR: Final = 0x83
STATUS_MORE_DATA: Final = 0x94
"""[MR101] ANNEX D. 0x94: more data sets than fit; ask again with MORE set."""

DATA_STATUSES: Final = frozenset({0x00, 0x83, 0x94, 0x95})
""""Data is only transferred if STATUS = 0x00, 0x83, 0x94, 0x95" ([MR101] 6.1)."""

MAX_FRAME: Final = 4096
"""Largest frame this host accepts (bytes). ALENGTH may announce up to 65535; a frame
beyond what a full inventory needs (64 tags with antenna data: about 1.2 kB) is
treated as noise, so a corrupt length byte cannot make the receiver wait for 64 kB."""

MIN_STANDARD: Final = 5
"""LENGTH COM-ADR CONTROL CRC CRC: the shortest standard frame without STATUS."""

MIN_ADVANCED: Final = 7
"""STX ALENGTH ALENGTH COM-ADR CONTROL CRC CRC."""

ISO15693_TR_TYPE: Final = 0x03
"""TR-TYPE of an ISO 15693 transponder (FEIG "Codes of Transponder Types" annex)."""

UID_BYTES: Final = 8
"""An ISO 15693 UID: 8 bytes, MSB first on the wire ([MR101] 2.1, "DATA")."""

ANTENNA_RECORD: Final = 7
"""Bytes per antenna record in an ANT response ([MU02] 10.1.1): ANT_NR, ANT_STATUS,
reserved (0xFF), reserved (4 bytes)."""


class Side(Enum):
    """Which side sent the frames a decoder reads: a response has a STATUS byte."""

    READER = "reader"
    HOST = "host"


class FeigError(ValueError):
    """A frame or payload that is not valid (the message says which field)."""


def crc16_bitwise(data: bytes) -> int:
    """CRC16 of ``data`` exactly as [MR102] 3.3's C example computes it (0x8408, preset
    0xFFFF, no final XOR): the reference the table below is tested against."""
    crc = 0xFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x8408 if crc & 1 else crc >> 1
    return crc


def _table() -> tuple[int, ...]:
    entries = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x8408 if crc & 1 else crc >> 1
        entries.append(crc)
    return tuple(entries)


_CRC_TABLE: Final = _table()


def crc16(data: bytes) -> int:
    """CRC16 of ``data`` ([MR102] 3.3), a byte at a time from a table (8x faster)."""
    crc = 0xFFFF
    table = _CRC_TABLE
    for byte in data:
        crc = (crc >> 8) ^ table[(crc ^ byte) & 0xFF]
    return crc


@dataclass(frozen=True, slots=True)
class Frame:
    """One frame: bus address, control byte (the command), STATUS (responses only), data."""

    com_adr: int
    control: int
    data: bytes = b""
    status: int | None = None
    advanced: bool = False

    def __post_init__(self) -> None:
        for name, value in (("COM-ADR", self.com_adr), ("CONTROL", self.control)):
            if not 0 <= value <= 0xFF:
                raise FeigError(f"{name} {value} is not a byte")
        if self.status is not None and not 0 <= self.status <= 0xFF:
            raise FeigError(f"STATUS {self.status} is not a byte")


def encode_frame(frame: Frame) -> bytes:
    """The bytes of ``frame``: standard if it fits in 255 bytes and was not asked
    advanced, else advanced ([MR101] 2.1)."""
    body = bytes([frame.com_adr, frame.control])
    if frame.status is not None:
        body += bytes([frame.status])
    body += frame.data
    if not frame.advanced and len(body) + 3 <= 0xFF:
        head = bytes([len(body) + 3])
    else:
        total = len(body) + 5
        if total > MAX_FRAME:
            raise FeigError(f"a frame of {total} bytes exceeds {MAX_FRAME}")
        head = bytes([STX, total >> 8, total & 0xFF])
    unsigned = head + body
    crc = crc16(unsigned)
    return unsigned + bytes([crc & 0xFF, crc >> 8])


@dataclass(slots=True)
class FeigDecoderStats:
    """What a :class:`FeigDecoder` skipped, by cause (each frame counted once)."""

    frames_ok: int = 0
    crc_errors: int = 0
    """A length that fitted and a CRC that did not: one per resynchronisation."""
    oversized: int = 0
    """An ALENGTH beyond :data:`MAX_FRAME`."""
    truncated: int = 0
    """A length too short for the frame kind (LENGTH < 5, ALENGTH < 7, or no STATUS)."""
    bytes_skipped: int = 0
    """Bytes dropped while looking for the next frame."""
    bytes_received: int = 0


@dataclass(slots=True)
class FeigDecoder:
    """Sans-I/O stream decoder: :meth:`feed` any bytes, get the complete frames.

    On a bad length or CRC it drops the first byte and tries the next position
    (the stream has no delimiter to skip to); a frame still incomplete is kept
    for the next :meth:`feed`. Never raises on input bytes.
    """

    side: Side = Side.READER
    controls: frozenset[int] | None = None
    """CONTROL bytes accepted (None: any). A candidate frame with another CONTROL is
    noise without its CRC being computed: what keeps resynchronising on random bytes
    cheap (255 of 256 candidates fall here)."""
    stats: FeigDecoderStats = field(default_factory=FeigDecoderStats)
    _buffer: bytearray = field(default_factory=bytearray)
    _bad_run: bool = False

    def reset_stream(self) -> None:
        """Forget a partial frame (a new connection)."""
        self._buffer.clear()
        self._bad_run = False

    def resync(self) -> list[Frame]:
        """Give up on the frame the buffer starts with (its length byte was noise and
        the rest never came) and look for a complete frame behind it; the link calls
        this when a response is overdue. The frames found (usually one), or none."""
        while self._buffer:
            self._skip("crc_errors")
            frames = self.feed(b"")
            if frames:
                return frames
        return []

    def feed(self, data: bytes) -> list[Frame]:
        """The frames completed by ``data``."""
        self.stats.bytes_received += len(data)
        self._buffer += data
        frames: list[Frame] = []
        while self._buffer:
            need, problem = self._frame_length()
            if problem is not None:
                self._skip(problem)
                continue
            if need is None or len(self._buffer) < need:
                break  # incomplete: wait for more
            if self.controls is not None and self._buffer[
                    4 if self._buffer[0] == STX else 2] not in self.controls:
                self._skip("crc_errors")
                continue
            raw = bytes(self._buffer[:need])
            if crc16(raw[:-2]) != raw[-2] | raw[-1] << 8:
                self._skip("crc_errors")
                continue
            frame = self._parse(raw)
            if frame is None:
                self._skip("truncated")
                continue
            del self._buffer[:need]
            self._bad_run = False
            self.stats.frames_ok += 1
            frames.append(frame)
        return frames

    def _frame_length(self) -> tuple[int | None, str | None]:
        """(bytes of the frame at the buffer's start or None if not known yet, problem)."""
        first = self._buffer[0]
        minimum = self._minimum()
        if first == STX:
            if len(self._buffer) < 3:
                return None, None
            total = self._buffer[1] << 8 | self._buffer[2]
            if total > MAX_FRAME:
                return None, "oversized"
            if total < minimum + 2:
                return None, "truncated"
            return total, None
        if first < minimum:
            return None, "truncated"
        return first, None

    def _minimum(self) -> int:
        return MIN_STANDARD + (1 if self.side is Side.READER else 0)

    def _parse(self, raw: bytes) -> Frame | None:
        advanced = raw[0] == STX
        at = 3 if advanced else 1
        com_adr, control = raw[at], raw[at + 1]
        at += 2
        status = None
        if self.side is Side.READER:
            if at >= len(raw) - 2:
                return None
            status = raw[at]
            at += 1
        return Frame(com_adr, control, raw[at:-2], status, advanced)

    def _skip(self, problem: str) -> None:
        # One count per run of garbage, not per byte of it.
        if not self._bad_run:
            setattr(self.stats, problem, getattr(self.stats, problem) + 1)
            self._bad_run = True
        del self._buffer[:1]
        self.stats.bytes_skipped += 1


# -- [0xB0][0x01] Inventory ---------------------------------------------------------------


def inventory_request(com_adr: int, antenna: int | None, *, more: bool = False) -> Frame:
    """[0xB0][0x01] Inventory ([MR101] 6.1.1), on antenna output ``antenna`` (0..7, the
    ANT_SEL bit field of [MU02] 10.1.1) or on the reader's one antenna (None)."""
    mode = MODE_MORE if more else 0
    data = bytes([ISO_INVENTORY])
    if antenna is None:
        data += bytes([mode])
    else:
        if not 0 <= antenna <= 7:
            raise FeigError(f"antenna output {antenna} is outside ANT_SEL's bits 0..7")
        data += bytes([mode | MODE_ANT, 1 << antenna])
    return Frame(com_adr, CONTROL_ISO_HOST, data)


@dataclass(frozen=True, slots=True)
class FeigTag:
    """One transponder data set: its UID (uppercase hex, MSB first), DSFID, and the
    antenna outputs (0-based) that read it with each one's ANT_STATUS."""

    uid: str
    tr_type: int = ISO15693_TR_TYPE
    dsfid: int = 0
    antennas: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True, slots=True)
class InventoryResponse:
    """The reader's answer to an inventory: STATUS and the data sets."""

    status: int
    tags: tuple[FeigTag, ...]
    with_antennas: bool

    @property
    def more(self) -> bool:
        """STATUS 0x94: more data sets wait; ask again with MORE set."""
        return self.status == STATUS_MORE_DATA


def encode_inventory(com_adr: int, response: InventoryResponse) -> Frame:
    """The response frame of ``response`` (standard or, past 255 bytes, advanced).

    Without antennas, per data set: TR-TYPE DSFID UID(8) ([MR101] 6.1.1). With
    antennas ([MU02] 10.1.1): FLAGS TR-TYPE IDDT IDD_LEN IDD ANT_CNT, then ANT_CNT
    records ANT_NR ANT_STATUS 0xFF and four reserved bytes. FLAGS and IDDT are 0
    here (the manual's text leaves them to other sections: sent as 0, read as given).
    """
    if response.status not in DATA_STATUSES:
        if response.tags:
            raise FeigError(f"STATUS 0x{response.status:02X} carries no data sets")
        return Frame(com_adr, CONTROL_ISO_HOST, b"", response.status)
    if len(response.tags) > 0xFF:
        raise FeigError("at most 255 data sets in one response")
    data = bytearray([len(response.tags)])
    for tag in response.tags:
        uid = bytes.fromhex(tag.uid)
        if response.with_antennas:
            if len(uid) > 0xFF or len(tag.antennas) > 0xFF:
                raise FeigError("IDD_LEN and ANT_CNT are one byte each")
            data += bytes([0, tag.tr_type, 0, len(uid)]) + uid + bytes([len(tag.antennas)])
            for number, status in tag.antennas:
                data += bytes([number + 1, status, 0xFF, 0, 0, 0, 0])
        else:
            if len(uid) != UID_BYTES:
                raise FeigError(f"an ISO 15693 UID has {UID_BYTES} bytes, not {len(uid)}")
            data += bytes([tag.tr_type, tag.dsfid]) + uid
    return Frame(com_adr, CONTROL_ISO_HOST, bytes(data), response.status,
                 advanced=len(data) + 6 > 0xFF)


def decode_inventory(frame: Frame, *, with_antennas: bool) -> InventoryResponse:
    """The data sets of an inventory response frame; :class:`FeigError` if malformed.

    ANT_NR is 1-based on the wire (antenna output 1 = ANT_SEL bit 0, [MU02] 10.1.1)
    and 0-based here, like our antenna ports.
    """
    if frame.control != CONTROL_ISO_HOST or frame.status is None:
        raise FeigError(f"not an ISO host response (CONTROL 0x{frame.control:02X})")
    if frame.status not in DATA_STATUSES:
        if frame.data:
            raise FeigError(f"STATUS 0x{frame.status:02X} with {len(frame.data)} data bytes")
        return InventoryResponse(frame.status, (), with_antennas)
    data = frame.data
    if not data:
        raise FeigError("no DATA-SETS byte")
    count, at, tags = data[0], 1, []
    for index in range(count):
        where = f"data set {index + 1}"
        if with_antennas:
            if at + 4 > len(data):
                raise FeigError(f"{where}: ends before IDD_LEN")
            tr_type, length = data[at + 1], data[at + 3]
            at += 4
            if length == 0 or at + length + 1 > len(data):
                raise FeigError(f"{where}: IDD_LEN {length} runs past the frame")
            uid = data[at:at + length]
            at += length
            antenna_count = data[at]
            at += 1
            if at + antenna_count * ANTENNA_RECORD > len(data):
                raise FeigError(f"{where}: ANT_CNT {antenna_count} runs past the frame")
            antennas = []
            for _ in range(antenna_count):
                number, status = data[at], data[at + 1]
                if number == 0:
                    raise FeigError(f"{where}: ANT_NR 0 (antenna outputs count from 1)")
                antennas.append((number - 1, status))
                at += ANTENNA_RECORD
            tags.append(FeigTag(uid.hex().upper(), tr_type, 0, tuple(antennas)))
        else:
            if at + 2 + UID_BYTES > len(data):
                raise FeigError(f"{where}: ends inside the UID")
            tags.append(FeigTag(data[at + 2:at + 2 + UID_BYTES].hex().upper(), data[at],
                                data[at + 1]))
            at += 2 + UID_BYTES
    if at != len(data):
        raise FeigError(f"{len(data) - at} bytes after the last data set")
    return InventoryResponse(frame.status, tuple(tags), with_antennas)
