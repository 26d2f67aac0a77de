"""The FEIG reader kind end to end (issue 23): :class:`FeigReaderLink` polling the
emulated FEIG reader on a real pty (FEIG's bytes both ways), delivering our reader
messages; the poller alone (pure); the layout's ``kind``. No timing assertions:
every wait polls with a generous hang guard."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from firmware_bridge.feig.emulator import FeigReaderEmulator
from firmware_bridge.feig.link import FeigPoller, FeigReaderLink
from firmware_bridge.feig.protocol import CONTROL_ISO_HOST, Frame, encode_frame
from firmware_bridge.kinds import open_link
from firmware_bridge.link import ConnectionState, LinkProblem, LinkStats, ReaderLink
from firmware_bridge.messages import (
    Heartbeat,
    Hello,
    Inventory,
    ReaderMessage,
    TagArrived,
    TagLeft,
)
from table_controller.table.config_file import ConfigError
from table_controller.table.layout import load_layout

WAIT = 30.0
STACK = [f"E0040150{i:08X}" for i in range(12)]


class Recorder:
    """The link's callbacks: every message and state, and a way to wait for one."""

    def __init__(self) -> None:
        self.messages: list[ReaderMessage] = []
        self.states: list[tuple[ConnectionState, LinkStats]] = []
        self._lock = threading.Lock()

    def on_message(self, _reader: int, message: ReaderMessage, _at: float) -> None:
        with self._lock:
            self.messages.append(message)

    def on_state(self, _reader: int, state: ConnectionState, stats: LinkStats) -> None:
        with self._lock:
            self.states.append((state, stats))

    def wait(self, predicate: Callable[[], bool], what: str) -> None:
        deadline = time.monotonic() + WAIT
        while not predicate():
            assert time.monotonic() < deadline, f"timed out waiting for {what}"
            time.sleep(0.01)

    def of(self, kind: type) -> list[ReaderMessage]:
        with self._lock:
            return [m for m in self.messages if isinstance(m, kind)]


@pytest.fixture
def reader(tmp_path: Path) -> Iterator[FeigReaderEmulator]:
    """A 4-output FEIG reader at COM-ADR 3, five data sets per response (so a stack of
    12 takes STATUS 0x94 and two MORE polls)."""
    with FeigReaderEmulator(tmp_path, 3, antenna_count=4, sets_per_response=5,
                            seed=1) as emulated:
        yield emulated


def _link(reader: FeigReaderEmulator, recorder: Recorder, reader_id: int = 3) -> FeigReaderLink:
    link = FeigReaderLink(str(reader.path), reader_id, recorder.on_message, recorder.on_state,
                          antennas=(0, 1, 2, 3), poll_interval=0.005)
    link.start()
    return link


def test_a_stack_of_12_is_read_and_a_card_taken_off_leaves(
        reader: FeigReaderEmulator) -> None:
    for uid in STACK:
        reader.place(2, uid)
    recorder = Recorder()
    link = _link(reader, recorder)
    try:
        recorder.wait(lambda: len(recorder.of(TagArrived)) == 12, "12 arrivals")
        assert {m.uid for m in recorder.of(TagArrived)} == set(STACK)  # type: ignore[attr-defined]
        assert all(m.antenna == 2 for m in recorder.of(TagArrived))  # type: ignore[attr-defined]
        assert isinstance(recorder.messages[0], Hello)
        assert recorder.messages[0].reader_id == 3
        recorder.wait(lambda: any(isinstance(m, Inventory) and m.antenna == 2
                                  and len(m.uids) == 12 for m in recorder.of(Inventory)),
                      "an inventory of the stack")
        reader.remove(2, STACK[4])
        recorder.wait(lambda: bool(recorder.of(TagLeft)), "the card taken off")
        assert recorder.of(TagLeft) == [TagLeft(2, STACK[4])]
        assert recorder.of(Heartbeat)
        assert link.state is ConnectionState.ONLINE
        # MORE was asked after STATUS 0x94 (12 tags, 5 a response).
        assert any(r.data[1] & 0x80 for r in list(reader.requests))
        assert link.stats.errors == 0
    finally:
        link.stop()
    assert link.state is ConnectionState.STOPPED


def test_noise_on_the_line_is_survived(reader: FeigReaderEmulator) -> None:
    """Garbage bytes between answers (a noise burst, a torn frame): counted, the link
    resynchronises and stays online, the tags are still right."""
    reader.place(1, STACK[0])
    recorder = Recorder()
    link = _link(reader, recorder)
    try:
        recorder.wait(lambda: bool(recorder.of(TagArrived)), "the first tag")
        torn = encode_frame(Frame(3, CONTROL_ISO_HOST, b"\x01\x00", 0x00))[:-3]
        for burst in (bytes([0xF0, 0x13, 0x02, 0x7F]), torn, bytes(range(40))):
            reader.send_raw(burst)
        reader.place(1, STACK[1])
        recorder.wait(lambda: len(recorder.of(TagArrived)) == 2, "the second tag")
        assert link.state is ConnectionState.ONLINE
        assert link.stats.errors > 0  # the noise was seen, and skipped
        assert not recorder.of(TagLeft)
    finally:
        link.stop()


def test_another_reader_on_the_port_is_a_wrong_reader(reader: FeigReaderEmulator) -> None:
    recorder = Recorder()
    link = _link(reader, recorder, reader_id=9)
    try:
        recorder.wait(lambda: link.state is ConnectionState.WRONG_READER, "WRONG_READER")
        assert link.stats.problem is LinkProblem.WRONG_READER
        assert link.stats.problem_detail == "reader 3 answered, 9 expected"
        assert recorder.of(Hello) == []  # nothing delivered from it
    finally:
        link.stop()


def test_a_missing_port_is_port_missing(tmp_path: Path) -> None:
    recorder = Recorder()
    link = FeigReaderLink(str(tmp_path / "nothing"), 3, recorder.on_message,
                          recorder.on_state, antennas=(0,))
    link.start()
    try:
        recorder.wait(lambda: link.stats.problem is LinkProblem.PORT_MISSING, "PORT_MISSING")
    finally:
        link.stop()


def test_the_poller_debounces_a_dropout() -> None:
    """Pure: a tag missing one poll is not gone (stacked cards drop out of single
    polls); missing ``leave_after_misses`` polls in a row, it is."""
    from firmware_bridge.feig.protocol import FeigTag, InventoryResponse, encode_inventory

    poller = FeigPoller(3, (0,), leave_after_misses=2)

    def seen(*uids: str) -> Frame:
        return encode_inventory(3, InventoryResponse(
            0, tuple(FeigTag(u, antennas=((0, 0),)) for u in uids), True))

    messages, more = poller.answered(seen(STACK[0]), 0.0)
    assert not more
    assert [type(m) for m in messages][:2] == [Hello, TagArrived]
    assert not [m for m in poller.missed(0.1) if isinstance(m, TagLeft)]  # one miss
    assert not [m for m in poller.answered(seen(STACK[0]), 0.2)[0] if isinstance(m, TagLeft)]
    poller.missed(0.3)
    left = [m for m in poller.missed(0.4) if isinstance(m, TagLeft)]
    assert left == [TagLeft(0, STACK[0])]


def test_the_layout_names_the_kind_and_the_link_follows(tmp_path: Path) -> None:
    path = tmp_path / "layout.toml"
    text = """seats = 2
[[readers]]
id = 1
device = "/dev/stud-table/reader-1"
antennas = { 0 = "seat1.down", 1 = "seat1.up", 2 = "seat2.down", 3 = "seat2.up" }
[[readers]]
id = 10
kind = "feig-isc"
device = "/dev/stud-table/reader-10"
antennas = { 0 = "burn", 1 = "muck", 2 = "board" }
"""
    path.write_text(text)
    layout = load_layout(path)
    kinds = {r.id: r.kind for r in layout.readers}
    assert kinds == {1: "stud", 10: "feig-isc"}
    links = {r.id: open_link(r.kind, r.device, r.id, lambda *_: None, lambda *_: None,
                             antennas=r.antennas) for r in layout.readers}
    assert isinstance(links[1], ReaderLink)
    assert isinstance(links[10], FeigReaderLink)
    path.write_text(text.replace("id = 10", "id = 300"))
    with pytest.raises(ConfigError, match=r"COM-ADR, 0\.\.254"):
        load_layout(path)
    path.write_text(text.replace('2 = "board"', '9 = "board"'))
    with pytest.raises(ConfigError, match=r"antenna outputs 0\.\.7"):
        load_layout(path)
    path.write_text(text.replace('kind = "feig-isc"', 'kind = "acme"'))
    with pytest.raises(ConfigError, match="kind"):
        load_layout(path)
