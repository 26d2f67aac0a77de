"""The firmware's main loop (stud_reader.reader) on an in-memory wire, read with
``firmware_bridge``'s decoder: HELLO, debounce, heartbeat, inventories, host
commands, sequence gaps, lost frames, front-end faults.

Fast and deterministic (a clock the test moves); the same loop on a real pty
feeding the real daemon is test_fw_in_the_loop.py.
"""

from __future__ import annotations

import inspect
import random

import pytest
from fw_wire import MemoryHal
from hypothesis import given, settings
from hypothesis import strategies as st
from stud_reader import FIRMWARE_VERSION
from stud_reader.protocol import FrameWriter
from stud_reader.reader import Reader
from stud_reader.scan import AntennaTags

from firmware_bridge.emulator import FirmwareModel
from firmware_bridge.messages import (
    FaultCode,
    Heartbeat,
    Hello,
    Identify,
    Inventory,
    ReaderFault,
    RequestInventory,
    TagArrived,
    TagLeft,
)

A = bytes.fromhex("04A1B2C3D4E5F6")
B = bytes.fromhex("E0040150A1B2C3D4")
C = bytes.fromhex("04112233")


def booted(ports: int = 4, **options: int) -> tuple[Reader, MemoryHal]:
    hal = MemoryHal(ports)
    reader = Reader(hal, 7, ports, **options)
    reader.boot()
    return reader, hal


def test_boot_says_hello_at_sequence_zero() -> None:
    _, hal = booted(ports=5)
    [hello] = hal.received()
    assert hello.seq == 0
    assert hello.message == Hello(7, FIRMWARE_VERSION, 5)


def test_watchdog_reset_is_reported_after_the_hello() -> None:
    hal = MemoryHal(2)
    Reader(hal, 7, 2).boot(reset_fault=(FaultCode.WATCHDOG_RESET, "watchdog reset"))
    assert hal.messages() == [Hello(7, FIRMWARE_VERSION, 2),
                              ReaderFault(FaultCode.WATCHDOG_RESET, None, "watchdog reset")]


def test_tags_arrive_and_leave_with_debounce() -> None:
    """arrive_scans=2, leave_scans=3: a tag reported at its second consecutive scan,
    dropped at its third consecutive miss; one miss in between changes nothing."""
    reader, hal = booted(arrive_scans=2, leave_scans=3)
    hal.received()
    hal.front_end.place(1, A)
    reader.scan_cycle()
    assert hal.messages() == []
    reader.scan_cycle()
    assert hal.messages() == [TagArrived(1, A.hex().upper())]
    hal.front_end.remove(1, A)
    reader.scan_cycle()
    reader.scan_cycle()
    assert hal.messages() == []
    hal.front_end.place(1, A)  # back after two misses: still reported, no event
    reader.scan_cycle()
    hal.front_end.remove(1, A)
    for _ in range(2):
        reader.scan_cycle()
    assert hal.messages() == []
    reader.scan_cycle()
    assert hal.messages() == [TagLeft(1, A.hex().upper())]


@settings(max_examples=100)
@given(st.integers(1, 4), st.lists(st.sets(st.sampled_from([A, B, C])), max_size=25))
def test_debounce_matches_the_emulator(leave: int, scans: list[set[bytes]]) -> None:
    """With arrive_scans=1 the firmware's debounce reports exactly what the host-side
    emulator's FirmwareModel reports for the same scans (the same semantics)."""
    model = FirmwareModel(1, antenna_count=1, leave_after_misses=leave)
    tags = AntennaTags(arrive_scans=1, leave_scans=leave)
    for seen in scans:
        for uid in (A, B, C):
            if uid in seen:
                model.place(0, uid)
            else:
                model.remove(0, uid)
        ordered = [uid for uid in (A, B, C) if uid in seen]  # the model's placing order
        expected = model.scan()
        arrived, left = tags.update(ordered)
        assert [TagArrived(0, u.hex().upper()) for u in arrived] + [
            TagLeft(0, u.hex().upper()) for u in left] == expected
        assert {u.hex().upper() for u in tags.reported} == set(model.reported(0))


def test_heartbeat_every_second_and_inventory_every_two() -> None:
    reader, hal = booted(ports=2)
    hal.front_end.place(0, A)
    hal.received()
    for now in range(0, 4001, 100):
        hal.now = now
        reader.step()
    messages = hal.messages()
    beats = [m for m in messages if isinstance(m, Heartbeat)]
    assert [b.uptime_ms for b in beats] == [1000, 2000, 3000, 4000]
    assert beats[-1].scan_cycles == 41
    inventories = [m for m in messages if isinstance(m, Inventory)]
    assert [(i.antenna, i.uids) for i in inventories] == [
        (0, (A.hex().upper(),)), (1, ()), (0, (A.hex().upper(),)), (1, ())]


def test_uptime_keeps_counting_across_a_ticks_wrap(monkeypatch: pytest.MonkeyPatch) -> None:
    """MicroPython's ticks_ms wraps (2**30 on the RP2040): the heartbeat's uptime is
    summed from ticks_diff, so it goes on across the wrap."""
    import stud_reader.reader as reader_module

    period = 1 << 30
    monkeypatch.setattr(
        reader_module, "ticks_diff",
        lambda new, old: ((new - old + period // 2) % period) - period // 2)
    hal = MemoryHal(1)
    hal.now = period - 500
    reader = Reader(hal, 7, 1)
    reader.boot()
    hal.received()
    for step in range(1, 16):
        hal.now = (period - 500 + step * 100) % period
        reader.timers()
    [beat] = [m for m in hal.messages() if isinstance(m, Heartbeat)]
    assert beat.uptime_ms == 1000
    assert reader.uptime_ms == 1500


def test_identify_answers_hello_and_request_inventory_answers_inventory() -> None:
    reader, hal = booted(ports=3)
    hal.front_end.place(2, B)
    reader.scan_cycle()
    hal.received()
    hal.send(Identify())
    hal.send(RequestInventory(2))
    hal.send(RequestInventory(None))
    reader.poll_host()
    uid = B.hex().upper()
    assert hal.messages() == [
        Hello(7, FIRMWARE_VERSION, 3),
        Inventory(2, 1, (uid,)),
        Inventory(0, 1, ()), Inventory(1, 1, ()), Inventory(2, 1, (uid,)),
    ]


def test_inventory_of_a_port_the_board_lacks_is_a_fault() -> None:
    reader, hal = booted(ports=3)
    hal.received()
    hal.send(RequestInventory(9))
    reader.poll_host()
    assert hal.messages() == [ReaderFault(FaultCode.ANTENNA_OPEN, 9, "no such antenna")]


def test_host_sequence_gap_sends_every_inventory() -> None:
    """A host frame lost (its number skipped): the lost one may have been a
    REQUEST_INVENTORY, so the reader sends every antenna's inventory unasked."""
    reader, hal = booted(ports=2)
    hal.received()
    hal.send(Identify())  # seq 0: starts the count
    hal.host.encode(RequestInventory(0))  # seq 1: lost on the wire
    hal.send(RequestInventory(1))  # seq 2: the gap
    reader.poll_host()
    assert hal.messages() == [Hello(7, FIRMWARE_VERSION, 2), Inventory(0, 0, ()),
                              Inventory(1, 0, ()), Inventory(1, 0, ())]
    assert reader.host_frames_missed == 1


def test_identify_restarts_the_host_count() -> None:
    """The host's link numbers from 0 after reopening the port; its IDENTIFY comes
    first, so a jump back is no gap."""
    reader, hal = booted(ports=1)
    hal.host.reset(500)
    hal.send(RequestInventory(None))
    hal.host.reset(0)
    hal.send(Identify())
    hal.send(RequestInventory(None))
    reader.poll_host()
    assert reader.host_frames_missed == 0
    assert sum(isinstance(m, Inventory) for m in hal.messages()) == 2


def test_regression_lost_frames_are_reported_then_reconciled() -> None:
    """Frames the port did not take (the host not reading) are never lost silently:
    the next write that goes through is READER_FAULT 0x04, then every inventory."""
    reader, hal = booted(ports=2)
    hal.received()
    hal.front_end.place(0, A)
    hal.refuse_writes = 1
    reader.scan_cycle()  # the TAG_ARRIVED is refused
    assert reader.frames_lost == 1
    hal.now = 1000
    reader.step()  # the heartbeat goes through; the step ends reconciling
    messages = hal.messages()
    assert messages[0] == Heartbeat(1000, 2)
    assert messages[1] == ReaderFault(FaultCode.EVENT_OVERFLOW, None,
                                      "frames lost: port not read")
    assert messages[2:] == [Inventory(0, 2, (A.hex().upper(),)), Inventory(1, 2, ())]
    # The host saw a gap in the numbers too (one frame missing).
    assert hal.decoder.stats.frames_missed == 1


def test_regression_failing_front_end_reported_once_and_changes_nothing() -> None:
    """A port whose front end stops answering is one READER_FAULT 0x03 (not one per
    cycle), and its tags are not declared gone; scans resume when it answers."""
    reader, hal = booted(ports=2, leave_scans=1)
    hal.front_end.place(1, A)
    reader.scan_cycle()
    hal.received()
    hal.front_end.fail(1)
    for _ in range(5):
        reader.scan_cycle()
    assert hal.messages() == [ReaderFault(FaultCode.RF_FRONTEND, 1,
                                          "scan failed: front end does not answer")]
    assert reader.antennas[1].reported == [A]
    hal.front_end.fail(1, failing=False)
    hal.front_end.remove(1, A)
    reader.scan_cycle()
    assert hal.messages() == [TagLeft(1, A.hex().upper())]


def test_regression_more_than_64_tags_is_a_fault_not_a_silent_loss() -> None:
    reader, hal = booted(ports=1)
    rng = random.Random(5)
    for _ in range(66):
        hal.front_end.place(0, b"\x04" + rng.randbytes(6))
    hal.received()
    reader.scan_cycle()
    reader.scan_cycle()
    messages = hal.messages()
    assert sum(isinstance(m, TagArrived) for m in messages) == 64
    assert [m for m in messages if isinstance(m, ReaderFault)] == [
        ReaderFault(FaultCode.EVENT_OVERFLOW, 0, "over 64 tags: some not reported")]


def test_regression_a_port_losing_frames_often_does_not_nest_sends() -> None:
    """A port that loses one frame in three: each step reconciles once (no calls
    nested per lost frame: MicroPython's stack is a few KB), and the host ends up
    with the whole picture."""
    reader, hal = booted(ports=16)
    hal.received()
    writes = 0

    depths: list[int] = []

    def every_other(data: bytes) -> int:
        nonlocal writes
        writes += 1
        depths.append(len(inspect.stack(0)))
        if writes % 3 == 1:
            return 0
        hal.wire.extend(data)
        return len(data)

    hal.write = every_other  # type: ignore[method-assign]
    for port in range(16):
        hal.front_end.place(port, bytes((4, port, 1, 2, 3, 4, 5)))
    for step in range(1, 6):
        hal.now = step * 1000
        reader.step()
    assert reader.frames_lost > 10
    assert max(depths) - min(depths) <= 3  # writes from the loop, never nested sends
    hal.write = MemoryHal.write.__get__(hal)  # type: ignore[method-assign]
    hal.now = 10_000
    reader.step()
    reader.step()
    inventories = {m.antenna: m.uids for m in hal.messages() if isinstance(m, Inventory)}
    assert inventories == {port: (bytes((4, port, 1, 2, 3, 4, 5)).hex().upper(),)
                           for port in range(16)}


def test_unknown_and_malformed_host_frames_are_ignored_and_counted() -> None:
    """A reader-type frame echoed back, an unknown type, a bad payload: no answer,
    no crash, counted."""
    reader, hal = booted(ports=1)
    hal.received()
    host = FrameWriter()
    hal.incoming += host.frame(0x05, bytes(8))  # a HEARTBEAT sent to the reader
    hal.incoming += host.frame(0x42, b"")  # unknown type
    hal.incoming += host.frame(0x82, b"\x01\x02")  # REQUEST_INVENTORY, trailing byte
    hal.incoming += host.frame(0x81, b"")  # IDENTIFY without its payload
    reader.poll_host()
    assert hal.messages() == []
    assert reader.commands_ignored == 4
