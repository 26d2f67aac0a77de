"""deploy/acl and deploy/mosquitto.conf on a real Mosquitto: secure topics stay secure."""

from __future__ import annotations

import queue
import re
import threading
from collections.abc import Iterator
from pathlib import Path

import mqtt_samples as sample
import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion, MQTTProtocolVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from table_controller.mqtt.broker_config import BrokerConfig
from table_controller.mqtt.publisher import CommandRequest, MqttPublisher
from table_controller.mqtt.sequence import SequenceCounter
from table_controller.mqtt.topics import TableTopics, is_secure
from table_controller.testing.broker import (
    WAIT,
    BrokerUser,
    MosquittoBroker,
    RecordingSubscriber,
    run_as_user_line,
    wait_until,
)

DEPLOY = Path(__file__).resolve().parents[3] / "deploy"
TOPICS = TableTopics(sample.TABLE)
USERS = [
    BrokerUser("stud-daemon", "daemon-pw"),
    BrokerUser("stud-production", "prod-pw"),
    BrokerUser("overlay", "overlay-pw"),
]


def _deploy_config(port: int, directory: Path) -> str:
    """deploy/mosquitto.conf with its paths and port rewritten for a test."""
    (directory / "acl").write_text((DEPLOY / "acl").read_text())
    text = (DEPLOY / "mosquitto.conf").read_text()
    replacements = {
        r"(?m)^listener 1883$": f"listener {port} 127.0.0.1",
        r"(?m)^password_file /etc/mosquitto/stud-table\.passwd$":
            f"password_file {directory / 'passwd'}",
        r"(?m)^acl_file /etc/mosquitto/stud-table\.acl$": f"acl_file {directory / 'acl'}",
        r"(?m)^persistence_location /var/lib/mosquitto/$": f"persistence_location {directory}/",
        r"(?m)^log_dest syslog$": "log_dest stderr",
    }
    for pattern, value in replacements.items():
        text, count = re.subn(pattern, value, text)
        assert count == 1, pattern
    return text + "".join(line + "\n" for line in run_as_user_line())


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[MosquittoBroker]:
    """Mosquitto running the deploy config and ACL, with three users."""
    with MosquittoBroker(tmp_path, users=USERS, config_text=_deploy_config) as running:
        yield running


@pytest.fixture
def daemon(broker: MosquittoBroker, tmp_path: Path) -> Iterator[MqttPublisher]:
    """A publisher logged in as stud-daemon, online, with a state, an event and an alert."""
    config = BrokerConfig(
        host="127.0.0.1", port=broker.port, username="stud-daemon", password="daemon-pw"
    )
    pub = MqttPublisher(sample.TABLE, config, SequenceCounter(tmp_path / "seq"))
    pub.start()
    assert pub.wait_online(WAIT)
    yield pub
    pub.stop(timeout=2)


def _login(broker: MosquittoBroker, made: list, user: str, password: str,
           topics: list[str]) -> RecordingSubscriber:
    client = RecordingSubscriber(broker.port, topics, username=user, password=password)
    made.append(client)
    client.wait_subscribed()
    return client


def test_public_user_never_receives_secure_topics(
    broker: MosquittoBroker, daemon: MqttPublisher, subscribers: list
) -> None:
    overlay = _login(broker, subscribers, "overlay", "overlay-pw",
                     [TOPICS.all_filter, TOPICS.secure_state])
    production = _login(broker, subscribers, "stud-production", "prod-pw", [TOPICS.all_filter])
    daemon.publish_state(*sample.states())
    daemon.publish_event(*sample.down_event())
    daemon.publish_alert(sample.alert())
    # The alert is published last: once a client has it, it has everything before it.
    production.wait_for(lambda m: m.topic == TOPICS.alerts)
    overlay.wait_for(lambda m: m.topic == TOPICS.alerts)
    assert {m.topic for m in production.snapshot()} >= {TOPICS.secure_state, TOPICS.secure_events}
    seen = overlay.snapshot()
    assert {TOPICS.state, TOPICS.events, TOPICS.status} <= {m.topic for m in seen}
    # Mosquitto 2.0 grants the explicit secure/state subscription but, per the
    # ACL, delivers nothing on it: what matters is what arrives.
    assert not [m.topic for m in seen if is_secure(m.topic)]


def test_only_the_daemon_may_write_table_topics(
    broker: MosquittoBroker, daemon: MqttPublisher, subscribers: list
) -> None:
    production = _login(broker, subscribers, "stud-production", "prod-pw", [TOPICS.all_filter])
    daemon.publish_state(*sample.states(hand=7))
    production.wait_topic(TOPICS.state)  # the genuine state is on the broker
    overlay = _login(broker, subscribers, "overlay", "overlay-pw", [TOPICS.status])
    forged = b'{"forged": true}'
    for client in (overlay, production):
        for topic in (TOPICS.state, TOPICS.secure_state, TOPICS.alerts, TOPICS.status,
                      TOPICS.events, TOPICS.reader("1")):
            client.publish(topic, forged)  # acknowledged, but dropped by the ACL
    # Mosquitto routes a QoS 1 publish before acknowledging it, so a forged
    # message that got through would reach `production` before this alert.
    daemon.publish_alert(sample.alert())
    production.wait_topic(TOPICS.alerts)
    reader = _login(broker, subscribers, "stud-production", "prod-pw", [TOPICS.all_filter])
    assert reader.wait_topic(TOPICS.state).json()["hand"] == 7
    assert reader.wait_topic(TOPICS.secure_state).json()["hand"] == 7
    assert reader.wait_topic(TOPICS.status).json()["status"] == "online"
    for client in (reader, production):
        assert all(m.payload != forged for m in client.snapshot())


def test_public_user_may_request_rebirth(
    broker: MosquittoBroker, daemon: MqttPublisher, subscribers: list
) -> None:
    daemon.publish_state(*sample.states())
    overlay = _login(broker, subscribers, "overlay", "overlay-pw", [TOPICS.state])
    first = overlay.wait_topic(TOPICS.state).json()
    overlay.publish(TOPICS.cmd_rebirth)
    overlay.wait_topic(TOPICS.state, lambda p: p["seq"] > first["seq"])


def test_anonymous_and_wrong_password_are_refused(broker: MosquittoBroker) -> None:
    for user, password in ((None, None), ("overlay", "wrong")):
        refused = threading.Event()
        client = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=MQTTProtocolVersion.MQTTv5)
        if user is not None:
            client.username_pw_set(user, password)
        client.on_connect = lambda _c, _u, _f, reason, _p, ev=refused: (
            ev.set() if reason.is_failure else None
        )
        client.connect("127.0.0.1", broker.port)
        client.loop_start()
        try:
            assert refused.wait(WAIT), f"{user} was not refused"
        finally:
            client.disconnect()
            client.loop_stop()


def test_replies_retained_commands_and_client_ids_under_the_deploy_acl(
    broker: MosquittoBroker, tmp_path: Path, subscribers: list
) -> None:
    """Issue 9 items 4, 5, 6 with the shipped config: the daemon may answer on
    reply/<client> (production reads it, the public does not), may clear a
    retained command, and a public user taking the id earlier versions used
    (``stud-table-<table>``) does not disturb it."""
    production = _login(broker, subscribers, "stud-production", "prod-pw",
                        [f"{TOPICS.base}/reply/#"])
    overlay = _login(broker, subscribers, "overlay", "overlay-pw",
                     [f"{TOPICS.base}/reply/#", TOPICS.status])
    production._client.publish(TOPICS.cmd("hand"), b"{}", qos=1,
                               retain=True).wait_for_publish(WAIT)
    requests: queue.Queue[CommandRequest] = queue.Queue()
    config = BrokerConfig(
        host="127.0.0.1", port=broker.port, username="stud-daemon", password="daemon-pw",
        reconnect_min_delay=1, reconnect_max_delay=1,
    )
    pub = MqttPublisher(sample.TABLE, config, SequenceCounter(tmp_path / "seq"),
                        on_command=requests.put)
    pub.start()
    try:
        assert pub.wait_online(WAIT)
        squatter = RecordingSubscriber(broker.port, [TOPICS.status], username="overlay",
                                       password="overlay-pw", client_id="stud-table-t1")
        subscribers.append(squatter)
        squatter.wait_subscribed()
        props = Properties(PacketTypes.PUBLISH)  # type: ignore[no-untyped-call]
        props.ResponseTopic = TOPICS.reply("console-1")
        props.CorrelationData = b"acl"
        production.publish(TOPICS.cmd("end"), b"{}", properties=props)
        request = requests.get(timeout=WAIT)
        assert request.name == "end"  # the retained cmd/hand never came through
        assert pub.reply(request, b'{"accepted": true}')
        answer = production.wait_topic(TOPICS.reply("console-1"))
        assert answer.correlation_data == b"acl"
        wait_until(lambda: pub.counters().retained_commands_ignored == 1, what="ignored")
        # Cleared under the ACL: a new production subscriber gets no retained command.
        fresh = _login(broker, subscribers, "stud-production", "prod-pw",
                       [f"{TOPICS.base}/cmd/#", TOPICS.status])
        fresh.wait_topic(TOPICS.status)
        assert [m for m in fresh.snapshot() if "/cmd/" in m.topic] == []
        # The public sees no reply; the daemon was never knocked off.
        pub.publish_alert(sample.alert())
        overlay.wait_for(lambda m: m.topic == TOPICS.status)
        assert [m.topic for m in overlay.snapshot() if "/reply/" in m.topic] == []
        assert pub.counters().disconnects == 0
    finally:
        pub.stop(timeout=2)
