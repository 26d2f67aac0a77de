"""Issue 9 item 26: what the daemon does over and over must not keep memory.

The daemon's memory rose with time and with hands (``docs/daemon.md`` "Memory")
although it kept no object: its hot paths fed CPython's own caches, which only a
full garbage collection (or nothing at all) empties:

* ``dataclasses.asdict``/``fields`` and ``tuple(<generator>)`` build a tuple by
  resizing a 10-slot one, so every call leaves one tuple on the free list of
  another size (up to 2,000 per size), emptied only by a full collection, which
  a long-running daemon with 50,000 long-lived objects hardly ever runs. The
  reader status refresh (``ReaderLink.stats``) and every INVENTORY frame did that.
* paho packs a message's MQTT 5 properties on every publish, making 27 new
  attribute-name strings and looking each up with ``hasattr``: CPython's type
  attribute cache keeps such strings alive until their slot is reused.
* What is left (tuples stranded by library code, pydantic, the engine) is
  emptied by full collections, which the daemon runs again once it has frozen
  what start-up built (``settle_heap``).

Each test counts what is left after many repetitions, in this process, with the
real parts (a real Mosquitto for the publisher): a count of blocks or of
allocations, never a time or a resident size.
"""

from __future__ import annotations

import gc
import inspect
import math
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

from paho.mqtt import properties as paho_properties

from firmware_bridge.decoder import FrameDecoder
from firmware_bridge.encoder import FrameEncoder
from firmware_bridge.link import ReaderLink
from firmware_bridge.messages import Direction, Inventory
from table_controller.daemon.runner import HEAP_COLLECT_PERIOD
from table_controller.mqtt.broker_config import BrokerConfig
from table_controller.mqtt.payloads import ReaderStatus
from table_controller.mqtt.publisher import MqttPublisher
from table_controller.mqtt.sequence import SequenceCounter
from table_controller.testing.broker import WAIT, MosquittoBroker, wait_until
from table_controller.testing.daemon_rig import TableRig

REPEATS = 1500
"""Calls per test: fewer than the 2,000 tuples a free list may hold, so each
call that strands a tuple shows as one more block."""

KEPT_LIMIT = REPEATS // 10
"""Blocks the repeated calls may leave allocated (other threads, caches warming
up); a path that strands one block per call leaves ``REPEATS``."""


def blocks_kept(call: Callable[[], object], times: int = REPEATS) -> int:
    """pymalloc blocks still allocated after ``times`` calls of ``call``.

    The collector is off meanwhile: a full collection empties the free lists,
    and would hide what a path leaves on them (the daemon rarely runs one).
    """
    call()  # whatever the first call caches for good
    gc.collect()  # also empties the free lists: the count starts from nothing kept
    gc.disable()
    try:
        before = sys.getallocatedblocks()
        for _ in range(times):
            call()
        return sys.getallocatedblocks() - before
    finally:
        gc.enable()


def test_regression_link_stats_keeps_nothing() -> None:
    """Regression (item 26): ``ReaderLink.stats``, read for every reader on every
    status refresh, used ``dataclasses.asdict`` and left an 11-slot tuple on the
    free list per call (1,500 calls: 1,500 blocks; about 1 block a second in an
    idle daemon)."""
    link = ReaderLink("loop://", 1, lambda *_: None, lambda *_: None)
    kept = blocks_kept(lambda: link.stats)
    assert kept < KEPT_LIMIT, f"{kept} blocks kept by {REPEATS} reads of ReaderLink.stats"


def test_regression_inventory_decode_keeps_nothing() -> None:
    """Regression (item 26): decoding an INVENTORY frame built its tag tuple from a
    generator and left a tuple on the free list per frame (every reader sends
    one per antenna every few seconds, and on every reconcile)."""
    encoder = FrameEncoder()
    decoder = FrameDecoder(Direction.READER_TO_HOST)
    uids = ("04A1B2C3D4E5F6", "04112233445566")

    def decode_one() -> object:
        frame = encoder.encode(Inventory(3, 7, uids))
        (received,) = decoder.feed(frame)
        assert isinstance(received.message, Inventory)
        return received

    kept = blocks_kept(decode_one)
    assert kept < KEPT_LIMIT, f"{kept} blocks kept by {REPEATS} INVENTORY frames"


def _pack_lines() -> range:
    """The source lines of paho's ``Properties.pack``."""
    lines, first = inspect.getsourcelines(paho_properties.Properties.pack)
    return range(first, first + len(lines))


def test_regression_publish_packs_properties_once(
    mosquitto: MosquittoBroker, tmp_path: Path
) -> None:
    """Regression (item 26): every publish had paho pack the MQTT 5 properties
    anew; the attribute-name strings ``Properties.pack`` makes stayed alive in
    CPython's type attribute cache. After many reader statuses through a real
    broker, no allocation made inside ``Properties.pack`` is alive."""
    broker = BrokerConfig(host="127.0.0.1", port=mosquitto.port)
    publisher = MqttPublisher("t1", broker, SequenceCounter(tmp_path / "seq"))
    publisher.start()
    try:
        assert publisher.wait_online(WAIT)
        pack_file = paho_properties.__file__
        lines = _pack_lines()
        tracemalloc.start(1)
        try:
            for n in range(600):
                publisher.publish_reader(ReaderStatus(
                    table="t1", hand=None, seq=0, ts=0.0, reader=str(n % 5 + 1),
                    state="online", last_heartbeat=1.7e9 + n, frame_errors={"crc": 0},
                    zones=["seat1.down"],
                ))
            wait_until(lambda: publisher.outgoing == 0, WAIT, "every PUBACK")
            snapshot = tracemalloc.take_snapshot()
        finally:
            tracemalloc.stop()
        alive = [
            trace for trace in snapshot.traces
            if trace.traceback[0].filename == pack_file and trace.traceback[0].lineno in lines
        ]
        assert alive == [], f"{len(alive)} allocations of Properties.pack still alive"
    finally:
        publisher.stop(timeout=5)


SETTLE_PROBE = """
import gc, sys
from table_controller.daemon.runner import settle_heap
from table_controller.domain.engine.variants import warm_up

warm_up()  # the daemon's start-up: tens of thousands of long-lived objects
kept = [[i] for i in range(60_000)]
settle_heap() if sys.argv[1] == "settled" else gc.collect()
after_full = []  # pymalloc blocks right after each full collection (free lists empty)

def on_gc(phase, info):
    if phase == "stop" and info["generation"] == 2:
        after_full.append(sys.getallocatedblocks())

gc.callbacks.append(on_gc)
start = sys.getallocatedblocks()
for i in range(500_000):
    tuple(x for x in (i, i + 1))  # strands a 2-slot tuple on the free list
    node = {"i": i}; node["self"] = node  # a cycle: work for the collector
gc.callbacks.remove(on_gc)
growth = after_full[-1] - after_full[0] if len(after_full) > 1 else -1
print(len(after_full), sys.getallocatedblocks() - start, growth)
"""


def _probe(mode: str) -> tuple[int, int, int]:
    out = subprocess.run(
        [sys.executable, "-c", SETTLE_PROBE, mode], capture_output=True, text=True,
        check=True, timeout=600,
    ).stdout.split()
    return int(out[0]), int(out[1]), int(out[2])


def test_regression_settled_heap_runs_full_collections() -> None:
    """Regression (item 26): with start-up's objects frozen (``settle_heap``, run
    by the daemon once started), CPython's full collections run again and empty
    the free lists; without it none ran, and stranded tuples piled up to the free
    list's 2,000 (measured in the daemon: about 12 tuples a hand, of every size
    from 1 to 8). In a subprocess: freezing would freeze the test process."""
    full, _kept, growth = _probe("settled")
    assert full >= 2, f"{full} full collections after settle_heap"
    # Right after each full collection the free lists are empty: nothing piles up.
    assert growth < 300, f"{growth} blocks more after the last full collection than the first"
    # The same churn without settle_heap: no full collection, the tuples pile up.
    unsettled_full, unsettled_kept, _ = _probe("plain")
    assert unsettled_full == 0
    assert unsettled_kept >= 1900


def test_engine_loop_runs_the_periodic_full_collection(rig: TableRig) -> None:
    """Item 26: a settled daemon's engine loop runs a full collection when one is
    due (every ``HEAP_COLLECT_PERIOD`` s) and schedules the next; here on a
    thread of the test process, where the daemon does not settle by itself, so
    the test makes one due."""
    daemon = rig.start_thread()
    assert daemon._flags.next_collect == math.inf  # not settled: not in its own process
    before = gc.get_stats()[2]["collections"]
    daemon._flags.next_collect = 0.0
    wait_until(lambda: daemon._flags.next_collect != 0.0, WAIT, "the engine loop's collection")
    assert daemon._flags.next_collect <= time.monotonic() + HEAP_COLLECT_PERIOD
    assert gc.get_stats()[2]["collections"] > before
