"""The reader emulator's pure parts: firmware model and noise channel."""

from __future__ import annotations

import random

import pytest

from firmware_bridge.emulator import FirmwareModel, NoiseChannel, random_uid, sample_traffic
from firmware_bridge.messages import (
    FaultCode,
    Hello,
    Identify,
    Inventory,
    MessageError,
    ReaderFault,
    RequestInventory,
    TagArrived,
    TagLeft,
)


def test_scan_reports_arrivals_and_departures_once() -> None:
    model = FirmwareModel(3, antenna_count=4)
    model.place(2, "04a1b2c3")
    assert model.scan() == [TagArrived(2, "04A1B2C3")]
    assert model.scan() == []
    model.remove(2, "04A1B2C3")
    assert model.scan() == [TagLeft(2, "04A1B2C3")]
    assert model.scan() == []


def test_inventory_lists_reported_tags_per_antenna() -> None:
    model = FirmwareModel(3, antenna_count=2)
    model.place(0, "04A1B2C3")
    model.place(0, "E0040150A1B2C3D4")
    model.scan()
    assert model.inventories() == [
        Inventory(0, 1, ("04A1B2C3", "E0040150A1B2C3D4")),
        Inventory(1, 1, ()),
    ]


def test_stacked_card_dropouts_flicker_without_firmware_debounce() -> None:
    model = FirmwareModel(1, dropout_probability=0.3, rng=random.Random(5))
    model.place(0, "04A1B2C3")
    events = [event for _ in range(200) for event in model.scan()]
    lefts = [event for event in events if isinstance(event, TagLeft)]
    arrivals = [event for event in events if isinstance(event, TagArrived)]
    assert lefts, "a card that never moved was reported gone: the host must debounce"
    assert len(arrivals) - len(lefts) in (0, 1)


def test_firmware_debounce_hides_single_dropouts() -> None:
    model = FirmwareModel(1, dropout_probability=0.1, leave_after_misses=20, rng=random.Random(5))
    model.place(0, "04A1B2C3")
    events = [event for _ in range(300) for event in model.scan()]
    assert events == [TagArrived(0, "04A1B2C3")]


def test_commands_are_answered() -> None:
    model = FirmwareModel(9, antenna_count=2, firmware_version=(2, 1, 0))
    assert model.handle(Identify()) == [Hello(9, (2, 1, 0), 2)]
    assert model.handle(RequestInventory(1)) == [Inventory(1, 0, ())]
    assert len(model.handle(RequestInventory(None))) == 2
    fault = model.handle(RequestInventory(5))
    assert fault == [ReaderFault(FaultCode.ANTENNA_OPEN, 5, "no such antenna")]


def test_boot_forgets_reported_tags_but_not_the_table() -> None:
    model = FirmwareModel(1)
    model.place(1, "04A1B2C3")
    model.scan()
    model.boot()
    assert model.reported(1) == ()
    assert model.placed(1) == ("04A1B2C3",)
    assert model.scan() == [TagArrived(1, "04A1B2C3")]


def test_place_rejects_bad_uid_and_antenna() -> None:
    model = FirmwareModel(1, antenna_count=4)
    with pytest.raises(MessageError):
        model.place(0, "04A1B2")
    with pytest.raises(ValueError, match="antenna"):
        model.place(4, "04A1B2C3")


def test_quiet_channel_is_the_identity() -> None:
    channel = NoiseChannel()
    data = bytes(range(256)) * 4
    assert channel.corrupt(data) == data
    assert not channel.drop_frame()


def test_noisy_channel_changes_about_the_configured_share_of_bytes() -> None:
    channel = NoiseChannel(byte_error_rate=0.01, rng=random.Random(1))
    data = bytes(100_000)
    out = channel.corrupt(data)
    assert len(out) == len(data)
    changed = sum(1 for byte in out if byte)
    assert 500 < changed < 1500


def test_insertions_and_deletions_change_length() -> None:
    grow = NoiseChannel(insert_rate=0.01, rng=random.Random(1)).corrupt(bytes(10_000))
    shrink = NoiseChannel(delete_rate=0.01, rng=random.Random(1)).corrupt(bytes(10_000))
    assert len(grow) > 10_000 > len(shrink)


def test_frame_drops() -> None:
    channel = NoiseChannel(frame_drop_probability=0.5, rng=random.Random(3))
    drops = sum(channel.drop_frame() for _ in range(1000))
    assert 400 < drops < 600


def test_sample_traffic_uses_real_uid_lengths() -> None:
    rng = random.Random(2)
    assert {len(random_uid(rng)) // 2 for _ in range(200)} == {4, 7, 8, 10}
    kinds = {type(message) for message in sample_traffic(rng, 2000)}
    assert {TagArrived, TagLeft, Inventory} <= kinds
