"""A real Mosquitto broker for tests, and a subscriber that records what it sees.

:class:`MosquittoBroker` runs ``mosquitto`` on a free loopback port with a
generated config (optionally with a password file and an ACL), waits until it
accepts connections, and can be stopped and restarted *on the same port* for
broker-restart tests. :class:`RecordingSubscriber` collects every message with
its retain flag and QoS and lets a test wait, with a generous timeout, until a
predicate over the messages holds (no fixed sleeps).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
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

WAIT = 20.0
"""Default timeout (s) for waits: generous for a loaded 2-core CI machine."""


def mosquitto_binary() -> str:
    """Path of the mosquitto broker binary (Debian puts it in /usr/sbin)."""
    found = shutil.which("mosquitto") or shutil.which("mosquitto", path="/usr/sbin:/usr/local/sbin")
    if found is None:
        raise RuntimeError("mosquitto not found; scripts/setup installs it (apt: mosquitto)")
    return found


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def run_as_user_line() -> list[str]:
    """Config lines keeping mosquitto as the current user.

    Started as root, mosquitto switches to the ``mosquitto`` user, which cannot
    read the test's private temp directory; ``user root`` makes it stay.
    """
    return ["user root"] if os.geteuid() == 0 else []


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


class MosquittoBroker:
    """One mosquitto process on 127.0.0.1:``port`` (see the module docstring)."""

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
        self._own_dir = directory is None
        self.directory = Path(directory or tempfile.mkdtemp(prefix="mosquitto-"))
        self.port = 0
        self._users = list(users)
        self._acl = acl
        self._allow_anonymous = allow_anonymous
        self._persistence = persistence
        self._extra = extra_config
        self._config_text = config_text
        self._proc: subprocess.Popen[bytes] | None = None
        self.log_path = self.directory / "mosquitto.log"

    def _write_password_file(self) -> None:
        pw_file = self.directory / "passwd"
        pw_file.write_text("")
        for user in self._users:
            subprocess.run(
                ["mosquitto_passwd", "-b", str(pw_file), user.name, user.password],
                check=True, capture_output=True,
            )

    def _write_config(self) -> Path:
        """Write ``mosquitto.conf`` (and ``passwd`` for :attr:`users`) into the directory."""
        config = self.directory / "mosquitto.conf"
        if self._users:
            self._write_password_file()
        if self._config_text is not None:
            config.write_text(self._config_text(self.port, self.directory))
            return config
        lines = [
            f"listener {self.port} 127.0.0.1",
            "set_tcp_nodelay true",
            f"allow_anonymous {'true' if self._allow_anonymous else 'false'}",
            f"persistence {'true' if self._persistence else 'false'}",
            f"persistence_location {self.directory}/",
            *run_as_user_line(),
            "log_dest stderr",
            "log_type error",
            "log_type warning",
            "log_type notice",
        ]
        if self._users:
            lines.append(f"password_file {self.directory / 'passwd'}")
        if self._acl is not None:
            acl_file = self.directory / "acl"
            acl_file.write_text(self._acl)
            lines.append(f"acl_file {acl_file}")
        if self._extra:
            lines.append(self._extra)
        config.write_text("\n".join(lines) + "\n")
        return config

    def start(self) -> None:
        """Start the broker (on a new free port the first time, the same port after)."""
        if self._proc is not None:
            raise RuntimeError("broker already running")
        first = self.port == 0
        for _attempt in range(5):
            if first:
                self.port = free_port()
            config = self._write_config()
            log = self.log_path.open("ab")
            self._proc = subprocess.Popen(
                [mosquitto_binary(), "-c", str(config)],
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            )
            log.close()
            if self._wait_listening():
                return
            self._kill()
            if not first:
                break  # the port we must reuse is taken; retrying will not help
        raise RuntimeError(f"mosquitto did not start; log:\n{self.log_text()}")

    def _wait_listening(self, timeout: float = WAIT) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self._proc is not None
            if self._proc.poll() is not None:
                return False
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return True
            except OSError:
                time.sleep(0.02)
        return False

    def _kill(self) -> None:
        if self._proc is not None:
            self._proc.kill()
            self._proc.wait(timeout=WAIT)
            self._proc = None

    def stop(self) -> None:
        """Stop the broker cleanly (SIGTERM: persistence, if on, is saved)."""
        if self._proc is None:
            return
        self._proc.send_signal(signal.SIGTERM)
        try:
            self._proc.wait(timeout=WAIT)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait(timeout=WAIT)
        self._proc = None

    def restart(self) -> None:
        """Stop, then start again on the same port."""
        self.stop()
        self.start()

    @property
    def running(self) -> bool:
        """True while the broker process is alive."""
        return self._proc is not None and self._proc.poll() is None

    def log_text(self) -> str:
        """The broker's log so far (for failure messages)."""
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def close(self) -> None:
        """Stop the broker and remove its temp directory if we created it."""
        self.stop()
        if self._own_dir:
            shutil.rmtree(self.directory, ignore_errors=True)

    def __enter__(self) -> MosquittoBroker:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


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
