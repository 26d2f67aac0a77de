"""Soak runs: many demo hands through the real daemon, its memory and file handles watched.

:func:`daemon_soak` runs the demo's own machinery (:class:`DemoTable`: a private
mosquitto, emulated readers on ptys, the daemon as a child process; the
:class:`VirtualDealer` dealing random clean hands, winners of hands won by folds
mucking, the piles gathered) and samples the daemon process between hands: its
resident memory (``VmRSS`` of ``/proc/<pid>/status``) and its open file handles
(entries of ``/proc/<pid>/fd``). A subscriber counts every alert the table
publishes: on clean hands there must be none.

:func:`core_soak` runs hands through :class:`TableCore` in this process (real
presence tracker and journal, a publisher that drops everything, a fake clock:
no ptys, no broker, no waiting) and measures the Python heap with
``tracemalloc`` after warming up.
"""

from __future__ import annotations

import gc
import random
import statistics
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from table_controller.demo.app import scan_period_for
from table_controller.demo.dealer import Motion, VirtualDealer
from table_controller.demo.feed import TableFeed
from table_controller.domain.events import CardPlaced, TableEvent
from table_controller.mqtt.topics import TableTopics
from table_controller.records.journal import decode_line
from table_controller.simulation.emulated_table import EmulatedTable
from table_controller.simulation.session import (
    DAEMON_COMMAND,
    TABLE_ID,
    DemoTable,
)
from table_controller.testing.broker import RecordingSubscriber, wait_until
from table_controller.testing.core_rig import CoreTable

LEGAL_NOTICES: Final = frozenset({"community_card"})
"""Codes the engine still publishes on the ``alerts`` topic for a legal, correctly
dealt hand: rule 15's community card (eight players to 7th street, the deck runs
short). Reported apart; any other alert on a clean hand fails a soak."""


class JournalPacedTable:
    """The emulated table as the dealer sees it, but each card placed waits until
    the daemon's journal shows it (the journal is what the engine applied, in
    order). Readers are independent threads: on a loaded machine a card can
    overtake the one dealt just before it on another reader, and the daemon
    rightly alerts (out of order, missing burn). A soak measures the daemon over
    thousands of hands, not the load of the machine it runs on."""

    def __init__(self, table: EmulatedTable, journal: Path, timeout: float = 30.0) -> None:
        self.table = table
        self.layout = table.layout
        self.journal = journal
        self.timeout = timeout
        self._offset = 0
        self._partial = b""

    def _seen(self, zone: str, card: str) -> bool:
        try:
            with self.journal.open("rb") as file:
                file.seek(self._offset)
                data = file.read()
        except FileNotFoundError:
            return False
        self._offset += len(data)
        lines = (self._partial + data).split(b"\n")
        self._partial = lines.pop()
        found = False
        for line in lines:
            try:
                record = decode_line(line)
            except ValueError:
                continue
            found = found or (record.get("op") == "place" and record.get("zone") == zone
                              and record.get("card") == card)
        return found

    def apply_all(self, events: Iterable[TableEvent]) -> None:
        """Apply ``events``; then wait for each placement to reach the journal."""
        events = list(events)
        self.table.apply_all(events)
        waiting = [(e.zone.name, e.card.code) for e in events if isinstance(e, CardPlaced)]
        deadline = time.monotonic() + self.timeout
        while waiting:
            zone, card = waiting[0]
            if self._seen(zone, card):
                waiting.pop(0)
                continue
            if time.monotonic() > deadline:
                raise TimeoutError(f"{card} in {zone} never reached the journal")
            time.sleep(0.005)


def rss_bytes(pid: int, field: str = "VmRSS") -> int:
    """Resident memory of process ``pid`` in bytes: ``VmRSS`` (all of it) or
    ``RssAnon`` (its own heap and stacks: what a leak grows; file-backed pages
    such as shared libraries come and go with the machine's memory pressure)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no {field} for pid {pid}")


def sample(hands: int, pid: int) -> Sample:
    """Process ``pid`` now, after ``hands`` hands."""
    return Sample(hands, rss_bytes(pid), rss_bytes(pid, "RssAnon"), open_fds(pid))


def open_fds(pid: int) -> int:
    """How many file handles process ``pid`` has open."""
    return len(list(Path(f"/proc/{pid}/fd").iterdir()))


@dataclass
class Sample:
    """The daemon process after ``hands`` complete hands."""

    hands: int
    rss: int
    anon: int
    """Anonymous resident memory (``RssAnon``)."""
    fds: int


@dataclass
class DaemonSoak:
    """What a :func:`daemon_soak` run saw."""

    hands: int
    samples: list[Sample] = field(default_factory=list)
    alerts: list[dict[str, object]] = field(default_factory=list)
    failure: str | None = None
    seconds: float = 0.0
    journal: Path | None = None

    def anon_growth_per_hand(self, skip: int) -> float:
        """Least-squares slope of anonymous RSS over hands (bytes per hand), ignoring
        the first ``skip`` samples (start-up: the allocator and caches warming up)."""
        return _slope([(s.hands, s.anon) for s in self.samples[skip:]])

    def fds_seen(self) -> set[int]:
        """Every open-handle count sampled."""
        return {s.fds for s in self.samples}


def daemon_soak(
    workdir: Path,
    *,
    hands: int,
    seed: int = 1,
    speed: float = 50.0,
    presence_hold: float = 0.3,
    sample_every: int = 1,
    timeout: float = 600.0,
    say: Callable[[str], None] | None = None,
    daemon_command: Sequence[str] = DAEMON_COMMAND,
    after_sample: Callable[[Sample, int], None] | None = None,
) -> DaemonSoak:
    """Deal ``hands`` demo hands through the real daemon (see the module docstring).

    ``daemon_command`` replaces ``python -m table_controller run`` (a wrapper that
    traces the daemon's heap); ``after_sample(sample, pid)`` runs on the dealer's
    thread after each sample.
    """
    table = DemoTable(workdir, scan_period=scan_period_for(speed), presence_hold=presence_hold,
                      fsync="never", log_level="warning", daemon_command=daemon_command)
    result = DaemonSoak(hands)
    started = time.monotonic()
    feed: TableFeed | None = None
    alerts: RecordingSubscriber | None = None
    dealer: VirtualDealer | None = None
    try:
        table.start()
        result.journal = table.journal_path
        topics = TableTopics(TABLE_ID)
        alerts = RecordingSubscriber(table.port, [topics.alerts])
        alerts.wait_subscribed()
        feed = TableFeed("127.0.0.1", table.port, TABLE_ID, lambda _lines: None).start()
        readers = len(table.layout.readers)
        wait_until(lambda: feed is not None and feed.ready and feed.readers_online(readers),
                   60, "the daemon's state with every reader online")
        pid = table.daemon_pid
        assert pid is not None
        assert table.table is not None
        result.samples.append(sample(0, pid))
        paced = JournalPacedTable(table.table, table.journal_path)
        dealer = VirtualDealer(paced, feed, seed=seed, speed=speed,  # type: ignore[arg-type]
                               hands=hands, settle_time=presence_hold + 0.3, clear_timeout=60.0)
        sampled = threading.Event()

        def on_motion(_motion: Motion) -> None:
            # Called on the dealer's thread after every motion: sample once per
            # completed hand (the gathering is a hand's last motion).
            done = dealer.hands_completed if dealer is not None else 0
            if done and done % sample_every == 0 and result.samples[-1].hands < done:
                result.samples.append(sample(done, pid))
                if after_sample is not None:
                    after_sample(result.samples[-1], pid)
                sampled.set()

        dealer.on_motion = on_motion
        dealer.start()
        deadline = time.monotonic() + timeout
        while not dealer.done.wait(1.0):
            if not table.daemon_alive():
                result.failure = f"the daemon stopped: {table.daemon_log_tail()}"
                break
            if say is not None and sampled.is_set():
                sampled.clear()
                last = result.samples[-1]
                say(f"soak: {last.hands} hands, rss {last.rss / 1e6:.2f} MB, fds {last.fds}")
            if time.monotonic() > deadline:
                result.failure = f"timed out after {timeout:.0f} s"
                break
        if dealer.failure is not None:
            result.failure = dealer.failure + f"; daemon log: {table.daemon_log_tail()}"
        completed = dealer.hands_completed
        # After the last gathering, once the daemon is idle: the final sample.
        if result.failure is None and table.daemon_alive():
            time.sleep(presence_hold + 0.5)
            result.samples.append(sample(completed, pid))
        result.hands = completed
        # Every alert published before this state is delivered before it (one
        # connection, QoS 1, in order): rebirth and wait for the fresh state.
        result.alerts = [message.json() for message in alerts.messages]
    finally:
        if dealer is not None:
            dealer.stop()
        try:
            table.close()
        finally:
            if feed is not None:
                feed.stop()
            if alerts is not None:
                alerts.close()
        result.seconds = time.monotonic() - started
    return result


# ------------------------------------------------------------------ in process


@dataclass
class CoreSoak:
    """What a :func:`core_soak` run measured (bytes of traced Python heap)."""

    hands: int
    traced: list[tuple[int, int]]
    """(hands played, traced bytes above the start) after each sample."""
    alerts: list[str]
    top: list[str]
    """The biggest growths by allocation site, for a failure message."""

    def growth_per_hand(self, skip: int = 0) -> float:
        """Least-squares slope of the traced heap over hands (bytes per hand),
        leaving out the first ``skip`` samples."""
        return _slope(self.traced[skip:])


def core_soak(workdir: Path, *, hands: int, warm_up: int = 200, samples: int = 10,
              seed: int = 1) -> CoreSoak:
    """Play ``warm_up`` then ``hands`` hands through :class:`CoreTable`; trace the heap."""
    table = CoreTable(workdir, keep=False)
    rng = random.Random(seed)
    try:
        for _ in range(warm_up):
            table.hand(rng)
        gc.collect()
        tracemalloc.start(1)  # totals and allocation lines: deeper tracebacks cost 5x
        try:
            before = tracemalloc.take_snapshot()
            base = tracemalloc.get_traced_memory()[0]
            traced = [(0, 0)]
            every = max(1, hands // samples)
            for played in range(1, hands + 1):
                table.hand(rng)
                if played % every == 0 or played == hands:
                    gc.collect()
                    traced.append((played, tracemalloc.get_traced_memory()[0] - base))
            after = tracemalloc.take_snapshot()
        finally:
            tracemalloc.stop()
        top = [str(stat) for stat in after.compare_to(before, "lineno")[:8]]
        return CoreSoak(hands, traced, list(table.publisher.alerts), top)
    finally:
        table.close()


def _slope(points: list[tuple[int, int]]) -> float:
    """Least-squares slope of ``points`` (y per x); 0 with fewer than two."""
    if len(points) < 2:
        return 0.0
    xs = [float(x) for x, _ in points]
    ys = [float(y) for _, y in points]
    mean_x, mean_y = statistics.fmean(xs), statistics.fmean(ys)
    var = sum((x - mean_x) ** 2 for x in xs)
    if var == 0:
        return 0.0
    return sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / var
