"""Pure wire format of the reader link: CRC-16, COBS, frame envelope (docs/protocol.md).

Theory of operation
-------------------
A frame *body* is ``version u8 | type u8 | seq u16 | payload | crc u16`` (all integers
big-endian; the CRC is CRC-16/CCITT-FALSE over everything before it). The body is
COBS-encoded, which removes every 0x00 byte, and sent between two 0x00 delimiters::

    00 | COBS(body) | 00

A receiver therefore finds frame boundaries by looking for 0x00 alone, whatever
garbage came before: after any corruption it is back in sync at the next delimiter.
Back-to-back frames put two delimiters next to each other; the empty segment
between them is idle line, not an error.

Nothing here does I/O or keeps state between calls: :func:`serialize` turns a
:class:`RawFrame` into bytes, :func:`parse_segment` turns one delimited segment into
a :class:`RawFrame` or a :class:`FrameError`, and :func:`deserialize` does the
zigpy-style ``(frame, rest)`` split on a byte string.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import Enum
from typing import Final

PROTOCOL_VERSION: Final = 1
"""The frame format version this code writes and accepts (header byte 0)."""

DELIMITER: Final = 0x00
"""Frame delimiter on the wire; COBS guarantees it never occurs inside a frame."""

HEADER: Final = struct.Struct(">BBH")
"""Body header: protocol version, message type, sequence number."""

HEADER_SIZE: Final = HEADER.size
CRC_SIZE: Final = 2
MIN_BODY_SIZE: Final = HEADER_SIZE + CRC_SIZE
"""The smallest body that can be a frame: header and CRC around an empty payload."""

MAX_BODY_SIZE: Final = 1024
"""Largest decoded frame body (header + payload + CRC) a receiver accepts.

Denial of service it prevents: the receiver buffers bytes until it sees a delimiter.
A babbling reader, line noise without zeros, or a wrong device on the port (a modem,
a GPS module) would otherwise grow that buffer without bound and make every later
CRC check walk it. With the cap, memory per link is bounded and a runaway segment is
dropped and counted as *oversized* as soon as it passes the limit.
The largest legal message (an INVENTORY of 64 ten-byte UIDs with their strengths)
needs 780 bytes.
"""

MAX_PAYLOAD_SIZE: Final = MAX_BODY_SIZE - MIN_BODY_SIZE
"""Largest payload that fits in :data:`MAX_BODY_SIZE`."""

MAX_ENCODED_SIZE: Final = MAX_BODY_SIZE + 1 + MAX_BODY_SIZE // 254
"""Largest COBS encoding of a legal body (one overhead byte per 254 bytes, plus one)."""

SEQ_MODULUS: Final = 0x10000
"""Sequence numbers are u16 and wrap from 0xFFFF to 0."""


# ---------------------------------------------------------------------------
# CRC-16/CCITT-FALSE: poly 0x1021, init 0xFFFF, no reflection, no final XOR.


def _crc_table() -> tuple[int, ...]:
    table = []
    for high_byte in range(256):
        crc = high_byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
            crc &= 0xFFFF
        table.append(crc)
    return tuple(table)


CRC_TABLE: Final = _crc_table()
"""One entry per byte value: the CRC register after shifting that byte through."""

CRC_INIT: Final = 0xFFFF
CRC_CHECK_VALUE: Final = 0x29B1
"""The catalogue check value: CRC-16/CCITT-FALSE of the ASCII bytes ``123456789``."""


def crc16_ccitt_false(data: bytes | bytearray | memoryview, crc: int = CRC_INIT) -> int:
    """CRC-16/CCITT-FALSE of ``data``, table-driven; pass ``crc`` to continue a running CRC."""
    table = CRC_TABLE
    for byte in data:
        crc = ((crc << 8) & 0xFFFF) ^ table[(crc >> 8) ^ byte]
    return crc


# ---------------------------------------------------------------------------
# COBS (Cheshire & Baker, "Consistent Overhead Byte Stuffing", 1999), canonical form.


class CobsError(ValueError):
    """The bytes are not a valid COBS encoding."""


def cobs_encode(data: bytes) -> bytes:
    """COBS-encode ``data``: the result contains no 0x00 and is at most ``len+1+len//254``."""
    out = bytearray()
    blocks = data.split(b"\x00")
    last = len(blocks) - 1
    for index, block in enumerate(blocks):
        # Each block except the last is followed by a zero the decoder re-inserts.
        rest = block
        while len(rest) >= 254:
            out.append(0xFF)
            out += rest[:254]
            rest = rest[254:]
        if index == last and block and not rest:
            # Canonical COBS: a trailing full group needs no empty group after it.
            break
        out.append(len(rest) + 1)
        out += rest
    return bytes(out)


def cobs_decode(encoded: bytes | bytearray | memoryview) -> bytes:
    """Decode one COBS segment (without delimiters); raises :class:`CobsError`."""
    data = bytes(encoded)
    if b"\x00" in data:
        raise CobsError("zero byte inside a COBS segment")
    out = bytearray()
    index = 0
    length = len(data)
    while index < length:
        code = data[index]
        end = index + code
        if end > length:
            raise CobsError(f"group at offset {index} runs past the end ({length} bytes)")
        out += data[index + 1 : end]
        index = end
        if code != 0xFF and index < length:
            out.append(0)
    return bytes(out)


# ---------------------------------------------------------------------------
# Frame envelope


@dataclass(frozen=True, slots=True)
class RawFrame:
    """A frame whose envelope checked out: version, message type, sequence number, payload.

    The payload is not interpreted here (see :mod:`firmware_bridge.messages`).
    """

    msg_type: int
    seq: int
    payload: bytes
    version: int = PROTOCOL_VERSION


class FrameError(Enum):
    """Why a delimited segment is not a frame. Each kind has its own counter."""

    OVERSIZED = "oversized"
    """The segment is longer than :data:`MAX_ENCODED_SIZE`."""
    FRAMING = "framing"
    """The segment is not valid COBS (a group runs past the end)."""
    TRUNCATED = "truncated"
    """The body is shorter than header + CRC (includes zero-length bodies)."""
    CRC = "crc"
    """The CRC does not match the body."""
    UNSUPPORTED_VERSION = "unsupported_version"
    """CRC good, but the header's protocol version is not :data:`PROTOCOL_VERSION`."""


class FrameEncodeError(ValueError):
    """A frame cannot be encoded (field out of range or payload too large)."""


def encode_body(frame: RawFrame) -> bytes:
    """The frame body (header, payload, CRC) before COBS."""
    if not 0 <= frame.seq < SEQ_MODULUS:
        raise FrameEncodeError(f"sequence number {frame.seq} outside 0..65535")
    if not 0 <= frame.msg_type <= 0xFF or not 0 <= frame.version <= 0xFF:
        raise FrameEncodeError("message type and version are single bytes")
    if len(frame.payload) > MAX_PAYLOAD_SIZE:
        raise FrameEncodeError(
            f"payload of {len(frame.payload)} bytes exceeds {MAX_PAYLOAD_SIZE}"
        )
    head = HEADER.pack(frame.version, frame.msg_type, frame.seq) + frame.payload
    return head + crc16_ccitt_false(head).to_bytes(2, "big")


def serialize(frame: RawFrame) -> bytes:
    """The complete wire bytes of ``frame``: ``00 | COBS(body) | 00``."""
    return b"\x00" + cobs_encode(encode_body(frame)) + b"\x00"


def parse_body(body: bytes) -> RawFrame | FrameError:
    """Check a decoded body's length, CRC and version; return the frame or the error."""
    if len(body) < MIN_BODY_SIZE:
        return FrameError.TRUNCATED
    if len(body) > MAX_BODY_SIZE:
        return FrameError.OVERSIZED
    # CRC over body+CRC (CRC appended big-endian) leaves a zero residue.
    if crc16_ccitt_false(body) != 0:
        return FrameError.CRC
    version, msg_type, seq = HEADER.unpack_from(body)
    # The version is checked after the CRC so that line noise hitting the version
    # byte counts as a CRC error, not as a reader speaking another protocol.
    if version != PROTOCOL_VERSION:
        return FrameError.UNSUPPORTED_VERSION
    payload = body[HEADER_SIZE:-CRC_SIZE]
    return RawFrame(msg_type=msg_type, seq=seq, payload=payload, version=version)


def parse_segment(segment: bytes | bytearray | memoryview) -> RawFrame | FrameError:
    """Parse one non-empty segment found between two delimiters (delimiters excluded)."""
    if len(segment) > MAX_ENCODED_SIZE:
        return FrameError.OVERSIZED
    try:
        body = cobs_decode(segment)
    except CobsError:
        return FrameError.FRAMING
    return parse_body(body)


def deserialize(data: bytes) -> tuple[RawFrame | FrameError | None, bytes]:
    """Split the first frame off ``data``: ``(frame or error, rest)``.

    ``None`` means *incomplete, wait*: no complete segment yet, and ``rest`` is the
    input to keep (with leading delimiters dropped). A :class:`FrameError` means a
    complete but corrupt segment was consumed; call again on ``rest`` to carry on.
    """
    start = 0
    while start < len(data) and data[start] == DELIMITER:
        start += 1
    end = data.find(b"\x00", start)
    if end < 0:
        pending = data[start:]
        if len(pending) > MAX_ENCODED_SIZE:
            return FrameError.OVERSIZED, b""
        return None, pending
    return parse_segment(data[start:end]), data[end:]
