"""The PN5180 driver (hardware/firmware/stud_reader/pn5180.py, ISO 15693) against a
register-level model of the chip (fake_pn5180.py), then in the firmware's own loop.

What this proves: the driver's logic (host-interface frames and BUSY, RF on/off, the
16-slot inventory with an EOF per slot, collision rounds with extended masks, the
1-slot mode falling back to 16 slots, one module's field at a time, a missing or
hung module reported and recovered) reads stacks of 1-12 tags, and with a lossy
channel reads what gets through and never invents a tag. What it cannot prove: that
the model is the chip (the driver has not run on hardware).
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
from fw_wire import MemoryHal
from hypothesis import given, settings
from hypothesis import strategies as st
from pn5180_rig import PN5180Board, VirtualClock, depth_channel, iso15693_uid, virtual_time
from stud_reader import pn5180
from stud_reader.reader import Reader

from firmware_bridge.messages import FaultCode, Inventory, ReaderFault, TagArrived


@pytest.fixture
def clock() -> Iterator[VirtualClock]:
    with virtual_time() as virtual:
        yield virtual


def stack(seed: int, count: int) -> list[bytes]:
    rng = random.Random(seed)
    uids: list[bytes] = []
    while len(uids) < count:
        uid = iso15693_uid(rng)
        if uid not in uids:
            uids.append(uid)
    return uids


@pytest.mark.parametrize("count", range(1, 13))
def test_a_stack_of_1_to_12_is_read_in_16_slot_rounds(clock: VirtualClock, count: int) -> None:
    board = PN5180Board(2)
    tags = stack(count, count)
    for uid in tags:
        board.place(1, uid)
    assert sorted(board.scan_port(1)) == sorted(tags)
    chip = board.chips[1]
    report = board.front_end.chip.last_report
    assert chip.protocol_errors == []
    assert report.unresolved == 0
    assert report.rounds == chip.rounds == 1 + report.collisions
    assert board.bus.fields_on() == []  # the field is off again after the scan
    assert board.chips[0].fields_switched_on == 0  # the other zone's never came on


def test_two_tags_in_one_slot_collide_and_a_second_round_separates_them(
        clock: VirtualClock) -> None:
    """Both UIDs end in the same 4 bits (slot 5 of the first round) and differ in the
    next 4: the driver asks again with mask 5 (4 bits) and reads both."""
    first = bytes.fromhex("E004015000000015")
    second = bytes.fromhex("E004015000000025")
    board = PN5180Board(1)
    board.place(0, first)
    board.place(0, second)
    assert sorted(board.scan_port(0)) == sorted([first, second])
    report = board.front_end.chip.last_report
    assert (report.rounds, report.collisions, report.slots) == (2, 1, 32)


def test_one_slot_mode_reads_a_lone_tag_in_one_slot_and_falls_back_on_a_pile(
        clock: VirtualClock) -> None:
    board = PN5180Board(1, slots=1)
    lone = stack(1, 1)[0]
    board.place(0, lone)
    assert board.scan_port(0) == [lone]
    assert board.front_end.chip.last_report.slots == 1
    for uid in stack(2, 5):
        board.place(0, uid)
    assert sorted(board.scan_port(0)) == sorted([lone, *stack(2, 5)])
    report = board.front_end.chip.last_report
    assert report.collisions >= 1
    assert report.slots > 1  # went on in 16-slot rounds


@settings(max_examples=60)
@given(st.lists(st.binary(min_size=6, max_size=6), min_size=0, max_size=12, unique=True))
def test_any_stack_up_to_12_is_read_whole(suffixes: list[bytes]) -> None:
    tags = [b"\xe0\x04" + suffix for suffix in suffixes]
    with virtual_time():
        board = PN5180Board(1)
        for uid in tags:
            board.place(0, uid)
        assert sorted(board.scan_port(0)) == sorted(tags)
        assert board.chips[0].protocol_errors == []


def test_a_lossy_stack_reads_what_gets_through_and_never_invents(clock: VirtualClock) -> None:
    """The channel drops deep cards' answers (depth x 6 % a slot): one scan may miss
    some; every UID returned is one that lies there; over scans all are read."""
    rng = random.Random(23)
    board = PN5180Board(1, depth_channel(rng, 0.06))
    tags = stack(99, 12)
    for uid in tags:
        board.place(0, uid)
    seen: set[bytes] = set()
    missed_per_scan = []
    for _ in range(20):
        found = board.scan_port(0)
        assert set(found) <= set(tags)
        missed_per_scan.append(len(tags) - len(found))
        seen |= set(found)
    assert seen == set(tags)
    assert max(missed_per_scan) > 0  # the channel really lost answers


def test_the_channel_is_asked_with_zone_and_depth(clock: VirtualClock) -> None:
    asked: list[tuple[bytes, int, int]] = []

    def hears(uid: bytes, zone: int, depth: int) -> bool:
        asked.append((uid, zone, depth))
        return True

    board = PN5180Board(3, hears)
    tags = stack(5, 3)
    for uid in tags:
        board.place(2, uid)
    board.scan_port(2)
    assert {(uid, zone, depth) for uid, zone, depth in asked} == {
        (uid, 2, depth) for depth, uid in enumerate(tags)}


def test_a_missing_module_is_a_front_end_error_and_comes_back(clock: VirtualClock) -> None:
    """Pulled off its connector: reads give 0xFF (the buffered MISO's pull-up), the
    scan fails; checked again at the next scan (no PN5180 while still absent); back
    on, it reads again without a reboot."""
    board = PN5180Board(2)
    board.chips[1].present = False
    with pytest.raises(pn5180.FrontEndError):
        board.scan_port(1)
    with pytest.raises(pn5180.FrontEndError, match="no PN5180"):
        board.scan_port(1)
    board.chips[1].present = True
    board.place(1, stack(3, 1)[0])
    assert board.scan_port(1) == [stack(3, 1)[0]]


def test_a_hung_module_busy_high_is_an_error_not_a_hang(clock: VirtualClock) -> None:
    board = PN5180Board(1)
    board.chips[0].busy_stuck = True
    with pytest.raises(pn5180.FrontEndError, match="BUSY"):
        board.scan_port(0)


def test_the_field_goes_off_even_when_a_scan_fails(clock: VirtualClock) -> None:
    board = PN5180Board(1)
    board.place(0, stack(4, 1)[0])
    chip = board.chips[0]
    original = chip._answer_slot

    def failing(*, silent: bool = False) -> None:
        original(silent=silent)
        chip.regs[0x02] = chip.regs.get(0x02, 0) | 0x20000  # GENERAL_ERROR_IRQ

    chip._answer_slot = failing  # type: ignore[method-assign]
    with pytest.raises(pn5180.FrontEndError, match="general error"):
        board.scan_port(0)
    assert not chip.rf_on


def test_air_time_of_a_scan_follows_iso_15693_timing(clock: VirtualClock) -> None:
    """The model's air time for an empty zone, one card and twelve (printed; the
    figures in hardware/firmware/README.md "PN5180 timing" come from here)."""
    figures = {}
    for count in (0, 1, 4, 12):
        board = PN5180Board(1)
        for uid in stack(40 + count, count):
            board.place(0, uid)
        board.scan_port(0)
        figures[count] = board.chips[0].air_us / 1000
    print("PN5180 modelled air time per scan (ms):", figures)
    assert figures[0] < figures[1] < figures[4] < figures[12]


# -- in the firmware's loop -------------------------------------------------------------------


def test_the_firmware_reports_a_stack_read_through_the_pn5180(clock: VirtualClock) -> None:
    """The reader firmware (stud_reader.reader) with the PN5180 front end: a stack of
    12 on port 2 arrives as 12 TAG_ARRIVED frames on the wire (decoded by
    firmware_bridge), and the INVENTORY of port 2 lists them all."""
    hal = MemoryHal(ports=4)
    board = PN5180Board(4)
    hal.front_end = board  # type: ignore[assignment]
    tags = stack(77, 12)
    for uid in tags:
        board.place(2, uid)
    reader = Reader(hal, 7, 4, arrive_scans=1, leave_scans=2)
    reader.boot()
    for _ in range(3):
        reader.step()
        hal.now += 100
    messages = hal.messages()
    arrived = [m for m in messages if isinstance(m, TagArrived)]
    assert sorted(m.uid for m in arrived) == sorted(uid.hex().upper() for uid in tags)
    assert all(m.antenna == 2 for m in arrived)
    hal.now += 2100
    reader.step()
    inventories = [m for m in hal.messages() if isinstance(m, Inventory) and m.antenna == 2]
    assert inventories
    assert sorted(inventories[-1].uids) == sorted(uid.hex().upper() for uid in tags)


def test_the_firmware_reports_a_missing_pn5180_as_a_fault(clock: VirtualClock) -> None:
    hal = MemoryHal(ports=2)
    board = PN5180Board(2)
    board.chips[1].present = False
    hal.front_end = board  # type: ignore[assignment]
    reader = Reader(hal, 7, 2)
    reader.boot()
    reader.step()
    faults = [m for m in hal.messages() if isinstance(m, ReaderFault)]
    assert [(f.code, f.antenna) for f in faults] == [(FaultCode.RF_FRONTEND, 1)]
