"""A reader board with PN5180 modules on the host: the driver of
hardware/firmware/stud_reader/pn5180.py over the register-level model of
fake_pn5180.py, wired as hardware/firmware/README.md "PN5180 wiring" says, with a
virtual millisecond clock (the driver's waits cost no real time).
"""

from __future__ import annotations

import random
import time
import types
from collections.abc import Iterator
from contextlib import contextmanager

from fake_pn5180 import Channel, FakeBus, FakePN5180, always
from stud_reader import pn5180


class VirtualClock:
    """MicroPython's ``time`` functions the driver uses; ``sleep_ms`` moves the clock."""

    def __init__(self) -> None:
        self.now = 0

    def sleep_ms(self, ms: int) -> None:
        self.now += ms

    def ticks_ms(self) -> int:
        return self.now

    @staticmethod
    def ticks_add(a: int, b: int) -> int:
        return a + b

    @staticmethod
    def ticks_diff(a: int, b: int) -> int:
        return a - b


@contextmanager
def virtual_time() -> Iterator[VirtualClock]:
    """The driver's ``time`` replaced by a :class:`VirtualClock` for the block."""
    clock = VirtualClock()
    saved = pn5180.time
    pn5180.time = types.SimpleNamespace(  # type: ignore[assignment]
        sleep_ms=clock.sleep_ms, ticks_ms=clock.ticks_ms, ticks_add=clock.ticks_add,
        ticks_diff=clock.ticks_diff)
    try:
        yield clock
    finally:
        pn5180.time = saved


@contextmanager
def real_time() -> Iterator[None]:
    """The driver's ``time`` on the host's real clock (the firmware loop in a thread)."""
    saved = pn5180.time
    pn5180.time = types.SimpleNamespace(  # type: ignore[assignment]
        sleep_ms=lambda ms: time.sleep(ms / 1000),
        ticks_ms=lambda: int(time.monotonic() * 1000),
        ticks_add=lambda a, b: a + b, ticks_diff=lambda a, b: a - b)
    try:
        yield
    finally:
        pn5180.time = saved


class PN5180Board:
    """``ports`` PN5180 modules behind the two multiplexers; ``place``/``remove``/
    ``tags`` lay ISO 15693 tags on a module's zone (the FIL rigs' front end API)."""

    def __init__(self, ports: int, hears: Channel = always, *, slots: int = 16,
                 slot_ms: int = 6) -> None:
        self.chips = [FakePN5180(port, hears) for port in range(ports)]
        self.bus = FakeBus(self.chips)
        self.front_end = pn5180.PN5180FrontEnd(
            self.bus, self.bus.cs, lambda _value: None,
            [self.bus.select_pin(bit) for bit in range(4)], ports, busy=self.bus.busy,
            slots=slots, slot_ms=slot_ms)
        self.scans = 0

    def place(self, port: int, uid: bytes) -> None:
        if uid not in self.chips[port].tags:
            self.chips[port].tags.append(bytes(uid))

    def remove(self, port: int, uid: bytes) -> None:
        self.chips[port].tags = [t for t in self.chips[port].tags if t != bytes(uid)]

    def tags(self, port: int) -> tuple[bytes, ...]:
        return tuple(self.chips[port].tags)

    def select_port(self, port: int) -> None:
        self.front_end.select_port(port)

    def scan(self) -> list[bytes]:
        self.scans += 1
        uids: list[bytes] = self.front_end.scan()
        return uids

    def scan_port(self, port: int) -> list[bytes]:
        self.select_port(port)
        return self.scan()


def iso15693_uid(rng: random.Random) -> bytes:
    """An ICODE SLIX-style UID: E0 04 (NXP) then six random bytes, most significant first."""
    return b"\xe0\x04" + rng.randbytes(6)


def depth_channel(rng: random.Random, per_card: float) -> Channel:
    """A stack channel for the tests (not the lead's RF model): a tag with ``depth``
    cards between it and the antenna fails a slot with probability ``depth x
    per_card`` (capped at 0.9)."""
    def hears(_uid: bytes, _zone: int, depth: int) -> bool:
        return rng.random() >= min(0.9, depth * per_card)
    return hears
