"""Issue 13: the per-reader figures (tags now, reads per second, dropouts) against a
naive model that keeps every message and recomputes from scratch."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from firmware_bridge.figures import (
    DROPOUT_WINDOW,
    MAX_TAGS_PER_ANTENNA,
    RATE_WINDOW,
    FigureCounter,
)
from firmware_bridge.messages import (
    Heartbeat,
    Hello,
    Inventory,
    ReaderFault,
    ReaderMessage,
    TagArrived,
    TagLeft,
)

UIDS = ["04A1B2C3", "04A1B2C4", "04A1B2C5", "E0040150A1B2C3D4"]


@st.composite
def traffic(draw: st.DrawFn) -> list[tuple[float, ReaderMessage]]:
    """Messages on antennas 0..2 at non-decreasing times (steps of 0..2 s)."""
    now = 0.0
    out: list[tuple[float, ReaderMessage]] = []
    for _ in range(draw(st.integers(0, 60))):
        now += draw(st.sampled_from([0.0, 0.05, 0.3, 0.9, 1.5, 2.0]))
        antenna = draw(st.integers(0, 2))
        kind = draw(st.sampled_from(["arrived", "left", "inventory", "heartbeat", "fault"]))
        uid = draw(st.sampled_from(UIDS))
        message: ReaderMessage
        if kind == "arrived":
            message = TagArrived(antenna, uid)
        elif kind == "left":
            message = TagLeft(antenna, uid)
        elif kind == "inventory":
            listed = draw(st.lists(st.sampled_from(UIDS), unique=True, max_size=4))
            message = Inventory(antenna, 0, tuple(listed))
        elif kind == "heartbeat":
            message = Heartbeat(int(now * 1000), 0)
        else:
            message = ReaderFault(1, antenna, "open")
        out.append((now, message))
    return out


@dataclass
class Naive:
    """Recomputes every figure from the full history (no pruning, no cleverness)."""

    history: list[tuple[float, ReaderMessage]]

    def tags(self, port: int) -> set[str]:
        present: set[str] = set()
        for _, message in self.history:
            if isinstance(message, TagArrived) and message.antenna == port:
                present.add(message.uid)
            elif isinstance(message, TagLeft) and message.antenna == port:
                present.discard(message.uid)
            elif isinstance(message, Inventory) and message.antenna == port:
                present = set(message.uids)
        return present

    def dropouts(self, port: int) -> int:
        present: set[str] = set()
        left: dict[str, float] = {}
        count = 0
        for at, message in self.history:
            if getattr(message, "antenna", None) != port:
                continue
            if isinstance(message, TagArrived | Inventory):
                new = {message.uid} if isinstance(message, TagArrived) else set(message.uids)
                gone = set() if isinstance(message, TagArrived) else present - new
            elif isinstance(message, TagLeft):
                new, gone = set(), {message.uid} & present
            else:
                continue
            for uid in gone:
                present.discard(uid)
                left[uid] = at
            for uid in new - present:
                present.add(uid)
                if uid in left and at - left[uid] <= DROPOUT_WINDOW:
                    count += 1
                left.pop(uid, None)
        return count

    def reads(self, port: int, now: float) -> int:
        total = 0
        for at, message in self.history:
            if at <= now - RATE_WINDOW or getattr(message, "antenna", None) != port:
                continue
            if isinstance(message, TagArrived):
                total += 1
            elif isinstance(message, Inventory):
                total += len(message.uids)
        return total


@settings(max_examples=200)
@given(traffic(), st.sampled_from([0.0, 0.5, 4.9, 5.0, 7.0]))
def test_figures_match_the_naive_model(
    messages: list[tuple[float, ReaderMessage]], later: float
) -> None:
    """After any traffic, every antenna's tags, dropouts and reads per second equal
    what a model that keeps the whole history computes."""
    counter = FigureCounter()
    for at, message in messages:
        counter.feed(message, at)
    now = (messages[-1][0] if messages else 0.0) + later
    snap = counter.snapshot(now)
    naive = Naive(messages)
    for port in range(3):
        figures = snap.antenna(port)
        if figures is None:
            assert not any(getattr(m, "antenna", None) == port
                           and not isinstance(m, ReaderFault) for _, m in messages)
            continue
        assert set(figures.tags) == naive.tags(port) == counter.tags(port)
        assert figures.count == len(naive.tags(port))
        assert figures.dropouts == naive.dropouts(port)
        assert figures.reads_per_s == pytest.approx(naive.reads(port, now) / RATE_WINDOW)
    beats = [at for at, m in messages if isinstance(m, Heartbeat)]
    assert snap.heartbeat_age == (now - beats[-1] if beats else None)


@settings(max_examples=50)
@given(traffic())
def test_memory_stays_within_the_windows(messages: list[tuple[float, ReaderMessage]]) -> None:
    """Whatever the traffic, the counter keeps no read older than the rate window and
    no departure older than the dropout window (bounded memory in a long run)."""
    counter = FigureCounter()
    for at, message in messages:
        counter.feed(message, at)
    now = (messages[-1][0] if messages else 0.0) + RATE_WINDOW + 0.1
    counter.snapshot(now)
    for antenna in counter._antennas.values():
        assert not antenna.reads
        assert not antenna.left_at


def test_hello_announces_every_port_and_the_firmware() -> None:
    counter = FigureCounter()
    counter.feed(Hello(7, (1, 2, 3), 4), 10.0)
    snap = counter.snapshot(10.0)
    assert snap.firmware_text == "1.2.3"
    assert [a.port for a in snap.antennas] == [0, 1, 2, 3]
    assert snap.heartbeat_age is None


def test_a_flapping_tag_counts_dropouts_and_a_removed_one_does_not() -> None:
    """Gone and back within the window is a dropout; gone for longer is a card moved."""
    counter = FigureCounter()
    counter.feed(TagArrived(0, UIDS[0]), 0.0)
    counter.feed(TagLeft(0, UIDS[0]), 1.0)
    counter.feed(TagArrived(0, UIDS[0]), 1.2)  # dropout
    counter.feed(TagLeft(0, UIDS[0]), 2.0)
    counter.feed(TagArrived(0, UIDS[0]), 2.0 + DROPOUT_WINDOW + 0.1)  # put back later
    assert counter.snapshot(4.0).antennas[0].dropouts == 1


def test_regression_babbling_reader_cannot_grow_the_tag_set() -> None:
    """A reader announcing ever new UIDs on one antenna keeps at most
    MAX_TAGS_PER_ANTENNA of them; the rest are counted, not kept."""
    counter = FigureCounter()
    for n in range(MAX_TAGS_PER_ANTENNA + 10):
        counter.feed(TagArrived(0, f"{n:08X}"), n * 0.01)
    figures = counter.snapshot(1.0).antennas[0]
    assert figures.count == MAX_TAGS_PER_ANTENNA
    assert figures.overflow == 10
