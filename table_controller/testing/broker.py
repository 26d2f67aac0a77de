"""A real Mosquitto broker for tests, and a subscriber that records what it sees.

:class:`MosquittoBroker` is the product's :class:`LocalBroker` (``mosquitto`` on
a free loopback port, waited for until it accepts connections, stopped and
restarted *on the same port* for broker-restart tests) with a config generated
for the test (optionally with a password file and an ACL, or persistence).
:class:`RecordingSubscriber` collects every message with its retain flag and
QoS and lets a test wait, with a generous timeout, until a predicate over the
messages holds (no fixed sleeps).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion, MQTTProtocolVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from paho.mqtt.subscribeoptions import SubscribeOptions

from table_controller.mqtt.local_broker import LocalBroker, base_config_lines, run_as_user_lines

WAIT = 20.0
"""Default timeout (s) for waits: generous for a loaded 2-core CI machine."""


run_as_user_line = run_as_user_lines
"""Config lines keeping mosquitto as the current user (the ACL test's deploy config)."""


def kill9(process: subprocess.Popen[bytes]) -> None:
    """``kill -9`` the process group of ``process`` (a child started with
    ``start_new_session``) and reap it: the crash the daemon and broadcast
    tests recover from."""
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=WAIT)


def wait_until(predicate: Callable[[], bool], timeout: float = WAIT, what: str = "") -> None:
    """Poll ``predicate`` until true; fail the test with ``what`` after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what or predicate}")
        time.sleep(0.02)


@dataclass
class BrokerUser:
    """A user for the broker's password file."""

    name: str
    password: str


class MosquittoBroker(LocalBroker):
    """The product's private broker (:class:`LocalBroker`) with a test's config:
    users, an ACL, persistence, extra lines, or a whole config of its own."""

    def __init__(
        self,
        directory: Path | None = None,
        *,
        users: Sequence[BrokerUser] = (),
        acl: str | None = None,
        allow_anonymous: bool = True,
        persistence: bool = False,
        extra_config: str = "",
        config_text: Callable[[int, Path], str] | None = None,
    ) -> None:
        """Prepare config files in ``directory`` (a new temp dir if None); call :meth:`start`.

        ``config_text(port, directory)``, if given, replaces the generated
        config entirely (e.g. a deploy config with its paths rewritten).
        """
        super().__init__(directory)
        self._users = list(users)
        self._acl = acl
        self._allow_anonymous = allow_anonymous
        self._persistence = persistence
        self._extra = extra_config
        self._config_text = config_text

    def _write_password_file(self) -> None:
        pw_file = self.directory / "passwd"
        pw_file.write_text("")
        for user in self._users:
            subprocess.run(
                ["mosquitto_passwd", "-b", str(pw_file), user.name, user.password],
                check=True, capture_output=True,
            )

    def config(self) -> str:
        """The test's config (and ``passwd`` for its users, ``acl`` for its ACL)."""
        if self._users:
            self._write_password_file()
        if self._config_text is not None:
            return self._config_text(self.port, self.directory)
        lines = [
            *base_config_lines(self.port),
            "log_type notice",
            f"allow_anonymous {'true' if self._allow_anonymous else 'false'}",
            f"persistence {'true' if self._persistence else 'false'}",
            f"persistence_location {self.directory}/",
        ]
        if self._users:
            lines.append(f"password_file {self.directory / 'passwd'}")
        if self._acl is not None:
            acl_file = self.directory / "acl"
            acl_file.write_text(self._acl)
            lines.append(f"acl_file {acl_file}")
        if self._extra:
            lines.append(self._extra)
        return "\n".join(lines) + "\n"

    def __enter__(self) -> MosquittoBroker:
        self.start()
        return self


@dataclass(frozen=True)
class Received:
    """One message as a subscriber saw it."""

    topic: str
    payload: bytes
    retain: bool
    qos: int
    content_type: str | None = None
    correlation_data: bytes | None = None

    def json(self) -> Any:
        """The payload parsed as JSON."""
        return json.loads(self.payload)


class RecordingSubscriber:
    """A paho client that subscribes to ``topics`` and records every message.

    ``persistent=True`` keeps the MQTT session on the broker across this
    client's disconnects (clean_start False, long session expiry), so QoS 1
    messages published while it is away are delivered when it comes back.
    """

    def __init__(
        self,
        port: int,
        topics: Iterable[str],
        *,
        username: str | None = None,
        password: str | None = None,
        client_id: str = "",
        persistent: bool = False,
    ) -> None:
        """Connect in the background; use :meth:`wait_subscribed` before relying on it."""
        self.topics = list(topics)
        self.messages: list[Received] = []
        self.granted: list[int] = []
        self._cond = threading.Condition()
        self._subscribed = threading.Event()
        self._client = mqtt.Client(
            CallbackAPIVersion.VERSION2,
            client_id=client_id or f"test-sub-{os.getpid()}-{id(self)}",
            protocol=MQTTProtocolVersion.MQTTv5,
        )
        if username is not None:
            self._client.username_pw_set(username, password)
        self._client.reconnect_delay_set(1, 1)
        self._client.on_connect = self._on_connect
        self._client.on_subscribe = self._on_subscribe
        self._client.on_message = self._on_message
        props = None
        if persistent:
            props = Properties(PacketTypes.CONNECT)  # type: ignore[no-untyped-call]
            props.SessionExpiryInterval = 3600
        self._client.connect_async(
            "127.0.0.1", port, keepalive=10, clean_start=not persistent, properties=props
        )
        self._client.loop_start()

    def _on_connect(self, client: mqtt.Client, *_: Any) -> None:
        client.subscribe([(t, SubscribeOptions(qos=1)) for t in self.topics])

    def _on_subscribe(self, _c: mqtt.Client, _u: object, _mid: int, reasons: Any, _p: Any) -> None:
        with self._cond:
            self.granted = [r.value for r in reasons]
        self._subscribed.set()

    def _on_message(self, _c: mqtt.Client, _u: object, message: mqtt.MQTTMessage) -> None:
        content_type = getattr(message.properties, "ContentType", None)
        correlation = getattr(message.properties, "CorrelationData", None)
        item = Received(message.topic, bytes(message.payload), bool(message.retain),
                        message.qos, content_type, correlation)
        with self._cond:
            self.messages.append(item)
            self._cond.notify_all()

    def wait_subscribed(self, timeout: float = WAIT) -> None:
        """Wait for the SUBACK of the first connection."""
        if not self._subscribed.wait(timeout):
            raise AssertionError("subscriber never got its SUBACK")

    def snapshot(self) -> list[Received]:
        """A copy of everything received so far."""
        with self._cond:
            return list(self.messages)

    def wait_for(
        self,
        predicate: Callable[[Received], bool],
        timeout: float = WAIT,
        count: int = 1,
    ) -> list[Received]:
        """Wait until ``count`` received messages satisfy ``predicate``; return them."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                found = [m for m in self.messages if predicate(m)]
                if len(found) >= count:
                    return found
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    seen = [(m.topic, m.payload[:120]) for m in self.messages[-10:]]
                    raise AssertionError(
                        f"timed out after {timeout} s: {len(found)}/{count} matching;"
                        f" last seen {seen}"
                    )
                self._cond.wait(min(remaining, 0.5))

    def wait_topic(self, topic: str, predicate: Callable[[Any], bool] = lambda _: True,
                   timeout: float = WAIT) -> Received:
        """Wait for a message on ``topic`` whose JSON payload satisfies ``predicate``."""
        return self.wait_for(lambda m: m.topic == topic and predicate(m.json()), timeout)[-1]

    def on_topic(self, topic: str) -> list[Received]:
        """Messages received so far on ``topic``."""
        return [m for m in self.snapshot() if m.topic == topic]

    def publish(
        self,
        topic: str,
        payload: bytes | str = b"",
        qos: int = 1,
        properties: Properties | None = None,
    ) -> None:
        """Publish from this client (e.g. a ``cmd/rebirth`` request) and wait for the ack."""
        info = self._client.publish(topic, payload, qos=qos, properties=properties)
        info.wait_for_publish(WAIT)

    def close(self) -> None:
        """Disconnect and stop the network thread."""
        self._client.disconnect()
        self._client.loop_stop()
