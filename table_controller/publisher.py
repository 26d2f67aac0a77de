"""Publishing the table over MQTT (paho-mqtt 2.x, MQTT 5): the daemon's outbound edge.

Theory of operation
-------------------
Two threads meet here. The daemon's *engine thread* calls the ``publish_*``
methods; paho's *loop thread* (``loop_start``) runs the network and our
callbacks. One re-entrant lock guards everything they share: the connection
flag, the retained set, the alert queue and the sequence stamping. Stamping
``seq`` under that lock at the moment of publishing makes ``seq`` strictly
increase in the order messages are handed to the broker, on every topic.

Lifecycle: :meth:`MqttPublisher.start` registers the will (``lost``, retained)
and calls ``connect_async`` + ``loop_start``; paho retries the first connection
and every later one with exponential backoff (``reconnect_delay_set``), so a
broker that is down at start or goes away later is simply waited for.
After a successful CONNACK we subscribe to ``cmd/#``; when the SUBACK arrives we
go *online*: publish ``online``, republish the retained set (state, secure
state, every reader) with fresh ``seq``/``ts``, then deliver the alerts queued
while offline. Waiting for the SUBACK (instead of doing this in on_connect)
orders our republish after paho's own resend of messages that were in flight
when the link dropped, so a stale retained copy can never land last.

While offline: state and reader updates are kept (the latest per topic) for
the republish; events are dropped and counted (their ``seq`` is still used,
so consumers see the gap and resynchronise from the retained state); alerts go
into a bounded queue, oldest dropped first, and the number dropped is itself
published as an ``alert_queue_overflow`` alert once back online.

Every paho callback is wrapped: an exception is logged and counted and the
loop keeps running (``suppress_exceptions`` is also set as a second net), so
a bug in a handler can never leave the client silently disconnected.
"""

from __future__ import annotations

import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, Protocol, TypeVar

import paho.mqtt.client as mqtt
import structlog
from paho.mqtt.enums import CallbackAPIVersion, MQTTErrorCode, MQTTProtocolVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from paho.mqtt.reasoncodes import ReasonCode
from pydantic import BaseModel

from table_controller.config import BrokerConfig
from table_controller.payloads import (
    AlertPayload,
    DaemonStatus,
    PublicEvent,
    PublicState,
    ReaderStatus,
    SecureEvent,
    SecureState,
    StatusPayload,
    to_json,
)
from table_controller.sequence import SequenceCounter
from table_controller.topics import TableTopics

log = structlog.get_logger(__name__)

QOS: Final = 1
"""Every message is QoS 1: a retained snapshot or an alert lost on a flaky link
would be worse than the one extra PUBACK per message on a local broker."""

DEFAULT_STOP_TIMEOUT: Final = 5.0
"""Seconds :meth:`MqttPublisher.stop` waits for QoS 1 acknowledgements."""

OVERFLOW_CODE: Final = "alert_queue_overflow"
"""Alert code reporting alerts dropped while the broker was unreachable."""

_M = TypeVar("_M", bound=BaseModel)


class Publisher(Protocol):
    """What the daemon needs from its outbound edge (swap in a fake for engine tests).

    Every method is called from the engine thread. ``seq`` and ``ts`` in the
    payloads given are overwritten by the publisher (see the module docstring),
    so build them with any placeholder (``seq=0, ts=0.0``). An event that is
    the same on both streams is passed twice (``publish_event(e, e)``).
    """

    def start(self) -> None:
        """Begin connecting in the background; returns at once."""

    def republish_retained(self) -> None:
        """Republish the retained set (what a ``cmd/rebirth`` request asks for)."""

    def publish_state(self, public: PublicState, secure: SecureState) -> None:
        """Publish (retained) the public and secure snapshots; they share one ``seq``."""

    def publish_event(self, public: PublicEvent, secure: SecureEvent) -> None:
        """Publish one event on the public and secure streams; they share one ``seq``."""

    def publish_alert(self, alert: AlertPayload) -> None:
        """Publish one alert (QoS 1; queued while offline)."""

    def publish_reader(self, status: ReaderStatus) -> None:
        """Publish (retained) one reader's status."""

    def stop(self, timeout: float = DEFAULT_STOP_TIMEOUT) -> None:
        """Publish ``offline``, wait for acknowledgements (bounded), disconnect."""


@dataclass(frozen=True, slots=True)
class CommandRequest:
    """A message received on ``cmd/<name>`` (other than ``rebirth``).

    ``response_topic``/``correlation_data`` are the MQTT 5 request/response
    properties, if the sender set them; answer with :meth:`MqttPublisher.reply`.
    """

    name: str
    payload: bytes
    response_topic: str | None
    correlation_data: bytes | None


@dataclass(frozen=True, slots=True)
class PublisherCounters:
    """Health counters (for the daemon's own status and for tests)."""

    connects: int
    disconnects: int
    callback_errors: int
    events_dropped: int
    alerts_dropped: int
    alerts_queued: int


RebirthHandler = Callable[[], None]
"""Called on the *paho thread* when ``cmd/rebirth`` arrives. It must not touch
engine state: put a request on the engine's queue and return. The engine thread
then calls :meth:`MqttPublisher.republish_retained` (or publishes a fresh state)."""

CommandHandler = Callable[[CommandRequest], None]
"""Called on the *paho thread* for ``cmd/<name>``; same rule: enqueue and return."""


class MqttPublisher:
    """The MQTT implementation of :class:`Publisher` (see the module docstring)."""

    def __init__(
        self,
        table: str,
        broker: BrokerConfig,
        sequence: SequenceCounter,
        *,
        client_id: str | None = None,
        on_rebirth: RebirthHandler | None = None,
        on_command: CommandHandler | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """Prepare the client; nothing touches the network before :meth:`start`.

        Without ``on_rebirth`` the publisher answers ``cmd/rebirth`` itself by
        republishing its retained set (it only touches its own state).
        """
        self.topics = TableTopics(table)
        self._table = table
        self._broker = broker
        self._seq = sequence
        self._clock = clock
        self._on_rebirth = on_rebirth
        self._on_command = on_command
        self._lock = threading.RLock()
        self._online = False
        self._started = False
        self._stopping = False
        self._hand: int | None = None
        self._health: str | None = None
        self._state: tuple[PublicState, SecureState] | None = None
        self._readers: dict[str, ReaderStatus] = {}
        self._alerts: deque[AlertPayload] = deque(maxlen=broker.alert_queue)
        self._pending: deque[mqtt.MQTTMessageInfo] = deque()
        self._subscribe_mid: int | None = None
        self._online_event = threading.Event()
        self._connects = 0
        self._disconnects = 0
        self._callback_errors = 0
        self._events_dropped = 0
        self._alerts_dropped = 0

        self._props = _publish_properties()
        self._props.ContentType = "application/json"
        self._client = mqtt.Client(
            CallbackAPIVersion.VERSION2,
            client_id=client_id or f"stud-table-{table}",
            protocol=MQTTProtocolVersion.MQTTv5,
        )
        # Second net under our own wrappers: paho logs and swallows instead of
        # letting an exception end its loop thread.
        self._client.suppress_exceptions = True
        self._client.reconnect_delay_set(broker.reconnect_min_delay, broker.reconnect_max_delay)
        if broker.username is not None:
            self._client.username_pw_set(broker.username, broker.password)
        if broker.tls is not None:
            tls = broker.tls
            self._client.tls_set(
                ca_certs=str(tls.ca_file) if tls.ca_file else None,
                certfile=str(tls.cert_file) if tls.cert_file else None,
                keyfile=str(tls.key_file) if tls.key_file else None,
            )
            self._client.tls_insecure_set(tls.insecure)
        self._client.on_connect = self._guard("on_connect", self._handle_connect)
        self._client.on_connect_fail = self._guard("on_connect_fail", self._handle_connect_fail)
        self._client.on_disconnect = self._guard("on_disconnect", self._handle_disconnect)
        self._client.on_subscribe = self._guard("on_subscribe", self._handle_subscribe)
        self._client.on_message = self._guard("on_message", self._handle_message)

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        """Register the will and start connecting in the background (returns at once)."""
        with self._lock:
            if self._started:
                raise RuntimeError("publisher already started")
            self._started = True
            self._set_will()
        self._client.connect_async(
            self._broker.host,
            self._broker.port,
            keepalive=self._broker.keepalive,
            clean_start=True,
        )
        self._client.loop_start()
        log.info("mqtt_connecting", host=self._broker.host, port=self._broker.port)

    def wait_online(self, timeout: float) -> bool:
        """Block until online (connected, subscribed, retained set republished) or timeout."""
        return self._online_event.wait(timeout)

    @property
    def online(self) -> bool:
        """True between going online and the next disconnect."""
        with self._lock:
            return self._online

    def counters(self) -> PublisherCounters:
        """A snapshot of the health counters."""
        with self._lock:
            return PublisherCounters(
                connects=self._connects,
                disconnects=self._disconnects,
                callback_errors=self._callback_errors,
                events_dropped=self._events_dropped,
                alerts_dropped=self._alerts_dropped,
                alerts_queued=len(self._alerts),
            )

    def stop(self, timeout: float = DEFAULT_STOP_TIMEOUT, failure: str | None = None) -> None:
        """Publish ``offline`` (retained), wait up to ``timeout`` s for QoS 1 acks, disconnect.

        With ``failure``, the last status is ``failed`` with that reason instead
        (the daemon cannot run). Alerts still queued (broker unreachable) are
        logged as lost.
        """
        with self._lock:
            if not self._started or self._stopping:
                return
            self._stopping = True
            # Connected but not yet online (SUBACK pending) still deserves an
            # explicit "offline": a clean disconnect suppresses the will.
            if self._client.is_connected():
                last = (self._status("offline") if failure is None
                        else self._status("failed", failure))
                self._send(self.topics.status, last, retain=True)
            pending = list(self._pending)
            queued = len(self._alerts)
        deadline = time.monotonic() + timeout
        for info in pending:
            while not _published(info) and time.monotonic() < deadline:
                try:
                    info.wait_for_publish(min(0.1, max(0.0, deadline - time.monotonic())))
                except (ValueError, RuntimeError):
                    break  # never queued or failed: nothing to wait for
        unacked = sum(1 for info in pending if not _published(info))
        if unacked or queued:
            log.warning("mqtt_stop_undelivered", unacknowledged=unacked, alerts_lost=queued)
        self._client.disconnect()
        self._client.loop_stop()
        with self._lock:
            self._online = False
            self._online_event.clear()
        log.info("mqtt_stopped")

    # ------------------------------------------------------------------ publishing

    def publish_state(self, public: PublicState, secure: SecureState) -> None:
        """Publish both snapshots retained (one shared ``seq``); kept for republishing."""
        self._check_table(public.table, secure.table)
        with self._lock:
            self._hand = public.hand
            seq, ts = self._seq.next(), self._clock()
            stamped = (_stamp(public, seq, ts), _stamp(secure, seq, ts))
            self._state = stamped
            if self._online:
                self._send(self.topics.state, stamped[0], retain=True)
                self._send(self.topics.secure_state, stamped[1], retain=True)

    def publish_event(self, public: PublicEvent, secure: SecureEvent) -> None:
        """Publish one event on ``events`` and ``secure/events`` (one shared ``seq``).

        Offline, the event is dropped (and counted); its ``seq`` is used anyway
        so consumers see a gap.
        """
        self._check_table(public.table, secure.table)
        with self._lock:
            seq, ts = self._seq.next(), self._clock()
            if not self._online:
                self._events_dropped += 1
                return
            self._send(self.topics.events, _stamp(public, seq, ts), retain=False)
            self._send(self.topics.secure_events, _stamp(secure, seq, ts), retain=False)

    def publish_alert(self, alert: AlertPayload) -> None:
        """Publish one alert; offline it waits in the bounded queue (stamped now)."""
        self._check_table(alert.table)
        with self._lock:
            stamped = _stamp(alert, self._seq.next(), self._clock())
            if self._online:
                self._send(self.topics.alerts, stamped, retain=False)
                return
            if len(self._alerts) == self._alerts.maxlen:
                self._alerts_dropped += 1  # deque drops the oldest on append
                if self._alerts_dropped == 1:
                    log.warning("mqtt_alert_queue_full", size=self._alerts.maxlen)
            self._alerts.append(stamped)

    def publish_reader(self, status: ReaderStatus) -> None:
        """Publish one reader's status retained; kept for republishing."""
        self._check_table(status.table)
        with self._lock:
            stamped = _stamp(status, self._seq.next(), self._clock())
            self._readers[status.reader] = stamped
            if self._online:
                self._send(self.topics.reader(status.reader), stamped, retain=True)

    def republish_retained(self) -> None:
        """Republish the whole retained set with fresh ``seq``/``ts`` (rebirth). Thread-safe."""
        with self._lock:
            if self._online:
                self._republish_locked()

    def reply(self, request: CommandRequest, payload: bytes) -> bool:
        """Answer an MQTT 5 request on its response topic; False if it had none or offline."""
        if request.response_topic is None:
            return False
        props = _publish_properties()
        props.ContentType = "application/json"
        if request.correlation_data is not None:
            props.CorrelationData = request.correlation_data
        with self._lock:
            if not self._online:
                return False
            info = self._client.publish(request.response_topic, payload, qos=QOS, properties=props)
            self._track(info)
            return info.rc == MQTTErrorCode.MQTT_ERR_SUCCESS

    # ------------------------------------------------------------------ internals (lock held)

    def _check_table(self, *tables: str) -> None:
        for table in tables:
            if table != self._table:
                raise ValueError(
                    f"payload for table {table!r} given to the publisher of {self._table!r}"
                )

    def _status(self, status: DaemonStatus, reason: str | None = None) -> StatusPayload:
        return StatusPayload(
            table=self._table, hand=self._hand, seq=self._seq.next(), ts=self._clock(),
            status=status, reason=reason,
        )

    def set_health(self, problem: str | None) -> None:
        """Publish ``status`` as ``degraded`` with ``problem`` (None: ``online`` again).

        Kept, so a reconnect announces the same health instead of ``online``.
        """
        with self._lock:
            if problem == self._health:
                return
            self._health = problem
            if self._online:
                self._send(self.topics.status, self._live_status(), retain=True)

    def _live_status(self) -> StatusPayload:
        if self._health is None:
            return self._status("online")
        return self._status("degraded", self._health)

    def _set_will(self) -> None:
        # The will is registered per connection, so refresh it before each
        # (re)connect: its seq/ts/hand are then those of the latest attempt.
        self._client.will_set(
            self.topics.status, to_json(self._status("lost")), qos=QOS, retain=True
        )

    def _send(self, topic: str, payload: BaseModel, *, retain: bool) -> None:
        info = self._client.publish(
            topic, to_json(payload), qos=QOS, retain=retain, properties=self._props
        )
        if info.rc not in (MQTTErrorCode.MQTT_ERR_SUCCESS, MQTTErrorCode.MQTT_ERR_NO_CONN):
            # NO_CONN: paho keeps QoS 1 messages and resends them on reconnect.
            log.error("mqtt_publish_failed", topic=topic, rc=mqtt.error_string(info.rc))
        self._track(info)

    def _track(self, info: mqtt.MQTTMessageInfo) -> None:
        # Remember unacknowledged QoS 1 messages so stop() can wait for them;
        # prune acknowledged ones from the front to keep this small.
        self._pending.append(info)
        while self._pending and _published(self._pending[0]):
            self._pending.popleft()

    def _republish_locked(self) -> None:
        if self._state is not None:
            seq, ts = self._seq.next(), self._clock()
            public = _stamp(self._state[0], seq, ts)
            secure = _stamp(self._state[1], seq, ts)
            self._state = (public, secure)
            self._send(self.topics.state, public, retain=True)
            self._send(self.topics.secure_state, secure, retain=True)
        for reader_id, status in list(self._readers.items()):
            fresh = _stamp(status, self._seq.next(), self._clock())
            self._readers[reader_id] = fresh
            self._send(self.topics.reader(reader_id), fresh, retain=True)

    def _go_online(self) -> None:
        with self._lock:
            if self._stopping:
                return
            self._online = True
            self._send(self.topics.status, self._live_status(), retain=True)
            self._republish_locked()
            queued = len(self._alerts)
            while self._alerts:
                self._send(self.topics.alerts, self._alerts.popleft(), retain=False)
            if self._alerts_dropped:
                dropped, self._alerts_dropped = self._alerts_dropped, 0
                overflow = AlertPayload(
                    table=self._table, hand=self._hand, seq=self._seq.next(), ts=self._clock(),
                    code=OVERFLOW_CODE,
                    message=f"{dropped} alert(s) dropped while the broker was unreachable"
                    f" (queue holds {self._alerts.maxlen}); see the retained state for open alerts",
                )
                self._send(self.topics.alerts, overflow, retain=False)
                log.error("mqtt_alerts_dropped", dropped=dropped)
            self._online_event.set()
        log.info("mqtt_online", alerts_delivered=queued)

    # ------------------------------------------------------------ paho callbacks (loop thread)

    def _guard(self, name: str, handler: Callable[..., None]) -> Callable[..., None]:
        def guarded(*args: Any) -> None:
            try:
                handler(*args)
            except Exception:
                with self._lock:
                    self._callback_errors += 1
                log.exception("mqtt_callback_failed", callback=name)

        return guarded

    def _handle_connect(
        self,
        client: mqtt.Client,
        _userdata: object,
        _flags: mqtt.ConnectFlags,
        reason: ReasonCode,
        _props: Properties | None,
    ) -> None:
        if reason.is_failure:
            log.error("mqtt_connect_refused", reason=str(reason))
            return
        with self._lock:
            self._connects += 1
        sock = client.socket()
        if isinstance(sock, socket.socket) and sock.family in (socket.AF_INET, socket.AF_INET6):
            # Small messages must not wait for Nagle + delayed ACK (about 40 ms each).
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        result, mid = client.subscribe(self.topics.cmd_filter, qos=QOS)
        with self._lock:
            self._subscribe_mid = mid
        if result != MQTTErrorCode.MQTT_ERR_SUCCESS:
            log.error("mqtt_subscribe_failed", rc=mqtt.error_string(result))

    def _handle_subscribe(
        self,
        _client: mqtt.Client,
        _userdata: object,
        mid: int,
        reasons: list[ReasonCode],
        _props: Properties | None,
    ) -> None:
        with self._lock:
            if mid != self._subscribe_mid:
                return
        if any(r.is_failure for r in reasons):
            # Publishing still works; only commands (rebirth) will not reach us.
            log.error("mqtt_command_subscribe_refused", reasons=[str(r) for r in reasons])
        self._go_online()

    def _handle_connect_fail(self, _client: mqtt.Client, _userdata: object) -> None:
        log.warning("mqtt_connect_failed", host=self._broker.host, port=self._broker.port)

    def _handle_disconnect(
        self,
        _client: mqtt.Client,
        _userdata: object,
        _flags: mqtt.DisconnectFlags,
        reason: ReasonCode,
        _props: Properties | None,
    ) -> None:
        with self._lock:
            was_online = self._online
            self._online = False
            self._online_event.clear()
            self._disconnects += 1
            if not self._stopping:
                self._set_will()
        if not self._stopping:
            log.warning("mqtt_disconnected", reason=str(reason), was_online=was_online)

    def _handle_message(
        self, _client: mqtt.Client, _userdata: object, message: mqtt.MQTTMessage
    ) -> None:
        name = self.topics.command_name(message.topic)
        if name is None:
            return
        if name == "rebirth":
            log.info("mqtt_rebirth_requested")
            if self._on_rebirth is not None:
                self._on_rebirth()
            else:
                self.republish_retained()
            return
        props = message.properties
        request = CommandRequest(
            name=name,
            payload=bytes(message.payload),
            response_topic=getattr(props, "ResponseTopic", None),
            correlation_data=getattr(props, "CorrelationData", None),
        )
        if self._on_command is None:
            log.warning("mqtt_unknown_command", command=name)
            return
        self._on_command(request)


def _publish_properties() -> Properties:
    # paho's Properties constructor is untyped; confine the ignore to here.
    return Properties(PacketTypes.PUBLISH)  # type: ignore[no-untyped-call]


def _stamp(payload: _M, seq: int, ts: float) -> _M:
    return payload.model_copy(update={"seq": seq, "ts": ts})


def _published(info: mqtt.MQTTMessageInfo) -> bool:
    try:
        return info.is_published()
    except (ValueError, RuntimeError):
        return True  # never queued (queue full / error): nothing to wait for
