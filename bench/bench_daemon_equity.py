"""Live equity in the daemon: the secure equity update after a card, and the card's
own latency with and without equity, in one run (docs/equity.md, docs/daemon.md).

Setup as ``bench_daemon_latency.py`` (whose probe this reuses): the demo's table
(mosquitto on loopback, five emulated readers on ptys, 8-seat layout), the real
daemon as a child process, a virtual dealer dealing 8-player hands continuously
at ``--speed`` (10: a card every ~50 ms). ``mosquitto_sub`` (C, its own process)
stamps every message on ``state``, ``secure/state`` and ``secure/events``.

* **Card latency**: pty frame of a TAG_ARRIVED written -> its ``secure/events``
  message received (exactly ``bench_daemon_latency.py``'s figure).
* **Equity latency**: the same frame written -> the ``secure/state`` equity update
  of the position that card made received. An update is a ``secure/state`` whose
  ``seq`` no public ``state`` shares (the equity follows the state alone); its
  position is the last public ``state`` before it, and that state's card the last
  card event before that state. Updates after other moves (a fold into the muck,
  the clearing) are counted, not timed.
* **Positions without numbers**: dealt cards whose position never got an update
  (a newer card came first: cancelled or discarded, by design).

Runs, one table each, same seed (so the same hands): the worker ``off`` (readings
only: the baseline for the card latency), ``process`` (the daemon's default: a
child process at nice 19, ``equity_child.CHILD_NICE``) and ``thread`` (a worker
thread of the daemon). Set by
the daemon's ``STUD_TABLE_EQUITY_WORKER`` environment variable.

    .venv/bin/python bench/bench_daemon_equity.py [--hands 10] [--speed 10] \
        [--modes off process thread]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import daemon_rig as rig

from table_controller.daemon.logging import configure_logging
from table_controller.daemon.runner import EQUITY_WORKER_ENV
from table_controller.mqtt.topics import TableTopics
from table_controller.simulation.session import TABLE_ID, DemoTable


def summary(values: list[float]) -> str:
    """Median, p99 and max, in ms."""
    if not values:
        return "none"
    return (f"median {rig.ms(statistics.median(values))}"
            f"   p99 {rig.ms(rig.percentile(values, 0.99))}   max {rig.ms(max(values))}")


class Probe:
    """Frame write times per card@zone, and mosquitto_sub's stamped stream."""

    def __init__(self, demo: DemoTable) -> None:
        self.demo = demo
        self.topics = TableTopics(TABLE_ID)
        self.out = demo.workdir / "probe.txt"
        self.writes: dict[str, list[float]] = {}
        self.lock = threading.Lock()
        self.proc: subprocess.Popen[bytes] | None = None

    def attach(self) -> None:
        """Start mosquitto_sub and hook the emulators' frame writes."""
        topics = [self.topics.secure_events, self.topics.state, self.topics.secure_state]
        self.proc = rig.stamped_subscriber(self.demo.port, self.out, topics, "bench-equity-probe")
        deadline = time.monotonic() + rig.READY_TIMEOUT
        while not self.out.read_bytes():  # the retained state arrives once subscribed
            if time.monotonic() > deadline:
                raise RuntimeError("mosquitto_sub never received")
            time.sleep(0.1)
        rig.hook_frame_writes(self.demo, self._record)

    def _record(self, at: float, key: str) -> None:
        with self.lock:
            self.writes.setdefault(key, []).append(at)

    def close(self) -> None:
        """Stop mosquitto_sub."""
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=10)

    def analyse(self) -> dict[str, Any]:
        """Card and equity latencies (seconds) and counts, from the stamped stream."""
        lines = [line.split(" ", 2) for line in self.out.read_bytes().decode().splitlines()]
        stream = [(float(stamp), topic, json.loads(payload)) for stamp, topic, payload in lines]
        public_seqs = {p["seq"] for _, t, p in stream if t == self.topics.state}
        card_latency: list[float] = []
        equity_latency: list[float] = []
        other_updates = 0
        dealt_positions = 0
        positions_with_equity = 0
        last_card: float | None = None  # frame time of the card event before this state
        state_card: float | None = None  # ... of the last public state's position
        state_counted = True
        exact = sampled = 0
        for received, topic, payload in stream:
            if topic == self.topics.secure_events:
                key = rig.event_key(payload)
                if key is None:
                    continue
                earlier = [t for t in self.writes.get(key, []) if t <= received]
                if earlier:
                    card_latency.append(received - earlier[-1])
                    last_card = earlier[-1]
            elif topic == self.topics.state:
                state_card, last_card = last_card, None
                state_counted = False
            elif payload["seq"] in public_seqs:
                # The state's secure twin: does its position have equity at all?
                if state_card is not None and payload["equity_info"] is not None:
                    dealt_positions += 1
            elif payload["hand"] is not None:
                info = payload["equity_info"] or {}
                if info.get("exact"):
                    exact += 1
                else:
                    sampled += 1
                if state_card is not None and not state_counted:
                    equity_latency.append(received - state_card)
                    positions_with_equity += 1
                    state_counted = True
                else:
                    other_updates += 1
        return {
            "card": card_latency, "equity": equity_latency, "other_updates": other_updates,
            "dealt_positions": dealt_positions, "with_equity": positions_with_equity,
            "exact": exact, "sampled": sampled,
        }


def run(mode: str, hands: int, speed: float, seed: int) -> dict[str, Any]:
    """One table with the equity worker in ``mode``; the probe's analysis and memory."""
    os.environ[EQUITY_WORKER_ENV] = mode
    with tempfile.TemporaryDirectory(prefix="bench-equity-") as tmp:
        demo = DemoTable(Path(tmp), scan_period=0.02, fsync="never", log_level="warning")
        probe = Probe(demo)
        with rig.running_table(demo) as feed:
            try:
                time.sleep(2.0)  # the equity child builds its tables once
                probe.attach()
                assert demo.table is not None
                assert demo.daemon_pid is not None
                dealer, elapsed = rig.deal_hands(demo, feed, seed=seed, speed=speed, hands=hands)
                if dealer.failure:
                    raise RuntimeError(f"{dealer.failure}\n{demo.daemon_log_tail()}")
                time.sleep(1.5)
                memory = rig.rss_kib(demo.daemon_pid)
                children = _children_rss(demo.daemon_pid)
                result = probe.analyse()
            finally:
                probe.close()
    result.update(elapsed=elapsed, rss=memory["VmRSS"], child_rss=children)
    return result


def _children_rss(pid: int) -> int:
    """VmRSS (KiB) of ``pid``'s child processes (the equity process)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():  # started by any of its threads
        for child in (task / "children").read_text().split():
            total += rig.rss_kib(int(child))["VmRSS"]
    return total


def main() -> int:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hands", type=int, default=10, help="8-player hands per run")
    parser.add_argument("--speed", type=float, default=10.0,
                        help="dealing speed (1 = 0.4-0.6 s per card)")
    parser.add_argument("--modes", nargs="+", default=["off", "process", "thread"],
                        choices=["off", "process", "thread"])
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    configure_logging("console", "warning")
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    for mode in args.modes:
        result = run(mode, args.hands, args.speed, args.seed)
        print(f"worker {mode}: {args.hands} hands of 8 in {result['elapsed']:.0f} s,"
              f" daemon RSS {result['rss'] / 1024:.1f} MiB"
              f" (+ equity process {result['child_rss'] / 1024:.1f} MiB)")
        print(f"  card event  ({len(result['card'])} cards): {summary(result['card'])}")
        if mode != "off":
            print(f"  equity update after a dealt card ({result['with_equity']} of"
                  f" {result['dealt_positions']} positions; {result['exact']} exact,"
                  f" {result['sampled']} sampled; {result['other_updates']} more after"
                  f" folds and clearing): {summary(result['equity'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
