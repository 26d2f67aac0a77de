"""``stud-table archive``: follow many tables' hands and alerts over MQTT into the archive.

Thin edges around :mod:`.store`:

* **in** (paho's network thread): a QoS 1 subscription, with a persistent session
  (``clean_start`` false, a session expiry), to every table's ``hands`` (or
  ``secure/hands`` for a secure archive), ``alerts`` and ``alerts/changes``, optionally
  as an MQTT 5 shared subscription so several instances split the load. Each message
  is checked (:func:`~.store.parse_item`); a bad one is logged, counted, acknowledged
  (it would come back forever) and changes nothing. A good one goes into a bounded
  queue **unacknowledged**.
* **writer** (one thread): takes up to ``batch`` messages, writes them in one
  transaction, and only then acknowledges them (paho ``manual_ack``). A message is
  therefore acknowledged only once it is in the database: a crash, kill or restart of
  the archive loses nothing (the broker redelivers; the writes are idempotent).
* **database unreachable** (down, restarting, disk full): the writer keeps its batch
  and retries with a growing pause, reporting the state at once (log, and the retained
  status ``stud/v1/_archive/<instance>/status``). Messages keep queueing up to
  ``queue``; the client announces ``queue`` as its MQTT 5 *Receive Maximum*, so the
  broker never sends more unacknowledged messages than the queue holds: past that it
  keeps them (its own queue, ``max_queued_messages`` in Mosquitto) until we acknowledge.
  When the database is back, everything is written, in order, and acknowledged.
"""

from __future__ import annotations

import json
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import paho.mqtt.client as mqtt
import structlog
from paho.mqtt.reasoncodes import ReasonCode
from paho.mqtt.subscribeoptions import SubscribeOptions

from table_controller.archive.config import ArchiveConfig
from table_controller.archive.store import (
    SCHEMA_VERSION,
    ArchiveStore,
    Item,
    Kind,
    RecordError,
    SchemaError,
    parse_item,
    unavailable,
)
from table_controller.mqtt.follower import connect_follower, follower_client, stop_follower
from table_controller.mqtt.topics import ArchiveTopics, shown_name
from table_controller.mqtt.unreachable import BrokerOutage
from table_controller.web.inbound import load_message

log = structlog.get_logger(__name__)

MAX_PAYLOAD: Final = 1024 * 1024
"""Largest message taken: a hand record of 8 seats and its actions is a few KiB."""
RETRY_MIN_S: Final = 0.5
RETRY_MAX_S: Final = 5.0
"""Pause between write attempts while the database is away (doubling up to this)."""


@dataclass(frozen=True, slots=True)
class Pending:
    """A checked message waiting to be written, and how to acknowledge it."""

    item: Item
    mid: int
    qos: int


@dataclass
class Counters:
    """What the instance has done since it started (its status shows them)."""

    hands: int = 0
    duplicates: int = 0
    alerts: int = 0
    refused: int = 0
    failed: int = 0
    held: int = 0
    """Messages that found the queue full (the broker exceeded our receive maximum):
    not acknowledged; the writer reconnects once the queue is empty, and the broker
    sends them again."""


class ArchiveService:
    """One archive instance: MQTT in, a bounded queue, one writer thread, a status."""

    def __init__(self, cfg: ArchiveConfig, store: ArchiveStore | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        """``store``: an open store (tests); default one opened from ``cfg`` (not yet
        migrated: the writer does that, so the service starts with the database down)."""
        self.cfg = cfg
        self.clock = clock
        self.store = store if store is not None else ArchiveStore(
            cfg.url(), secure=cfg.secure, connect_timeout_s=cfg.database.connect_timeout_s,
            migrate=False)
        self.topics = ArchiveTopics(cfg.instance, tuple(cfg.tables), cfg.share_group)
        self.hand_kind = "secure_hand" if cfg.secure else "hand"
        self.queue: queue.Queue[Pending] = queue.Queue(maxsize=cfg.queue)
        self.counters = Counters()
        self.db_ok = False
        self.db_error: str | None = None
        self.fatal: str | None = None
        """Why the writer stopped for good (a schema newer than this program)."""
        self.connected = threading.Event()
        self.stopping = threading.Event()
        self.idle = threading.Event()
        """Set while the queue is empty and nothing is being written (tests, benchmarks)."""
        self._batch: list[Pending] = []
        self._cycling = False
        self._held_pending = 0
        """Messages left with the broker since our last connection (queue full)."""
        self._seq = 0
        self._status_lock = threading.Lock()
        self._last_status: tuple[Any, ...] | None = None
        self._writer = threading.Thread(target=self._write_loop, name="archive-writer",
                                        daemon=True)
        self.outage = BrokerOutage("archive_mqtt_unreachable", cfg.broker.host, cfg.broker.port)
        """Says once, with the reason, that the broker cannot be reached (issue 24)."""
        self.client = self._mqtt_client()

    # ------------------------------------------------------------------ MQTT in

    def _mqtt_client(self) -> mqtt.Client:
        # A stable id per instance: the broker keeps our session (subscriptions and
        # the messages not yet acknowledged) across a restart. The broker's ACL and the
        # archive's credentials keep others from taking the id (docs/archive.md).
        client = follower_client(
            self.cfg.broker, self.cfg.broker.client_id or f"stud-archive-{self.cfg.instance}",
            "archive", self.outage, on_connected=self._on_connect,
            on_lost=self._on_disconnect, on_message=self._on_message, manual_ack=True)
        client.will_set(self.topics.status, self._status_payload("lost", "connection lost"),
                        qos=1, retain=True)
        return client

    def _on_connect(self, client: mqtt.Client, _userdata: object) -> None:
        client.subscribe([(f, SubscribeOptions(qos=1))
                          for f in self.topics.filters(self.cfg.secure)])
        self.connected.set()
        log.info("archive_mqtt_connected", instance=self.cfg.instance,
                 filters=self.topics.filters(self.cfg.secure))
        self._last_status = None  # republish it on every connection
        self.publish_status()

    def _on_disconnect(self, _userdata: object, reason: ReasonCode) -> None:
        self.connected.clear()
        if not self.stopping.is_set() and not self._cycling:
            log.warning("archive_mqtt_disconnected", reason=str(reason))

    def _on_message(self, client: mqtt.Client, _u: object, message: mqtt.MQTTMessage) -> None:
        try:
            pending = self.take(message.topic, bytes(message.payload), message.mid, message.qos)
        except Exception:  # a bad message never takes the service down
            log.exception("archive_take_failed", topic=shown_name(message.topic))
            pending = None
        if pending is None:
            self._ack(client, message.mid, message.qos)  # refused or not ours: done with it
            return
        try:
            self.queue.put_nowait(pending)
        except queue.Full:
            # The broker sent more than our Receive Maximum (Mosquitto 2.0.11 does, in a
            # burst right after acknowledgements): the message stays with the broker,
            # not acknowledged; once the queue has drained, the writer reconnects and
            # the broker sends it again (clean_start false: it resends what we did not
            # acknowledge).
            self.counters.held += 1
            self._held_pending += 1
            if self._held_pending == 1:
                log.warning("archive_queue_full", topic=shown_name(message.topic),
                            queue=self.cfg.queue, held_total=self.counters.held)
            self.publish_status()
            return
        self.idle.clear()

    def take(self, topic: str, raw: bytes, mid: int = 0, qos: int = 0) -> Pending | None:
        """Check one message: the :class:`Pending` write, or ``None`` (refused or not ours;
        a refusal is logged with what and why, and counted)."""
        where = ArchiveTopics.kind(topic)
        if where is None:
            return None
        table, kind = where
        if kind in ("hand", "secure_hand") and kind != self.hand_kind:
            return None  # not this archive's feed (a public archive never takes secure/)
        if self.cfg.tables and table not in self.cfg.tables:
            return None
        try:
            try:
                payload = load_message(raw, MAX_PAYLOAD)
            except ValueError as exc:
                raise RecordError(str(exc)) from None
            store_kind: Kind = "hand" if kind == self.hand_kind else (
                "alert" if kind == "alert" else "change")
            item = parse_item(store_kind, table, payload, secure=self.cfg.secure,
                              now=self.clock())
        except RecordError as exc:
            self.counters.refused += 1
            log.warning("archive_message_refused", topic=shown_name(topic), problem=str(exc),
                        refused=self.counters.refused)
            return None
        return Pending(item, mid, qos)

    def _ack(self, client: mqtt.Client, mid: int, qos: int) -> None:
        if qos > 0:
            # Not connected: the broker redelivers it on reconnection; the write is
            # idempotent, so the copy is counted as a duplicate and nothing more.
            client.ack(mid, qos)

    # ------------------------------------------------------------------ writer

    def _write_loop(self) -> None:
        pause = RETRY_MIN_S
        while not self._migrated():
            if self.fatal is not None or self.stopping.wait(pause):
                return
            pause = min(pause * 2, RETRY_MAX_S)
        last_status = time.monotonic()
        while True:
            if time.monotonic() - last_status >= self.cfg.status_interval_s:
                self.publish_status(force=True)  # the counters, now and then
                last_status = time.monotonic()
            if not self._batch:
                self._fill_batch()
            if not self._batch:
                if self.stopping.is_set():
                    return
                if self._held_pending and self.db_ok:
                    self._fetch_held()
                continue
            if self._write_batch():
                pause = RETRY_MIN_S
                if self.stopping.is_set() and self.queue.empty():
                    return
            elif self.stopping.wait(pause):
                return  # stopping with the database away: the broker keeps the rest
            else:
                pause = min(pause * 2, RETRY_MAX_S)

    def _fetch_held(self) -> None:
        """Reconnect so the broker resends what it sent past our full queue."""
        log.info("archive_fetching_held", held=self._held_pending)
        self._held_pending = 0
        self._cycling = True  # a disconnection we make is no warning
        stop_follower(self.client)
        self._cycling = False
        self._connect()

    def _fill_batch(self) -> None:
        try:
            first = self.queue.get(timeout=min(self.cfg.status_interval_s, 0.5))
        except queue.Empty:
            self.idle.set()
            return
        self._batch.append(first)
        while len(self._batch) < self.cfg.batch:
            try:
                self._batch.append(self.queue.get_nowait())
            except queue.Empty:
                break

    def _migrated(self) -> bool:
        try:
            found = self.store.migrate()
        except SchemaError as exc:
            self.fatal = str(exc)
            log.critical("archive_schema_refused", problem=str(exc))
            self._set_db(False, str(exc))
            return False
        except Exception as exc:
            if not unavailable(exc):
                self.fatal = f"cannot set up the schema: {_short(exc)}"
                log.critical("archive_schema_failed", error=_short(exc))
                self._set_db(False, self.fatal)
                return False
            self._set_db(False, _short(exc))
            return False
        if found < SCHEMA_VERSION:
            log.info("archive_schema_migrated", from_version=found, to_version=SCHEMA_VERSION)
        self._set_db(True, None)
        return True

    def _write_batch(self) -> bool:
        batch = self._batch
        try:
            result = self.store.write([p.item for p in batch])
        except Exception as exc:
            if unavailable(exc):
                self._set_db(False, _short(exc))
                return False
            # One record the database refuses must not hold up the others: write
            # them one by one; a refused one is logged and counted, then acknowledged.
            log.warning("archive_batch_refused", size=len(batch), error=_short(exc))
            for pending in batch:
                try:
                    one = self.store.write([pending.item])
                except Exception as exc_one:
                    if unavailable(exc_one):
                        self._set_db(False, _short(exc_one))
                        return False
                    self.counters.failed += 1
                    log.error("archive_record_failed", kind=pending.item.kind,
                              key=pending.item.key[:120], error=_short(exc_one),
                              failed=self.counters.failed)
                else:
                    self._count(one.hands, one.duplicates, one.alerts)
                self._batch = self._batch[1:]
                self._ack(self.client, pending.mid, pending.qos)
            self._set_db(True, None)
            return True
        self._count(result.hands, result.duplicates, result.alerts)
        for pending in batch:
            self._ack(self.client, pending.mid, pending.qos)
        self._batch = []
        self._set_db(True, None)
        return True

    def _count(self, hands: int, duplicates: int, alerts: int) -> None:
        self.counters.hands += hands
        self.counters.duplicates += duplicates
        self.counters.alerts += alerts

    def _set_db(self, ok: bool, error: str | None) -> None:
        if ok and not self.db_ok:
            if self.db_error is not None:
                log.warning("archive_db_back", queued=self.queued())
        elif not ok and (self.db_ok or self.db_error is None):
            log.error("archive_db_unreachable", error=error, queued=self.queued(),
                      database=self.store.dialect)
        self.db_ok, self.db_error = ok, error
        self.publish_status()

    # ------------------------------------------------------------------ status

    def queued(self) -> int:
        """Messages held, unacknowledged, waiting for the database."""
        return self.queue.qsize() + len(self._batch)

    def state(self) -> tuple[str, str | None]:
        """``(status, reason)``: ``online``, or ``degraded`` and why."""
        if self.fatal is not None:
            return "failed", self.fatal
        if not self.db_ok:
            reason = f"database unreachable: {self.db_error}" if self.db_error else (
                "database not yet reached")
            if self.queued() >= self.cfg.queue:
                reason += "; queue full: the broker holds the rest"
            return "degraded", reason
        return "online", None

    def _status_payload(self, status: str, reason: str | None) -> bytes:
        self._seq += 1
        c = self.counters
        return json.dumps({
            "instance": self.cfg.instance, "status": status, "reason": reason,
            "database": self.store.dialect, "database_ok": self.db_ok,
            "secure": self.cfg.secure, "queued": self.queued(), "queue": self.cfg.queue,
            "hands": c.hands, "duplicates": c.duplicates, "alerts": c.alerts,
            "refused": c.refused, "failed": c.failed, "held": c.held,
            "seq": self._seq, "ts": self.clock()}).encode()

    def publish_status(self, *, force: bool = False) -> None:
        """Publish the retained status if it changed (``force``: anyway, with counters)."""
        with self._status_lock:
            status, reason = self.state()
            key = (status, reason, self.queued() >= self.cfg.queue)
            if not force and key == self._last_status:
                return
            self._last_status = key
            self.client.publish(self.topics.status, self._status_payload(status, reason),
                                qos=1, retain=True)

    # ------------------------------------------------------------------ run

    def start(self) -> None:
        """Connect to the broker and start the writer (returns at once)."""
        self._connect()
        self._writer.start()

    def _connect(self) -> None:
        # The broker should not send more unacknowledged messages than the queue holds
        # (MQTT 5 Receive Maximum); one that still does is handled (``held``).
        connect_follower(self.client, self.cfg.broker,
                         session_expiry_s=self.cfg.session_expiry_s,
                         receive_maximum=self.cfg.queue)

    def wait_idle(self, timeout: float) -> bool:
        """Wait until everything received is written (tests and benchmarks)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.idle.wait(0.05) and self.queued() == 0:
                return True
        return False

    def stop(self, timeout: float = 10.0) -> None:
        """Write what is queued (if the database is there), say ``offline``, disconnect.
        What is not written stays unacknowledged with the broker (the session)."""
        self.stopping.set()
        if self._writer.is_alive():
            self._writer.join(timeout)
        # A fatal stop keeps saying why (retained) rather than a plain "offline"; it may
        # come before the first connection is made, so wait a little for it.
        final = ("failed", self.fatal) if self.fatal is not None else ("offline", None)
        if self.fatal is not None:
            self.connected.wait(min(timeout, 5.0))
        info = self.client.publish(self.topics.status, self._status_payload(*final),
                                   qos=1, retain=True)
        if self.connected.is_set():
            info.wait_for_publish(min(timeout, 5.0))
        stop_follower(self.client)
        self.store.close()


def _short(exc: BaseException) -> str:
    # The driver's first line: what failed, never a DSN's password (psycopg does not
    # print it) nor a statement's parameters (SQLAlchemy adds them on later lines).
    text = str(getattr(exc, "orig", None) or exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:200]


__all__ = ["ArchiveService", "Counters", "Pending"]
