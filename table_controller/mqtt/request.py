"""One console request over MQTT 5 request/response, and its answer (docs/console.md).

:func:`send_request` publishes ``stud/v1/<table>/cmd/<name>`` with a Response Topic
under the table's ``reply/`` tree and correlation data, and waits for the daemon's
reply. The console CLI (``stud-table console``) and the floor dashboard both send
their commands through it.
"""

from __future__ import annotations

import json
import socket
import threading
import time
import uuid
from typing import Any, Final

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion, MQTTErrorCode, MQTTProtocolVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from paho.mqtt.reasoncodes import ReasonCode

from table_controller.mqtt.topics import TableTopics

DEFAULT_TIMEOUT: Final = 10.0
"""Seconds to wait for the reply."""

CONNACK_WAIT: Final = 5.0
"""Seconds the broker has to answer CONNECT (at least; half the timeout if longer)."""
RETRIES: Final = 2
"""Times a request is sent again (same correlation data: applied once) without a reply."""


class NoReplyError(Exception):
    """No answer: the broker refused or was unreachable, or the daemon was silent."""


def send_request(
    host: str,
    port: int,
    table: str,
    name: str,
    payload: bytes,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    username: str | None = None,
    password: str | None = None,
) -> dict[str, Any]:
    """Publish ``payload`` on ``cmd/<name>`` and return the daemon's parsed reply.

    Raises :class:`NoReplyError` when the broker or the daemon does not answer in time.
    """
    topics = TableTopics(table)
    client_id = f"console-{uuid.uuid4().hex[:16]}"
    reply_topic = topics.reply(client_id)
    correlation = uuid.uuid4().bytes
    done = threading.Event()
    connected = threading.Event()
    subscribed = threading.Event()
    outcome: dict[str, Any] = {}
    props = Properties(PacketTypes.PUBLISH)  # type: ignore[no-untyped-call]
    props.ResponseTopic = reply_topic
    props.CorrelationData = correlation
    props.ContentType = "application/json"

    client = mqtt.Client(
        CallbackAPIVersion.VERSION2, client_id=client_id, protocol=MQTTProtocolVersion.MQTTv5
    )
    if username is not None:
        client.username_pw_set(username, password)

    def on_connect(c: mqtt.Client, _u: object, _f: object, reason: ReasonCode,
                   _p: object) -> None:
        if reason.is_failure:
            outcome["error"] = f"the broker refused the connection: {reason}"
            done.set()
            return
        connected.set()
        _no_delay(c)
        # Subscribe first: a reply published before our SUBACK would be lost.
        c.subscribe(reply_topic, qos=1)

    def on_subscribe(c: mqtt.Client, _u: object, _mid: int, reasons: list[ReasonCode],
                     _p: object) -> None:
        if any(r.is_failure for r in reasons):
            outcome["error"] = f"the broker refused the reply subscription {reply_topic}"
            done.set()
            return
        c.publish(topics.cmd(name), payload, qos=1, properties=props)
        subscribed.set()

    def on_message(_c: mqtt.Client, _u: object, message: mqtt.MQTTMessage) -> None:
        if getattr(message.properties, "CorrelationData", None) != correlation:
            return  # someone else's answer (a reused topic): not ours
        try:
            outcome["reply"] = json.loads(message.payload)
        except ValueError:
            outcome["error"] = f"unreadable reply: {message.payload[:200]!r}"
        done.set()

    client.on_connect = on_connect
    client.on_subscribe = on_subscribe
    client.on_message = on_message
    try:
        rc = client.connect(host, port, keepalive=max(5, int(timeout) + 5))
    except OSError as exc:
        raise NoReplyError(f"cannot reach the broker at {host}:{port}: {exc}") from None
    if rc != MQTTErrorCode.MQTT_ERR_SUCCESS:
        raise NoReplyError(f"cannot reach the broker at {host}:{port}: {mqtt.error_string(rc)}")
    client.loop_start()
    try:
        deadline = time.monotonic() + timeout
        # The broker answers CONNECT at once when it is there: without a CONNACK the
        # broker was never reached (a TCP connection alone can be a proxy or a
        # firewall), which is not "is the daemon running?" (issue 24).
        wait = min(timeout, max(CONNACK_WAIT, timeout / 2))
        if not connected.wait(wait) and not done.is_set():
            raise NoReplyError(f"cannot reach the broker at {host}:{port}: no MQTT answer"
                               f" within {wait:g} s (is it an MQTT broker, and is it up?)")
        answered = done.wait(timeout / (RETRIES + 1))
        for _ in range(RETRIES):
            if answered or not subscribed.is_set():
                break
            # Same correlation data: the daemon's request id (docs/console.md).
            client.publish(topics.cmd(name), payload, qos=1, properties=props)
            answered = done.wait(min(timeout / (RETRIES + 1),
                                     max(0.0, deadline - time.monotonic())))
        if not answered:
            answered = done.wait(max(0.0, deadline - time.monotonic()))
    finally:
        client.disconnect()
        client.loop_stop()
    if "error" in outcome:
        raise NoReplyError(str(outcome["error"]))
    if not answered:
        raise NoReplyError(
            f"no reply from table {table!r} within {timeout:g} s (is the daemon running?)"
        )
    reply: dict[str, Any] = outcome["reply"]
    return reply


def _no_delay(client: mqtt.Client) -> None:
    """Turn Nagle off: paho leaves it on, and a small request then waits for the
    peer's delayed ACK (about 40 ms per hop on Linux loopback)."""
    sock = client.socket()
    if isinstance(sock, socket.socket):  # an ssl.SSLSocket is one too
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


