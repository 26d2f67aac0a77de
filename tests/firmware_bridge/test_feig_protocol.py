"""The FEIG ISC host protocol (issue 23): frames, CRC and inventories as FEIG's public
manuals give them ([MR101] 2.1 and 6.1.1, [MR102] 3.3, [MU02] 10.1.1; see
firmware_bridge/feig/protocol.py), then the decoder fuzzed like ours: hypothesis round trips,
10^6 random bytes, and every frame mutated."""

from __future__ import annotations

import contextlib
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from firmware_bridge.feig.protocol import (
    CONTROL_ISO_HOST,
    MAX_FRAME,
    STATUS_MORE_DATA,
    STATUS_NO_TRANSPONDER,
    STX,
    FeigDecoder,
    FeigError,
    FeigTag,
    Frame,
    InventoryResponse,
    Side,
    crc16,
    crc16_bitwise,
    decode_inventory,
    encode_frame,
    encode_inventory,
    inventory_request,
)

UID = "E004015012345678"


# -- the manual's rules, byte by byte --------------------------------------------------------


def test_the_crc_is_the_manuals_algorithm() -> None:
    """[MR102] 3.3: the table-driven CRC equals the manual's bit loop on any bytes, and
    a frame's CRC goes LSB first, over every byte before it."""
    rng = random.Random(23)
    for length in range(64):
        data = rng.randbytes(length)
        assert crc16(data) == crc16_bitwise(data)
    assert crc16(b"") == 0xFFFF  # "Start Value 0xFFFF", no final XOR
    assert crc16(b"123456789") == 0x6F91  # CRC-16/MCRF4XX: the same parameters
    frame = encode_frame(Frame(0xFF, 0x65))
    assert frame[-2] | frame[-1] << 8 == crc16(frame[:-2])


def test_the_inventory_request_on_one_antenna_output() -> None:
    """[MR101] 6.1.1 REQUEST-DATA 0x01 MODE, with [MU02] 10.1.1's ANT bit (bit 4) and
    the ANT_SEL bit of the output; LENGTH counts every byte ([MR101] 2.1)."""
    assert encode_frame(inventory_request(0xFF, None)).hex(" ") == "07 ff b0 01 00 " + (
        encode_frame(inventory_request(0xFF, None))[-2:].hex(" "))
    request = encode_frame(inventory_request(0xFF, 2))
    assert request[:6] == bytes([0x08, 0xFF, 0xB0, 0x01, 0x10, 0x04])
    assert len(request) == request[0]
    more = encode_frame(inventory_request(3, 0, more=True))
    assert more[4] == 0x80 | 0x10  # MORE: "more data requested" after STATUS 0x94
    with pytest.raises(FeigError, match=r"0\.\.7"):
        inventory_request(0xFF, 8)


def test_a_response_without_antennas_is_tr_type_dsfid_uid() -> None:
    """[MR101] 6.1.1 RESPONSE-DATA (standard): DATA-SETS, then TR-TYPE DSFID UID(8)."""
    tags = (FeigTag(UID, 0x03, 0x00), FeigTag("E0040150A1B2C3D4", 0x03, 0x07))
    frame = encode_frame(encode_inventory(0x01, InventoryResponse(0x00, tags, False)))
    assert frame[:5] == bytes([len(frame), 0x01, 0xB0, 0x00, 0x02])
    assert frame[5:15] == bytes.fromhex("0300" + UID)
    [decoded] = FeigDecoder(Side.READER).feed(frame)
    assert decode_inventory(decoded, with_antennas=False).tags == tags


def test_a_response_with_antennas_names_each_output() -> None:
    """[MU02] 10.1.1 RESPONSE-DATA if ANT = 1: FLAGS TR-TYPE IDDT IDD_LEN IDD ANT_CNT
    and per antenna ANT_NR (1-based) ANT_STATUS 0xFF and four reserved bytes."""
    tag = FeigTag(UID, antennas=((2, 0x00), (3, 0x05)))
    frame = encode_frame(encode_inventory(0x01, InventoryResponse(0x00, (tag,), True)))
    data = frame[5:-2]
    assert data[:4] == bytes([0x00, 0x03, 0x00, 0x08])
    assert data[4:12] == bytes.fromhex(UID)
    assert data[12] == 2
    assert data[13:20] == bytes([3, 0x00, 0xFF, 0, 0, 0, 0])
    assert data[20:22] == bytes([4, 0x05])
    [decoded] = FeigDecoder(Side.READER).feed(frame)
    assert decode_inventory(decoded, with_antennas=True).tags == (tag,)


def test_no_transponder_and_more_data_statuses() -> None:
    """[MR101] ANNEX D: 0x01 No Transponder carries no data; 0x94 more data sets."""
    empty = encode_frame(Frame(0x01, CONTROL_ISO_HOST, b"", STATUS_NO_TRANSPONDER))
    assert empty == bytes([6, 0x01, 0xB0, 0x01]) + empty[4:]
    [frame] = FeigDecoder(Side.READER).feed(empty)
    assert decode_inventory(frame, with_antennas=True).tags == ()
    more = InventoryResponse(STATUS_MORE_DATA, (FeigTag(UID),), False)
    assert decode_inventory(encode_inventory(1, more), with_antennas=False).more


def test_a_long_response_takes_the_advanced_frame() -> None:
    """[MR101] 2.1: past 255 bytes the reader answers with STX and a 2-byte ALENGTH."""
    tags = tuple(FeigTag(f"E0040150{i:08X}") for i in range(30))
    frame = encode_frame(encode_inventory(1, InventoryResponse(0x00, tags, False)))
    assert frame[0] == STX
    assert frame[1] << 8 | frame[2] == len(frame) == 6 + 1 + 30 * 10 + 2
    [decoded] = FeigDecoder(Side.READER).feed(frame)
    assert decoded.advanced
    assert decode_inventory(decoded, with_antennas=False).tags == tags


@pytest.mark.parametrize(("data", "problem"), [
    (bytes([2, 0, 3, 0x00, 0x08]), "IDD_LEN 8 runs past"),
    (bytes([1, 0, 3, 0, 8]) + bytes.fromhex(UID) + bytes([2]), "ANT_CNT 2 runs past"),
    (bytes([1, 0, 3, 0, 8]) + bytes.fromhex(UID) + bytes([1, 0, 0, 0xFF, 0, 0, 0, 0]),
     "ANT_NR 0"),
    (bytes([1, 0, 3, 0, 8]) + bytes.fromhex(UID) + bytes([0, 9]), "1 bytes after"),
    (b"", "no DATA-SETS"),
])
def test_malformed_inventories_are_refused_naming_the_field(data: bytes, problem: str) -> None:
    with pytest.raises(FeigError, match=problem):
        decode_inventory(Frame(1, CONTROL_ISO_HOST, data, 0x00), with_antennas=True)


# -- the stream decoder ------------------------------------------------------------------------


def test_garbage_before_a_frame_is_skipped_and_counted_once() -> None:
    frame = encode_frame(encode_inventory(1, InventoryResponse(0, (FeigTag(UID),), False)))
    decoder = FeigDecoder(Side.READER)
    assert decoder.feed(bytes([0x00, 0x01, 0x03]) + frame)[0].control == CONTROL_ISO_HOST
    assert decoder.stats.truncated == 1  # three bytes too small to be a LENGTH: one run
    assert decoder.stats.bytes_skipped == 3


def test_a_noise_length_byte_is_given_up_by_resync() -> None:
    """A noise byte that reads as a long LENGTH hides the frame behind it until the
    link, its answer overdue, asks the decoder to resynchronise."""
    frame = encode_frame(encode_inventory(1, InventoryResponse(0, (FeigTag(UID),), False)))
    decoder = FeigDecoder(Side.READER)
    assert decoder.feed(bytes([0xF0]) + frame) == []
    [found] = decoder.resync()
    assert decode_inventory(found, with_antennas=False).tags[0].uid == UID


def test_an_oversized_alength_is_refused_at_once() -> None:
    decoder = FeigDecoder(Side.READER)
    assert decoder.feed(bytes([STX, (MAX_FRAME + 1) >> 8, (MAX_FRAME + 1) & 0xFF])) == []
    assert decoder.stats.oversized == 1


tags = st.builds(
    FeigTag,
    st.binary(min_size=8, max_size=8).map(lambda b: b.hex().upper()),
    st.integers(0, 255),
    st.integers(0, 255),
    st.lists(st.tuples(st.integers(0, 7), st.integers(0, 255)), max_size=3,
             unique_by=lambda a: a[0]).map(tuple),
)


@given(st.integers(0, 254), st.lists(tags, max_size=40), st.booleans(),
       st.sampled_from([0x00, 0x94]), st.integers(1, 40))
def test_inventory_round_trips_through_frames_in_any_chunks(
        com_adr: int, sets: list[FeigTag], with_antennas: bool, status: int,
        chunk: int) -> None:
    """Any inventory encodes to frames (standard or advanced) that decode, fed in any
    chunk size, to the same data sets."""
    if not with_antennas:
        sets = [FeigTag(t.uid, t.tr_type, t.dsfid) for t in sets]
    else:
        sets = [FeigTag(t.uid, t.tr_type, 0, t.antennas) for t in sets]
    response = InventoryResponse(status, tuple(sets), with_antennas)
    wire = encode_frame(encode_inventory(com_adr, response)) * 2
    decoder = FeigDecoder(Side.READER)
    frames = [f for i in range(0, len(wire), chunk) for f in decoder.feed(wire[i:i + chunk])]
    assert len(frames) == 2
    for frame in frames:
        assert frame.com_adr == com_adr
        assert decode_inventory(frame, with_antennas=with_antennas) == response
    assert decoder.stats.bytes_skipped == 0


@given(st.integers(0, 255), st.integers(0, 255), st.binary(max_size=300),
       st.one_of(st.none(), st.integers(0, 255)), st.booleans())
def test_any_frame_round_trips(com_adr: int, control: int, data: bytes, status: int | None,
                               advanced: bool) -> None:
    frame = Frame(com_adr, control, data, status, advanced or len(data) > 240)
    side = Side.HOST if status is None else Side.READER
    [back] = FeigDecoder(side).feed(encode_frame(frame))
    assert back == frame


@given(st.binary(max_size=2000), st.integers(1, 64))
def test_random_bytes_never_raise(data: bytes, chunk: int) -> None:
    decoder = FeigDecoder(Side.READER)
    for i in range(0, len(data), chunk):
        for frame in decoder.feed(data[i:i + chunk]):
            with contextlib.suppress(FeigError):
                decode_inventory(frame, with_antennas=True)
    decoder.resync()
    assert decoder.stats.bytes_received == len(data)


def test_a_million_random_bytes_without_a_failure() -> None:
    """10^6 random bytes through the link's decoder (CONTROL 0xB0 only) and every
    frame found through the inventory parser: nothing raises, and a frame sent after
    the noise still decodes."""
    rng = random.Random(2311)
    noise = rng.randbytes(10**6)
    decoder = FeigDecoder(Side.READER, frozenset({CONTROL_ISO_HOST}))
    for i in range(0, len(noise), 512):
        for frame in decoder.feed(noise[i:i + 512]):
            with contextlib.suppress(FeigError):
                decode_inventory(frame, with_antennas=True)
    decoder.resync()
    good = encode_frame(encode_inventory(1, InventoryResponse(0, (FeigTag(UID),), False)))
    found = decoder.feed(good) or decoder.resync()
    assert decode_inventory(found[-1], with_antennas=False).tags[0].uid == UID


def test_every_single_byte_mutation_is_caught() -> None:
    """Every position of a real frame, each value changed: the decoder never yields a
    frame that differs from what was sent (the CRC catches it), and the good frame
    after it still comes through."""
    tags_sent = (FeigTag(UID, antennas=((1, 0),)), FeigTag("E0040150A1B2C3D4"))
    sent = encode_frame(encode_inventory(7, InventoryResponse(0, tags_sent, True)))
    [expected] = FeigDecoder(Side.READER).feed(sent)
    rng = random.Random(5)
    for position in range(len(sent)):
        for _ in range(8):
            mutated = bytearray(sent)
            mutated[position] ^= rng.randrange(1, 256)
            decoder = FeigDecoder(Side.READER)
            frames = decoder.feed(bytes(mutated) + sent) + decoder.resync()
            assert all(frame == expected for frame in frames), position
            assert frames, position
