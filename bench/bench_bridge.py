"""Latency added by the bridge: a table's broker -> deploy/bridge.conf (TLS) -> central broker.

Two real Mosquitto brokers (tests/deploy/bridge_rig.py: the shipped bridge.conf,
certificates from deploy/mosquitto-setup). One publisher on the table's broker
sends N QoS 1 messages on ``stud/v1/t1/events``, one every ``--gap`` ms (a busy
table sends far fewer); two subscribers in the same process time each message's
arrival with the same clock:

* **direct**: a subscriber on the table's broker (the one MQTT hop a local
  consumer sees: the reference);
* **bridged**: a subscriber on the central broker (table broker, bridge over TLS,
  central broker).

Prints median and p99 of both and of the difference per message.
Every client sets TCP_NODELAY; both brokers run set_tcp_nodelay.

    .venv/bin/python bench/bench_bridge.py [--messages 500] [--gap 10]
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion, MQTTProtocolVersion

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "deploy"), str(ROOT)]

from bridge_rig import LINK_STATE, READER, BridgedPair  # noqa: E402

TOPIC = "stud/v1/t1/events"


def _client(port: int, name: str, user: tuple[str, str] | None = None) -> mqtt.Client:
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=name,
                         protocol=MQTTProtocolVersion.MQTTv5)
    if user is not None:
        client.username_pw_set(*user)

    def nodelay(_client: Any, _userdata: Any, sock: Any) -> None:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    client.on_socket_open = nodelay
    client.connect("127.0.0.1", port)
    client.loop_start()
    return client


class Timer:
    """Records when each numbered message arrives (perf_counter)."""

    def __init__(self, client: mqtt.Client, topic: str) -> None:
        """Subscribe ``client`` to ``topic`` and wait for the SUBACK."""
        self.arrived: dict[int, float] = {}
        self.extra: list[bytes] = []
        subscribed = threading.Event()
        client.on_subscribe = lambda *_: subscribed.set()
        client.on_message = self._on_message
        client.subscribe(topic, qos=1)
        if not subscribed.wait(30):
            raise SystemExit("no SUBACK")

    def _on_message(self, _c: Any, _u: Any, message: mqtt.MQTTMessage) -> None:
        now = time.perf_counter()
        try:
            self.arrived.setdefault(json.loads(message.payload)["n"], now)
        except (ValueError, KeyError):
            self.extra.append(bytes(message.payload))


def _percentiles(values: list[float]) -> str:
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return f"median {statistics.median(ordered) * 1000:.2f} ms, p99 {p99 * 1000:.2f} ms"


def main() -> None:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=500)
    parser.add_argument("--gap", type=float, default=10.0, help="ms between messages")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        pair = BridgedPair(Path(tmp)).start()
        try:
            link = _client(pair.table.port, "bench-link")
            up = threading.Event()
            link.on_message = lambda _c, _u, m: up.set() if m.payload == b"1" else None
            link.subscribe(LINK_STATE, qos=1)
            if not up.wait(60):
                raise SystemExit("the bridge did not come up")
            direct = Timer(_client(pair.table.port, "bench-direct"), TOPIC)
            bridged = Timer(_client(pair.central.port, "bench-bridged",
                                    (READER.name, READER.password)), TOPIC)
            publisher = _client(pair.table.port, "bench-pub")
            sent: dict[int, float] = {}
            for n in range(args.messages):
                sent[n] = time.perf_counter()
                publisher.publish(TOPIC, json.dumps({"n": n, "pad": "x" * 200}), qos=1)
                time.sleep(args.gap / 1000)
            deadline = time.monotonic() + 60
            while len(bridged.arrived) < args.messages and time.monotonic() < deadline:
                time.sleep(0.1)
            lost = args.messages - len(bridged.arrived)
            d = [direct.arrived[n] - sent[n] for n in sent if n in direct.arrived]
            b = [bridged.arrived[n] - sent[n] for n in sent if n in bridged.arrived]
            added = [bridged.arrived[n] - direct.arrived[n] for n in sent
                     if n in bridged.arrived and n in direct.arrived]
            print(f"{args.messages} messages, one every {args.gap:g} ms, QoS 1, ~230 B")
            print(f"direct (table broker):            {_percentiles(d)}")
            print(f"bridged (table -> TLS -> central): {_percentiles(b)}")
            print(f"added by the bridge, per message:  {_percentiles(added)}")
            print(f"lost through the bridge: {lost}")
            for client in (link, publisher):
                client.disconnect()
                client.loop_stop()
        finally:
            pair.close()


if __name__ == "__main__":
    main()
