"""MqttPublisher against a real Mosquitto: status, retained set, rebirth, outages, faults."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import mqtt_samples as sample
import pytest
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from structlog.testing import capture_logs

from table_controller.mqtt.broker_config import BrokerConfig
from table_controller.mqtt.publisher import (
    BULK_LIMIT,
    OVERFLOW_CODE,
    REBIRTH_MIN_INTERVAL,
    TAKEOVER_CODE,
    CommandRequest,
    MqttPublisher,
    PublisherState,
)
from table_controller.mqtt.sequence import SequenceCounter
from table_controller.mqtt.topics import TableTopics, is_secure
from table_controller.testing.broker import WAIT, MosquittoBroker, RecordingSubscriber, wait_until

TOPICS = TableTopics(sample.TABLE)


@pytest.fixture
def publishers() -> Iterator[list[MqttPublisher]]:
    """Publishers created by a test, stopped at its end."""
    made: list[MqttPublisher] = []
    yield made
    for pub in made:
        pub.stop(timeout=1)


@pytest.fixture
def persistent_broker(tmp_path: Path) -> Iterator[MosquittoBroker]:
    """A broker that saves sessions and retained messages across its own restarts.

    With a persistent subscriber session, QoS 1 messages published while that
    subscriber is reconnecting wait for it, so tests need not race reconnects.
    Listed before ``subscribers``/``publishers`` so it is torn down after them.
    """
    (tmp_path / "broker").mkdir()
    with MosquittoBroker(tmp_path / "broker", persistence=True) as broker:
        yield broker


def _subscribe(port: int, made: list[RecordingSubscriber], **kwargs: object) -> RecordingSubscriber:
    sub = RecordingSubscriber(port, [TOPICS.all_filter], **kwargs)  # type: ignore[arg-type]
    made.append(sub)
    sub.wait_subscribed()
    return sub


def _publisher(
    port: int, tmp_path: Path, made: list[MqttPublisher], **kwargs: object
) -> MqttPublisher:
    queue_size = kwargs.pop("alert_queue", 1000)
    broker = BrokerConfig(
        host="127.0.0.1", port=port, reconnect_min_delay=1, reconnect_max_delay=1,
        alert_queue=queue_size,
    )
    pub = MqttPublisher(
        sample.TABLE, broker, SequenceCounter(tmp_path / "seq"), **kwargs  # type: ignore[arg-type]
    )
    made.append(pub)
    pub.start()
    return pub


def _status(msg: object) -> str:
    return str(json.loads(msg.payload)["status"])  # type: ignore[attr-defined]


def test_status_online_then_offline_retained(
    mosquitto: MosquittoBroker, tmp_path: Path, subscribers: list, publishers: list
) -> None:
    pub = _publisher(mosquitto.port, tmp_path, publishers)
    assert pub.wait_online(WAIT)
    first = _subscribe(mosquitto.port, subscribers)
    first.wait_topic(TOPICS.status, lambda p: p["status"] == "online")
    late = _subscribe(mosquitto.port, subscribers)  # surely after the broker had it
    online = late.wait_topic(TOPICS.status, lambda p: p["status"] == "online")
    assert online.retain
    assert online.qos == 1
    assert online.content_type == "application/json"
    pub.stop()
    after = _subscribe(mosquitto.port, subscribers)
    offline = after.wait_topic(TOPICS.status, lambda p: p["status"] == "offline")
    assert offline.retain
    assert offline.json()["seq"] > online.json()["seq"]


_KILLED_CHILD = """
import sys, time
from table_controller.daemon.logging import configure_logging
configure_logging("json", "warning")  # logs to stderr; stdout is our handshake
from table_controller.mqtt.broker_config import BrokerConfig
from table_controller.mqtt.publisher import MqttPublisher
from table_controller.mqtt.sequence import SequenceCounter
pub = MqttPublisher("t1", BrokerConfig(host="127.0.0.1", port=int(sys.argv[1])),
                    SequenceCounter(sys.argv[2]))
pub.start()
assert pub.wait_online(60)
print("online", flush=True)
time.sleep(600)
"""


def test_status_lost_when_process_is_killed(
    mosquitto: MosquittoBroker, tmp_path: Path, subscribers: list
) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", _KILLED_CHILD, str(mosquitto.port), str(tmp_path / "seq")],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "online"
        sub = _subscribe(mosquitto.port, subscribers)
        sub.wait_topic(TOPICS.status, lambda p: p["status"] == "online")
        os.kill(child.pid, signal.SIGKILL)
        lost = sub.wait_topic(TOPICS.status, lambda p: p["status"] == "lost")
        assert lost.json()["table"] == "t1"
    finally:
        child.kill()
        child.wait(timeout=WAIT)
        if child.stdout is not None:
            child.stdout.close()
    late = _subscribe(mosquitto.port, subscribers)
    assert late.wait_topic(TOPICS.status, lambda p: p["status"] == "lost").retain


def test_state_events_alerts_readers_and_seq_order(
    mosquitto: MosquittoBroker, tmp_path: Path, subscribers: list, publishers: list
) -> None:
    live = _subscribe(mosquitto.port, subscribers)
    pub = _publisher(mosquitto.port, tmp_path, publishers)
    assert pub.wait_online(WAIT)
    public, secure = sample.states()
    pub.publish_reader(sample.reader("1"))
    pub.publish_state(public, secure)
    pub.publish_event(*sample.down_event(seat=6, card="9s"))
    up = sample.up_event()
    pub.publish_event(up, up)
    pub.publish_alert(sample.alert(1))
    live.wait_for(lambda m: m.topic == TOPICS.alerts)

    # The claim (issue 21 item 6) goes out with every status.
    got = [m for m in live.snapshot() if m.topic not in (TOPICS.status, TOPICS.claim)]
    assert [m.topic for m in got] == [
        TOPICS.reader("1"), TOPICS.state, TOPICS.secure_state, TOPICS.events,
        TOPICS.secure_events, TOPICS.events, TOPICS.secure_events, TOPICS.alerts,
    ]
    seqs = [m.json()["seq"] for m in got]
    # Public and secure twins share a seq; otherwise strictly increasing.
    assert seqs[1] == seqs[2]
    assert seqs[3] == seqs[4]
    assert seqs[5] == seqs[6]
    distinct = [seqs[0], seqs[1], seqs[3], seqs[5], seqs[7]]
    assert distinct == sorted(set(distinct))
    for m in got:
        assert m.qos == 1
        assert m.json()["table"] == "t1"
        if not is_secure(m.topic):
            assert "9s" not in m.payload.decode()  # a down card never on a public topic
            assert "As" not in m.payload.decode()
    assert got[4].json() == {**got[3].json(), "card": "9s"}
    assert got[2].json()["seats"][0]["down"] == ["As", "Kd"]
    assert "down" not in got[1].json()["seats"][0]

    late = _subscribe(mosquitto.port, subscribers)
    retained = late.wait_for(lambda m: m.retain, count=5)  # status, claim, reader, state, secure
    assert {m.topic for m in retained} == {
        TOPICS.status, TOPICS.claim, TOPICS.reader("1"), TOPICS.state, TOPICS.secure_state,
    }


def test_rebirth_republishes_retained_set(
    mosquitto: MosquittoBroker, tmp_path: Path, subscribers: list, publishers: list
) -> None:
    pub = _publisher(mosquitto.port, tmp_path, publishers)
    assert pub.wait_online(WAIT)
    pub.publish_state(*sample.states())
    pub.publish_reader(sample.reader("1"))
    pub.publish_reader(sample.reader("2", state="offline"))
    sub = _subscribe(mosquitto.port, subscribers)
    # Whether these arrive retained or live depends on timing; either way
    # they are the latest before the rebirth.
    first = sub.wait_topic(TOPICS.state).json()
    reader_2 = sub.wait_topic(TOPICS.reader("2")).json()
    status = sub.wait_topic(TOPICS.status).json()
    sub.publish(TOPICS.cmd_rebirth, b"")
    again = sub.wait_topic(TOPICS.state, lambda p: p["seq"] > first["seq"]).json()
    assert {**again, "seq": 0, "ts": 0} == {**first, "seq": 0, "ts": 0}
    secure = sub.wait_topic(TOPICS.secure_state, lambda p: p["seq"] == again["seq"]).json()
    assert secure["seats"][0]["down"] == ["As", "Kd"]
    sub.wait_topic(TOPICS.reader("2"), lambda p: p["seq"] > reader_2["seq"])
    # Issue 24: the status is part of the retained set a rebirth republishes.
    again_status = sub.wait_topic(TOPICS.status, lambda p: p["seq"] > status["seq"]).json()
    assert again_status["status"] == "online"


def test_rebirth_handler_only_enqueues_and_engine_republishes(
    mosquitto: MosquittoBroker, tmp_path: Path, subscribers: list, publishers: list
) -> None:
    requests: queue.Queue[str] = queue.Queue()
    pub = _publisher(
        mosquitto.port, tmp_path, publishers,
        on_rebirth=lambda: requests.put(threading.current_thread().name),
    )
    assert pub.wait_online(WAIT)
    pub.publish_state(*sample.states())
    sub = _subscribe(mosquitto.port, subscribers)
    first = sub.wait_topic(TOPICS.state).json()
    sub.publish(TOPICS.cmd_rebirth, b"")
    thread_name = requests.get(timeout=WAIT)
    assert thread_name != threading.current_thread().name  # called on paho's thread
    assert len(sub.on_topic(TOPICS.state)) == 1  # the handler itself republished nothing
    pub.republish_retained()  # what the engine thread does with the request
    sub.wait_topic(TOPICS.state, lambda p: p["seq"] > first["seq"])


def test_broker_down_at_start_then_up(
    mosquitto: MosquittoBroker, tmp_path: Path, subscribers: list, publishers: list
) -> None:
    mosquitto.stop()  # keeps its port for the later start
    pub = _publisher(mosquitto.port, tmp_path, publishers)
    pub.publish_state(*sample.states())
    pub.publish_alert(sample.alert(1))
    pub.publish_event(*sample.down_event())
    assert not pub.online
    mosquitto.start()
    assert pub.wait_online(WAIT)
    sub = _subscribe(mosquitto.port, subscribers)
    sub.wait_topic(TOPICS.state)
    late = _subscribe(mosquitto.port, subscribers)  # surely after the broker had it
    state = late.wait_topic(TOPICS.state)
    assert state.retain
    assert state.json()["seats"][2]["up"] == ["Tc", "8s"]
    assert sub.wait_topic(TOPICS.status).json()["status"] == "online"
    # Issue 20: the event published while the broker was away was kept (and sent
    # before the republish: no subscriber could be there yet to see it).
    assert pub.counters().events_dropped == 0


def test_broker_restart_mid_stream_republishes_and_delivers_queued_alerts(
    persistent_broker: MosquittoBroker, tmp_path: Path, subscribers: list, publishers: list
) -> None:
    broker = persistent_broker
    sub = _subscribe(broker.port, subscribers, client_id="restart-sub", persistent=True)
    pub = _publisher(broker.port, tmp_path, publishers)
    assert pub.wait_online(WAIT)
    public, secure = sample.states(hand=1)
    pub.publish_state(public, secure)
    before = sub.wait_topic(TOPICS.state)

    broker.stop()
    wait_until(lambda: not pub.online, what="publisher to notice the broker is gone")
    for n in (1, 2, 3):
        pub.publish_alert(sample.alert(n))
    pub.publish_state(*sample.states(hand=2))
    pub.publish_event(*sample.down_event(hand=2))
    assert pub.counters().alerts_queued == 3
    broker.start()

    assert pub.wait_online(WAIT)
    # A broker back within the first reconnect delay looks like a client-id takeover
    # to the publisher (issue 20: Mosquitto 2.0 sends no DISCONNECT); that alert may
    # come too, and says so. The queued alerts arrive, in order.
    alerts = sub.wait_for(lambda m: m.topic == TOPICS.alerts
                          and m.json()["code"] != "mqtt_session_taken_over", count=3)
    assert [a.json()["message"] for a in alerts] == ["alert 1", "alert 2", "alert 3"]
    seqs = [a.json()["seq"] for a in alerts]
    assert seqs == sorted(seqs)
    after = sub.wait_topic(TOPICS.state, lambda p: p["hand"] == 2)
    assert after.json()["seq"] > before.json()["seq"]
    assert pub.counters().alerts_queued == 0
    # Issue 20: the event of the cut was kept and sent before the republished state
    # (it happened before it), the alerts after it.
    assert pub.counters().events_dropped == 0
    event = sub.wait_topic(TOPICS.events).json()
    assert event["hand"] == 2
    assert event["seq"] < after.json()["seq"] < seqs[0]
    fresh = _subscribe(broker.port, subscribers)
    assert fresh.wait_topic(TOPICS.state).json()["hand"] == 2
    assert fresh.wait_topic(TOPICS.status).json()["status"] == "online"


def test_alert_queue_overflow_is_reported(
    persistent_broker: MosquittoBroker, tmp_path: Path, subscribers: list, publishers: list
) -> None:
    broker = persistent_broker
    sub = _subscribe(broker.port, subscribers, client_id="overflow-sub", persistent=True)
    pub = _publisher(broker.port, tmp_path, publishers, alert_queue=3)
    assert pub.wait_online(WAIT)
    broker.stop()
    wait_until(lambda: not pub.online, what="publisher to notice the broker is gone")
    with capture_logs() as logs:
        for n in range(1, 6):
            pub.publish_alert(sample.alert(n))
    assert [e["event"] for e in logs] == ["mqtt_alert_queue_full"]
    assert pub.counters().alerts_dropped == 2
    broker.start()
    assert pub.wait_online(WAIT)
    alerts = sub.wait_for(lambda m: m.topic == TOPICS.alerts, count=4)
    assert [a.json()["message"] for a in alerts[:3]] == ["alert 3", "alert 4", "alert 5"]
    overflow = alerts[3].json()
    assert overflow["code"] == OVERFLOW_CODE
    assert overflow["severity"] == "error"  # issue 10: every alert says how urgent
    assert overflow["message"].startswith("2 alert(s) dropped")
    assert overflow["seq"] > alerts[2].json()["seq"]
    assert pub.counters().alerts_dropped == 0


def test_queued_alert_is_stamped_after_the_republish(
    persistent_broker: MosquittoBroker, tmp_path: Path, subscribers: list, publishers: list
) -> None:
    """Regression (issue 14): a message queued while offline kept the seq it was queued
    with and reached the broker after the republished retained set, so seq went
    backwards (a restarted daemon's republished hand record did, caught by
    test_hand_numbers_go_on_after_sigterm_and_kill_9). Now stamped as it goes out."""
    broker = persistent_broker
    sub = _subscribe(broker.port, subscribers, client_id="restamp-sub", persistent=True)
    pub = _publisher(broker.port, tmp_path, publishers)
    assert pub.wait_online(WAIT)
    pub.publish_state(*sample.states())
    sub.wait_topic(TOPICS.state)
    broker.stop()
    wait_until(lambda: not pub.online, what="publisher to notice the broker is gone")
    pub.publish_alert(sample.alert(1))
    broker.start()
    assert pub.wait_online(WAIT)
    alert = sub.wait_topic(TOPICS.alerts).json()
    assert alert["id"]  # the id it was given when raised stays
    republished = [m.json()["seq"] for m in sub.on_topic(TOPICS.state)][-1]
    assert alert["seq"] > republished


def test_exception_in_handler_does_not_disconnect(
    mosquitto: MosquittoBroker, tmp_path: Path, subscribers: list, publishers: list
) -> None:
    calls: list[int] = []

    def broken_handler() -> None:
        calls.append(1)
        raise RuntimeError("handler bug")

    pub = _publisher(mosquitto.port, tmp_path, publishers, on_rebirth=broken_handler)
    assert pub.wait_online(WAIT)
    sub = _subscribe(mosquitto.port, subscribers)
    with capture_logs() as logs:
        sub.publish(TOPICS.cmd_rebirth, b"")
        wait_until(lambda: pub.counters().callback_errors == 1, what="the handler error")
        sub.publish(TOPICS.cmd_rebirth, b"")
        wait_until(lambda: len(calls) == 2, what="the second rebirth to reach the handler")
    assert any(e["event"] == "mqtt_callback_failed" and e["callback"] == "on_message" for e in logs)
    assert pub.online
    pub.publish_state(*sample.states())
    sub.wait_topic(TOPICS.state)
    counters = pub.counters()
    assert counters.disconnects == 0
    assert counters.connects == 1


def test_console_command_request_response(
    mosquitto: MosquittoBroker, tmp_path: Path, subscribers: list, publishers: list
) -> None:
    requests: queue.Queue[CommandRequest] = queue.Queue()
    pub = _publisher(mosquitto.port, tmp_path, publishers, on_command=requests.put)
    assert pub.wait_online(WAIT)
    reply_topic = f"{TOPICS.base}/reply/console-1"
    console = RecordingSubscriber(mosquitto.port, [reply_topic])
    subscribers.append(console)
    console.wait_subscribed()
    props = Properties(PacketTypes.PUBLISH)
    props.ResponseTopic = reply_topic
    props.CorrelationData = b"req-42"
    console.publish(TOPICS.cmd("ping"), b'{"hello": 1}', properties=props)
    request = requests.get(timeout=WAIT)
    assert request.name == "ping"
    assert request.payload == b'{"hello": 1}'
    assert request.correlation_data == b"req-42"
    assert pub.reply(request, b'{"ok": true}')
    answer = console.wait_topic(reply_topic)
    assert answer.json() == {"ok": True}
    assert answer.correlation_data == b"req-42"


def test_payload_for_another_table_is_refused(tmp_path: Path) -> None:
    pub = MqttPublisher("other", BrokerConfig(), SequenceCounter(tmp_path / "seq"))
    with pytest.raises(ValueError, match="table 't1'"):
        pub.publish_alert(sample.alert())


# ------------------------------------------------------------ issue 9: hostile clients


def _request(topic: str, correlation: bytes = b"c-1") -> Properties:
    props = Properties(PacketTypes.PUBLISH)
    props.ResponseTopic = topic
    props.CorrelationData = correlation
    return props


def test_retained_commands_are_ignored_and_cleared(
    mosquitto: MosquittoBroker, tmp_path: Path, subscribers: list, publishers: list
) -> None:
    """Issue 9 item 4: a retained cmd/hand ran again at every (re)connect."""
    attacker = _subscribe(mosquitto.port, subscribers)
    attacker._client.publish(TOPICS.cmd("hand"), b'{"players": [1, 2]}', qos=1,
                             retain=True).wait_for_publish(WAIT)
    requests: queue.Queue[CommandRequest] = queue.Queue()
    pub = _publisher(mosquitto.port, tmp_path, publishers, on_command=requests.put)
    assert pub.wait_online(WAIT)
    # Published retained while the daemon is connected: recognised too (retain
    # as published) instead of running once live and again at the next start.
    attacker._client.publish(TOPICS.cmd("end"), b"{}", qos=1, retain=True).wait_for_publish(WAIT)
    attacker.publish(TOPICS.cmd("live"), b"{}")  # an ordinary command as the sync point
    assert requests.get(timeout=WAIT).name == "live"
    assert requests.empty()
    wait_until(lambda: pub.counters().retained_commands_ignored == 2, what="both ignored")
    # Regression: the clearing messages were not counted as sent, so their acks
    # drove the outgoing count below zero for good.
    wait_until(lambda: pub.outgoing == 0, what="every message acknowledged and counted")
    # Both were cleared on the broker: a new subscriber gets no retained command.
    fresh = RecordingSubscriber(mosquitto.port, [f"{TOPICS.base}/cmd/#", TOPICS.status])
    subscribers.append(fresh)
    fresh.wait_subscribed()
    fresh.wait_topic(TOPICS.status)  # retained status arrives with any retained command
    assert [m.topic for m in fresh.snapshot() if "/cmd/" in m.topic] == []


def test_rebirth_requests_coalesce(
    mosquitto: MosquittoBroker, tmp_path: Path, subscribers: list, publishers: list
) -> None:
    """Issue 9 item 3: one republish per request let 20,000 requests delay a card."""
    pub = _publisher(mosquitto.port, tmp_path, publishers)
    assert pub.wait_online(WAIT)
    pub.publish_state(*sample.states())
    sub = _subscribe(mosquitto.port, subscribers)
    first = sub.wait_topic(TOPICS.state).json()
    flood = 2000
    infos = [sub._client.publish(TOPICS.cmd_rebirth, b"", qos=1) for _ in range(flood)]
    for info in infos:
        info.wait_for_publish(WAIT)
    wait_until(lambda: pub.counters().rebirths_requested == flood, what="every request seen")
    sub.wait_topic(TOPICS.state, lambda p: p["seq"] > first["seq"])  # answered
    wait_until(lambda: pub.counters().republishes >= 1 and not pub._rebirth.pending,
               what="the coalesced republish")
    counters = pub.counters()
    # However fast they come: at most one republish per REBIRTH_MIN_INTERVAL.
    assert counters.republishes <= 1 + counters.rebirths_requested - counters.rebirths_coalesced
    assert counters.rebirths_coalesced >= flood - 20
    # A live event is not stuck behind republishes.
    up = sample.up_event()
    pub.publish_event(up, up)
    sub.wait_topic(TOPICS.events)


def test_reply_to_a_topic_outside_the_reply_tree_is_refused_without_raising(
    mosquitto: MosquittoBroker, tmp_path: Path, subscribers: list, publishers: list
) -> None:
    """Issue 9 items 1, 2, 5: a wildcard topic raised in the engine thread, an empty
    one got the daemon disconnected in a loop, and replies could overwrite state."""
    everything = RecordingSubscriber(mosquitto.port, ["#"])
    subscribers.append(everything)
    everything.wait_subscribed()
    pub = _publisher(mosquitto.port, tmp_path, publishers)
    assert pub.wait_online(WAIT)
    for topic in ("", f"{TOPICS.base}/reply/#", "#", TOPICS.state, "$SYS/x",
                  "stud/v1/t2/reply/x", f"{TOPICS.base}/reply/a/b"):
        request = CommandRequest("hand", b"{}", topic, b"c")
        assert pub.reply(request, b'{"forged": true}') is False
    good = CommandRequest("hand", b"{}", TOPICS.reply("console-1"), b"c")
    assert pub.reply(good, b'{"ok": true}')
    everything.wait_topic(TOPICS.reply("console-1"))
    assert [m.topic for m in everything.snapshot() if b"forged" in m.payload] == []
    counters = pub.counters()
    assert counters.replies_refused == 7
    assert counters.disconnects == 0


def test_the_client_id_is_unguessable_and_a_takeover_is_reported(
    mosquitto: MosquittoBroker, tmp_path: Path, subscribers: list, publishers: list
) -> None:
    """Issue 9 item 6: any client connecting as ``stud-table-<table>`` knocked the
    daemon off the broker. The id is now random per start; a client that knows it
    anyway is logged at once and alerted on once the daemon is back."""
    one = MqttPublisher(sample.TABLE, BrokerConfig(), SequenceCounter(tmp_path / "a"))
    two = MqttPublisher(sample.TABLE, BrokerConfig(), SequenceCounter(tmp_path / "b"))
    assert one.client_id != two.client_id
    assert one.client_id.startswith("stud-table-t1-")
    assert len(one.client_id) - len("stud-table-t1-") == 32  # 128 random bits

    alerts = _subscribe(mosquitto.port, subscribers)
    pub = _publisher(mosquitto.port, tmp_path, publishers)
    assert pub.wait_online(WAIT)
    # The id every earlier version used: taking it now harms nobody.
    guess = RecordingSubscriber(mosquitto.port, [TOPICS.status], client_id="stud-table-t1")
    subscribers.append(guess)
    guess.wait_subscribed()
    assert pub.counters().disconnects == 0
    # A client that learnt the real id (from the broker's log, say): Mosquitto
    # 2.0.11 just closes the victim's socket (no DISCONNECT 0x8E), and the daemon
    # is back at once. Issue 20: that client reconnecting with the id knocked the
    # daemon off 10 times in 15 s. Now the daemon comes back with a new id (so the
    # thief, which stays connected, knocks it off no more) and alerts at once.
    events = _subscribe(mosquitto.port, subscribers, client_id="takeover-events",
                        persistent=True)
    stolen = pub.client_id
    with capture_logs() as logs:
        thief = RecordingSubscriber(mosquitto.port, [TOPICS.status], client_id=stolen)
        try:
            thief.wait_subscribed()
            wait_until(lambda: pub.counters().disconnects >= 1, what="the takeover")
            pub.publish_event(*sample.down_event())  # while it is cut off, maybe
            alert = alerts.wait_topic(TOPICS.alerts, lambda a: a["code"] == TAKEOVER_CODE)
            assert pub.wait_online(WAIT)
            assert pub.client_id != stolen
            pub.publish_event(*sample.down_event(hand=2))
            events.wait_for(lambda m: m.topic == TOPICS.events, count=2)
        finally:
            thief.close()
    assert "client id" in alert.json()["message"]
    assert pub.counters().disconnects == 1  # no war: the thief's id is not ours any more
    assert pub.counters().events_dropped == 0
    # The id is never logged at info (a reader of the log could take it).
    for entry in logs:
        if entry["log_level"] != "debug":
            assert stolen not in str(entry), entry
            assert pub.client_id not in str(entry), entry


def test_a_link_that_cannot_stay_up_is_reported(
    persistent_broker: MosquittoBroker, tmp_path: Path, subscribers: list, publishers: list
) -> None:
    """Issue 9, a supervisor never restarts a live-but-disconnected process: the
    daemon says so itself (log at once, counters, an alert once reconnected)."""
    mosquitto = persistent_broker
    # A persistent session: the alert waits for this subscriber if it is still
    # reconnecting after the last broker restart when the alert is published.
    alerts = _subscribe(mosquitto.port, subscribers, client_id="unstable-sub", persistent=True)
    pub = _publisher(mosquitto.port, tmp_path, publishers)
    assert pub.wait_online(WAIT)
    with capture_logs() as logs:
        for _ in range(3):
            mosquitto.stop()
            wait_until(lambda: not pub.online, what="the publisher to notice")
            mosquitto.start()
            assert pub.wait_online(WAIT)
    alert = alerts.wait_topic(TOPICS.alerts, lambda a: a["code"] == "mqtt_link_unstable")
    assert "3 disconnects" in alert.json()["message"]
    assert [e["event"] for e in logs].count("mqtt_link_unstable") == 1
    assert pub.counters().disconnects == 3


@pytest.fixture
def roomy_broker(tmp_path: Path) -> Iterator[MosquittoBroker]:
    """A broker that queues up to 10,000 messages per client, as
    deploy/mosquitto.conf does (the default 1,000 would make the broker itself
    drop messages for a test subscriber that falls behind a burst)."""
    (tmp_path / "roomy").mkdir()
    with MosquittoBroker(tmp_path / "roomy", extra_config="max_queued_messages 10000") as broker:
        yield broker


def test_an_outgoing_backlog_is_reported_and_recovers(
    roomy_broker: MosquittoBroker, tmp_path: Path, subscribers: list, publishers: list
) -> None:
    """Issue 9 item 3: a full outgoing queue refused card events and alerts, only
    logged. A broker that stops acknowledging (SIGSTOP here) now puts the
    publisher in a reported backlog state; nothing is dropped; it recovers."""
    mosquitto = roomy_broker
    sub = RecordingSubscriber(mosquitto.port, [TOPICS.events, TOPICS.alerts])
    subscribers.append(sub)
    sub.wait_subscribed()
    pub = _publisher(mosquitto.port, tmp_path, publishers)
    assert pub.wait_online(WAIT)
    assert mosquitto.pid is not None
    up = sample.up_event()
    count = 2500
    with capture_logs() as logs:
        os.kill(mosquitto.pid, signal.SIGSTOP)
        try:
            for _ in range(count):
                pub.publish_event(up, up)
            assert pub.counters().backlogged
        finally:
            os.kill(mosquitto.pid, signal.SIGCONT)
        wait_until(lambda: not pub.counters().backlogged, what="the backlog to clear")
    events = [e["event"] for e in logs]
    assert events.count("mqtt_outgoing_backlog") == 1
    assert "mqtt_outgoing_backlog_cleared" in events
    sub.wait_for(lambda m: m.topic == TOPICS.events, count=count)
    alert = sub.wait_topic(TOPICS.alerts, lambda a: a["code"] == "mqtt_backlog")
    assert "nothing is dropped" in alert.json()["message"]
    counters = pub.counters()
    assert counters.backlog_episodes == 1
    assert counters.events_dropped == 0
    assert counters.outgoing_peak >= 2000


def test_a_rebirth_deferred_twice_still_happens(
    mosquitto: MosquittoBroker, tmp_path: Path, subscribers: list, publishers: list
) -> None:
    """Regression: a republish deferred by its own timer (the outgoing queue still
    long when the timer fired) found that timer alive, scheduled nothing, and
    stayed pending for ever, swallowing every later request as coalesced."""
    sub = _subscribe(mosquitto.port, subscribers)
    pub = _publisher(mosquitto.port, tmp_path, publishers)
    assert pub.wait_online(WAIT)
    pub.publish_state(*sample.states())
    first = sub.wait_topic(TOPICS.state).json()
    assert mosquitto.pid is not None
    up = sample.up_event()
    os.kill(mosquitto.pid, signal.SIGSTOP)
    try:
        for _ in range(BULK_LIMIT + 50):
            pub.publish_event(up, up)  # unacknowledged: the queue is long
        pub.republish_retained()  # within REBIRTH_MIN_INTERVAL of going online: deferred
        # The timer fires while the queue is still long: deferred again.
        wait_until(lambda: pub._rebirth.timer is not None and pub._rebirth.timer.is_alive()
                   and time.monotonic() > pub._rebirth.last_republish + REBIRTH_MIN_INTERVAL + 0.3,
                   what="the second deferral")
    finally:
        os.kill(mosquitto.pid, signal.SIGCONT)
    sub.wait_topic(TOPICS.state, lambda p: p["seq"] > first["seq"])
    assert pub.counters().republishes == 1


def test_the_lifecycle_is_one_state(
    persistent_broker: MosquittoBroker, tmp_path: Path, publishers: list
) -> None:
    """Issue 20: five flags (started, stopping, online, subscribe pending, ...) are one
    lifecycle state now: NEW, CONNECTING, SUBSCRIBING, ONLINE, STOPPING, STOPPED."""
    broker = persistent_broker
    pub = MqttPublisher(sample.TABLE, BrokerConfig(port=broker.port, reconnect_max_delay=1),
                        SequenceCounter(tmp_path / "life.seq"))
    publishers.append(pub)
    assert pub.lifecycle is PublisherState.NEW
    pub.start()
    assert pub.wait_online(WAIT)
    assert pub.lifecycle is PublisherState.ONLINE
    broker.stop()
    wait_until(lambda: pub.lifecycle is PublisherState.CONNECTING, what="the cut seen")
    broker.start()
    assert pub.wait_online(WAIT)
    with pytest.raises(RuntimeError):
        pub.start()
    pub.stop()
    assert pub.lifecycle is PublisherState.STOPPED
    assert pub.counters().connects == 2
