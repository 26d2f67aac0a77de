"""Presence latency over a real pty, and presence tracker throughput.

1. **pty -> zone event.** A :class:`~firmware_bridge.emulator.ReaderEmulator` (reader 1
   of ``hardware/layouts/table-8.toml``) sits on a pseudo-terminal; a
   :class:`~firmware_bridge.link.ReaderLink` reads it through pyserial and hands each
   message to a :class:`~table_controller.table.presence.PresenceTracker`, as the daemon
   does. Each sample moves a card to another antenna: TAG_LEFT on the old antenna,
   then TAG_ARRIVED on the new one, whose ``CardPlaced`` is timed from just before
   the frame is written to the pty (the frame is encoded inside that window, a few
   microseconds) to the moment the tracker returns the event on the link thread.
   Split at the link's receive timestamp (taken right after the read that returned
   the frame's last byte): *wire* (write -> read: pty and thread wake-up) and
   *decode + track* (read -> event: COBS/CRC/payload decoding, the link callback and
   the tracker). With ``--settle`` (default: the daemon's settle window,
   docs/presence.md rule 1) the card's zone is committed when the window ends: a
   ticker thread calls ``tick`` at ``next_deadline()``, as the daemon's loop does, and
   the *settle* line is the total minus the window (the wake-up cost on top of it).
   ``--settle 0`` measures the tracker without a window (the figure before issue 19).
2. **Tracker throughput.** Pure in-memory: a seeded stream of arrivals, departures,
   dropouts and inventories over the 8-seat layout and both example decks, ticked
   like the daemon ticks; events emitted per second and reports handled per second.
   A plain dict lookup per report (UID -> card) is measured in the same run as the
   reference: the ratio says what tracking costs over the bare lookup.

    .venv/bin/python bench/bench_presence_latency.py [--placements 2000] [--reports 200000]
        [--settle SECONDS]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import threading
import time
from functools import partial
from pathlib import Path

from firmware_bridge.emulator import ReaderEmulator
from firmware_bridge.link import ConnectionState, LinkStats, ReaderLink
from firmware_bridge.messages import Inventory, ReaderMessage, TagArrived, TagLeft
from table_controller.domain.cards import DECK
from table_controller.domain.events import CardPlaced, ZoneEvent
from table_controller.table.deck import DeckRegistry, load_decks
from table_controller.table.layout import TableLayout, load_layout
from table_controller.table.presence import DEFAULT_SETTLE_TIME, PresenceTracker

ROOT = Path(__file__).resolve().parent.parent
LAYOUT_FILE = ROOT / "hardware" / "layouts" / "table-8.toml"
DECK_FILES = [
    ROOT / "hardware" / "decks" / f for f in ("example-deck.toml", "example-deck-blue.toml")
]
READER_ID = 1
ANTENNAS = (0, 1, 2, 3)  # reader 1: seat1.down, seat1.up, seat2.down, seat2.up
QUIET = 1e6  # emulator periods long enough that its own scans/inventories never fire

Report = tuple[str, int, int, str | list[str], float]
"""(kind, reader id, port, UID or inventory UIDs, time) of one synthetic reader report."""


def percentile(values: list[float], share: float) -> float:
    """The ``share`` quantile by nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def show_ms(name: str, samples: list[float]) -> None:
    """Print median and p99 of ``samples`` (seconds) in milliseconds."""
    print(
        f"  {name:<34} median {statistics.median(samples) * 1e3:7.3f} ms"
        f"   p99 {percentile(samples, 0.99) * 1e3:7.3f} ms"
    )


class Pipeline:
    """Link callback -> tracker, recording when each CardPlaced comes out."""

    def __init__(self, tracker: PresenceTracker) -> None:
        self.tracker = tracker
        self.lock = threading.Lock()
        self.placed = threading.Condition(self.lock)
        self.online = threading.Event()
        self.results: list[tuple[float, float, CardPlaced]] = []  # (callback, event, ev)
        self.stopping = False
        self.received = 0.0  # when the last TAG_ARRIVED reached us (one card at a time)

    def ticker(self) -> None:
        """Call ``tick`` at the tracker's deadlines, as the daemon's loop does."""
        with self.lock:
            while not self.stopping:
                deadline = self.tracker.next_deadline()
                now = time.monotonic()
                if deadline is None or deadline > now:
                    self.placed.wait(0.05 if deadline is None else min(0.05, deadline - now))
                    continue
                self._record(self.tracker.tick(now))

    def _record(self, events: list[ZoneEvent]) -> None:
        done = time.monotonic()
        for event in events:
            if isinstance(event, CardPlaced):
                self.results.append((self.received or done, done, event))
                self.placed.notify_all()

    def on_message(self, reader_id: int, message: ReaderMessage, now: float) -> None:
        """Map one reader message onto the tracker, as the daemon does."""
        with self.lock:
            events: list[ZoneEvent] = []
            if isinstance(message, TagArrived):
                self.received = now
                events = self.tracker.tag_arrived(reader_id, message.antenna, message.uid, now)
            elif isinstance(message, TagLeft):
                events = self.tracker.tag_left(reader_id, message.antenna, message.uid, now)
            elif isinstance(message, Inventory):
                events = self.tracker.inventory(reader_id, message.antenna, message.uids, now)
            self._record(events)

    def on_state(self, reader_id: int, state: ConnectionState, stats: LinkStats) -> None:
        """Note when the link is up."""
        if state is ConnectionState.ONLINE:
            self.online.set()


def _grown(results: list[tuple[float, float, CardPlaced]], size: int) -> bool:
    return len(results) > size


def bench_pty(layout: TableLayout, registry: DeckRegistry, placements: int,
              settle: float) -> None:
    """Part 1: write -> CardPlaced over a real pty (through a settle window of ``settle``)."""
    # The link's clock is time.monotonic, as the daemon's.
    tracker = PresenceTracker(layout, registry, settle_time=settle)
    pipeline = Pipeline(tracker)
    ticker = threading.Thread(target=pipeline.ticker, daemon=True)
    ticker.start()
    rng = random.Random(7)
    uids = [registry.uid_for(card, "red") for card in DECK]
    where: dict[str, int] = {}
    wire: list[float] = []
    total: list[float] = []
    with tempfile.TemporaryDirectory() as link_dir:
        emulator = ReaderEmulator(
            link_dir,
            READER_ID,
            antenna_count=4,
            scan_period=QUIET,
            inventory_period=QUIET,
            seed=1,
        )
        with emulator:
            link = ReaderLink(str(emulator.path), READER_ID, pipeline.on_message, pipeline.on_state)
            link.start()
            try:
                if not pipeline.online.wait(30):
                    raise TimeoutError("the link never came online")
                for sample in range(placements):
                    uid = uids[sample % len(uids)]
                    old = where.get(uid)
                    new = rng.choice([a for a in ANTENNAS if a != old])
                    if old is not None:
                        emulator.send([TagLeft(old, uid)])
                    with pipeline.lock:
                        seen = len(pipeline.results)
                    written = time.monotonic()
                    emulator.send([TagArrived(new, uid)])
                    with pipeline.placed:
                        if not pipeline.placed.wait_for(
                            partial(_grown, pipeline.results, seen), timeout=30
                        ):
                            raise TimeoutError(f"no CardPlaced for sample {sample}")
                        callback, done, event = pipeline.results[-1]
                    assert layout.zone_for(READER_ID, new) == event.zone
                    where[uid] = new
                    wire.append(callback - written)
                    total.append(done - written)
            finally:
                link.stop()
                with pipeline.lock:
                    pipeline.stopping = True
                ticker.join()
    tracker_only = [t - w for t, w in zip(total, wire, strict=True)]
    print(f"pty -> zone event, {placements} placements (moves between 4 antennas of reader 1),"
          f" settle window {settle * 1000:.0f} ms")
    show_ms("write -> CardPlaced (total)", total)
    show_ms("write -> frame read (wire)", wire)
    show_ms("read -> CardPlaced (decode+track)", tracker_only)
    if settle > 0:
        show_ms("beyond the settle window", [t - settle for t in tracker_only])


def synthetic_reports(
    layout: TableLayout, registry: DeckRegistry, count: int, seed: int
) -> list[Report]:
    """A seeded stream of reader reports with dropouts and periodic inventories."""
    rng = random.Random(seed)
    antennas = sorted(layout.antenna_map)
    uids = [registry.uid_for(card, deck) for deck in registry.decks for card in DECK]
    uids.append("E0040150A1B2C3D4")  # one stranger
    where: dict[str, tuple[int, int]] = {}
    reports: list[Report] = []
    now = 0.0
    while len(reports) < count:
        now += rng.uniform(0.0, 0.02)
        roll = rng.random()
        uid = rng.choice(uids)
        if roll < 0.05:
            reader, port = rng.choice(antennas)
            seen = [u for u, a in where.items() if a == (reader, port)]
            reports.append(("inventory", reader, port, seen, now))
        elif uid not in where or roll < 0.35:
            antenna = rng.choice(antennas)
            if uid in where:
                reports.append(("left", *where[uid], uid, now))
            where[uid] = antenna
            reports.append(("arrived", *antenna, uid, now))
        elif roll < 0.7:  # a dropout: gone and back within the hold
            reports.append(("left", *where[uid], uid, now))
            reports.append(("arrived", *where[uid], uid, now + rng.uniform(0.05, 1.0)))
        else:
            reports.append(("left", *where.pop(uid), uid, now))
    reports.sort(key=lambda r: r[4])
    return reports


def run_tracker(
    tracker: PresenceTracker, reports: list[Report], call_times: list[float] | None = None
) -> int:
    """Feed ``reports`` the daemon's way; returns the number of events emitted.

    With ``call_times``, the duration of each report's handling (tick included) is
    appended to it.
    """
    events = 0
    clock = time.perf_counter
    for kind, reader, port, payload, now in reports:
        start = clock() if call_times is not None else 0.0
        deadline = tracker.next_deadline()
        if deadline is not None and deadline <= now:
            events += len(tracker.tick(now))
        if kind == "arrived":
            assert isinstance(payload, str)
            events += len(tracker.tag_arrived(reader, port, payload, now))
        elif kind == "left":
            assert isinstance(payload, str)
            events += len(tracker.tag_left(reader, port, payload, now))
        else:
            assert isinstance(payload, list)
            events += len(tracker.inventory(reader, port, payload, now))
        if call_times is not None:
            call_times.append(clock() - start)
    return events + len(tracker.tick(float("inf")))


def run_reference(lookup: dict[str, object], reports: list[Report]) -> int:
    """The reference: one dict lookup per report, nothing else."""
    found = 0
    for _, _, _, payload, _ in reports:
        if isinstance(payload, str) and payload in lookup:
            found += 1
    return found


def bench_throughput(layout: TableLayout, registry: DeckRegistry, count: int, repeats: int) -> None:
    """Part 2: in-memory tracker throughput."""
    reports = synthetic_reports(layout, registry, count, seed=11)
    lookup: dict[str, object] = {
        registry.uid_for(card, deck): card for deck in registry.decks for card in DECK
    }
    tracker_times: list[float] = []
    reference_times: list[float] = []
    events = 0
    for _ in range(repeats):
        tracker = PresenceTracker(layout, registry)
        start = time.perf_counter()
        events = run_tracker(tracker, reports)
        tracker_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        run_reference(lookup, reports)
        reference_times.append(time.perf_counter() - start)
    best = statistics.median(tracker_times)
    reference = statistics.median(reference_times)
    call_times: list[float] = []
    run_tracker(PresenceTracker(layout, registry), reports, call_times)
    print(f"tracker throughput, {len(reports)} reports -> {events} events, {repeats} runs")
    print(
        f"  {len(reports) / best:,.0f} reports/s, {events / best:,.0f} events/s"
        f" (median run {best:.3f} s)"
    )
    print(
        f"  per report (timed one by one): median {statistics.median(call_times) * 1e6:.2f} us"
        f", p99 {percentile(call_times, 0.99) * 1e6:.2f} us"
    )
    print(f"  vs bare dict lookup per report: {best / reference:.1f}x the time")


def main() -> int:
    """Run both parts and print their figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--placements", type=int, default=2000)
    parser.add_argument("--reports", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--settle", type=float, default=DEFAULT_SETTLE_TIME,
                        help="the tracker's settle window in seconds (0: none)")
    args = parser.parse_args()
    layout = load_layout(LAYOUT_FILE)
    registry = load_decks(DECK_FILES)
    bench_pty(layout, registry, args.placements, args.settle)
    bench_throughput(layout, registry, args.reports, args.repeats)
    return 0


if __name__ == "__main__":
    sys.exit(main())
