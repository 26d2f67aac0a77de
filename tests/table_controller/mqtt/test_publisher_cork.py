"""One wake-up of paho's network thread per input, not one per message (issue 20).

``MqttPublisher.corked`` wraps paho's wake-up socket (the write end of the socketpair
its thread selects on) in a ``_Wake``; unit tests of that stand-in on a real
socketpair, then a real publisher on a real Mosquitto publishing corked.
"""

from __future__ import annotations

import socket
from pathlib import Path
from unittest.mock import patch

import mqtt_samples as sample

from table_controller.mqtt import publisher
from table_controller.mqtt.broker_config import BrokerConfig
from table_controller.mqtt.publisher import MqttPublisher, _Wake
from table_controller.mqtt.sequence import SequenceCounter
from table_controller.mqtt.topics import TableTopics
from table_controller.testing.broker import WAIT, MosquittoBroker, RecordingSubscriber


def _pending(sock: socket.socket) -> bytes:
    sock.setblocking(False)
    try:
        return sock.recv(100)
    except BlockingIOError:
        return b""


def test_corked_wake_ups_are_owed_and_sent_once() -> None:
    reader, writer = socket.socketpair()
    with reader, writer:
        wake = _Wake(writer)
        wake.send(b"0")
        assert _pending(reader) == b"0"  # uncorked: at once
        wake.corked = True
        for _ in range(4):
            wake.send(b"0")
        assert _pending(reader) == b""
        assert wake.flush()  # a card's event: its wake-up now
        assert _pending(reader) == b"0"
        assert not wake.flush()  # nothing owed since: nothing sent, no hand-over
        wake.send(b"0")
        wake.uncork()  # the end of the input: the one owed
        assert _pending(reader) == b"0"
        wake.uncork()
        assert _pending(reader) == b""  # nothing owed, nothing sent


def test_a_flush_on_a_closed_socket_reports_no_wake_up() -> None:
    reader, writer = socket.socketpair()
    reader.close()
    writer.close()  # paho closed its pair (a reconnect) while the batch was corked
    wake = _Wake(writer)
    wake.corked = True
    wake.send(b"0")
    assert not wake.flush()


def test_corked_messages_all_reach_the_broker(mosquitto: MosquittoBroker, tmp_path: Path) -> None:
    topics = TableTopics(sample.TABLE)
    sub = RecordingSubscriber(mosquitto.port, [topics.all_filter])
    broker = BrokerConfig(host="127.0.0.1", port=mosquitto.port)
    pub = MqttPublisher(sample.TABLE, broker, SequenceCounter(tmp_path / "seq"))
    try:
        sub.wait_subscribed()
        pub.start()
        assert pub.wait_online(WAIT)
        handoffs: list[float] = []
        with pub.corked(), patch.object(publisher, "_handoff_sleep", handoffs.append):
            pub.publish_event(*sample.down_event())
            assert handoffs == [publisher.EVENT_HANDOFF_S]  # paho's thread takes it now
            pub.publish_state(*sample.states())
            pub.publish_alert(sample.alert(1))
        sub.wait_topic(topics.alerts)
        sub.wait_topic(topics.secure_events)
        state = sub.wait_topic(topics.state, lambda s: s.get("hand") is not None)
        assert state.json()["street"] == 4  # the published snapshot (mqtt_samples)
    finally:
        pub.stop(timeout=1)
        sub.close()
