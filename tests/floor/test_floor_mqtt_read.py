"""The floor's MQTT client reads the socket in chunks (issue 25): every message of a
burst arrives, in order and whole, across a reconnect too (real Mosquitto)."""

from __future__ import annotations

import threading

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion, MQTTProtocolVersion

from table_controller.floor.service import READ_CHUNK, BufferedClient
from table_controller.testing.broker import WAIT, MosquittoBroker, wait_until


def test_a_burst_arrives_whole_and_in_order_across_a_reconnect(
        mosquitto: MosquittoBroker) -> None:
    """3,000 QoS 1 messages of sizes around the chunk's (so packets straddle reads),
    then the client's socket is dropped under it and 1,000 more arrive after paho
    reconnects: nothing left over from the old connection is taken as a packet."""
    got: list[bytes] = []
    subscribed = threading.Event()
    client = BufferedClient(CallbackAPIVersion.VERSION2, client_id="floor-read",
                            protocol=MQTTProtocolVersion.MQTTv5)
    client.on_message = lambda _c, _u, m: got.append(bytes(m.payload))
    client.on_connect = lambda c, _u, _f, _r, _p: c.subscribe("x/#", qos=1)
    # Subscribed once the broker's SUBACK is in, not when the SUBSCRIBE is sent: a
    # message published in between would find no subscription (the session is new
    # after the reconnect) and be missed by the broker, not by the client under test.
    client.on_subscribe = lambda _c, _u, _m, _r, _p: subscribed.set()
    client.reconnect_delay_set(0.1, 0.5)
    client.connect("127.0.0.1", mosquitto.port)
    client.loop_start()
    sender = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="floor-read-sender",
                         protocol=MQTTProtocolVersion.MQTTv5)
    sender.connect("127.0.0.1", mosquitto.port)
    sender.loop_start()
    try:
        assert subscribed.wait(WAIT)
        sizes = [1, 7, 300, READ_CHUNK - 40, READ_CHUNK + 3, 20_000]

        def body(n: int) -> bytes:
            return f"{n}:".encode().ljust(sizes[n % len(sizes)], b"#")

        for n in range(3000):
            sender.publish(f"x/{n % 7}", body(n), qos=1)
        wait_until(lambda: len(got) >= 3000, WAIT, "the burst")
        assert got == [body(n) for n in range(3000)]
        subscribed.clear()
        sock = client.socket()
        assert sock is not None
        sock.close()  # the connection lost under paho: it reconnects by itself
        assert subscribed.wait(WAIT)
        for n in range(3000, 4000):
            sender.publish(f"x/{n % 7}", body(n), qos=1)
        wait_until(lambda: got[-1:] == [body(3999)], WAIT, "the burst after the reconnect")
        after = got[3000:]
        assert after[-1000:] == [body(n) for n in range(3000, 4000)]
    finally:
        sender.disconnect()
        sender.loop_stop()
        client.disconnect()
        client.loop_stop()
