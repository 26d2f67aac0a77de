"""Daemon latency, reader frame -> MQTT subscriber, and the daemon's memory.

1. **End to end.** The demo's table (:class:`~table_controller.simulation.session.DemoTable`):
   mosquitto on loopback, five emulated readers on ptys for the 8-seat layout, and
   the real daemon as a ``stud-table run`` child process. A virtual dealer deals
   8-player hands continuously. The clock starts when the emulator has written the
   last byte of a TAG_ARRIVED frame to the pty (``ReaderEmulator.on_frame_written``)
   and stops when a subscriber in this process receives the matching
   ``secure/events`` message (``card_dealt_up``/``card_dealt_down`` for a seat,
   ``card_burned``, ``community_card``: matched by card and zone). In between: pty,
   the daemon's link thread (pyserial read, decode), its queue, presence, the
   journal append (fsync per the policy), engine, projection, paho, mosquitto, paho.
2. **Reference, in process.** The same kind of hands applied to a
   :class:`DealingEngine` in card-only mode plus the payload projection and JSON
   serialisation the core does per zone event (events, then public and secure
   state): the pure cost of the engine thread's work per event, without I/O. The
   journal append alone (per fsync policy) is timed too, on the same disk as the
   end-to-end run's journal.
3. **Wire.** What the frame would take on a real serial line: frame bytes x 10
   bits / baud (115200, the link's rate). A pty has no baud limit, so the
   end-to-end figure excludes it; a real table adds it.
4. **Memory.** VmRSS of the daemon process (``/proc/<pid>/status``) once it is up,
   and after all hands (VmHWM: the peak).

5. **Breakdown** (``--breakdown``, a separate run: the timers cost a little). The
   daemon runs under ``bench/daemon_breakdown.py``: time from the link's read to
   the engine thread, the engine thread's work per TAG_ARRIVED, and one paho
   ``publish()`` call.

The daemon's live equity worker is part of the configuration (``--equity-worker``,
default ``process`` as in the daemon; ``off`` gives the card path without it).

    .venv/bin/python bench/bench_daemon_latency.py [--hands 20] [--speed 10] \
        [--fsync always never] [--breakdown]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, cast

import daemon_rig as rig
import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion, MQTTProtocolVersion

from firmware_bridge.encoder import FrameEncoder
from firmware_bridge.link import BAUDRATE
from firmware_bridge.messages import TagArrived
from table_controller.daemon.logging import configure_logging
from table_controller.daemon.projection import (
    alert_payload,
    event_payloads,
    state_payloads,
)
from table_controller.demo.dealer import plan_hand
from table_controller.domain.engine.alerts import Alert
from table_controller.domain.engine.dealing import DealingEngine
from table_controller.domain.engine.outputs import GameEvent
from table_controller.domain.engine.settings import TableSettings
from table_controller.domain.events import HandStarted
from table_controller.mqtt.payloads import to_json
from table_controller.mqtt.topics import TableTopics
from table_controller.records.journal import Journal
from table_controller.records.script import event_to_op
from table_controller.simulation.session import TABLE_ID, DemoTable, FsyncPolicy
from table_controller.table.presence import DEFAULT_SETTLE_TIME

BASELINE_TOPIC = "bench/baseline"


def summary(values: list[float]) -> tuple[float, float]:
    """(median, p99) of ``values``."""
    return statistics.median(values), rig.percentile(values, 0.99)


class LatencyProbe:
    """Pairs 'frame written' times with 'message received' times (see module doc).

    The receiving side is ``mosquitto_sub`` (C, its own process), which stamps
    each message with the wall time it arrived (``-F %U``): a Python subscriber
    in this busy process would add its own GIL waits to the figures.
    """

    def __init__(self, demo: DemoTable) -> None:
        self.demo = demo
        self.topics = TableTopics(TABLE_ID)
        self._lock = threading.Lock()
        self._writes: list[tuple[float, str]] = []
        self._baseline_sent: dict[int, float] = {}
        self._out = demo.workdir / "probe.txt"
        self._proc: subprocess.Popen[bytes] | None = None

    def attach(self) -> None:
        """Start the subscriber, wait until it receives, then hook every reader."""
        self._proc = rig.stamped_subscriber(
            self.demo.port, self._out, [self.topics.secure_events, BASELINE_TOPIC], "bench-probe"
        )
        deadline = time.monotonic() + rig.READY_TIMEOUT
        while b"ping" not in self._out.read_bytes():
            if time.monotonic() > deadline:
                raise RuntimeError("mosquitto_sub never received")
            subprocess.run(["mosquitto_pub", "-h", "127.0.0.1", "-p", str(self.demo.port),
                            "-t", BASELINE_TOPIC, "-m", '{"ping": 1}'], check=True)
            time.sleep(0.2)
        rig.hook_frame_writes(self.demo, self._record)

    def close(self) -> None:
        """Stop the subscriber."""
        if self._proc is not None:
            self._proc.terminate()
            self._proc.wait(timeout=10)
            self._proc = None

    def _record(self, at: float, key: str) -> None:
        with self._lock:
            self._writes.append((at, key))

    def measure_baseline(self, count: int) -> None:
        """MQTT alone: a paho client publishing from a thread of its own (as the
        daemon's core does) -> mosquitto -> the subscriber, ``count`` messages of
        a state's size, one every 20 ms."""
        client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="bench-baseline",
                             protocol=MQTTProtocolVersion.MQTTv5)
        client.connect("127.0.0.1", self.demo.port)
        client.loop_start()
        try:
            for index in range(count):
                payload = json.dumps({"i": index, "pad": "x" * 900}).encode()
                self._baseline_sent[index] = time.time()
                client.publish(BASELINE_TOPIC, payload, qos=1)
                time.sleep(0.02)
            time.sleep(1.0)
        finally:
            client.disconnect()
            client.loop_stop()

    def results(self) -> tuple[list[float], list[float], int]:
        """(end-to-end latencies, MQTT-alone latencies, unmatched messages), seconds."""
        writes: dict[str, list[float]] = {}
        with self._lock:
            for at, key in self._writes:
                writes.setdefault(key, []).append(at)
        latencies: list[float] = []
        baseline: list[float] = []
        unmatched = 0
        for line in self._out.read_bytes().decode().splitlines():
            stamp, topic, payload = line.split(" ", 2)
            received = float(stamp)
            event = json.loads(payload)
            if topic == BASELINE_TOPIC:
                sent = self._baseline_sent.get(event.get("i", -1))
                if sent is not None:
                    baseline.append(received - sent)
                continue
            card_zone = rig.event_key(event)
            if card_zone is None:
                continue
            # The card's frame is the latest one written for it before the message
            # (the same card lands in the same zone again only hands later).
            earlier = [t for t in writes.get(card_zone, []) if t <= received]
            if earlier:
                latencies.append(received - earlier[-1])
            else:
                unmatched += 1
        return latencies, baseline, unmatched


def run_end_to_end(hands: int, speed: float, fsync: str, seed: int,
                   breakdown: bool = False) -> dict[str, Any]:
    """Deal ``hands`` 8-player hands through the real daemon; latencies and memory.
    ``breakdown``: run the daemon under ``daemon_breakdown.py`` and return its lines."""
    with tempfile.TemporaryDirectory(prefix="bench-daemon-") as tmp:
        demo = DemoTable(Path(tmp), scan_period=0.02, fsync=cast(FsyncPolicy, fsync),
                         log_level="warning", daemon_command=rig.daemon_command(breakdown))
        probe = LatencyProbe(demo)
        with rig.running_table(demo) as feed:
            try:
                probe.attach()
                assert demo.daemon_pid is not None
                assert demo.table is not None
                memory_start = rig.rss_kib(demo.daemon_pid)
                dealer, elapsed = rig.deal_hands(demo, feed, seed=seed, speed=speed, hands=hands)
                if dealer.failure:
                    kept = Path(tempfile.mkdtemp(prefix="bench-daemon-failed-"))
                    shutil.copytree(demo.workdir / "journal", kept / "journal")
                    raise RuntimeError(f"{dealer.failure}; journal kept in {kept}\n"
                                       + demo.daemon_log_tail())
                time.sleep(1.0)  # let the last messages arrive before counting
                memory_end = rig.rss_kib(demo.daemon_pid)
                probe.measure_baseline(500)
                latencies, baseline, unmatched = probe.results()
            finally:
                probe.close()
        lines = [line.removeprefix("breakdown: ") for line in demo.daemon_log_tail(50).splitlines()
                 if line.startswith("breakdown:")]
    return {
        "breakdown": lines,
        "latencies": latencies, "unmatched": unmatched, "elapsed": elapsed,
        "rss_start": memory_start["VmRSS"], "rss_end": memory_end["VmRSS"],
        "rss_peak": memory_end["VmHWM"], "baseline": baseline,
    }


def run_in_process(hands: int, seed: int, *, pause: float = 0.0,
                   limit: int | None = None) -> tuple[list[float], list[float]]:
    """Engine + projection + JSON per zone event, for 8-player hands: (wall clock, this
    thread's CPU time), seconds each. ``pause``: seconds slept before each measured
    event, as cards come to the daemon (a dealer's pace); ``limit``: at most so many
    events measured."""
    settings = TableSettings(seats=8, ante=1, bring_in=2, small_bet=5, big_bet=10,
                             auto_hands=True)
    engine = DealingEngine(settings)
    rng = random.Random(seed)
    costs: list[float] = []
    cpu: list[float] = []
    clock, cpu_clock = time.perf_counter, time.thread_time
    for _ in range(3):
        # Warm-up, not measured: the first showdown loads the hand evaluator's
        # tables (about 0.7 s, once per process).
        for motion in plan_hand(rng, players=8, fold_chance=0.0).all_motions:
            for event in motion.events:
                if engine.starts_hand(event):
                    engine.apply(HandStarted((), at=event.at))
                engine.apply(event)
    for _ in range(hands):
        for motion in plan_hand(rng, players=8).all_motions:
            for event in motion.events:
                if limit is not None and len(costs) >= limit:
                    return costs, cpu
                if pause:
                    time.sleep(pause)
                start, start_cpu = clock(), cpu_clock()
                outputs = []
                if engine.starts_hand(event):
                    outputs += engine.apply(HandStarted((), at=event.at))
                outputs += engine.apply(event)
                hand = engine.hand
                for output in outputs:
                    if isinstance(output, Alert):
                        to_json(alert_payload(TABLE_ID, hand, output))
                    elif isinstance(output, GameEvent):
                        payloads = event_payloads(TABLE_ID, hand, output)
                        if payloads is not None:
                            to_json(payloads[0])
                            to_json(payloads[1])
                # Both snapshots as the core projects them (one pass over the hand).
                for snapshot in state_payloads(TABLE_ID, 8, hand):
                    to_json(snapshot)
                costs.append(clock() - start)
                cpu.append(cpu_clock() - start_cpu)
    return costs, cpu


def run_journal(fsync: str, count: int, seed: int) -> list[float]:
    """Journal appends of real zone events with the ``fsync`` policy (seconds each)."""
    rng = random.Random(seed)
    events = [e for m in plan_hand(rng, players=8).all_motions for e in m.events]
    costs = []
    with tempfile.TemporaryDirectory(prefix="bench-journal-") as tmp:
        journal = Journal.open(Path(tmp) / "j.jsonl", fsync=cast(FsyncPolicy, fsync))
        try:
            for index in range(count):
                op = event_to_op(events[index % len(events)])
                start = time.perf_counter()
                journal.append(op, at=time.time())
                costs.append(time.perf_counter() - start)
        finally:
            journal.close()
    return costs


def wire_time() -> tuple[int, float]:
    """(bytes, seconds) of a TAG_ARRIVED frame with a 7-byte UID at the link's baud."""
    frame = FrameEncoder().encode(TagArrived(1, "04A1B2C3D4E5F6"))
    return len(frame), len(frame) * 10 / BAUDRATE


def main() -> int:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hands", type=int, default=20, help="8-player hands per run")
    parser.add_argument("--speed", type=float, default=10.0,
                        help="dealing speed (1 = 0.4-0.6 s per card)")
    parser.add_argument("--fsync", nargs="+", default=["always", "never"],
                        choices=["always", "batch", "never"], help="journal policies to run")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--breakdown", action="store_true",
                        help="also time the daemon's engine thread (bench/daemon_breakdown.py)")
    parser.add_argument("--equity-worker", choices=["process", "thread", "off"],
                        default="process",
                        help="the daemon's live equity worker (STUD_TABLE_EQUITY_WORKER;"
                        " default process, the daemon's own default)")
    args = parser.parse_args()
    configure_logging("console", "warning")
    # The daemon child inherits it: the figure depends on it (issue 25), so say it.
    os.environ["STUD_TABLE_EQUITY_WORKER"] = args.equity_worker
    print(f"configuration: equity worker {args.equity_worker}, fsync {' and '.join(args.fsync)},"
          f" speed {args.speed:g}, {args.hands} hands; load average"
          f" {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")

    frame_bytes, wire = wire_time()
    pure, pure_cpu = run_in_process(max(args.hands, 200), args.seed)
    pure_median, pure_p99 = summary(pure)
    print(f"in-process engine + projection + JSON per zone event ({len(pure)} events):")
    print(f"  median {rig.ms(pure_median)}   p99 {rig.ms(pure_p99)}   mean"
          f" {rig.ms(statistics.fmean(pure))}, CPU time mean {rig.ms(statistics.fmean(pure_cpu))}"
          " (compare the daemon's per card applied, a mean too)")
    # The same work one event at a time, idle between them as the daemon's engine
    # thread is between cards: a processor's caches go cold meanwhile, and the same
    # instructions cost more CPU time (issue 20, h20d: about 3.5x at 20 ms pauses).
    # The same 200 events back to back first, so the two differ only by the pauses.
    paced_pause = 0.45 / args.speed
    _hot, hot_cpu = run_in_process(3, args.seed, limit=200)
    _paced, paced_cpu = run_in_process(3, args.seed, pause=paced_pause, limit=200)
    print(f"  the same {len(paced_cpu)} events back to back, then with {paced_pause * 1000:.0f} ms"
          f" idle before each (the dealer's pace): CPU time mean"
          f" {rig.ms(statistics.fmean(hot_cpu))}, {rig.ms(statistics.fmean(paced_cpu))}")
    print(f"serial wire time of a TAG_ARRIVED frame: {frame_bytes} bytes x 10 bits"
          f" / {BAUDRATE} baud = {rig.ms(wire)}"
          " (a pty has no baud limit: not in the figures below)")
    for policy in args.fsync:
        journal = run_journal(policy, 2000, args.seed)
        j_median, j_p99 = summary(journal)
        print(f"journal append, fsync={policy} (2000 records in {tempfile.gettempdir()}):"
              f" median {rig.ms(j_median)}   p99 {rig.ms(j_p99)}")
    for policy in args.fsync:
        result = run_end_to_end(args.hands, args.speed, policy, args.seed, args.breakdown)
        latencies = result["latencies"]
        if not latencies:
            print(f"fsync={policy}: no matched messages", file=sys.stderr)
            return 1
        median, p99 = summary(latencies)
        print(f"end to end, pty frame written -> secure/events received, fsync={policy}"
              f" ({len(latencies)} cards, {args.hands} hands in {result['elapsed']:.0f} s,"
              f" {result['unmatched']} unmatched):")
        print(f"  median {rig.ms(median)}   p99 {rig.ms(p99)}   max {rig.ms(max(latencies))}")
        print(f"  minus presence's settle window ({DEFAULT_SETTLE_TIME:g} s, by design:"
              f" docs/presence.md rule 1): median {rig.ms(median - DEFAULT_SETTLE_TIME)}"
              f"   p99 {rig.ms(p99 - DEFAULT_SETTLE_TIME)} (against the skeleton's)")
        print(f"  vs in-process engine + projection: median x{median / pure_median:.0f},"
              f" p99 x{p99 / pure_p99:.0f};  + wire time: median {rig.ms(median + wire)},"
              f" p99 {rig.ms(p99 + wire)}")
        b_median, b_p99 = summary(result["baseline"])
        print(f"  MQTT alone (paho thread -> mosquitto -> subscriber, same run):"
              f" median {rig.ms(b_median)}   p99 {rig.ms(b_p99)}")
        print(f"  daemon's share (end to end minus MQTT alone): median {rig.ms(median - b_median)},"
              f" p99 {rig.ms(p99 - b_p99)}")
        print(f"  daemon RSS: {result['rss_start'] / 1024:.1f} MiB at start,"
              f" {result['rss_end'] / 1024:.1f} MiB after {args.hands} hands"
              f" (peak {result['rss_peak'] / 1024:.1f} MiB)")
        for line in result["breakdown"]:
            print(f"  inside the daemon: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
