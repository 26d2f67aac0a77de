"""CRC-16/CCITT-FALSE, COBS and the frame envelope (firmware_bridge.frames)."""

from __future__ import annotations

import binascii

import pytest
from hypothesis import given
from hypothesis import strategies as st

from firmware_bridge.frames import (
    CRC_CHECK_VALUE,
    MAX_BODY_SIZE,
    MAX_ENCODED_SIZE,
    MAX_PAYLOAD_SIZE,
    CobsError,
    FrameEncodeError,
    FrameError,
    RawFrame,
    cobs_decode,
    cobs_encode,
    crc16_ccitt_false,
    deserialize,
    encode_body,
    parse_segment,
    serialize,
)


def test_crc_check_value() -> None:
    assert crc16_ccitt_false(b"123456789") == CRC_CHECK_VALUE == 0x29B1


def test_crc_of_empty_input_is_the_initial_value() -> None:
    assert crc16_ccitt_false(b"") == 0xFFFF


@given(st.binary(max_size=300))
def test_crc_matches_binascii_crc_hqx(data: bytes) -> None:
    # binascii.crc_hqx is the same polynomial, unreflected: an independent reference.
    assert crc16_ccitt_false(data) == binascii.crc_hqx(data, 0xFFFF)


@given(st.binary(max_size=300))
def test_crc_is_incremental(data: bytes) -> None:
    half = len(data) // 2
    assert crc16_ccitt_false(data[half:], crc16_ccitt_false(data[:half])) == crc16_ccitt_false(
        data
    )


# Examples from the COBS paper / Wikipedia's "Consistent Overhead Byte Stuffing".
COBS_EXAMPLES = [
    (b"\x00", b"\x01\x01"),
    (b"\x00\x00", b"\x01\x01\x01"),
    (b"\x00\x11\x00", b"\x01\x02\x11\x01"),
    (b"\x11\x22\x00\x33", b"\x03\x11\x22\x02\x33"),
    (b"\x11\x22\x33\x44", b"\x05\x11\x22\x33\x44"),
    (b"\x11\x00\x00\x00", b"\x02\x11\x01\x01\x01"),
    (bytes(range(1, 255)), b"\xff" + bytes(range(1, 255))),
    (bytes(range(255)), b"\x01\xff" + bytes(range(1, 255))),
    (bytes(range(1, 256)), b"\xff" + bytes(range(1, 255)) + b"\x02\xff"),
    (bytes(range(2, 256)) + b"\x00", b"\xff" + bytes(range(2, 256)) + b"\x01\x01"),
    (bytes(range(3, 256)) + b"\x00\x01", b"\xfe" + bytes(range(3, 256)) + b"\x02\x01"),
]


@pytest.mark.parametrize(("raw", "encoded"), COBS_EXAMPLES)
def test_cobs_reference_examples(raw: bytes, encoded: bytes) -> None:
    assert cobs_encode(raw) == encoded
    assert cobs_decode(encoded) == raw


@given(st.binary(max_size=1200))
def test_cobs_round_trip_has_no_zeros_and_bounded_overhead(data: bytes) -> None:
    encoded = cobs_encode(data)
    assert b"\x00" not in encoded
    assert len(encoded) <= len(data) + 1 + len(data) // 254
    assert cobs_decode(encoded) == data


def test_cobs_decode_rejects_a_group_past_the_end() -> None:
    with pytest.raises(CobsError):
        cobs_decode(b"\x05\x01\x02")


def test_cobs_decode_rejects_a_zero_byte() -> None:
    with pytest.raises(CobsError):
        cobs_decode(b"\x02\x01\x00")


def test_serialize_wraps_body_in_delimiters_and_round_trips() -> None:
    frame = RawFrame(msg_type=0x05, seq=0xABCD, payload=b"\x00\x01\x02")
    wire = serialize(frame)
    assert wire[0] == 0
    assert wire[-1] == 0
    assert b"\x00" not in wire[1:-1]
    assert parse_segment(wire[1:-1]) == frame


def test_body_crc_residue_is_zero() -> None:
    body = encode_body(RawFrame(msg_type=1, seq=2, payload=b"abc"))
    assert crc16_ccitt_false(body) == 0


def test_largest_payload_fits_the_encoded_limit() -> None:
    frame = RawFrame(msg_type=4, seq=1, payload=bytes([0x55]) * MAX_PAYLOAD_SIZE)
    assert len(encode_body(frame)) == MAX_BODY_SIZE
    wire = serialize(frame)
    assert len(wire) - 2 <= MAX_ENCODED_SIZE
    assert parse_segment(wire[1:-1]) == frame


def test_encoder_refuses_payload_over_the_limit() -> None:
    with pytest.raises(FrameEncodeError):
        encode_body(RawFrame(msg_type=4, seq=1, payload=bytes(MAX_PAYLOAD_SIZE + 1)))


def test_encoder_refuses_sequence_out_of_range() -> None:
    with pytest.raises(FrameEncodeError):
        encode_body(RawFrame(msg_type=4, seq=0x10000, payload=b""))


def test_deserialize_incomplete_is_not_an_error() -> None:
    wire = serialize(RawFrame(msg_type=5, seq=1, payload=bytes(8)))
    result, rest = deserialize(wire[:-4])
    assert result is None
    assert rest == wire[1:-4]


def test_deserialize_splits_frames_and_reports_corruption() -> None:
    first = serialize(RawFrame(msg_type=5, seq=1, payload=b"\x11" * 8))
    second = serialize(RawFrame(msg_type=5, seq=2, payload=bytes(8)))
    corrupt = bytearray(first)
    corrupt[7] ^= 0x01  # a payload byte, not a COBS code byte
    result, rest = deserialize(bytes(corrupt) + second)
    assert result is FrameError.CRC
    result, rest = deserialize(rest)
    assert isinstance(result, RawFrame)
    assert result.seq == 2
    assert deserialize(rest) == (None, b"")


def test_deserialize_oversized_run_without_delimiter() -> None:
    result, rest = deserialize(b"\x01" * (MAX_ENCODED_SIZE + 1))
    assert result is FrameError.OVERSIZED
    assert rest == b""
