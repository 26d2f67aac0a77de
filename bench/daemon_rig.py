"""What the daemon benches share: the demo's table started with a public feed, the
virtual dealer's hands, the stamped ``mosquitto_sub`` probe, frame-write hooks and
the figures' helpers.

``bench_daemon_latency.py``, ``bench_daemon_equity.py``, ``bench_daemon_flood.py``
and ``bench_daemon_skeleton.py`` import from here (not a bench itself: it runs
through theirs, tests/test_benches.py), so the daemon is started, waited for and
closed the same way in every one of them.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from firmware_bridge.messages import Message, TagArrived
from table_controller.demo.dealer import VirtualDealer
from table_controller.demo.feed import TableFeed
from table_controller.domain.zones import BOARD, BURN, Zone
from table_controller.simulation.emulated_table import EmulatedTable
from table_controller.simulation.session import DAEMON_COMMAND, TABLE_ID, DemoTable
from table_controller.table.deck import DeckRegistry
from table_controller.table.layout import TableLayout

READY_TIMEOUT = 60.0
"""Seconds the daemon (or a probe) may take to be ready before the bench gives up."""


def daemon_command(breakdown: bool) -> list[str]:
    """The daemon's command line: ``stud-table run``, or with ``breakdown`` the daemon
    under ``daemon_breakdown.py`` (timers around its engine thread)."""
    if breakdown:
        return [sys.executable, str(Path(__file__).with_name("daemon_breakdown.py"))]
    return list(DAEMON_COMMAND)


@contextmanager
def running_table(demo: DemoTable) -> Iterator[TableFeed]:
    """Start ``demo`` (broker, emulated readers, daemon) and a public feed of its table,
    wait until the daemon is ready; on leaving (also on an error) close both."""
    feed = None
    try:
        demo.start()
        feed = TableFeed("127.0.0.1", demo.port, TABLE_ID, lambda _lines: None).start()
        wait_ready(demo, feed)
        yield feed
    finally:
        demo.close()
        if feed is not None:
            feed.stop()


def percentile(values: list[float], share: float) -> float:
    """The ``share`` quantile by nearest rank."""
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))
    return ordered[index]



def rss_kib(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM (peak) of process ``pid`` in KiB."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(value.split()[0])
    return out


def stamped_subscriber(
    port: int, out: Path, topics: list[str], client_id: str
) -> subprocess.Popen[bytes]:
    """``mosquitto_sub`` (C, its own process) writing every message on ``topics`` to
    ``out`` as ``<wall time received> <topic> <payload>`` lines: a Python subscriber
    in the busy bench process would add its own GIL waits to the figures."""
    binary = shutil.which("mosquitto_sub")
    if binary is None:
        raise RuntimeError("mosquitto_sub not found: run scripts/setup")
    args = [binary, "-h", "127.0.0.1", "-p", str(port), "-q", "1"]
    for topic in topics:
        args += ["-t", topic]
    args += ["-F", "%U %t %p", "--nodelay", "-i", client_id]
    with out.open("wb") as sink:
        return subprocess.Popen(args, stdout=sink, stderr=subprocess.DEVNULL)


def hook_frame_writes(demo: DemoTable, record: Callable[[float, str], None]) -> None:
    """Hook every emulated reader of ``demo``: each TAG_ARRIVED frame written to its
    pty calls ``record(time written, "card@zone")`` (the key :func:`event_key`
    gives the matching ``secure/events`` message)."""
    assert demo.table is not None
    hook_table_frame_writes(demo.table, demo.layout, demo.registry, record)


def hook_table_frame_writes(table: EmulatedTable, layout: TableLayout, registry: DeckRegistry,
                            record: Callable[[float, str], None]) -> None:
    """As :func:`hook_frame_writes`, for any emulated table (the skeleton's bare one)."""
    for reader_id, emulator in table.readers.items():

        def hook(message: Message, at: float, reader_id: int = reader_id) -> None:
            if not isinstance(message, TagArrived):
                return
            zone = layout.zone_for(reader_id, message.antenna)
            found = registry.lookup(message.uid)
            if zone is not None and found is not None:
                record(at, f"{found.card.code}@{zone.name}")

        emulator.on_frame_written = hook


def wait_ready(demo: DemoTable, feed: TableFeed) -> None:
    """Wait until the demo's daemon publishes its state and every reader is online."""
    deadline = time.monotonic() + READY_TIMEOUT
    readers = len(demo.layout.readers)
    while not (feed.ready and feed.readers_online(readers)):
        if time.monotonic() > deadline or not demo.daemon_alive():
            raise RuntimeError("daemon not ready:\n" + demo.daemon_log_tail())
        time.sleep(0.05)


def deal_hands(
    demo: DemoTable, feed: TableFeed, *, seed: int, speed: float, hands: int
) -> tuple[VirtualDealer, float]:
    """Deal ``hands`` 8-player hands on the demo's table with a virtual dealer; the
    dealer (its ``failure`` for the caller to report) and the seconds it took."""
    assert demo.table is not None
    dealer = VirtualDealer(demo.table, feed, seed=seed, speed=speed, hands=hands,
                           players=8, settle_time=demo.presence_hold + 0.5)
    started = time.monotonic()
    dealer.start()
    dealer.done.wait()
    return dealer, time.monotonic() - started


def event_key(event: dict[str, Any]) -> str | None:
    """``card@zone`` of a secure event that reports a card reaching a zone."""
    kind, card = event.get("kind"), event.get("card")
    zone: Zone | None = None
    if kind == "card_dealt_up":
        zone = Zone.up(event["seat"])
    elif kind == "card_dealt_down":
        zone = Zone.down(event["seat"])
    elif kind == "card_burned":
        zone = BURN
    elif kind == "community_card":
        zone = BOARD
    if zone is None or card is None:
        return None
    return f"{card}@{zone.name}"


def ms(seconds: float) -> str:
    """Seconds as milliseconds, 3 decimals."""
    return f"{seconds * 1000:.3f} ms"


