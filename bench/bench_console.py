"""Console command round trip: request published -> the daemon's reply received.

The demo's table (:class:`~table_controller.simulation.session.DemoTable`): mosquitto on
loopback, emulated readers, the real daemon as a ``stud-table run`` child process
(journal fsync ``always`` unless told otherwise). One console client stays
connected (as a dealer's console does) and sends, one at a time, waiting for
each reply:

* ``hand`` (8 players with stacks): accepted — parse, journal append, a new hand,
  state published, reply;
* ``act`` before any card: rejected by the engine (``no_betting_round``) — parse,
  journal, engine, alert, state, reply: the full path of a well-formed command;
* ``act`` with broken JSON: rejected by the daemon (``bad_json``) — parse,
  alert, reply; no journal.

Reference measured in the same run: an MQTT echo (a second client in this
process answers every request on its response topic), i.e. the broker and paho
alone. Also timed: ``stud-table console`` as a process (Python start-up included).

Every client here sets TCP_NODELAY; mosquitto's own ``set_tcp_nodelay`` is run
both ways (its default, false, adds a delayed-ACK wait per hop).

    .venv/bin/python bench/bench_console.py [--rounds 200] [--fsync always never]
        [--broker-nodelay false true]
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion, MQTTProtocolVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from table_controller.mqtt import local_broker as demo_broker
from table_controller.mqtt.topics import TableTopics
from table_controller.simulation.session import TABLE_ID, DemoTable

WAIT = 30.0


def no_delay(client: mqtt.Client) -> None:
    """TCP_NODELAY on a connected client (paho leaves Nagle on)."""
    sock = client.socket()
    if isinstance(sock, socket.socket):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def subscribe_on_connect(topic: str) -> Any:
    """An on_connect callback: Nagle off, then subscribe to ``topic``."""
    def on_connect(client: mqtt.Client, *_: object) -> None:
        no_delay(client)
        client.subscribe(topic, qos=1)
    return on_connect


class Requester:
    """One connected MQTT 5 client sending requests and waiting for their replies."""

    def __init__(self, port: int, table: str) -> None:
        self.topics = TableTopics(table)
        self.client_id = f"bench-{uuid.uuid4().hex[:10]}"
        self.reply_topic = f"{self.topics.base}/reply/{self.client_id}"
        self._cond = threading.Condition()
        self._replies: dict[bytes, bytes] = {}
        self._ready = threading.Event()
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=self.client_id,
                                  protocol=MQTTProtocolVersion.MQTTv5)
        self.client.on_connect = subscribe_on_connect(self.reply_topic)
        self.client.on_subscribe = lambda *_: self._ready.set()
        self.client.on_message = self._on_message
        self.client.connect("127.0.0.1", port)
        self.client.loop_start()
        if not self._ready.wait(WAIT):
            raise RuntimeError("no SUBACK")

    def _on_message(self, _c: mqtt.Client, _u: object, message: mqtt.MQTTMessage) -> None:
        correlation = getattr(message.properties, "CorrelationData", None)
        if correlation is None:
            return
        with self._cond:
            self._replies[bytes(correlation)] = bytes(message.payload)
            self._cond.notify_all()

    def request(self, topic: str, payload: bytes) -> tuple[float, bytes]:
        """Publish on ``topic``; return (seconds to the reply, the reply)."""
        correlation = uuid.uuid4().bytes
        props = Properties(PacketTypes.PUBLISH)  # type: ignore[no-untyped-call]
        props.ResponseTopic = self.reply_topic
        props.CorrelationData = correlation
        start = time.perf_counter()
        self.client.publish(topic, payload, qos=1, properties=props)
        deadline = time.monotonic() + WAIT
        with self._cond:
            while correlation not in self._replies:
                if not self._cond.wait(max(0.0, deadline - time.monotonic())):
                    raise RuntimeError(f"no reply on {topic}")
            reply = self._replies.pop(correlation)
        return time.perf_counter() - start, reply

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def echo_responder(port: int, topic: str) -> mqtt.Client:
    """A client answering every request on ``topic`` at once (the MQTT-only reference)."""
    ready = threading.Event()
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"echo-{uuid.uuid4().hex[:8]}",
                         protocol=MQTTProtocolVersion.MQTTv5)

    def on_message(c: mqtt.Client, _u: object, message: mqtt.MQTTMessage) -> None:
        props = Properties(PacketTypes.PUBLISH)  # type: ignore[no-untyped-call]
        props.CorrelationData = message.properties.CorrelationData  # type: ignore[union-attr]
        c.publish(message.properties.ResponseTopic, b'{"accepted": true}',  # type: ignore[union-attr]
                  qos=1, properties=props)

    client.on_connect = subscribe_on_connect(topic)
    client.on_subscribe = lambda *_: ready.set()
    client.on_message = on_message
    client.connect("127.0.0.1", port)
    client.loop_start()
    if not ready.wait(WAIT):
        raise RuntimeError("echo: no SUBACK")
    return client


def summary(name: str, samples: list[float], reference: float | None = None) -> str:
    ordered = sorted(samples)
    median = statistics.median(ordered)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    ratio = f"  ({median / reference:.1f}x the MQTT echo)" if reference else ""
    return f"{name:<34} median {median * 1000:7.2f} ms   p99 {p99 * 1000:7.2f} ms{ratio}"


def run(rounds: int, fsync: str, broker_nodelay: bool) -> list[str]:
    plain_config = demo_broker.config_text
    if broker_nodelay:
        # Bench only: the demo broker's config plus Nagle off on the broker side.
        demo_broker.config_text = lambda port: plain_config(port) + "set_tcp_nodelay true\n"
    try:
        return _run(rounds, fsync, broker_nodelay)
    finally:
        demo_broker.config_text = plain_config


def _run(rounds: int, fsync: str, broker_nodelay: bool) -> list[str]:
    with tempfile.TemporaryDirectory(prefix="bench-console-") as tmp:
        table = DemoTable(Path(tmp), fsync=fsync, log_level="warning")  # type: ignore[arg-type]
        with table:
            requester = Requester(table.port, TABLE_ID)
            status = f"{requester.topics.base}/status"
            online = threading.Event()
            watcher = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=MQTTProtocolVersion.MQTTv5)
            watcher.on_connect = lambda c, *_: c.subscribe(status, qos=1)
            watcher.on_message = lambda _c, _u, m: (
                online.set() if json.loads(m.payload)["status"] == "online" else None
            )
            watcher.connect("127.0.0.1", table.port)
            watcher.loop_start()
            if not online.wait(WAIT):
                raise RuntimeError(f"daemon not online:\n{table.daemon_log_tail()}")
            watcher.disconnect()
            watcher.loop_stop()

            hand_body = json.dumps({"players": list(range(1, 9)),
                                    "stacks": {str(s): 500 for s in range(1, 9)}}).encode()
            act_body = json.dumps({"seat": 1, "action": "check"}).encode()
            topics = requester.topics
            results: dict[str, list[float]] = {"hand": [], "act": [], "bad": [], "echo": []}
            echo_topic = f"{topics.base}/bench-echo"
            echo = echo_responder(table.port, echo_topic)
            for _ in range(rounds):
                # Interleaved, so load changes hit every series alike.
                took, reply = requester.request(topics.cmd("hand"), hand_body)
                assert json.loads(reply)["accepted"] is True, reply
                results["hand"].append(took)
                took, reply = requester.request(topics.cmd("act"), act_body)
                assert json.loads(reply)["code"] == "no_betting_round", reply
                results["act"].append(took)
                took, reply = requester.request(topics.cmd("act"), b'{"seat": 1,')
                assert json.loads(reply)["code"] == "bad_json", reply
                results["bad"].append(took)
                took, _ = requester.request(echo_topic, act_body)
                results["echo"].append(took)
            echo.disconnect()
            echo.loop_stop()
            requester.close()

            cli: list[float] = []
            for _ in range(max(3, rounds // 20)):
                start = time.perf_counter()
                done = subprocess.run(
                    [sys.executable, "-m", "table_controller", "console", "--broker",
                     f"127.0.0.1:{table.port}", "--table", TABLE_ID, "hand", "1", "2"],
                    capture_output=True, text=True, check=False,
                )
                cli.append(time.perf_counter() - start)
                assert done.returncode == 0, done.stdout + done.stderr
    reference = statistics.median(results["echo"])
    return [
        f"fsync={fsync}, broker set_tcp_nodelay={str(broker_nodelay).lower()},"
        f" {rounds} rounds, one connected console client (TCP_NODELAY)",
        summary("MQTT echo (reference)", results["echo"]),
        summary("hand (accepted)", results["hand"], reference),
        summary("act (engine rejects, journaled)", results["act"], reference),
        summary("act bad JSON (daemon rejects)", results["bad"], reference),
        summary("stud-table console (process)", cli),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--fsync", nargs="+", default=["always", "never"])
    parser.add_argument("--broker-nodelay", nargs="+", choices=("false", "true"),
                        default=["false", "true"],
                        help="mosquitto set_tcp_nodelay (its default is false)")
    args = parser.parse_args()
    for nodelay in args.broker_nodelay:
        for fsync in args.fsync:
            print("\n".join(run(args.rounds, fsync, nodelay == "true")))
            print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
