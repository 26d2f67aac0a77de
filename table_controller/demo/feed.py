"""The demo's MQTT side: a subscriber to a table's public topics feeding a TableView.

Only the public topics are subscribed (``state``, ``events``, ``alerts``,
``readers/+``): the demo shows what a broadcast overlay would see. paho runs
its own network thread; every payload is applied to the :class:`TableView`
under a lock, and the plain lines it produces are handed to ``on_lines``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from typing import Any

import paho.mqtt.client as mqtt
import structlog
from paho.mqtt.enums import CallbackAPIVersion, MQTTProtocolVersion
from paho.mqtt.subscribeoptions import SubscribeOptions

from table_controller.demo.view import TableView, render_screen
from table_controller.mqtt.topics import TableTopics

log = structlog.get_logger(__name__)

LineSink = Callable[[Sequence[str]], None]
"""Receives the plain lines a payload produced (called on paho's thread)."""


class TableFeed:
    """Subscribes to one table's public topics on ``host:port`` (see module docstring)."""

    def __init__(self, host: str, port: int, table: str, on_lines: LineSink) -> None:
        """Prepare the client; call :meth:`start` to connect."""
        self.topics = TableTopics(table)
        self._host = host
        self._port = port
        self._on_lines = on_lines
        self._lock = threading.Lock()
        self._view = TableView(table)
        self.changes = 0
        """Bumped on every payload applied; the screen redraws when it moves."""
        self._client = mqtt.Client(
            CallbackAPIVersion.VERSION2,
            client_id=f"stud-demo-view-{table}-{id(self):x}",
            protocol=MQTTProtocolVersion.MQTTv5,
        )
        self._client.reconnect_delay_set(1, 2)
        self._client.on_connect = self._on_connect
        self._client.on_message = self._on_message

    def start(self) -> TableFeed:
        """Connect in the background (retried until :meth:`stop`)."""
        self._client.connect_async(self._host, self._port, keepalive=30)
        self._client.loop_start()
        return self

    def stop(self) -> None:
        """Disconnect and end the network thread."""
        self._client.disconnect()
        self._client.loop_stop()

    def _on_connect(self, client: mqtt.Client, *_: Any) -> None:
        topics = self.topics
        filters = [topics.state, topics.events, topics.alerts, topics.readers_filter]
        client.subscribe([(f, SubscribeOptions(qos=1)) for f in filters])

    def _on_message(self, _c: mqtt.Client, _u: object, message: mqtt.MQTTMessage) -> None:
        try:
            payload = json.loads(message.payload)
        except ValueError:
            # A consumer must survive a bad payload: log it and keep watching.
            log.warning("demo_bad_payload", topic=message.topic)
            return
        if not isinstance(payload, dict):
            return
        with self._lock:
            lines = self._view.update(message.topic, payload)
            self.changes += 1
        if lines:
            self._on_lines(lines)

    # ------------------------------------------------------------- queries

    @property
    def ready(self) -> bool:
        """True once the daemon's retained state has arrived."""
        with self._lock:
            return self._view.ready

    def readers_online(self, expected: int) -> bool:
        """True when ``expected`` readers report ``online``."""
        with self._lock:
            return self._view.readers_online(expected)

    def hand_cleared(self, hand_results: int, *, empty_seats: bool) -> bool:
        """See :meth:`TableView.hand_cleared`."""
        with self._lock:
            return self._view.hand_cleared(hand_results, empty_seats=empty_seats)

    @property
    def hand_results(self) -> int:
        """How many hand results have arrived."""
        with self._lock:
            return self._view.hand_results

    def screen(self, header: Sequence[str], height: int | None = None) -> list[str]:
        """The table drawn as a screen of lines (at most about ``height``)."""
        with self._lock:
            return render_screen(self._view, header, height)

    def note(self, line: str) -> None:
        """Add a line of our own (the dealer's) to the view's recent lines."""
        with self._lock:
            self._view.recent.append(line)
            self.changes += 1
