"""ReaderLink over real pseudo-terminals, driven by the reader emulator.

No timing assertions: every wait polls with a generous timeout and only guards
against hangs.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from firmware_bridge.emulator import ReaderEmulator
from firmware_bridge.link import ConnectionState, LinkStats, ReaderLink
from firmware_bridge.messages import (
    Hello,
    Identify,
    Inventory,
    ReaderMessage,
    RequestInventory,
    TagArrived,
    TagLeft,
)

WAIT = 15.0
"""Seconds before a wait gives up (a hang guard, not a performance bound)."""

DELIVERING = (ConnectionState.ONLINE, ConnectionState.STALE)
"""States that deliver; a loaded machine may briefly see STALE (that is not a failure)."""

HEARTBEAT = 0.5
"""Short periods keep the tests quick; 0.5 s leaves room for a loaded machine."""


class Recorder:
    """Collects what a link hands to its callbacks, from the link's thread."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.messages: list[tuple[int, ReaderMessage, float]] = []
        self.states: list[tuple[int, ConnectionState, LinkStats]] = []

    def on_message(self, reader_id: int, message: ReaderMessage, at: float) -> None:
        with self.lock:
            self.messages.append((reader_id, message, at))

    def on_state(self, reader_id: int, state: ConnectionState, stats: LinkStats) -> None:
        with self.lock:
            self.states.append((reader_id, state, stats))

    def seen(self, message: ReaderMessage) -> bool:
        with self.lock:
            return any(item == message for _, item, _ in self.messages)

    def state_list(self) -> list[ConnectionState]:
        with self.lock:
            return [state for _, state, _ in self.states]

    def count(self) -> int:
        with self.lock:
            return len(self.messages)


def wait_for(condition: Callable[[], bool], what: str, timeout: float = WAIT) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.01)


def wait_scans(emulator: ReaderEmulator, count: int) -> None:
    target = emulator.model.scan_cycles + count
    wait_for(lambda: emulator.model.scan_cycles >= target, f"{count} scan cycles")


def make_emulator(directory: Path, reader_id: int, **options: object) -> ReaderEmulator:
    return ReaderEmulator(
        directory,
        reader_id,
        scan_period=0.02,
        heartbeat_period=HEARTBEAT,
        inventory_period=30.0,  # periodic inventories off the way; tests request them
        seed=reader_id,
        **options,  # type: ignore[arg-type]
    )


@pytest.fixture
def cleanup() -> Iterator[list[ReaderEmulator | ReaderLink]]:
    things: list[ReaderEmulator | ReaderLink] = []
    yield things
    for thing in reversed(things):
        thing.stop()


def start_pair(
    directory: Path,
    cleanup: list[ReaderEmulator | ReaderLink],
    reader_id: int,
    expected_id: int | None = None,
    **options: object,
) -> tuple[ReaderEmulator, ReaderLink, Recorder]:
    emulator = make_emulator(directory, reader_id, **options)
    cleanup.append(emulator)
    emulator.start()
    recorder = Recorder()
    link = ReaderLink(
        str(emulator.path),
        reader_id if expected_id is None else expected_id,
        recorder.on_message,
        recorder.on_state,
        heartbeat_period=HEARTBEAT,
    )
    cleanup.append(link)
    link.start()
    return emulator, link, recorder


def test_handshake_then_tags_arrive_and_leave(
    tmp_path: Path, cleanup: list[ReaderEmulator | ReaderLink]
) -> None:
    emulator, link, recorder = start_pair(tmp_path, cleanup, 21)
    wait_for(lambda: link.state is ConnectionState.ONLINE, "ONLINE")
    wait_for(lambda: recorder.seen(Hello(21, (1, 0, 0), 8)), "HELLO delivered")
    assert recorder.state_list()[:3] == [
        ConnectionState.CONNECTING,
        ConnectionState.HANDSHAKE,
        ConnectionState.ONLINE,
    ]
    # The link asks for a full inventory as soon as it is online.
    wait_for(lambda: RequestInventory(None) in emulator.commands_received, "inventory request")
    wait_for(
        lambda: any(
            isinstance(message, Inventory) and message.antenna == 7
            for _, message, _ in recorder.messages
        ),
        "inventory delivered",
    )

    emulator.place(3, "04A1B2C3")
    wait_for(lambda: recorder.seen(TagArrived(3, "04A1B2C3")), "TAG_ARRIVED")
    emulator.remove(3, "04A1B2C3")
    wait_for(lambda: recorder.seen(TagLeft(3, "04A1B2C3")), "TAG_LEFT")

    with recorder.lock:
        stamps = [at for _, _, at in recorder.messages]
        ids = {reader for reader, _, _ in recorder.messages}
    assert ids == {21}
    assert stamps == sorted(stamps)
    assert stamps[-1] <= time.monotonic()
    stats = link.stats
    assert stats.frames_ok >= 3
    assert stats.errors == 0
    assert stats.hello == Hello(21, (1, 0, 0), 8)


def test_unplug_and_replug_reconnects_and_requests_inventory(
    tmp_path: Path, cleanup: list[ReaderEmulator | ReaderLink]
) -> None:
    emulator, link, recorder = start_pair(tmp_path, cleanup, 22)
    wait_for(lambda: link.state is ConnectionState.ONLINE, "ONLINE")
    emulator.place(0, "E0040150A1B2C3D4")
    wait_for(lambda: recorder.seen(TagArrived(0, "E0040150A1B2C3D4")), "TAG_ARRIVED")

    emulator.unplug()
    wait_for(lambda: link.state is ConnectionState.DISCONNECTED, "DISCONNECTED after unplug")
    assert link.stats.disconnects == 1
    assert emulator.path.is_symlink()
    assert not emulator.path.exists()  # dangling, like a by-id link of a gone device

    emulator.commands_received.clear()
    before = recorder.count()
    emulator.replug()
    wait_for(lambda: link.state is ConnectionState.ONLINE, "ONLINE after replug")
    wait_for(lambda: RequestInventory(None) in emulator.commands_received, "inventory request")
    # The inventory after reconnect shows the card still on antenna 0.
    wait_for(
        lambda: any(
            isinstance(message, Inventory) and "E0040150A1B2C3D4" in message.uids
            for _, message, _ in recorder.messages[before:]
        ),
        "inventory with the card after reconnect",
    )
    states = recorder.state_list()
    lost = states.index(ConnectionState.DISCONNECTED)
    assert ConnectionState.HANDSHAKE in states[lost:]
    assert ConnectionState.ONLINE in states[lost:]
    assert link.stats.reconnects == 1


def test_a_link_stuck_on_a_device_that_took_the_old_name_follows_the_reader_back(
    tmp_path: Path, cleanup: list[ReaderEmulator | ReaderLink]
) -> None:
    # While the reader is away its old device name goes to another device (a pts
    # number another program takes, a ttyUSB index another adapter gets): the link
    # opens that one, which never answers. When the reader comes back behind the
    # path, the link must leave the wrong device and reopen the path.
    emulator, link, recorder = start_pair(tmp_path, cleanup, 24)
    wait_for(lambda: link.state is ConnectionState.ONLINE, "ONLINE")
    emulator.unplug()
    wait_for(lambda: link.state is ConnectionState.DISCONNECTED, "DISCONNECTED after unplug")
    master, slave = os.openpty()
    try:
        emulator.path.unlink()
        emulator.path.symlink_to(os.ttyname(slave))
        wait_for(lambda: link.state is ConnectionState.HANDSHAKE, "HANDSHAKE on the other device")
        emulator.replug()
        wait_for(lambda: link.state is ConnectionState.ONLINE, "ONLINE after the reader came back")
    finally:
        os.close(master)
        os.close(slave)
    states = recorder.state_list()
    back = len(states) - 1 - states[::-1].index(ConnectionState.HANDSHAKE)
    assert ConnectionState.DISCONNECTED in states[:back], "left the wrong device first"
    hello = link.stats.hello
    assert hello is not None
    assert hello.reader_id == 24


def test_wrong_reader_on_the_port_delivers_nothing(
    tmp_path: Path, cleanup: list[ReaderEmulator | ReaderLink]
) -> None:
    emulator, link, recorder = start_pair(tmp_path, cleanup, 7, expected_id=5)
    wait_for(lambda: link.state is ConnectionState.WRONG_READER, "WRONG_READER")
    emulator.place(1, "04A1B2C3")
    emulator.send([Inventory(1, 1, ("04A1B2C3",)), TagArrived(2, "04112233445566")])
    # The link keeps asking who is there (retry), and keeps discarding.
    wait_for(
        lambda: emulator.commands_received.count(Identify()) >= 2,
        "IDENTIFY retried",
    )
    wait_for(lambda: link.stats.frames_discarded >= 4, "frames discarded")
    assert recorder.count() == 0
    assert link.state is ConnectionState.WRONG_READER
    assert ConnectionState.ONLINE not in recorder.state_list()


def test_heartbeat_silence_marks_stale_then_recovers(
    tmp_path: Path, cleanup: list[ReaderEmulator | ReaderLink]
) -> None:
    emulator, link, recorder = start_pair(tmp_path, cleanup, 23)
    wait_for(lambda: link.state is ConnectionState.ONLINE, "ONLINE")
    wait_for(lambda: link.stats.last_heartbeat is not None, "a heartbeat")
    emulator.set_silent(True)
    wait_for(lambda: link.state is ConnectionState.STALE, "STALE")
    emulator.commands_received.clear()
    emulator.set_silent(False)
    wait_for(lambda: link.state is ConnectionState.ONLINE, "ONLINE again")
    wait_for(lambda: RequestInventory(None) in emulator.commands_received, "inventory request")
    assert ConnectionState.DISCONNECTED not in recorder.state_list()


def test_one_reader_unplugged_the_other_keeps_delivering(
    tmp_path: Path, cleanup: list[ReaderEmulator | ReaderLink]
) -> None:
    first, first_link, first_rec = start_pair(tmp_path, cleanup, 31)
    second, second_link, second_rec = start_pair(tmp_path, cleanup, 32)
    wait_for(lambda: first_link.state is ConnectionState.ONLINE, "first ONLINE")
    wait_for(lambda: second_link.state is ConnectionState.ONLINE, "second ONLINE")

    first.unplug()
    wait_for(lambda: first_link.state is ConnectionState.DISCONNECTED, "first DISCONNECTED")
    second.place(5, "04A1B2C3")
    wait_for(lambda: second_rec.seen(TagArrived(5, "04A1B2C3")), "second still delivers")
    second.remove(5, "04A1B2C3")
    wait_for(lambda: second_rec.seen(TagLeft(5, "04A1B2C3")), "second still delivers")
    assert second_link.state in DELIVERING
    assert ConnectionState.DISCONNECTED not in second_rec.state_list()
    assert not first_rec.seen(TagArrived(5, "04A1B2C3"))

    first.replug()
    wait_for(lambda: first_link.state is ConnectionState.ONLINE, "first ONLINE again")


def test_other_protocol_version_is_incompatible(
    tmp_path: Path, cleanup: list[ReaderEmulator | ReaderLink]
) -> None:
    emulator, link, recorder = start_pair(tmp_path, cleanup, 24, protocol_version=2)
    wait_for(lambda: link.state is ConnectionState.INCOMPATIBLE, "INCOMPATIBLE")
    emulator.place(0, "04A1B2C3")
    wait_for(lambda: link.stats.unsupported_version >= 3, "more v2 frames")
    assert recorder.count() == 0


def test_garbage_on_the_wire_is_counted_and_skipped(
    tmp_path: Path, cleanup: list[ReaderEmulator | ReaderLink]
) -> None:
    emulator, link, recorder = start_pair(tmp_path, cleanup, 25)
    wait_for(lambda: link.state is ConnectionState.ONLINE, "ONLINE")
    emulator.send_raw(b"\x00\x07garbage\x00" + b"\x41" * 3000 + b"\x00")
    emulator.place(4, "04A1B2C3")
    wait_for(lambda: recorder.seen(TagArrived(4, "04A1B2C3")), "TAG_ARRIVED after garbage")
    stats = link.stats
    assert stats.framing_errors + stats.crc_errors >= 1
    assert stats.oversized == 1
    assert link.state in DELIVERING


def test_request_inventory_for_one_antenna(
    tmp_path: Path, cleanup: list[ReaderEmulator | ReaderLink]
) -> None:
    emulator, link, recorder = start_pair(tmp_path, cleanup, 26)
    wait_for(lambda: link.state is ConnectionState.ONLINE, "ONLINE")
    emulator.place(6, "04A1B2C3")
    wait_for(lambda: recorder.seen(TagArrived(6, "04A1B2C3")), "TAG_ARRIVED")
    before = recorder.count()
    link.request_inventory(6)
    wait_for(lambda: RequestInventory(6) in emulator.commands_received, "request sent")
    wait_for(
        lambda: any(
            isinstance(message, Inventory) and message.uids == ("04A1B2C3",)
            for _, message, _ in recorder.messages[before:]
        ),
        "inventory of antenna 6",
    )


def test_missing_device_stays_disconnected_and_stops_cleanly(
    tmp_path: Path, cleanup: list[ReaderEmulator | ReaderLink]
) -> None:
    recorder = Recorder()
    link = ReaderLink(str(tmp_path / "nothing-here"), 1, recorder.on_message, recorder.on_state)
    cleanup.append(link)
    with capture_logs() as logs:
        link.start()
        # Retries are debug lines (issue 9 item 23): count them to know some happened.
        wait_for(lambda: sum(e["event"] == "reader_open_failed" for e in logs) >= 3, "retries")
        link.stop()
    assert link.state is ConnectionState.STOPPED
    assert link.stats.connects == 0
    # One state change, not one per retry.
    assert transitions(recorder.state_list()) == [
        ConnectionState.CONNECTING, ConnectionState.DISCONNECTED, ConnectionState.STOPPED,
    ]


def transitions(states: list[ConnectionState]) -> list[ConnectionState]:
    """``states`` without repeats in a row (a change of problem repeats the state)."""
    return [s for i, s in enumerate(states) if i == 0 or states[i - 1] is not s]


def test_noisy_wire_never_delivers_a_wrong_tag(
    tmp_path: Path, cleanup: list[ReaderEmulator | ReaderLink]
) -> None:
    emulator, link, recorder = start_pair(tmp_path, cleanup, 27)
    wait_for(lambda: link.state is ConnectionState.ONLINE, "ONLINE")
    emulator.noise.byte_error_rate = 5e-3
    emulator.noise.insert_rate = 5e-4
    emulator.noise.delete_rate = 5e-4
    emulator.noise.frame_drop_probability = 0.05
    placed = {(antenna, f"04A1B2{antenna:02X}") for antenna in range(8)}
    for _ in range(5):
        for antenna, uid in placed:
            emulator.place(antenna, uid)
        link.request_inventory()
        wait_scans(emulator, 3)
        for antenna, uid in placed:
            emulator.remove(antenna, uid)
        wait_scans(emulator, 3)
    wait_for(lambda: link.stats.errors + link.stats.frames_missed > 0, "noise noticed")
    with recorder.lock:
        delivered = [message for _, message, _ in recorder.messages]
    tags = [m for m in delivered if isinstance(m, TagArrived | TagLeft)]
    assert tags, "some tag events got through the noise"
    assert all((m.antenna, m.uid) in placed for m in tags)
    for message in delivered:
        if isinstance(message, Inventory):
            assert all((message.antenna, uid) in placed for uid in message.uids)


def test_any_pyserial_url_works_loop_echo_is_not_a_reader(
    cleanup: list[ReaderEmulator | ReaderLink],
) -> None:
    # loop:// echoes our own IDENTIFY back: a host-to-reader type, so it is rejected
    # as unknown and the link keeps waiting for a real HELLO.
    recorder = Recorder()
    link = ReaderLink("loop://", 1, recorder.on_message, recorder.on_state)
    cleanup.append(link)
    link.start()
    wait_for(lambda: link.stats.unknown_type >= 2, "echoed IDENTIFY rejected twice")
    assert link.state is ConnectionState.HANDSHAKE
    assert recorder.count() == 0
    assert link.stats.connects == 1


def test_a_lost_frame_brings_a_full_inventory_at_once(
    tmp_path: Path, cleanup: list[ReaderEmulator | ReaderLink]
) -> None:
    emulator, link, recorder = start_pair(tmp_path, cleanup, 24)
    wait_for(lambda: link.state is ConnectionState.ONLINE, "ONLINE")
    wait_for(lambda: RequestInventory(None) in emulator.commands_received, "first inventory")
    emulator.commands_received.clear()
    emulator.noise.frame_drop_probability = 1.0  # the TAG_ARRIVED frame is lost
    emulator.place(2, "04A1B2C3")
    wait_scans(emulator, 3)
    emulator.noise.frame_drop_probability = 0.0
    # The next frame (a heartbeat) shows the gap; the host asks for everything...
    wait_for(lambda: RequestInventory(None) in emulator.commands_received, "gap inventory")
    assert link.stats.frames_missed >= 1
    assert link.stats.gap_inventories >= 1
    # ...and learns of the card well before the periodic inventory (30 s here).
    wait_for(
        lambda: any(
            isinstance(message, Inventory) and "04A1B2C3" in message.uids
            for _, message, _ in recorder.messages
        ),
        "inventory with the lost card",
        timeout=5.0,
    )
