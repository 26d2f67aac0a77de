"""The firmware's frames against the project's own: byte for byte, both directions.

Every frame the firmware (hardware/firmware/stud_reader/protocol.py) writes decodes
with ``firmware_bridge.decoder``; every frame ``firmware_bridge.encoder`` writes is
accepted by the firmware; both give exactly the bytes of docs/protocol.md section 6.
"""

from __future__ import annotations

import binascii
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from protocol_vectors import HOST_VECTORS, READER_VECTORS, doc_vectors, invalid_vector_sources
from stud_reader import protocol as fw

from firmware_bridge.decoder import FrameDecoder
from firmware_bridge.encoder import FrameEncoder
from firmware_bridge.frames import MAX_ENCODED_SIZE, cobs_encode, crc16_ccitt_false
from firmware_bridge.messages import (
    Direction,
    Heartbeat,
    Hello,
    HostMessage,
    Identify,
    Inventory,
    ReaderFault,
    ReaderMessage,
    RequestInventory,
    TagArrived,
    TagLeft,
    encode_payload,
    message_type,
)


def firmware_payload(message: ReaderMessage) -> tuple[int, bytes]:
    """The firmware's own encoding of ``message``: (type byte, payload)."""
    match message:
        case Hello():
            return fw.HELLO, fw.hello_payload(
                message.reader_id, message.antenna_count, message.firmware_version)
        case TagArrived():
            return fw.TAG_ARRIVED, fw.tag_payload(message.antenna, bytes.fromhex(message.uid),
                                                  message.rssi)
        case TagLeft():
            return fw.TAG_LEFT, fw.tag_payload(message.antenna, bytes.fromhex(message.uid))
        case Inventory():
            uids = [bytes.fromhex(uid) for uid in message.uids]
            return fw.INVENTORY, fw.inventory_payload(message.antenna, message.scan_cycle, uids,
                                                      message.rssi)
        case Heartbeat():
            return fw.HEARTBEAT, fw.heartbeat_payload(message.uptime_ms, message.scan_cycles)
        case ReaderFault():
            return fw.READER_FAULT, fw.fault_payload(message.code, message.antenna, message.text)
    raise AssertionError(message)


def firmware_frame(message: ReaderMessage, seq: int) -> bytes:
    writer = fw.FrameWriter()
    writer.seq = seq
    return writer.frame(*firmware_payload(message))


# --------------------------------------------------------------------------- CRC, COBS


def test_crc_check_value() -> None:
    assert fw.crc16(b"123456789") == 0x29B1


@given(st.binary(max_size=600))
def test_crc_matches_ours_and_binascii(data: bytes) -> None:
    assert fw.crc16(data) == crc16_ccitt_false(data) == binascii.crc_hqx(data, 0xFFFF)


# Long zero-free runs reach the 254-byte group boundary that canonical COBS treats
# specially; plain st.binary() rarely does.
_RUNS = st.lists(
    st.one_of(st.binary(max_size=20), st.integers(250, 520).map(lambda n: b"\x07" * n),
              st.just(b"\x00")),
    max_size=6,
).map(b"".join)


@given(st.one_of(st.binary(max_size=600), _RUNS))
def test_cobs_is_canonical_and_round_trips(data: bytes) -> None:
    encoded = bytes(fw.cobs_encode(data))
    assert encoded == cobs_encode(data)
    assert 0 not in encoded
    assert fw.cobs_decode(encoded) == data


@pytest.mark.parametrize("length", [253, 254, 255, 508, 509])
def test_cobs_group_boundaries(length: int) -> None:
    data = bytes(range(1, 256)) * 3
    assert bytes(fw.cobs_encode(data[:length])) == cobs_encode(data[:length])


# --------------------------------------------------------------------------- the doc's vectors


@pytest.mark.parametrize("name", sorted(READER_VECTORS))
def test_firmware_writes_the_doc_bytes(name: str) -> None:
    seq, message = READER_VECTORS[name]
    assert isinstance(message, ReaderMessage)
    _, expected = doc_vectors("vectors")[name]
    assert firmware_frame(message, seq) == expected


@pytest.mark.parametrize("name", sorted(HOST_VECTORS))
def test_firmware_reads_the_host_doc_vectors(name: str) -> None:
    seq, message = HOST_VECTORS[name]
    _, wire = doc_vectors("host-vectors")[name]
    reader = fw.FrameReader()
    assert reader.feed(wire) == [(int(message_type(message)), seq, encode_payload(message))]
    assert sum(reader.errors.values()) == 0


# The envelope outcomes the firmware sorts the same way as the host's decoder; the
# payload-level ones (unknown type, malformed) are the reader loop's business
# (test_fw_reader.py: ignored and counted).
_ENVELOPE = {
    "crc_errors": "crc", "framing_errors": "framing", "truncated": "truncated",
    "unsupported_version": "unsupported_version",
}


_PAYLOAD_TRUNCATED = {"crc_ok_payload_too_short", "rssi_missing", "inventory_rssi_block_short"}
"""Vectors counted as truncated for a payload that ends early, inside a good envelope."""


@pytest.mark.parametrize("name", sorted(invalid_vector_sources()))
def test_firmware_rejects_the_invalid_doc_vectors(name: str) -> None:
    counter, wire = invalid_vector_sources()[name]
    reader = fw.FrameReader()
    frames = reader.feed(wire)
    if name in _PAYLOAD_TRUNCATED or counter not in _ENVELOPE:
        # A good envelope around a bad payload: the envelope passes here.
        assert len(frames) == 1
        assert sum(reader.errors.values()) == 0
    else:
        assert frames == []
        assert reader.errors[_ENVELOPE[counter]] == 1
        assert sum(reader.errors.values()) == 1


def test_regression_oversized_run_is_dropped_once_and_the_next_frame_read() -> None:
    """A babbling host: a zero-free run past the frame limit is counted once, the
    buffer stays bounded, and the next frame after a delimiter is read."""
    reader = fw.FrameReader()
    for _ in range(10):
        assert reader.feed(b"\x55" * 500) == []
        assert len(reader._buffer) <= MAX_ENCODED_SIZE
    identify = FrameEncoder().encode(Identify())
    assert reader.feed(identify) == [(0x81, 0, b"\x01")]
    assert reader.errors["oversized"] == 1


# --------------------------------------------------------------------------- properties

_UIDS = st.sampled_from([4, 7, 8, 10]).flatmap(
    lambda n: st.binary(min_size=n, max_size=n)).map(lambda b: b.hex().upper())
_ANTENNA = st.integers(0, 15)
_U32 = st.integers(0, 0xFFFF_FFFF)

READER_MESSAGES = st.one_of(
    st.builds(Hello, st.integers(0, 0xFFFF),
              st.tuples(*(st.integers(0, 255),) * 3), st.integers(1, 16)),
    st.builds(TagArrived, _ANTENNA, _UIDS),
    st.builds(TagLeft, _ANTENNA, _UIDS),
    st.builds(Inventory, _ANTENNA, _U32, st.lists(_UIDS, max_size=64).map(tuple)),
    st.builds(Heartbeat, _U32, _U32),
    st.builds(ReaderFault, st.integers(0, 255), st.one_of(st.none(), _ANTENNA),
              st.text(max_size=20).filter(lambda t: len(t.encode()) <= 64)),
)
HOST_MESSAGES = st.one_of(
    st.builds(Identify, st.integers(0, 255)),
    st.builds(RequestInventory, st.one_of(st.none(), _ANTENNA)),
)


@settings(max_examples=100)
@given(st.lists(READER_MESSAGES, min_size=1, max_size=12), st.integers(0, 0xFFFF))
def test_every_firmware_frame_decodes_with_ours(
    messages: list[ReaderMessage], first_seq: int
) -> None:
    """A stream written by the firmware decodes to the same messages and numbers."""
    writer = fw.FrameWriter()
    writer.seq = first_seq
    wire = b"".join(writer.frame(*firmware_payload(m)) for m in messages)
    ours = FrameEncoder(first_seq=first_seq)
    assert wire == b"".join(ours.encode(m) for m in messages)
    decoder = FrameDecoder(Direction.READER_TO_HOST)
    got = decoder.feed(wire)
    assert [r.message for r in got] == messages
    assert [r.seq for r in got] == [(first_seq + i) % 0x10000 for i in range(len(messages))]
    assert decoder.stats.errors == 0


@settings(max_examples=100)
@given(st.lists(HOST_MESSAGES, min_size=1, max_size=12), st.integers(0, 0xFFFF),
       st.integers(1, 40), st.binary(max_size=40))
def test_firmware_accepts_every_frame_we_encode(
    messages: list[HostMessage], first_seq: int, chunk: int, garbage: bytes
) -> None:
    """Host frames, after garbage and in any chunking, reach the firmware intact."""
    encoder = FrameEncoder(first_seq=first_seq)
    wire = garbage + b"".join(encoder.encode(m) for m in messages)
    reader = fw.FrameReader()
    got = []
    for start in range(0, len(wire), chunk):
        got += reader.feed(wire[start:start + chunk])
    expected = [(int(message_type(m)), (first_seq + i) % 0x10000, encode_payload(m))
                for i, m in enumerate(messages)]
    # Garbage before the first delimiter may make one bad segment; never a frame.
    assert got == expected


@settings(max_examples=100)
@given(st.binary(max_size=3000))
def test_firmware_reader_survives_any_bytes(data: bytes) -> None:
    """Noise never raises and never yields a frame whose CRC did not check."""
    reader = fw.FrameReader()
    for msg_type, seq, payload in reader.feed(data):
        assert 0 <= seq <= 0xFFFF
        assert 0 <= msg_type <= 0xFF
        assert len(payload) <= fw.MAX_PAYLOAD_SIZE


def test_fault_text_is_cut_at_a_character_boundary() -> None:
    """A long fault text is cut to 64 bytes without splitting a UTF-8 character,
    and still decodes (a fault must always be reportable)."""
    text = "é" * 40  # 80 bytes
    wire = fw.FrameWriter().frame(fw.READER_FAULT, fw.fault_payload(3, None, text))
    [got] = FrameDecoder().feed(wire)
    assert got.message == ReaderFault(3, None, "é" * 32)


def test_out_of_range_fields_are_refused() -> None:
    rng = random.Random(1)
    with pytest.raises(fw.ProtocolError):
        fw.tag_payload(16, rng.randbytes(7))
    with pytest.raises(fw.ProtocolError):
        fw.tag_payload(0, rng.randbytes(3))
    with pytest.raises(fw.ProtocolError):
        fw.inventory_payload(0, 1, [rng.randbytes(7)] * 65)
    with pytest.raises(fw.ProtocolError):
        fw.hello_payload(0x10000, 4, (1, 0, 0))
