"""The optional strength (RSSI) of TAG_ARRIVED and INVENTORY (docs/protocol.md, issue 19):
round trips, old frames decode as before, bad strengths are clear decode errors, and
the emulated firmware reports the strengths its RF channel gives."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from firmware_bridge.decoder import FrameDecoder, Received
from firmware_bridge.emulator import FirmwareModel
from firmware_bridge.encoder import FrameEncoder
from firmware_bridge.frames import RawFrame, serialize
from firmware_bridge.messages import (
    MAX_INVENTORY_TAGS,
    MAX_RSSI_DBM,
    MIN_RSSI_DBM,
    Inventory,
    MessageError,
    MessageType,
    PayloadError,
    TagArrived,
    decode_payload,
    encode_payload,
)

UIDS = st.binary(min_size=4, max_size=10).map(lambda b: b.hex().upper())
STRENGTHS = st.integers(MIN_RSSI_DBM, MAX_RSSI_DBM)
ARRIVALS = st.builds(TagArrived, st.integers(0, 15), UIDS, st.none() | STRENGTHS)


@st.composite
def inventories(draw: st.DrawFn) -> Inventory:
    uids = tuple(draw(st.lists(UIDS, max_size=MAX_INVENTORY_TAGS)))
    rssi = draw(st.none() | st.tuples(*[st.none() | STRENGTHS for _ in uids]))
    return Inventory(draw(st.integers(0, 15)), draw(st.integers(0, 2**32 - 1)), uids, rssi)


@given(st.lists(ARRIVALS | inventories(), max_size=12))
def test_messages_with_and_without_strengths_round_trip(messages: list[object]) -> None:
    encoder = FrameEncoder()
    wire = b""
    sent = []
    for message in messages:
        assert isinstance(message, TagArrived | Inventory)
        sent.append(Received(encoder.next_seq, message))
        wire += encoder.encode(message)
    decoder = FrameDecoder()
    assert decoder.feed(wire) == sent
    assert decoder.stats.errors == 0


@given(ARRIVALS | inventories())
def test_a_message_without_strength_is_byte_for_byte_the_old_frame(message: object) -> None:
    assert isinstance(message, TagArrived | Inventory)
    if isinstance(message, TagArrived):
        old = bytes((message.antenna, len(message.uid) // 2)) + bytes.fromhex(message.uid)
        plain = TagArrived(message.antenna, message.uid)
    else:
        old = encode_payload(Inventory(message.antenna, message.scan_cycle, message.uids))
        plain = Inventory(message.antenna, message.scan_cycle, message.uids)
    assert encode_payload(plain) == old
    assert decode_payload(MessageType(0x02 if isinstance(plain, TagArrived) else 0x04),
                          old) == plain
    if isinstance(message, TagArrived) and message.rssi is not None:
        assert encode_payload(message)[0] == message.antenna | 0x80
        assert encode_payload(message)[1:-1] == old[1:]


@given(st.sampled_from([0x02, 0x04]), st.binary(max_size=80))
def test_any_payload_bytes_decode_or_fail_clearly(msg_type: int, payload: bytes) -> None:
    try:
        message = decode_payload(MessageType(msg_type), payload)
    except PayloadError:
        return
    # Whatever decodes re-encodes to the very same bytes (one spelling per message).
    assert encode_payload(message) == payload


@given(ARRIVALS | inventories(), st.data())
def test_a_cut_strength_is_a_truncated_frame(message: object, data: st.DataObject) -> None:
    assert isinstance(message, TagArrived | Inventory)
    strengths = (1 if message.rssi is not None else 0) if isinstance(message, TagArrived) \
        else (len(message.rssi) if message.rssi is not None else 0)
    if strengths == 0:
        return
    payload = encode_payload(message)
    cut = data.draw(st.integers(1, strengths))
    with pytest.raises(PayloadError) as raised:
        decode_payload(MessageType(0x02 if isinstance(message, TagArrived) else 0x04),
                       payload[:-cut])
    assert raised.value.truncated


@given(st.integers(-128, 127).filter(lambda v: not MIN_RSSI_DBM <= v <= MAX_RSSI_DBM))
def test_a_strength_out_of_range_is_malformed(value: int) -> None:
    payload = bytes((0x80 | 3, 4)) + bytes.fromhex("04A1B2C3") + value.to_bytes(1, "big",
                                                                              signed=True)
    with pytest.raises(PayloadError) as raised:
        decode_payload(MessageType.TAG_ARRIVED, payload)
    assert not raised.value.truncated
    decoder = FrameDecoder()
    assert decoder.feed(serialize(RawFrame(0x02, 0, payload))) == []
    assert decoder.stats.malformed == 1


def test_strengths_are_checked_when_a_message_is_built() -> None:
    with pytest.raises(MessageError):
        TagArrived(0, "04A1B2C3", rssi=21)
    with pytest.raises(MessageError):
        Inventory(0, 1, ("04A1B2C3",), rssi=(-40, -41))
    assert Inventory(0, 1, ("04A1B2C3", "04A1B2C4"), rssi=(-40, None)).strengths() == {
        "04A1B2C3": -40.0}
    assert Inventory(0, 1, ("04A1B2C3",)).strengths() == {}


def test_the_emulated_firmware_reports_the_channels_strengths() -> None:
    reads: dict[int, list[str | tuple[str, float]]] = {0: [("04A1B2C3", -44.6)],
                                                       1: [("04A1B2C3", -200.0), "04A1B2C4"]}
    model = FirmwareModel(1, antenna_count=2, reads=lambda antenna, now: reads[antenna])
    assert model.scan(0.15) == [TagArrived(0, "04A1B2C3", -45),
                                TagArrived(1, "04A1B2C3", MIN_RSSI_DBM),
                                TagArrived(1, "04A1B2C4")]
    assert model.inventory(1) == Inventory(1, 1, ("04A1B2C3", "04A1B2C4"),
                                           (MIN_RSSI_DBM, None))
    plain = FirmwareModel(2, antenna_count=1)
    plain.place(0, "04A1B2C3")
    assert plain.scan() == [TagArrived(0, "04A1B2C3")]
    assert plain.inventory(0).rssi is None
