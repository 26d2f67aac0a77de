"""The skeleton of the daemon's card path, for the daemon's share to be judged against.

What a card costs the daemon beyond its own work is measured against the least
any daemon of this shape must pay (issue 20): the same five emulated readers on
ptys, real :class:`~firmware_bridge.link.ReaderLink` threads (pyserial read,
decode), one queue, **one** consumer thread that for each TAG_ARRIVED publishes
four messages of a card's sizes (event, secure event, state, secure state; QoS 1,
paho on its own network thread, as the daemon does) on a local mosquitto, and
``mosquitto_sub`` (C, its own process) stamping what it receives. No presence, no
journal, no engine, no projection: frame written -> ``secure/events``-like
message received is the floor under ``bench_daemon_latency.py``'s end-to-end
figure, on the same machine at the same time.

    .venv/bin/python bench/bench_daemon_skeleton.py [--cards 600] [--pace 0.05]
"""

from __future__ import annotations

import argparse
import json
import queue
import random
import sys
import tempfile
import threading
import time
from pathlib import Path

import paho.mqtt.client as mqtt
from daemon_rig import hook_table_frame_writes, ms, percentile, stamped_subscriber
from paho.mqtt.enums import CallbackAPIVersion, MQTTProtocolVersion

from firmware_bridge.link import ConnectionState, LinkStats, ReaderLink
from firmware_bridge.messages import ReaderMessage, TagArrived
from table_controller.daemon.logging import configure_logging
from table_controller.domain.events import CardPlaced, CardRemoved
from table_controller.mqtt.local_broker import LocalBroker
from table_controller.simulation import deal_random
from table_controller.simulation.emulated_table import EmulatedTable
from table_controller.simulation.session import DECK_FILE, LAYOUT_FILE
from table_controller.table.deck import load_decks
from table_controller.table.layout import load_layout

TOPIC = "bench/skeleton"
STATE_PAD = 1800
"""Bytes of a state message (an 8-player state is 1-2 kB)."""


def skeleton(cards: int, pace: float, seed: int) -> list[float]:
    """Deal ``cards`` cards through the skeleton; their latencies in seconds."""
    layout = load_layout(LAYOUT_FILE)
    registry = load_decks([DECK_FILE])
    with tempfile.TemporaryDirectory(prefix="bench-skeleton-") as tmp:
        work = Path(tmp)
        broker = LocalBroker(work / "broker")
        broker.start()
        table = EmulatedTable(layout, registry, work / "dev", scan_period=0.02).start()
        out = work / "probe.txt"
        sub = stamped_subscriber(broker.port, out, [f"{TOPIC}/secure/events"], "skel-probe")
        inbox: queue.SimpleQueue[tuple[int, ReaderMessage] | None] = queue.SimpleQueue()
        client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="skeleton",
                             protocol=MQTTProtocolVersion.MQTTv5)
        client.connect("127.0.0.1", broker.port)
        client.loop_start()

        def consume() -> None:
            while (item := inbox.get()) is not None:
                reader, message = item
                if not isinstance(message, TagArrived):
                    continue
                zone = layout.zone_for(reader, message.antenna)
                found = registry.lookup(message.uid)
                if zone is None or found is None:
                    continue
                event = json.dumps({"key": f"{found.card.code}@{zone.name}", "pad": "x" * 200})
                state = json.dumps({"pad": "x" * STATE_PAD})
                client.publish(f"{TOPIC}/events", event, qos=1)
                client.publish(f"{TOPIC}/secure/events", event, qos=1)
                client.publish(f"{TOPIC}/state", state, qos=1, retain=True)
                client.publish(f"{TOPIC}/secure/state", state, qos=1, retain=True)

        def on_message(reader: int, message: ReaderMessage, _at: float) -> None:
            inbox.put((reader, message))

        def on_state(_r: int, _s: ConnectionState, _st: LinkStats) -> None:
            return

        links = [ReaderLink(table.device_of(r.id), r.id, on_message=on_message,
                            on_state=on_state, heartbeat_period=0.5) for r in layout.readers]
        consumer = threading.Thread(target=consume, daemon=True)
        consumer.start()
        writes: list[tuple[float, str]] = []
        lock = threading.Lock()

        def record(at: float, key: str) -> None:
            with lock:
                writes.append((at, key))

        try:
            for link in links:
                link.start()
            deadline = time.monotonic() + 30
            while not all(link.state is ConnectionState.ONLINE for link in links):
                if time.monotonic() > deadline:
                    raise RuntimeError("the emulated readers did not come online")
                time.sleep(0.05)
            time.sleep(1.0)
            hook_table_frame_writes(table, layout, registry, record)
            rng = random.Random(seed)
            dealt = 0
            while dealt < cards:
                deal = deal_random([1, 2, 3, 4, 5, 6, 7, 8], rng, fold_chance=0.0)
                placed = [e for e in deal.events if isinstance(e, CardPlaced)]
                for event in placed[: cards - dealt]:
                    table.apply(event)
                    dealt += 1
                    time.sleep(pace)
                for event in placed:
                    table.apply(CardRemoved(event.zone, event.card, at=0.0))
                time.sleep(0.5)
            time.sleep(1.0)
        finally:
            for link in links:
                link.stop()
            inbox.put(None)
            client.loop_stop()
            client.disconnect()
            sub.terminate()
            sub.wait(timeout=10)
            table.stop()
            broker.stop()
        received: dict[str, list[float]] = {}
        for line in out.read_bytes().decode().splitlines():
            stamp, _topic, payload = line.split(" ", 2)
            received.setdefault(json.loads(payload)["key"], []).append(float(stamp))
    latencies = []
    for at, key in writes:
        later = [t for t in received.get(key, []) if t >= at]
        if later:
            latencies.append(later[0] - at)
    return latencies


def main() -> int:
    """Run the skeleton and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cards", type=int, default=600)
    parser.add_argument("--pace", type=float, default=0.05, help="seconds between cards")
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    configure_logging("console", "warning")
    latencies = skeleton(args.cards, args.pace, args.seed)
    if not latencies:
        print("no card matched", file=sys.stderr)
        return 1
    print(f"skeleton, pty frame written -> subscriber ({len(latencies)} cards, pace"
          f" {args.pace} s): median {ms(percentile(latencies, 0.5))}"
          f"   p99 {ms(percentile(latencies, 0.99))}   max {ms(max(latencies))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
