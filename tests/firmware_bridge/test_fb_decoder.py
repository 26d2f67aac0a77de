"""The sans-I/O stream decoder: spec vectors, chunking, garbage, malformed input."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from protocol_vectors import HOST_VECTORS, READER_VECTORS, doc_vectors, invalid_vector_sources

from firmware_bridge.decoder import DecoderStats, FrameDecoder, Received
from firmware_bridge.emulator import sample_traffic
from firmware_bridge.encoder import FrameEncoder
from firmware_bridge.frames import MAX_ENCODED_SIZE
from firmware_bridge.messages import Direction, Heartbeat, Hello, Message, TagArrived, TagLeft

DOC_READER = doc_vectors("vectors")
DOC_HOST = doc_vectors("host-vectors")
DOC_INVALID = doc_vectors("invalid-vectors")
GOOD_HEARTBEAT = DOC_READER["heartbeat"][1]

# Garbage without any 0x00 (merges with nothing) and with zeros (fake delimiters).
GARBAGE = [
    b"\xff\xfe\x13\x37",
    b"\x00\x00\x07garbage\x00\x05",
    bytes(range(256)),
    b"$GPGGA,123519,4807.038,N*47\r\n",
]


def expected(vectors: dict[str, tuple[int, Message]]) -> list[Received]:
    return [Received(seq, message) for seq, message in vectors.values()]


def decode_all(data: bytes, direction: Direction = Direction.READER_TO_HOST) -> list[Received]:
    return FrameDecoder(direction).feed(data)


# --- the spec's vectors ------------------------------------------------------


def test_doc_lists_exactly_the_defined_vectors() -> None:
    assert set(DOC_READER) == set(READER_VECTORS)
    assert set(DOC_HOST) == set(HOST_VECTORS)
    assert set(DOC_INVALID) == set(invalid_vector_sources())


@pytest.mark.parametrize("name", sorted(READER_VECTORS))
def test_encoder_produces_the_doc_bytes(name: str) -> None:
    seq, message = READER_VECTORS[name]
    assert FrameEncoder(first_seq=seq).encode(message) == DOC_READER[name][1]


@pytest.mark.parametrize("name", sorted(HOST_VECTORS))
def test_host_encoder_produces_the_doc_bytes(name: str) -> None:
    seq, message = HOST_VECTORS[name]
    assert FrameEncoder(first_seq=seq).encode(message) == DOC_HOST[name][1]
    decoded = decode_all(DOC_HOST[name][1], Direction.HOST_TO_READER)
    assert decoded == [Received(seq, message)]


@pytest.mark.parametrize("name", sorted(READER_VECTORS))
def test_vector_fed_whole(name: str) -> None:
    seq, message = READER_VECTORS[name]
    decoder = FrameDecoder()
    assert decoder.feed(DOC_READER[name][1]) == [Received(seq, message)]
    stats = decoder.stats
    assert stats.frames_ok == 1
    assert stats.errors == 0
    assert decoder.pending == 0


@pytest.mark.parametrize("name", sorted(READER_VECTORS))
def test_vector_fed_one_byte_at_a_time(name: str) -> None:
    seq, message = READER_VECTORS[name]
    decoder = FrameDecoder()
    wire = DOC_READER[name][1]
    out: list[Received] = []
    for index in range(len(wire)):
        got = decoder.feed(wire[index : index + 1])
        # Nothing before the closing delimiter: incomplete is not an error.
        assert got == [] or index == len(wire) - 1
        out += got
    assert out == [Received(seq, message)]
    assert decoder.stats.errors == 0


def test_all_vectors_joined() -> None:
    wire = b"".join(DOC_READER[name][1] for name in READER_VECTORS)
    decoder = FrameDecoder()
    assert decoder.feed(wire) == expected(READER_VECTORS)
    assert decoder.stats.errors == 0


def test_all_vectors_joined_without_leading_delimiters() -> None:
    # A sender that writes only the closing delimiter is understood too.
    wire = b"".join(DOC_READER[name][1][1:] for name in READER_VECTORS)
    assert decode_all(wire) == expected(READER_VECTORS)


@pytest.mark.parametrize("garbage", GARBAGE)
@pytest.mark.parametrize("name", sorted(READER_VECTORS))
def test_vector_with_garbage_before_and_after(name: str, garbage: bytes) -> None:
    seq, message = READER_VECTORS[name]
    decoder = FrameDecoder()
    got = decoder.feed(garbage + DOC_READER[name][1] + garbage)
    assert got == [Received(seq, message)]


def test_garbage_between_every_frame() -> None:
    wire = GARBAGE[1].join(DOC_READER[name][1] for name in READER_VECTORS)
    assert decode_all(wire) == expected(READER_VECTORS)


def test_incomplete_frame_waits_and_is_not_counted() -> None:
    decoder = FrameDecoder()
    assert decoder.feed(GOOD_HEARTBEAT[:-1]) == []
    assert decoder.stats == DecoderStats(bytes_received=len(GOOD_HEARTBEAT) - 1)
    assert decoder.pending > 0
    assert decoder.feed(b"\x00") == [Received(7, Heartbeat(3_600_000, 24_000))]


def test_reset_stream_drops_the_partial_frame_but_keeps_counters() -> None:
    decoder = FrameDecoder()
    decoder.feed(DOC_INVALID["zero_length_body"][1] + GOOD_HEARTBEAT[:-3])
    decoder.reset_stream()
    assert decoder.pending == 0
    assert decoder.stats.truncated == 1
    assert len(decoder.feed(GOOD_HEARTBEAT)) == 1


# --- malformed input: one named regression test each -------------------------


def assert_rejected(name: str) -> None:
    """The invalid vector ``name`` yields nothing, counts once, and the next frame decodes."""
    counter, wire = DOC_INVALID[name]
    assert counter is not None
    source_counter, source_wire = invalid_vector_sources()[name]
    assert (counter, wire) == (source_counter, source_wire), "doc and test source disagree"
    decoder = FrameDecoder()
    assert decoder.feed(wire) == []
    stats = decoder.stats
    assert getattr(stats, counter) == 1
    assert stats.errors == 1
    assert stats.frames_ok == 0
    # Back in sync at once: a good frame right after is decoded.
    assert len(decoder.feed(GOOD_HEARTBEAT)) == 1


def test_regression_bit_flip_in_payload() -> None:
    assert_rejected("bit_flip_in_payload")


def test_regression_crc_bytes_swapped() -> None:
    assert_rejected("crc_bytes_swapped")


def test_regression_cobs_group_runs_past_end() -> None:
    assert_rejected("cobs_group_runs_past_end")


def test_regression_zero_length_body() -> None:
    assert_rejected("zero_length_body")


def test_regression_body_shorter_than_header_and_crc() -> None:
    assert_rejected("body_shorter_than_header_and_crc")


def test_regression_crc_ok_payload_too_short() -> None:
    assert_rejected("crc_ok_payload_too_short")


def test_regression_unknown_type() -> None:
    assert_rejected("unknown_type_0x42")


def test_regression_host_type_from_reader() -> None:
    assert_rejected("host_type_from_reader")


def test_regression_bad_protocol_version() -> None:
    assert_rejected("protocol_version_2")


def test_regression_antenna_16() -> None:
    assert_rejected("antenna_16")


def test_regression_uid_3_bytes() -> None:
    assert_rejected("uid_3_bytes")


def test_regression_trailing_payload_byte() -> None:
    assert_rejected("trailing_payload_byte")


def test_regression_rssi_flag_without_the_strength_is_truncated() -> None:
    assert_rejected("rssi_missing")


def test_regression_rssi_out_of_range_is_malformed() -> None:
    assert_rejected("rssi_out_of_range")


def test_regression_inventory_strength_block_shorter_than_the_tags() -> None:
    assert_rejected("inventory_rssi_block_short")


def test_regression_a_strength_byte_without_the_flag_is_malformed() -> None:
    # A stray byte after the UID must not read as a strength: see the next test.
    assert_rejected("rssi_without_flag")


def test_regression_a_zero_appended_to_a_body_invents_no_strength() -> None:
    # COBS + CRC-16/CCITT-FALSE let a body with one zero appended through (found by
    # test_corruption_never_raises_and_never_invents_a_message once a strength could
    # follow the UID): the CRC's high byte then follows the UID. Without the flag
    # that is a malformed frame, as before strengths existed.
    frame = FrameEncoder(first_seq=3).encode(TagArrived(0, "D455A25B24C2E1BB"))
    stray = frame[:-1] + b"\x01" + frame[-1:]
    decoder = FrameDecoder()
    assert decoder.feed(stray) == []
    assert decoder.stats.malformed == 1


def test_regression_oversized_run_in_one_chunk() -> None:
    decoder = FrameDecoder()
    run = b"\x00" + b"\x42" * (MAX_ENCODED_SIZE + 500) + b"\x00"
    assert decoder.feed(run + GOOD_HEARTBEAT) == [Received(7, Heartbeat(3_600_000, 24_000))]
    assert decoder.stats.oversized == 1
    assert decoder.stats.errors == 1


def test_regression_oversized_run_trickled_is_counted_once_and_buffer_stays_bounded() -> None:
    decoder = FrameDecoder()
    for _ in range(100):  # 100 kB of babble without a delimiter
        assert decoder.feed(b"\x42" * 1000) == []
        assert decoder.pending <= MAX_ENCODED_SIZE
    assert decoder.stats.oversized == 1
    # The tail of the babble up to the next delimiter is dropped, then all is well.
    assert decoder.feed(b"\x42\x42" + GOOD_HEARTBEAT) == [Received(7, Heartbeat(3_600_000, 24_000))]
    assert decoder.stats.errors == 1


def test_regression_idle_delimiters_are_not_errors() -> None:
    decoder = FrameDecoder()
    assert decoder.feed(b"\x00" * 50) == []
    assert decoder.stats.errors == 0


# --- sequence numbers --------------------------------------------------------


def test_sequence_gap_counts_missed_frames() -> None:
    encoder = FrameEncoder()
    frames = [encoder.encode(Heartbeat(index, index)) for index in range(10)]
    decoder = FrameDecoder()
    decoder.feed(b"".join(frames[:3] + frames[6:]))  # frames 3, 4, 5 lost
    assert decoder.stats.frames_missed == 3


def test_sequence_wraps_without_a_gap() -> None:
    encoder = FrameEncoder(first_seq=0xFFFE)
    decoder = FrameDecoder()
    got = decoder.feed(b"".join(encoder.encode(Heartbeat(1, 1)) for _ in range(4)))
    assert [item.seq for item in got] == [0xFFFE, 0xFFFF, 0, 1]
    assert decoder.stats.frames_missed == 0
    assert decoder.stats.sequence_resets == 0


def test_hello_restarts_sequence_tracking() -> None:
    decoder = FrameDecoder()
    decoder.feed(FrameEncoder(first_seq=500).encode(Heartbeat(1, 1)))
    rebooted = FrameEncoder()
    decoder.feed(rebooted.encode(Hello(1, (1, 0, 0), 8)) + rebooted.encode(Heartbeat(2, 2)))
    assert decoder.stats.frames_missed == 0
    assert decoder.stats.sequence_resets == 0


def test_sequence_going_backwards_without_hello_is_a_reset() -> None:
    decoder = FrameDecoder()
    decoder.feed(FrameEncoder(first_seq=500).encode(Heartbeat(1, 1)))
    decoder.feed(FrameEncoder(first_seq=3).encode(Heartbeat(2, 2)))
    assert decoder.stats.sequence_resets == 1
    assert decoder.stats.frames_missed == 0


# --- properties --------------------------------------------------------------

TRAFFIC_SEEDS = st.integers(min_value=0, max_value=2**32 - 1)


def traffic(seed: int, count: int) -> tuple[list[Received], bytes]:
    rng = random.Random(seed)
    encoder = FrameEncoder(first_seq=rng.randrange(0x10000))
    sent: list[Received] = []
    wire = bytearray()
    for message in sample_traffic(rng, count):
        seq = encoder.next_seq
        wire += encoder.encode(message)
        sent.append(Received(seq, message))
    return sent, bytes(wire)


@given(seed=TRAFFIC_SEEDS, cuts=st.lists(st.integers(min_value=0, max_value=5000), max_size=40))
def test_any_chunking_gives_identical_messages(seed: int, cuts: list[int]) -> None:
    sent, wire = traffic(seed, 30)
    points = sorted({cut % (len(wire) + 1) for cut in cuts})
    chunks = [wire[a:b] for a, b in zip([0, *points], [*points, len(wire)], strict=True)]
    decoder = FrameDecoder()
    got: list[Received] = []
    for chunk in chunks:
        got += decoder.feed(chunk)
    assert got == sent
    assert decoder.stats.errors == 0
    assert decoder.stats.frames_missed == 0


corruptions = st.lists(
    st.tuples(
        st.sampled_from(["flip", "insert", "delete", "zero"]),
        st.integers(min_value=0, max_value=10_000),
        st.integers(min_value=1, max_value=255),
    ),
    min_size=1,
    max_size=20,
)


# derandomize: CRC-16 lets about 1 in 65536 corrupted frames through by design; a fixed
# example sequence keeps this property deterministic instead of flaky at that rate.
@settings(derandomize=True, max_examples=300)
@given(seed=TRAFFIC_SEEDS, edits=corruptions, chunk=st.integers(min_value=1, max_value=64))
def test_corruption_never_raises_and_never_invents_a_message(
    seed: int, edits: list[tuple[str, int, int]], chunk: int
) -> None:
    sent, wire = traffic(seed, 20)
    data = bytearray(wire)
    for kind, position, value in edits:
        index = position % (len(data) + 1)
        if kind == "insert":
            data.insert(index, value)
        elif index < len(data):
            if kind == "flip":
                data[index] ^= value
            elif kind == "zero":
                data[index] = 0
            else:
                del data[index]
    decoder = FrameDecoder()
    got: list[Received] = []
    for start in range(0, len(data), chunk):
        got += decoder.feed(bytes(data[start : start + chunk]))
    # Every accepted message was sent, in the order sent (a subsequence).
    remaining = iter(sent)
    assert all(any(item == candidate for candidate in remaining) for item in got)


@given(st.binary(max_size=3000), st.integers(min_value=1, max_value=200))
def test_random_bytes_never_raise(data: bytes, chunk: int) -> None:
    decoder = FrameDecoder()
    for start in range(0, len(data), chunk):
        decoder.feed(data[start : start + chunk])
    assert decoder.pending <= MAX_ENCODED_SIZE


def test_tag_messages_keep_uid_case_and_antenna() -> None:
    encoder = FrameEncoder()
    wire = encoder.encode(TagArrived(9, "0A0B0C0D")) + encoder.encode(TagLeft(9, "0A0B0C0D"))
    got = [item.message for item in decode_all(wire)]
    assert got == [TagArrived(9, "0A0B0C0D"), TagLeft(9, "0A0B0C0D")]
