"""``stud-table readers --broker``: the readers view while the daemon runs.

The daemon holds every reader's port while it runs, so the view cannot open them;
it reads what the daemon publishes instead: the retained ``readers/<id>`` status
(state, why not online, firmware, heartbeat, frame errors) and the periodic
``readers/<id>/stats`` figures (per antenna: tags seen, reads per second,
dropouts). Counts only: the topics carry no UID, so neither does this view.

Every message is validated against its payload model; anything else (another
client publishing junk on the table's topics) is counted and ignored.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Mapping
from typing import Final, TextIO

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion, MQTTProtocolVersion
from paho.mqtt.reasoncodes import ReasonCode
from pydantic import ValidationError

from table_controller.mqtt.payloads import ReaderStats, ReaderStatus
from table_controller.mqtt.topics import TableTopics

REDRAW_PERIOD: Final = 0.5
"""Seconds between two drawings."""

MAX_PAYLOAD: Final = 64 * 1024
"""Largest message looked at: a reader's figures are under 2 KB."""

_CLEAR_SCREEN: Final = "\x1b[H\x1b[2J"
_CLEAR_LINE_END: Final = "\x1b[K"


class RemoteReaders:
    """The latest status and figures of every reader of one table, from MQTT."""

    def __init__(self, table: str) -> None:
        self.topics = TableTopics(table)
        self.statuses: dict[str, ReaderStatus] = {}
        self.stats: dict[str, ReaderStats] = {}
        self.ignored = 0
        """Messages on the readers' topics that were not valid payloads."""
        self.connection = "connecting"
        self._lock = threading.Lock()

    def take(self, topic: str, payload: bytes | bytearray) -> None:
        """Keep one message of ``readers/<id>`` or ``readers/<id>/stats``."""
        try:
            if len(payload) > MAX_PAYLOAD:
                raise ValueError("too large")
            if topic.endswith("/stats"):
                stats = ReaderStats.model_validate_json(payload)
                with self._lock:
                    self.stats[stats.reader] = stats
            elif payload:  # an empty retained message clears the topic
                status = ReaderStatus.model_validate_json(payload)
                with self._lock:
                    self.statuses[status.reader] = status
        except (ValidationError, ValueError):
            with self._lock:
                self.ignored += 1

    def copy(self) -> tuple[dict[str, ReaderStatus], dict[str, ReaderStats], int, str]:
        """A consistent copy of what is known (for drawing)."""
        with self._lock:
            return dict(self.statuses), dict(self.stats), self.ignored, self.connection


def draw(out: TextIO, lines: list[str]) -> None:
    """Redraw the terminal with ``lines`` (plain ANSI: home, clear, each line cleared
    to its end), for both views."""
    out.write(_CLEAR_SCREEN + "".join(f"{line}{_CLEAR_LINE_END}\n" for line in lines))
    out.flush()


def _reader_order(reader: str) -> tuple[int, str]:
    return (int(reader), reader) if reader.isdecimal() else (1 << 20, reader)


def render_remote(
    table: str,
    statuses: Mapping[str, ReaderStatus],
    stats: Mapping[str, ReaderStats],
    *,
    now: float,
    connection: str = "connected",
    ignored: int = 0,
) -> list[str]:
    """The lines of the broker view (pure); ``now`` is wall-clock epoch seconds."""
    lines = [f"stud-table readers — table {table} via the broker ({connection})"
             f"{f', {ignored} invalid messages ignored' if ignored else ''}   Ctrl-C quits", ""]
    if not statuses:
        lines.append("no reader status yet (is the daemon running for this table?)")
    for reader in sorted(set(statuses) | set(stats), key=_reader_order):
        status, figures = statuses.get(reader), stats.get(reader)
        if status is None:
            lines.append(f"reader {reader}: no status yet")
        elif status.reason is None:
            lines.append(f"reader {reader}: {status.state}")
        else:
            reason = status.reason.replace("_", " ")
            lines.append(f"reader {reader}: {status.state} — {reason}: {status.detail}")
        if status is not None:
            heartbeat = ("no heartbeat yet" if status.last_heartbeat is None else
                         f"heartbeat {max(0.0, now - status.last_heartbeat):.1f} s ago")
            errors = ", ".join(f"{k} {v}" for k, v in status.frame_errors.items() if v)
            lines.append(f"  firmware {status.firmware or '?'}   {heartbeat}"
                         f"   frame errors: {errors or 'none'}")
        if figures is not None:
            # Not online now: the retained figures are what it said last (issue 23).
            stale = status is not None and status.state != "online"
            if stale:
                lines.append("  not online: the figures below are its last ones (stale)")
            lines.append(f"  {'port':>4}  {'zone':<11} {'tags':>4} {'reads/s':>8} {'dropouts':>8}"
                         f"   (figures {max(0.0, now - figures.ts):.0f} s old)")
            for antenna in figures.antennas:
                lines.append(f"  {antenna.port:>4}  {antenna.zone or '(unmapped)':<11}"
                             f" {antenna.tags:>4} {antenna.reads_per_s:>8.1f}"
                             f" {antenna.dropouts:>8}{'  (stale)' if stale else ''}")
        lines.append("")
    return lines


def run_remote_view(
    host: str, port: int, table: str, out: TextIO, *,
    username: str | None = None, password: str | None = None,
    clock: Callable[[], float] = time.time,
) -> int:
    """Follow the table's reader topics on the broker and redraw until Ctrl-C."""
    readers = RemoteReaders(table)
    client = mqtt.Client(CallbackAPIVersion.VERSION2,
                         client_id=f"stud-readers-{uuid.uuid4().hex[:16]}",
                         protocol=MQTTProtocolVersion.MQTTv5)
    if username is not None:
        client.username_pw_set(username, password)

    def on_connect(c: mqtt.Client, _u: object, _f: object, reason: ReasonCode,
                   _p: object) -> None:
        if reason.is_failure:
            readers.connection = f"refused: {reason}"
            return
        readers.connection = "connected"
        c.subscribe([(readers.topics.readers_filter, 1),
                     (readers.topics.reader_stats_filter, 1)])

    def on_disconnect(_c: mqtt.Client, _u: object, _f: object, _r: object, _p: object) -> None:
        readers.connection = "disconnected; retrying"

    def on_connect_fail(_c: mqtt.Client, _u: object) -> None:
        readers.connection = f"cannot reach {host}:{port}; retrying"

    def on_message(_c: mqtt.Client, _u: object, message: mqtt.MQTTMessage) -> None:
        readers.take(message.topic, message.payload)

    client.on_connect = on_connect
    client.on_disconnect = on_disconnect
    client.on_connect_fail = on_connect_fail
    client.on_message = on_message
    client.connect_async(host, port)
    client.loop_start()
    try:
        while True:
            statuses, stats, ignored, connection = readers.copy()
            draw(out, render_remote(table, statuses, stats, now=clock(),
                                    connection=connection, ignored=ignored))
            time.sleep(REDRAW_PERIOD)
    except KeyboardInterrupt:
        return 0
    finally:
        client.disconnect()
        client.loop_stop()
