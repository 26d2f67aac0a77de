"""Frames of the reader link, exactly as docs/protocol.md (version 1) says.

A frame on the wire is ``00 | COBS(body) | 00``; the body is
``version u8 | type u8 | seq u16 | payload | crc u16``, all big-endian, the CRC being
CRC-16/CCITT-FALSE of everything before it. The reader numbers its frames from 0 at
boot, wrapping after 0xFFFF.

Pure: no I/O, no clock. Runs on MicroPython (``struct``, ``bytearray``) and CPython,
where the tests check it byte for byte against the host's ``firmware_bridge``.
"""

import struct

from stud_reader.compat import const

PROTOCOL_VERSION = const(1)

# Message types (docs/protocol.md section 4): reader to host below 0x80.
HELLO = const(0x01)
TAG_ARRIVED = const(0x02)
TAG_LEFT = const(0x03)
INVENTORY = const(0x04)
HEARTBEAT = const(0x05)
READER_FAULT = const(0x06)
IDENTIFY = const(0x81)
REQUEST_INVENTORY = const(0x82)

# READER_FAULT codes.
FAULT_ANTENNA_OPEN = const(0x01)
FAULT_ANTENNA_SHORT = const(0x02)
FAULT_RF_FRONTEND = const(0x03)
FAULT_EVENT_OVERFLOW = const(0x04)
FAULT_OVER_TEMPERATURE = const(0x05)
FAULT_WATCHDOG_RESET = const(0x06)

ALL_ANTENNAS = const(0xFF)
MAX_ANTENNAS = const(16)
MIN_UID_BYTES = const(4)
MAX_UID_BYTES = const(10)
MAX_INVENTORY_TAGS = const(64)
# The optional strength of a read (docs/protocol.md, RSSI): flagged by bit 7 of the
# antenna byte, one signed byte in dBm. The PN5180 and MFRC522 drivers measure none
# yet, so the reader sends frames without it (decoded as before).
RSSI_FLAG = const(0x80)
MIN_RSSI_DBM = const(-127)
MAX_RSSI_DBM = const(20)
MAX_FAULT_TEXT_BYTES = const(64)

HEADER_SIZE = const(4)
CRC_SIZE = const(2)
MIN_BODY_SIZE = const(6)
MAX_BODY_SIZE = const(1024)
MAX_PAYLOAD_SIZE = const(1018)
# COBS adds one byte per 254 plus one: 1024 + 1 + 4.
MAX_ENCODED_SIZE = const(1029)
SEQ_MODULUS = const(0x10000)
U32_MASK = const(0xFFFFFFFF)


class ProtocolError(ValueError):
    """A field is out of range: the firmware refuses to build the frame."""


# ---------------------------------------------------------------------------
# CRC-16/CCITT-FALSE: poly 0x1021, init 0xFFFF, no reflection, no final XOR.


def _crc_table():
    table = []
    for high in range(256):
        crc = high << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
            crc &= 0xFFFF
        table.append(crc)
    return table


_CRC_TABLE = _crc_table()


def crc16(data, crc=0xFFFF):
    """CRC-16/CCITT-FALSE of ``data`` (table-driven: 512 bytes of RAM, ~8x faster)."""
    table = _CRC_TABLE
    for byte in data:
        crc = ((crc << 8) & 0xFFFF) ^ table[(crc >> 8) ^ byte]
    return crc


# ---------------------------------------------------------------------------
# COBS, canonical form (a trailing full group gets no empty group after it).


def cobs_encode(data):
    """COBS-encode ``data`` (bytes or bytearray); the result holds no 0x00 byte."""
    out = bytearray(1)  # placeholder for the first group's code
    code_at = 0
    code = 1
    last = len(data) - 1
    for index in range(len(data)):
        byte = data[index]
        if byte == 0:
            out[code_at] = code
            code_at = len(out)
            out.append(0)
            code = 1
            continue
        out.append(byte)
        code += 1
        if code == 0xFF:
            out[code_at] = code
            if index == last:
                return out  # canonical: no empty group after a full one at the end
            code_at = len(out)
            out.append(0)
            code = 1
    out[code_at] = code
    return out


def cobs_decode(data):
    """Decode one COBS segment (no delimiters); ``None`` if it is not valid COBS."""
    out = bytearray()
    index = 0
    length = len(data)
    while index < length:
        code = data[index]
        if code == 0:
            return None
        end = index + code
        if end > length:
            return None  # a group runs past the end of the segment
        out.extend(data[index + 1 : end])
        index = end
        if code != 0xFF and index < length:
            out.append(0)
    return out


# ---------------------------------------------------------------------------
# Writing frames


class FrameWriter:
    """Numbers and frames the reader's messages: 0, 1, ... 0xFFFF, 0, ..."""

    def __init__(self):
        self.seq = 0

    def reset(self):
        """Number from 0 again (boot)."""
        self.seq = 0

    def frame(self, msg_type, payload):
        """The wire bytes ``00 | COBS(body) | 00`` of one message; uses one number."""
        if len(payload) > MAX_PAYLOAD_SIZE:
            raise ProtocolError("payload too large")
        seq = self.seq
        # Built by appending (no slice assignment: an optional MicroPython feature).
        body = bytearray((PROTOCOL_VERSION, msg_type, seq >> 8, seq & 0xFF))
        body.extend(payload)
        crc = crc16(body)
        body.append(crc >> 8)
        body.append(crc & 0xFF)
        self.seq = (seq + 1) % SEQ_MODULUS
        out = bytearray(1)  # leading delimiter: isolates garbage before the frame
        out.extend(cobs_encode(body))
        out.append(0)
        return bytes(out)


# ---------------------------------------------------------------------------
# Payloads (docs/protocol.md section 4)


def _check_antenna(antenna):
    if not 0 <= antenna < MAX_ANTENNAS:
        raise ProtocolError("antenna outside 0..15")


def _uid_field(uid):
    if not MIN_UID_BYTES <= len(uid) <= MAX_UID_BYTES:
        raise ProtocolError("UID not 4..10 bytes")
    return bytes((len(uid),)) + bytes(uid)


def hello_payload(reader_id, antenna_count, firmware_version):
    """HELLO: ``reader_id u16, protocol u8, antenna_count u8, fw major/minor/patch``."""
    if not 0 <= reader_id <= 0xFFFF or not 1 <= antenna_count <= MAX_ANTENNAS:
        raise ProtocolError("reader id or antenna count out of range")
    major, minor, patch = firmware_version
    return struct.pack(
        ">HBBBBB", reader_id, PROTOCOL_VERSION, antenna_count, major, minor, patch
    )


def _rssi_byte(rssi):
    # A read's strength in dBm, one signed byte; None: not measured (0x80).
    if rssi is None:
        return 0x80
    if not MIN_RSSI_DBM <= rssi <= MAX_RSSI_DBM:
        raise ProtocolError("strength outside -127..20 dBm")
    return rssi & 0xFF


def tag_payload(antenna, uid, rssi=None):
    """TAG_ARRIVED / TAG_LEFT: ``antenna u8, len u8, uid``; with ``rssi`` (dBm, a front
    end that measures it; TAG_ARRIVED only) bit 7 of the antenna byte is set and the
    strength byte follows."""
    _check_antenna(antenna)
    if rssi is None:
        return bytes((antenna,)) + _uid_field(uid)
    return bytes((antenna | RSSI_FLAG,)) + _uid_field(uid) + bytes((_rssi_byte(rssi),))


def inventory_payload(antenna, scan_cycle, uids, rssi=None):
    """INVENTORY: ``antenna u8, scan_cycle u32, count u8, uid x count``; with ``rssi``
    (one strength or None per UID) bit 7 of the antenna byte is set and the
    strengths follow."""
    _check_antenna(antenna)
    if len(uids) > MAX_INVENTORY_TAGS:
        raise ProtocolError("more than 64 tags in one inventory")
    if rssi is not None and len(rssi) != len(uids):
        raise ProtocolError("one strength per tag")
    flag = 0 if rssi is None else RSSI_FLAG
    out = bytearray(struct.pack(">BIB", antenna | flag, scan_cycle & U32_MASK, len(uids)))
    for uid in uids:
        out.extend(_uid_field(uid))
    if rssi is not None:
        out.extend(bytes(_rssi_byte(value) for value in rssi))
    return bytes(out)


def heartbeat_payload(uptime_ms, scan_cycles):
    """HEARTBEAT: ``uptime_ms u32, scan_cycles u32`` (both wrap)."""
    return struct.pack(">II", uptime_ms & U32_MASK, scan_cycles & U32_MASK)


def fault_payload(code, antenna, text):
    """READER_FAULT: ``code u8, antenna u8 (0xFF: none), text_len u8, text``.

    ``antenna`` is ``None`` for a reader-wide fault; the text is cut to 64 bytes
    at a character boundary (a fault must never fail to be reported).
    """
    raw = text.encode("utf-8")
    if len(raw) > MAX_FAULT_TEXT_BYTES:
        cut = MAX_FAULT_TEXT_BYTES
        while cut > 0 and (raw[cut] & 0xC0) == 0x80:
            cut -= 1  # do not split a UTF-8 sequence
        raw = raw[:cut]
    if antenna is None:
        antenna = ALL_ANTENNAS
    else:
        _check_antenna(antenna)
    return bytes((code & 0xFF, antenna, len(raw))) + raw


# ---------------------------------------------------------------------------
# Reading frames (the host's commands)


class FrameReader:
    """Splits a byte stream at 0x00 and checks each frame: COBS, length, CRC, version.

    ``feed`` returns ``(msg_type, seq, payload)`` for each good frame; a bad one is
    counted in :attr:`errors` (by kind, the receiver outcomes of docs/protocol.md
    section 3) and skipped. The buffer is capped at :data:`MAX_ENCODED_SIZE`: a
    longer run without a delimiter is dropped up to the next one, so a babbling host
    cannot exhaust the board's RAM.
    """

    def __init__(self):
        self._buffer = bytearray()
        self._discarding = False
        self.errors = {
            "oversized": 0, "framing": 0, "truncated": 0, "crc": 0, "unsupported_version": 0,
        }

    def reset(self):
        """Forget a partial frame (boot); keep the counters."""
        self._buffer = bytearray()
        self._discarding = False

    def feed(self, data):
        """Push received bytes; return the good frames they complete, in order."""
        frames = []
        for byte in data:
            if byte == 0:
                if self._discarding:
                    self._discarding = False
                elif self._buffer:
                    frame = self.parse(self._buffer)
                    if frame is not None:
                        frames.append(frame)
                self._buffer = bytearray()
            elif not self._discarding:
                self._buffer.append(byte)
                if len(self._buffer) > MAX_ENCODED_SIZE:
                    self.errors["oversized"] += 1
                    self._buffer = bytearray()
                    self._discarding = True
        return frames

    def parse(self, segment):
        """``(msg_type, seq, payload)`` of one segment, or ``None`` (counted)."""
        if len(segment) > MAX_ENCODED_SIZE:
            self.errors["oversized"] += 1
            return None
        body = cobs_decode(segment)
        if body is None:
            self.errors["framing"] += 1
            return None
        if len(body) < MIN_BODY_SIZE:
            self.errors["truncated"] += 1
            return None
        if len(body) > MAX_BODY_SIZE:
            self.errors["oversized"] += 1
            return None
        if crc16(body) != 0:  # the CRC appended big-endian leaves a zero residue
            self.errors["crc"] += 1
            return None
        # Version after the CRC: noise on the version byte is a CRC error.
        if body[0] != PROTOCOL_VERSION:
            self.errors["unsupported_version"] += 1
            return None
        return body[1], (body[2] << 8) | body[3], bytes(body[HEADER_SIZE:-CRC_SIZE])
