"""The MFRC522 driver (hardware/firmware/stud_reader/mfrc522.py) against a
register-level model of the chip with ISO 14443 A tags (fake_mfrc522.py).

What this proves: the driver's logic (register sequences, bit-level anticollision
over cascade levels, HLTA, one field at a time, a missing module reported and
recovered) finds every tag, whichever way the chip counts CollPos. What it cannot
prove: that the model is the chip. The driver has not been run on hardware
(hardware/firmware/README.md, "Bring-up checklist").
"""

from __future__ import annotations

import random
import time
import types

import pytest
from fake_mfrc522 import TX_CONTROL, FakeMFRC522, FakeSpi, Pin, crc_a
from fw_wire import MemoryHal
from hypothesis import given, settings
from hypothesis import strategies as st
from stud_reader import mfrc522
from stud_reader.reader import Reader

from firmware_bridge.messages import FaultCode, ReaderFault, TagArrived, TagLeft


@pytest.fixture(autouse=True)
def micropython_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """MicroPython's ``time`` functions the driver uses, on CPython (no real waits:
    the model answers at once)."""
    shim = types.SimpleNamespace(
        sleep_ms=lambda ms: None,
        ticks_ms=lambda: int(time.monotonic() * 1000),
        ticks_add=lambda a, b: a + b,
        ticks_diff=lambda a, b: a - b,
    )
    monkeypatch.setattr(mfrc522, "time", shim)


class Board:
    """Modules on multiplexer channels, wired as README.md "Wiring" says."""

    def __init__(self, chips: list[FakeMFRC522]) -> None:
        self.chips = chips
        self.spi = FakeSpi(chips)
        self.cs = Pin(self._route)
        self.rst = Pin()
        self.select = [Pin(self._route) for _ in range(4)]
        self.front_end = mfrc522.MuxedFrontEnd(
            self.spi, self.cs, self.rst, self.select, len(chips))

    def _route(self) -> None:
        address = sum(pin.value << n for n, pin in enumerate(self.select))
        self.spi.selected = address if self.cs.value == 0 else None

    def fields_on(self) -> list[int]:
        return [n for n, chip in enumerate(self.chips) if chip.regs.get(TX_CONTROL, 0) & 3]

    def scan(self, port: int) -> list[bytes]:
        self.front_end.select_port(port)
        return self.front_end.scan()


def nxp_uid(rng: random.Random, length: int = 7) -> bytes:
    """An NXP-style UID: 7 bytes starting 0x04 (so every CL1 starts 88 04: collisions
    fall past the first byte, the case the CollPos reading matters for)."""
    if length == 7:
        return b"\x04" + rng.randbytes(6)
    return rng.randbytes(length)


def test_model_crc_a_matches_iso_14443_3() -> None:
    """The model's CRC_A against ISO/IEC 14443-3 Annex B: 00 00 -> A0 1E, and the
    HLTA command 50 00 -> 57 CD."""
    assert crc_a(b"\x00\x00") == bytes.fromhex("A01E")
    assert crc_a(b"\x50\x00") == bytes.fromhex("57CD")


def test_one_tag_is_read() -> None:
    uid = bytes.fromhex("04A1B2C3D4E5F6")
    board = Board([FakeMFRC522([uid])])
    assert board.scan(0) == [uid]
    assert board.fields_on() == []


def test_empty_antenna_reads_nothing() -> None:
    board = Board([FakeMFRC522([])])
    assert board.scan(0) == []


@pytest.mark.parametrize("collpos_from", ["frame", "uid"])
@settings(max_examples=25)
@given(seed=st.integers(0, 2**32), lengths=st.lists(st.sampled_from([4, 7, 7, 7, 10]),
                                                    min_size=2, max_size=9))
def test_stacked_tags_are_all_read(collpos_from: str, seed: int, lengths: list[int]) -> None:
    """Several tags on one antenna (a pile): every UID found, each once, whichever
    way the chip counts the collision position."""
    rng = random.Random(seed)
    uids = list({nxp_uid(rng, n) for n in lengths})
    board = Board([FakeMFRC522(uids, collpos_from=collpos_from)])
    found = board.scan(0)
    assert sorted(found) == sorted(uids)
    assert board.fields_on() == []


def test_tags_differing_in_the_last_bit_only() -> None:
    """The hardest collision: UIDs equal but for the last bit of the UID part."""
    base = bytes.fromhex("04112233445566")
    other = base[:-1] + bytes((base[-1] ^ 0x80,))
    for mode in ("frame", "uid"):
        board = Board([FakeMFRC522([base, other], collpos_from=mode)])
        assert sorted(board.scan(0)) == sorted([base, other])


def test_only_the_selected_port_reads_and_one_field_at_a_time() -> None:
    rng = random.Random(3)
    tags = [[nxp_uid(rng)] for _ in range(4)]
    board = Board([FakeMFRC522(t) for t in tags])
    for port in (2, 0, 3, 1):
        assert board.scan(port) == tags[port]
        assert board.fields_on() == []
    assert [chip.field_on_count for chip in board.chips] == [1, 1, 1, 1]


def test_halted_tags_are_read_again_at_the_next_scan() -> None:
    """HLTA silences a tag for the rest of a scan only: the field drop (or WUPA)
    brings it back, so a card lying still is seen every scan."""
    uid = bytes.fromhex("04A1B2C3D4E5F6")
    board = Board([FakeMFRC522([uid])])
    assert [board.scan(0) for _ in range(3)] == [[uid]] * 3


def test_regression_missing_module_is_an_error_then_recovers() -> None:
    """A port with no module answering: scan raises (the reader turns that into one
    READER_FAULT 0x03); once the module answers, it is initialised and read."""
    uid = bytes.fromhex("04A1B2C3D4E5F6")
    chip = FakeMFRC522([uid], present=False)
    board = Board([FakeMFRC522([]), chip])
    with pytest.raises(mfrc522.FrontEndError, match="no MFRC522"):
        board.scan(1)
    chip.present = True
    assert board.scan(1) == [uid]


def test_the_whole_firmware_on_the_driver() -> None:
    """Reader loop + MFRC522 driver + modelled chips, read by firmware_bridge: cards
    arrive and leave, a missing module is one fault."""
    rng = random.Random(9)
    a, b = nxp_uid(rng), nxp_uid(rng)
    chips = [FakeMFRC522([a, b]), FakeMFRC522([]), FakeMFRC522([], present=False)]
    board = Board(chips)
    hal = MemoryHal(3)
    hal.front_end = board.front_end  # the driver instead of the simulated front end
    reader = Reader(hal, 4, 3, leave_scans=1)
    reader.boot()
    hal.received()
    reader.scan_cycle()
    reader.scan_cycle()
    messages = hal.messages()
    assert sorted(m.uid for m in messages if isinstance(m, TagArrived)) == sorted(
        [a.hex().upper(), b.hex().upper()])
    assert [m for m in messages if isinstance(m, ReaderFault)] == [
        ReaderFault(FaultCode.RF_FRONTEND, 2, "scan failed: no MFRC522 (version 0x00)")]
    chips[0].tags = [t for t in chips[0].tags if t.uid != a]
    reader.scan_cycle()
    assert hal.messages() == [TagLeft(0, a.hex().upper())]
