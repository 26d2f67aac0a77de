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
the republish; events and notices are kept in order (up to
:data:`OFFLINE_EVENT_LIMIT`, then dropped and counted: their ``seq`` is still
used, so consumers see the gap and resynchronise from the retained state) and
sent *before* the republished state once back, so a short cut loses none;
alerts go into a bounded queue, oldest dropped first, sent after the
republish, and the number dropped is itself published as an
``alert_queue_overflow`` alert once back online.

Every paho callback is wrapped: an exception is logged and counted and the
loop keeps running (``suppress_exceptions`` is also set as a second net), so
a bug in a handler can never leave the client silently disconnected.

Hostile clients (docs/mqtt.md "Hostile clients")
------------------------------------------------
Anything on ``cmd/#`` comes from other clients and is treated as untrusted:

* commands are subscribed with *retain as published* and *no local*: a message
  that was published retained is ignored (commands are not state) and cleared
  with an empty retained message, so it cannot re-run at every (re)connect;
* ``cmd/rebirth`` requests coalesce: while one is pending, more are counted
  and dropped, and the retained set is republished at most once per
  :data:`REBIRTH_MIN_INTERVAL` and only while the outgoing queue is short
  (:data:`BULK_LIMIT`), so live events and alerts go first;
* console commands are handed over only while fewer than the handler allows
  are waiting; a refused one is answered ``busy`` (docs/console.md);
* a reply goes only to the table's own ``reply/<client>`` (``TableTopics.reply_problem``).

The outgoing queue (messages handed to paho, not yet acknowledged by the
broker) is counted from paho's ``on_publish``. Past :data:`BACKLOG_HIGH` the
publisher is *backlogged*: it logs ``mqtt_outgoing_backlog``, raises an
``mqtt_backlog`` alert (it arrives behind the backlog) and defers republishing;
live messages are still queued, never dropped; console replies past
:data:`REPLY_LIMIT` are shed (counted, logged). Below :data:`BACKLOG_LOW` it
logs ``mqtt_outgoing_backlog_cleared``.

Each ``publish()`` wakes paho's network thread through a socketpair, and each
wake-up hands the GIL over: the daemon's loop therefore corks every input it
handles (:meth:`MqttPublisher.corked`), so paho's thread is woken once right after
a card's event (or an alert) and once at the end, not once per message. After the
event's wake-up the engine thread sleeps :data:`EVENT_HANDOFF_S`: the GIL goes to
paho's thread, which writes the event before the state is projected.

Console replies wait in a lane of their own (:data:`REPLY_WINDOW`,
:data:`REPLY_LIMIT`): a card event or an alert never waits behind more than a
few of them. The client id is unguessable by default
(``stud-table-<table>-<random>``), drawn afresh at every reconnect and logged
at debug only; a disconnect because another client took the id over (MQTT 5
reason 0x8E, or a socket the broker closed and reopened to us at once: what
Mosquitto 2.0 does), or repeated disconnects (:data:`UNSTABLE_COUNT` within
:data:`UNSTABLE_WINDOW`), are logged at once and alerted once reconnected.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any, Final, Literal, Protocol, TypeVar

import paho.mqtt.client as mqtt
import structlog
from paho.mqtt.enums import CallbackAPIVersion, MQTTErrorCode, MQTTProtocolVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from paho.mqtt.reasoncodes import ReasonCode
from paho.mqtt.subscribeoptions import SubscribeOptions
from pydantic import BaseModel

from table_controller.domain.engine.alerts import AlertCode, alert_severity
from table_controller.domain.engine.outputs import ReplyCode
from table_controller.mqtt.broker_config import BrokerConfig, configure_client, connect_properties
from table_controller.mqtt.log_quota import LogQuota, log_limited
from table_controller.mqtt.payloads import (
    AlertChangePayload,
    AlertPayload,
    ClaimPayload,
    ConsoleReply,
    DaemonStatus,
    DealerPayload,
    NoticePayload,
    OpenAlertsPayload,
    PublicEvent,
    PublicHandRecord,
    PublicState,
    ReaderStats,
    ReaderStatus,
    SecureEvent,
    SecureHandRecord,
    SecureState,
    StatusPayload,
    to_json,
)
from table_controller.mqtt.sequence import SequenceCounter
from table_controller.mqtt.topics import TableTopics, shown_name
from table_controller.mqtt.unreachable import ConnectFailures, connect_failure_reason

log = structlog.get_logger(__name__)

QOS: Final = 1
"""Every message is QoS 1: a retained snapshot or an alert lost on a flaky link
would be worse than the one extra PUBACK per message on a local broker."""

DEFAULT_STOP_TIMEOUT: Final = 5.0
"""Seconds :meth:`MqttPublisher.stop` waits for QoS 1 acknowledgements."""

OVERFLOW_CODE: Final = AlertCode.ALERT_QUEUE_OVERFLOW
"""Alert code reporting alerts dropped while the broker was unreachable."""

BACKLOG_CODE: Final = AlertCode.MQTT_BACKLOG
"""Alert code: the outgoing queue passed :data:`BACKLOG_HIGH` (the feed is late)."""

TAKEOVER_CODE: Final = AlertCode.MQTT_SESSION_TAKEN_OVER
"""Alert code: another client connected with the daemon's client id."""

UNSTABLE_CODE: Final = AlertCode.MQTT_LINK_UNSTABLE
"""Alert code: the daemon could not stay connected to the broker."""

REBIRTH_MIN_INTERVAL: Final = 1.0
"""Seconds between two republishes of the retained set. A rebirth answers a
consumer that lost track; one per second serves any number of them, while
republishing on every request let 20,000 requests delay a card by 11 s."""

BULK_LIMIT: Final = 100
"""Outgoing messages (unacknowledged) above which a republish waits and a
``busy`` refusal goes unanswered: live events and alerts go first."""

REPLY_LIMIT: Final = 250
"""Console replies that may wait in the reply lane; past it a reply is not sent
(counted and logged as shed): replies are the one output a client can make the
daemon produce at will, so under a flood they give way to the live stream and
memory. A console that gets no answer may retry with the same correlation
data; the daemon then answers from memory without applying it twice."""

REPLY_WINDOW: Final = 10
"""Unacknowledged outgoing messages at or above which a console reply waits in
the reply lane instead of going to paho: a card event or an alert never waits
behind more than this many replies (paho sends its messages in order). The
lane is emptied as the broker acknowledges (``on_publish``)."""

OUT_WINDOW: Final = 1000
"""The most of our QoS 1 messages in flight (sent, not yet acknowledged) that we ask
for; the broker's MQTT 5 Receive Maximum in its CONNACK lowers it (Mosquitto announces
its ``max_inflight_messages``, 20 unless set; deploy/mosquitto.conf sets 1000). paho's
own default, 20, made card events wait in paho behind unacknowledged messages while a
console flood delayed the broker's acknowledgements (issue 20: p99 1.9-5.9 s from a
card's frame to the subscriber; with the window 1000, 0.5 s)."""
RECEIVE_MAXIMUM: Final = 20
"""The most unacknowledged QoS 1 messages (console commands) the broker may send us at
once (our MQTT 5 Receive Maximum): the rest of a flood waits, or is dropped, at the
broker, not in our socket."""
BACKLOG_HIGH: Final = 2000
"""Unacknowledged outgoing messages at which the publisher reports a backlog."""

BACKLOG_LOW: Final = 100
"""Unacknowledged outgoing messages below which a backlog is over."""

UNSTABLE_COUNT: Final = 3
"""Disconnects within :data:`UNSTABLE_WINDOW` that make the link *unstable*."""

UNSTABLE_WINDOW: Final = 60.0
"""Seconds over which disconnects are counted; also the least time between two
``mqtt_link_unstable`` alerts (a flapping link must not flood the floor)."""

BUSY_CODE: Final = ReplyCode.BUSY
"""Reply code of a console command refused because too many are waiting."""

_TAKEN_OVER: Final = 0x8E
"""MQTT 5 DISCONNECT reason *Session taken over*: another client used our id."""

_NOT_AUTHORISED: Final = frozenset({0x86, 0x87})
"""MQTT 5 CONNACK *Bad user name or password* and *Not authorized* (paho maps the
MQTT 3.1.1 return codes 4 and 5 onto these)."""

_CONNECTION_CLOSED: Final = 0x80
"""The reason paho gives when the broker closed the socket without a DISCONNECT:
what Mosquitto 2.0 does to a client whose id another client took."""

OFFLINE_EVENT_LIMIT: Final = 1000
"""Events (and notices) kept while the broker is unreachable, sent in order before
the republished state once back: a short cut (a client-id takeover, a broker
restart) loses none. Past it they are dropped and counted; their ``seq`` gap
tells consumers to resynchronise from the retained state."""

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

    def publish_notice(self, public: NoticePayload | None, secure: NoticePayload) -> None:
        """Publish a notice on ``secure/notices`` and, unless ``public`` is ``None``
        (computed from down cards), on ``notices``; they share one ``seq``."""

    def publish_reader(self, status: ReaderStatus) -> None:
        """Publish (retained) one reader's status."""

    def publish_reader_stats(self, stats: ReaderStats) -> None:
        """Publish one reader's periodic figures (not retained; skipped while offline)."""

    def stop(self, timeout: float = DEFAULT_STOP_TIMEOUT) -> None:
        """Publish ``offline``, wait for acknowledgements (bounded), disconnect."""


class PublisherState(Enum):
    """Where the publisher's connection is (see the module docstring's lifecycle)::

        NEW --start--> CONNECTING --CONNACK--> SUBSCRIBING --SUBACK--> ONLINE
                          ^   ^______________________|                  |
                          |____________________disconnect_______________|
        any --stop--> STOPPING --disconnected--> STOPPED
    """

    NEW = "new"
    CONNECTING = "connecting"
    SUBSCRIBING = "subscribing"
    """Connected, waiting for the SUBACK of ``cmd/#`` before going online."""
    ONLINE = "online"
    STOPPING = "stopping"
    STOPPED = "stopped"


_ENDED: Final = frozenset({PublisherState.STOPPING, PublisherState.STOPPED})


@dataclass(slots=True)
class _LinkTrouble:
    """What the publisher knows of its link's trouble, until it is reported (lock held)."""

    disconnect_times: deque[float] = field(default_factory=lambda: deque(maxlen=UNSTABLE_COUNT))
    unstable_pending: str | None = None
    """Why the link is unstable, to alert once back online (None: nothing to say)."""
    last_unstable_alert: float = -UNSTABLE_WINDOW
    takeovers_unreported: int = 0
    """DISCONNECT 0x8E received since the last takeover alert."""
    suspect_takeover: bool = False
    """A socket the broker closed; a takeover if the first reconnect succeeds."""
    last_takeover_alert: float = -UNSTABLE_WINDOW
    connect_failures: ConnectFailures = field(
        default_factory=lambda: ConnectFailures("mqtt_connect_failed"))
    """What to log of failed (re)connects: the first at once, then summaries (issue 24)."""


@dataclass(slots=True)
class _AckCounts:
    """The outgoing queue's counters, under their own lock (paho's thread counts acks).

    A lock of its own: paho calls on_publish holding its message mutex, which the
    engine thread takes (in publish) while holding the publisher's lock; taking
    that lock there would deadlock."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    sent: int = 0
    """QoS 1 messages handed to paho."""
    acked: int = 0
    """Of those, acknowledged by the broker (``on_publish``)."""
    peak: int = 0
    """The most ever waiting for an acknowledgement."""
    replies_failed: int = 0
    """Replies paho refused (a second net under ``reply_problem``)."""


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

    @property
    def shown_name(self) -> str:
        """The command name cut for quoting (a hostile one may be 65,535 bytes)."""
        return shown_name(self.name)


@dataclass(slots=True)
class PublisherCounters:
    """Health counters (for the daemon's own status and for tests). The publisher
    keeps one, updated under its lock; :meth:`MqttPublisher.counters` hands out a copy."""

    connects: int = 0
    disconnects: int = 0
    callback_errors: int = 0
    events_dropped: int = 0
    alerts_dropped: int = 0
    alerts_queued: int = 0
    outgoing: int = 0
    """Messages handed to paho and not yet acknowledged by the broker."""
    outgoing_peak: int = 0
    backlogged: bool = False
    backlog_episodes: int = 0
    rebirths_requested: int = 0
    rebirths_coalesced: int = 0
    republishes: int = 0
    retained_commands_ignored: int = 0
    commands_refused_busy: int = 0
    replies_refused: int = 0
    replies_shed: int = 0
    """Console replies not sent because the outgoing queue was too long."""
    takeovers: int = 0


RebirthHandler = Callable[[], None]
"""Called on the *paho thread* when ``cmd/rebirth`` arrives. It must not touch
engine state: put a request on the engine's queue and return. The engine thread
then calls :meth:`MqttPublisher.republish_retained` (or publishes a fresh state)."""

CommandHandler = Callable[[CommandRequest], bool | None]
"""Called on the *paho thread* for ``cmd/<name>``; same rule: enqueue and return.
Return ``False`` to refuse the command (too many waiting): the publisher answers
it ``busy``."""


CLAIM_PROBE_WAIT: Final = 1.0
"""Seconds a starting daemon waits for a live daemon of its table to answer its probe
on ``secure/claim`` before it goes online (issue 21 item 6)."""


@dataclass(frozen=True, slots=True)
class ClaimNews:
    """Another daemon publishes as this table (issue 21 item 6). ``kind``: ``refused``
    (it answered this one's probe: this one must not run), ``probe`` (a starting one
    asked: it refuses to run on this answer), ``claim`` (it is live and publishing)."""

    kind: Literal["refused", "probe", "claim"]
    other: ClaimPayload

    def who(self) -> str:
        """The other daemon, for a log line or an alert."""
        since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.other.since))
        return (f"instance {self.other.instance}, pid {self.other.pid} on {self.other.host}"
                f" since {since}")


EVENT_HANDOFF_S: Final = 0.0002
"""How long the engine thread sleeps after waking paho's thread for a card's event or
an alert, so that thread writes it at once (see :meth:`MqttPublisher._wake_now`)."""
_handoff_sleep: Callable[[float], None] = time.sleep
"""The hand-over's sleep (a name of its own, so a test can watch it)."""


class _Wake:
    """Stands in for paho's wake-up socket (the write end of the socketpair its network
    thread selects on): while :meth:`MqttPublisher.corked`, a publish does not wake
    that thread at once; one wake-up follows at the end (see :meth:`~MqttPublisher.corked`).
    paho only calls ``send`` and ``close`` on it."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self._lock = threading.Lock()
        self.corked = False
        self.owed = False

    def send(self, data: bytes) -> int:
        """paho's wake-up: sent now, or owed until uncorked."""
        with self._lock:  # another thread's publish must not lose its wake-up
            if self.corked:
                self.owed = True
                return len(data)
        return self.sock.send(data)

    def close(self) -> None:
        """paho closes its socketpair (reconnect, stop)."""
        self.sock.close()

    def flush(self) -> bool:
        """The wake-up owed so far, now (the batch stays corked); True if one was sent."""
        with self._lock:
            owed, self.owed = self.owed, False
        if not owed:
            return False
        try:
            self.sock.send(b"0")
        except OSError:
            return False  # paho closed it meanwhile (reconnect): nobody to hand over to
        return True

    def uncork(self) -> None:
        """End the batch: the one wake-up owed, if any."""
        with self._lock:
            self.corked, owed, self.owed = False, self.owed, False
        if owed:
            with contextlib.suppress(OSError):  # paho closed it meanwhile (reconnect)
                self.sock.send(b"0")


@dataclass(frozen=True, slots=True)
class _Wiring:
    """What the publisher was given: its table, broker, collaborators and fixed settings."""

    table: str
    broker: BrokerConfig
    seq: SequenceCounter
    clock: Callable[[], float]
    on_rebirth: RebirthHandler | None
    on_command: CommandHandler | None
    alert_ids: Callable[[], str] | None
    on_alert: Callable[[AlertPayload], None] | None
    on_claim: Callable[[ClaimNews], None] | None
    claim_wait: float
    fixed_id: bool
    """A configured client id: kept at reconnects (else a fresh random one)."""
    props: Properties
    """The properties every JSON message goes with (packed once)."""


@dataclass(slots=True)
class _Claiming:
    """This daemon's claim on its table against other daemons (issue 21 item 6; lock held)."""

    since: float
    probing: bool = False
    """The probe is out; going online waits for its answer (or :data:`CLAIM_PROBE_WAIT`)."""
    probe_timer: threading.Timer | None = None
    been_online: bool = False
    refused: bool = False
    """Another daemon answered the probe: this one must not go online."""
    others: set[tuple[str, str]] = field(default_factory=set)
    """(kind, instance) of the other daemons already reported."""


@dataclass(slots=True)
class _Link:
    """Where the connection is and what it went through (lock held)."""

    life: PublisherState = PublisherState.NEW
    subscribe_mid: int | None = None
    """The SUBSCRIBE whose SUBACK takes the publisher online."""
    online_event: threading.Event = field(default_factory=threading.Event)
    trouble: _LinkTrouble = field(default_factory=_LinkTrouble)


@dataclass(slots=True)
class _Retained:
    """The latest of each retained message, for the republish (lock held)."""

    hand: int | None = None
    health: str | None = None
    """The ``degraded`` reason (None: ``online``), kept so a reconnect says the same."""
    state: tuple[PublicState, SecureState] | None = None
    readers: dict[str, ReaderStatus] = field(default_factory=dict)
    open_alerts: OpenAlertsPayload | None = None
    dealer: DealerPayload | None = None


@dataclass(slots=True)
class _Outgoing:
    """What waits to go out, and the backlog of what went out unacknowledged (lock held)."""

    alerts: deque[tuple[tuple[str, BaseModel], ...]]
    """Alerts, alert changes and hand records kept while offline (the floor and the
    archive must get them); oldest dropped first, counted. A hand record's two
    messages are one entry (they share one seq)."""
    offline_events: deque[tuple[tuple[str, BaseModel], ...]] = field(default_factory=deque)
    """Events and notices published while offline, unstamped (:data:`OFFLINE_EVENT_LIMIT`)."""
    pending: deque[mqtt.MQTTMessageInfo] = field(default_factory=deque)
    """Messages handed to paho, for :meth:`MqttPublisher.stop` to wait on."""
    backlogged: bool = False
    backlog_since: float = 0.0


@dataclass(slots=True)
class _ReplyLane:
    """Console replies waiting for room in the outgoing window (:data:`REPLY_WINDOW`).

    A lock of its own, never held while publishing: the lane is emptied from
    on_publish too, where paho holds its message mutex (see :class:`_AckCounts`)."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    queue: deque[tuple[str, bytes, Properties]] = field(default_factory=deque)
    pumping: bool = False
    """One thread hands replies to paho at a time (in order)."""


@dataclass(slots=True)
class _Rebirth:
    """Coalescing of ``cmd/rebirth`` republishes (:data:`REBIRTH_MIN_INTERVAL`; lock held)."""

    pending: bool = False
    timer: threading.Timer | None = None
    last_republish: float = -REBIRTH_MIN_INTERVAL


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
        alert_ids: Callable[[], str] | None = None,
        on_alert: Callable[[AlertPayload], None] | None = None,
        log_quota: LogQuota | None = None,
        on_claim: Callable[[ClaimNews], None] | None = None,
        claim_wait: float = CLAIM_PROBE_WAIT,
    ) -> None:
        """Prepare the client; nothing touches the network before :meth:`start`.

        Without ``on_rebirth`` the publisher answers ``cmd/rebirth`` itself by
        republishing its retained set (it only touches its own state). Without
        ``client_id`` the id is ``stud-table-<table>-<128 random bits>``: any
        client that connects with the daemon's id knocks it off the broker, and
        Mosquitto 2.0 cannot reserve an id for a user (docs/mqtt.md).

        ``alert_ids`` hands out the table's alert ids (issue 14; shared with the
        daemon's core so that the ids of the alerts raised here cannot collide);
        without it an alert raised here is ``<table>:<its seq>``. ``on_alert`` is
        told of every alert raised here (backlog, overflow, link trouble), so the
        daemon adds it to the open set. ``log_quota`` limits the log lines other
        clients can cause (retained commands, refused replies, ``busy``, shed replies):
        shared with the daemon's core, which writes the summaries.
        """
        self.topics = TableTopics(table)
        self._wire = _Wiring(
            table=table, broker=broker, seq=sequence, clock=clock, on_rebirth=on_rebirth,
            on_command=on_command, alert_ids=alert_ids, on_alert=on_alert,
            on_claim=on_claim, claim_wait=claim_wait, fixed_id=client_id is not None,
            props=_json_properties())
        self.log_quota = log_quota or LogQuota()
        self.instance = secrets.token_hex(8)
        """This process's id on ``secure/claim`` (issue 21 item 6)."""
        self._claiming = _Claiming(since=clock())
        # One re-entrant lock for everything the engine and paho threads share
        # (the module docstring); the ack counters and the reply lane have their own.
        self._lock = threading.RLock()
        self._link = _Link()
        self._counts = PublisherCounters()
        """The counters (the queue figures are filled in by :meth:`counters`)."""
        self._retained = _Retained()
        self._out = _Outgoing(alerts=deque(maxlen=broker.alert_queue))
        self._reply_lane = _ReplyLane()
        self._acks = _AckCounts()
        self._rebirth = _Rebirth()
        self.client_id = client_id or _fresh_client_id(table)
        """The id of the current (or next) connection: a new random one at every
        reconnect unless configured (docs/mqtt.md "Client id"); never logged at info."""
        self._client = self._make_client(broker)

    def _make_client(self, broker: BrokerConfig) -> mqtt.Client:
        """The paho client, every callback wrapped (see the module docstring)."""
        client = mqtt.Client(
            CallbackAPIVersion.VERSION2,
            client_id=self.client_id,
            protocol=MQTTProtocolVersion.MQTTv5,
        )
        # Second net under our own wrappers: paho logs and swallows instead of
        # letting an exception end its loop thread.
        configure_client(client, broker)
        client.on_connect = self._guard("on_connect", self._handle_connect)
        client.on_connect_fail = self._guard("on_connect_fail", self._handle_connect_fail)
        client.on_disconnect = self._guard("on_disconnect", self._handle_disconnect)
        client.on_subscribe = self._guard("on_subscribe", self._handle_subscribe)
        client.on_message = self._guard("on_message", self._handle_message)
        client.on_publish = self._guard("on_publish", self._handle_publish)
        return client

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        """Register the will and start connecting in the background (returns at once)."""
        with self._lock:
            if self._link.life is not PublisherState.NEW:
                raise RuntimeError("publisher already started")
            self._link.life = PublisherState.CONNECTING
            self._set_will()
        self._client.connect_async(
            self._wire.broker.host,
            self._wire.broker.port,
            keepalive=self._wire.broker.keepalive,
            clean_start=True,
            properties=connect_properties(receive_maximum=RECEIVE_MAXIMUM),
        )
        self._client.loop_start()
        log.info("mqtt_connecting", host=self._wire.broker.host, port=self._wire.broker.port)

    @contextlib.contextmanager
    def corked(self) -> Iterator[None]:
        """Hand the messages published inside to paho with one wake-up of its network
        thread instead of one per message (issue 20, per-card cost: each wake-up hands
        the GIL over and waits for it back, 23% of the engine thread's time for a
        card's four messages). The daemon's loop corks each input it handles; paho's
        own thread needs no wake-up for what it queues itself. paho's wake-up socket
        is not public API: if it is not there (not started, or a paho without it),
        nothing is corked."""
        client: Any = self._client
        wake = client._sockpairW
        if wake is None:
            yield
            return
        if not isinstance(wake, _Wake):
            wake = _Wake(wake)  # paho makes a new pair at every loop_start
            client._sockpairW = wake
        wake.corked = True
        try:
            yield
        finally:
            wake.uncork()

    def _wake_now(self) -> None:
        """Inside :meth:`corked`: wake paho's thread for what is queued so far (a card's
        event must not wait for the projection of the state that follows it)."""
        wake = getattr(self._client, "_sockpairW", None)
        if isinstance(wake, _Wake) and wake.flush():
            # Step aside so that paho's thread takes the GIL and writes the message
            # now; otherwise it waits for the switch interval while this thread
            # projects the state (issue 20: the event 0.3-1 ms sooner at the median).
            _handoff_sleep(EVENT_HANDOFF_S)

    def wait_online(self, timeout: float) -> bool:
        """Block until online (connected, subscribed, retained set republished) or timeout."""
        return self._link.online_event.wait(timeout)

    @property
    def in_flight_window(self) -> int:
        """Our QoS 1 messages in flight at most on this connection (:func:`out_window`
        of the broker's Receive Maximum; paho's default, 20, before the first CONNACK)."""
        return self._client.max_inflight_messages

    @property
    def online(self) -> bool:
        """True between going online and the next disconnect."""
        with self._lock:
            return self._link.life is PublisherState.ONLINE

    @property
    def lifecycle(self) -> PublisherState:
        """Where the connection is (:class:`PublisherState`)."""
        with self._lock:
            return self._link.life

    def counters(self) -> PublisherCounters:
        """A snapshot of the health counters."""
        with self._lock:
            with self._acks.lock:
                outgoing, peak = self._acks.sent - self._acks.acked, self._acks.peak
                failed = self._acks.replies_failed
            counts = self._counts
            return replace(counts, alerts_queued=len(self._out.alerts), outgoing=outgoing,
                           outgoing_peak=peak, backlogged=self._out.backlogged,
                           replies_refused=counts.replies_refused + failed)

    @property
    def outgoing(self) -> int:
        """Messages handed to paho and not yet acknowledged by the broker."""
        with self._acks.lock:
            return self._acks.sent - self._acks.acked

    def stop(
        self, timeout: float = DEFAULT_STOP_TIMEOUT, *,
        status: Literal["offline", "lost"] = "offline",
        failure: str | None = None,
        announce: bool = True,
    ) -> None:
        """Publish ``status`` (retained), wait up to ``timeout`` s for QoS 1 acks, disconnect.

        ``offline`` is a clean stop; ``lost`` is for a daemon that is going down
        on an error (a clean disconnect suppresses the will, so it is published
        explicitly): consumers must not take a crash for a planned stop. With
        ``failure``, the last status is ``failed`` with that reason instead (the
        daemon cannot run). Alerts still queued (broker unreachable) are logged as lost.
        ``announce=False``: no status at all (a daemon refused because another one
        publishes as its table must not overwrite that one's status).
        """
        with self._lock:
            if self._link.life is PublisherState.NEW or self._link.life in _ENDED:
                return
            self._link.life = PublisherState.STOPPING
            if self._rebirth.timer is not None:
                self._rebirth.timer.cancel()
            if self._claiming.probe_timer is not None:
                self._claiming.probe_timer.cancel()
            # Connected but not yet online (SUBACK pending) still deserves an
            # explicit "offline": a clean disconnect suppresses the will.
            if self._client.is_connected() and announce:
                last = (self._status(status) if failure is None
                        else self._status("failed", failure))
                self._send(self.topics.status, last, retain=True)
            pending = list(self._out.pending)
            queued = len(self._out.alerts)
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
            self._link.life = PublisherState.STOPPED
            self._link.online_event.clear()
        log.info("mqtt_stopped")

    # ------------------------------------------------------------------ publishing

    def publish_state(self, public: PublicState, secure: SecureState) -> None:
        """Publish both snapshots retained (one shared ``seq``); kept for republishing."""
        self._check_table(public.table, secure.table)
        with self._lock:
            self._retained.hand = public.hand
            seq, ts = self._wire.seq.next(), self._wire.clock()
            stamped = (_stamp(public, seq, ts), _stamp(secure, seq, ts))
            self._retained.state = stamped
            if self._link.life is PublisherState.ONLINE:
                self._send(self.topics.state, stamped[0], retain=True)
                self._send(self.topics.secure_state, stamped[1], retain=True)

    def publish_secure_state(self, secure: SecureState) -> None:
        """Publish a newer secure snapshot alone, retained: the equity update that
        follows a card (docs/equity.md "Live equity"), when the public snapshot has
        not changed. Kept for republishing (a republish stamps both with one ``seq``
        again). Offline it is only kept, like :meth:`publish_state`."""
        self._check_table(secure.table)
        with self._lock:
            stamped = _stamp(secure, self._wire.seq.next(), self._wire.clock())
            if self._retained.state is not None:
                self._retained.state = (self._retained.state[0], stamped)
            if self._link.life is PublisherState.ONLINE:
                self._send(self.topics.secure_state, stamped, retain=True)

    def publish_event(self, public: PublicEvent, secure: SecureEvent) -> None:
        """Publish one event on ``events`` and ``secure/events`` (one shared ``seq``).

        Offline, the event is dropped (and counted); its ``seq`` is used anyway
        so consumers see a gap.
        """
        self._check_table(public.table, secure.table)
        with self._lock:
            if self._link.life is not PublisherState.ONLINE:
                self._keep_offline((self.topics.events, public),
                                   (self.topics.secure_events, secure))
                return
            seq, ts = self._wire.seq.next(), self._wire.clock()
            self._send(self.topics.events, _stamp(public, seq, ts), retain=False)
            self._send(self.topics.secure_events, _stamp(secure, seq, ts), retain=False)
        self._wake_now()  # a card's event goes out before the state that follows it

    def _keep_offline(self, *messages: tuple[str, BaseModel]) -> None:
        """Keep an event's (or notice's) messages until back online, or drop and count
        it past :data:`OFFLINE_EVENT_LIMIT` (it takes a ``seq``: the gap shows). Lock held."""
        if len(self._out.offline_events) < OFFLINE_EVENT_LIMIT:
            self._out.offline_events.append(messages)
            return
        self._wire.seq.next()
        self._counts.events_dropped += 1
        if self._counts.events_dropped == 1:
            log.warning("mqtt_offline_events_dropped", kept=OFFLINE_EVENT_LIMIT)

    def publish_alert(self, alert: AlertPayload) -> None:
        """Publish one alert; offline it waits in the bounded queue (stamped again when
        it goes out, so seq follows the order messages reach the broker).
        An alert without an id gets one here (see ``alert_ids``)."""
        self._check_table(alert.table)
        with self._lock:
            seq = self._wire.seq.next()
            stamped = _stamp(alert, seq, self._wire.clock())
            if not stamped.id:
                stamped = stamped.model_copy(update={"id": self._new_alert_id(seq)})
            self._send_or_queue((self.topics.alerts, stamped))
        self._wake_now()  # an alert, like an event, before the state

    def publish_open_alerts(self, payload: OpenAlertsPayload) -> None:
        """Publish ``alerts/open`` retained; kept for republishing (issue 14)."""
        self._check_table(payload.table)
        with self._lock:
            stamped = _stamp(payload, self._wire.seq.next(), self._wire.clock())
            self._retained.open_alerts = stamped
            if self._link.life is PublisherState.ONLINE:
                self._send(self.topics.alerts_open, stamped, retain=True)

    def publish_alert_change(self, change: AlertChangePayload) -> None:
        """Publish one acknowledgement or resolution on ``alerts/changes``; offline it
        waits in the alert queue."""
        self._check_table(change.table)
        with self._lock:
            self._send_or_queue((self.topics.alerts_changes,
                                 _stamp(change, self._wire.seq.next(), self._wire.clock())))

    def publish_dealer(self, payload: DealerPayload) -> None:
        """Publish ``dealer`` retained; kept for republishing."""
        self._check_table(payload.table)
        with self._lock:
            stamped = _stamp(payload, self._wire.seq.next(), self._wire.clock())
            self._retained.dealer = stamped
            if self._link.life is PublisherState.ONLINE:
                self._send(self.topics.dealer, stamped, retain=True)

    def publish_hand(self, public: PublicHandRecord, secure: SecureHandRecord) -> None:
        """Publish a finished hand on ``hands`` and ``secure/hands`` (one shared ``seq``);
        offline both wait in the alert queue: the archive must get every hand."""
        self._check_table(public.table, secure.table)
        with self._lock:
            seq, ts = self._wire.seq.next(), self._wire.clock()
            self._send_or_queue((self.topics.hands, _stamp(public, seq, ts)),
                                (self.topics.secure_hands, _stamp(secure, seq, ts)))

    def _send_or_queue(self, *messages: tuple[str, BaseModel]) -> None:
        """Send now, or (offline) keep in the bounded queue as one entry (lock held)."""
        if self._link.life is PublisherState.ONLINE:
            for topic, stamped in messages:
                self._send(topic, stamped, retain=False)
            return
        if len(self._out.alerts) == self._out.alerts.maxlen:
            self._counts.alerts_dropped += 1  # deque drops the oldest on append
            if self._counts.alerts_dropped == 1:
                log.warning("mqtt_alert_queue_full", size=self._out.alerts.maxlen)
        self._out.alerts.append(messages)

    def _new_alert_id(self, seq: int) -> str:
        ids = self._wire.alert_ids
        return ids() if ids is not None else f"{self._wire.table}:{seq}"

    def _own_alert(self, code: AlertCode, message: str) -> AlertPayload:
        """An alert raised by the publisher itself, with its id and the dealer on duty;
        the daemon is told (``on_alert``) so that it joins the open set. Lock held."""
        seq = self._wire.seq.next()
        alert = AlertPayload(
            table=self._wire.table, hand=self._retained.hand, seq=seq, ts=self._wire.clock(),
            code=code, severity=alert_severity(code), message=message,
            id=self._new_alert_id(seq),
            dealer=self._retained.dealer.dealer if self._retained.dealer is not None else None,
        )
        if self._wire.on_alert is not None:
            try:
                self._wire.on_alert(alert)
            except Exception:  # the alert itself must still go out
                log.exception("mqtt_on_alert_failed")
        return alert

    def publish_notice(self, public: NoticePayload | None, secure: NoticePayload) -> None:
        """Publish one notice on ``secure/notices`` and, unless it is secret
        (``public`` is ``None``), on ``notices``; one shared ``seq``.

        Notices need no action, so offline they are dropped like events (counted
        in ``events_dropped``; the ``seq`` gap shows), not queued like alerts.
        """
        self._check_table(secure.table, *([public.table] if public is not None else []))
        with self._lock:
            if self._link.life is not PublisherState.ONLINE:
                self._keep_offline(*([(self.topics.notices, public)] if public is not None
                                     else []), (self.topics.secure_notices, secure))
                return
            seq, ts = self._wire.seq.next(), self._wire.clock()
            if public is not None:
                self._send(self.topics.notices, _stamp(public, seq, ts), retain=False)
            self._send(self.topics.secure_notices, _stamp(secure, seq, ts), retain=False)

    def publish_reader(self, status: ReaderStatus) -> None:
        """Publish one reader's status retained; kept for republishing."""
        self._check_table(status.table)
        with self._lock:
            stamped = _stamp(status, self._wire.seq.next(), self._wire.clock())
            self._retained.readers[status.reader] = stamped
            if self._link.life is PublisherState.ONLINE:
                self._send(self.topics.reader(status.reader), stamped, retain=True)

    def publish_reader_stats(self, stats: ReaderStats) -> None:
        """Publish one reader's periodic figures, not retained, stamped with ``ts``
        only (they are not part of the sequenced stream: no ``seq``). While offline
        they are not kept: the next period's figures supersede them. While the
        outgoing queue is backlogged they are skipped too, so figures never stand
        in the way of live events and alerts."""
        self._check_table(stats.table)
        with self._lock:
            if self._link.life is not PublisherState.ONLINE or self._out.backlogged:
                return
            stamped = stats.model_copy(update={"ts": self._wire.clock()})
            self._send(self.topics.reader_stats(stats.reader), stamped, retain=False)

    def republish_retained(self) -> None:
        """Republish the whole retained set with fresh ``seq``/``ts`` (rebirth). Thread-safe.

        Coalesced: at most once per :data:`REBIRTH_MIN_INTERVAL`, and only
        while the outgoing queue is below :data:`BULK_LIMIT`; otherwise the
        request stays pending and is retried by a timer (the live stream first).
        """
        with self._lock:
            if self._link.life in _ENDED:
                return
            delay = self._republish_delay()
            if delay > 0:
                self._rebirth.pending = True
                self._schedule_rebirth(delay)
                return
            self._rebirth.pending = False
            if self._link.life is PublisherState.ONLINE:
                self._rebirth.last_republish = time.monotonic()
                self._counts.republishes += 1
                # The whole retained set, status included (issue 24: a consumer that
                # lost it learns online/degraded from the rebirth too).
                self._send(self.topics.status, self._live_status(), retain=True)
                self._republish_locked()

    def reply(self, request: CommandRequest, payload: bytes, *, limit: int = REPLY_LIMIT) -> bool:
        """Answer an MQTT 5 request on its response topic; False if it cannot.

        It cannot when the request had no response topic, when that topic is not
        the table's own ``reply/<client>`` (:meth:`TableTopics.reply_problem`:
        an empty or wildcard topic would get the daemon disconnected or raise),
        while offline, or while ``limit`` or more messages wait for the broker
        (shed: counted and logged, see :data:`REPLY_LIMIT`). Never raises.
        """
        topic = request.response_topic
        if topic is None:
            return False
        problem = self.topics.reply_problem(topic)
        if problem is not None:
            with self._lock:
                self._counts.replies_refused += 1
            log_limited(self.log_quota, log, "warning", "mqtt_reply_refused",
                        command=request.shown_name, reason=problem)
            return False
        props = _publish_properties()
        props.ContentType = "application/json"
        if request.correlation_data is not None:
            props.CorrelationData = request.correlation_data
        with self._lock:
            if self._link.life is not PublisherState.ONLINE:
                return False
        with self._reply_lane.lock:
            shed = len(self._reply_lane.queue) >= limit
            if not shed:
                self._reply_lane.queue.append((topic, payload, props))
        if shed:
            self._shed_reply(request)
            return False
        self._pump_replies()
        return True

    def _shed_reply(self, request: CommandRequest) -> None:
        """A reply not sent for the full reply lane: counted and logged (within the quota)."""
        with self._lock:
            self._counts.replies_shed += 1
            total = self._counts.replies_shed
        log_limited(self.log_quota, log, "error", "mqtt_replies_shed", shed_total=total,
                    outgoing=self.outgoing, command=request.shown_name)

    def _pump_replies(self) -> None:
        """Hand waiting replies to paho while fewer than :data:`REPLY_WINDOW` messages
        are unacknowledged (engine thread after a reply, paho thread after an ack).

        One thread pumps at a time, so replies leave in the order they were queued
        (a console reads the answer to its last request as the sign that the
        earlier ones were answered); the pumping thread checks the lane and the
        window again under the lock before it stops, so no trigger is lost."""
        with self._reply_lane.lock:
            if self._reply_lane.pumping:
                return
            self._reply_lane.pumping = True
        stopped = False
        try:
            while True:
                with self._reply_lane.lock:
                    with self._acks.lock:
                        room = self._acks.sent - self._acks.acked < REPLY_WINDOW
                    if not (room and self._reply_lane.queue):
                        self._reply_lane.pumping = False
                        stopped = True
                        return
                    topic, payload, props = self._reply_lane.queue.popleft()
                self._hand_reply(topic, payload, props)
        finally:
            if not stopped:  # an unexpected error: the next trigger pumps again
                with self._reply_lane.lock:
                    self._reply_lane.pumping = False

    def _hand_reply(self, topic: str, payload: bytes, props: Properties) -> None:
        try:
            info = self._client.publish(topic, payload, qos=QOS, properties=props)
        except ValueError as exc:  # a second net under reply_problem
            with self._acks.lock:
                self._acks.replies_failed += 1
            log.error("mqtt_reply_refused", reason=str(exc))
            return
        if info.rc in (MQTTErrorCode.MQTT_ERR_SUCCESS, MQTTErrorCode.MQTT_ERR_NO_CONN):
            with self._acks.lock:  # acknowledged like every QoS 1 message
                self._acks.sent += 1

    # ------------------------------------------------------------------ internals (lock held)

    def _check_table(self, *tables: str) -> None:
        for table in tables:
            if table != self._wire.table:
                raise ValueError(
                    f"payload for table {table!r} given to the publisher of {self._wire.table!r}"
                )

    def _status(self, status: DaemonStatus, reason: str | None = None) -> StatusPayload:
        return StatusPayload(
            table=self._wire.table, hand=self._retained.hand, seq=self._wire.seq.next(),
            ts=self._wire.clock(), status=status, reason=reason,
        )

    def set_health(self, problem: str | None) -> None:
        """Publish ``status`` as ``degraded`` with ``problem`` (None: ``online`` again).

        Kept, so a reconnect announces the same health instead of ``online``.
        """
        with self._lock:
            if problem == self._retained.health:
                return
            self._retained.health = problem
            if self._link.life is PublisherState.ONLINE:
                self._send(self.topics.status, self._live_status(), retain=True)
                self._send_claim(probe=False)

    def _live_status(self) -> StatusPayload:
        if self._retained.health is None:
            return self._status("online")
        return self._status("degraded", self._retained.health)

    def _set_will(self) -> None:
        # The will is registered per connection, so refresh it before each
        # (re)connect: its seq/ts/hand are then those of the latest attempt.
        self._client.will_set(
            self.topics.status, to_json(self._status("lost")), qos=QOS, retain=True
        )

    def _send(self, topic: str, payload: BaseModel, *, retain: bool) -> None:
        info = self._client.publish(
            topic, to_json(payload), qos=QOS, retain=retain, properties=self._wire.props
        )
        if info.rc not in (MQTTErrorCode.MQTT_ERR_SUCCESS, MQTTErrorCode.MQTT_ERR_NO_CONN):
            # NO_CONN: paho keeps QoS 1 messages and resends them on reconnect.
            log.error("mqtt_publish_failed", topic=topic, rc=mqtt.error_string(info.rc))
        self._track(info)

    def _track(self, info: mqtt.MQTTMessageInfo) -> None:
        # Remember unacknowledged QoS 1 messages so stop() can wait for them;
        # prune acknowledged ones from the front to keep this small.
        if info.rc in (MQTTErrorCode.MQTT_ERR_SUCCESS, MQTTErrorCode.MQTT_ERR_NO_CONN):
            # paho holds it until the broker acknowledges it (on_publish).
            with self._acks.lock:
                self._acks.sent += 1
                outgoing = self._acks.sent - self._acks.acked
                self._acks.peak = max(self._acks.peak, outgoing)
            if outgoing >= BACKLOG_HIGH and not self._out.backlogged:
                self._enter_backlog(outgoing)
        self._out.pending.append(info)
        while self._out.pending and _published(self._out.pending[0]):
            self._out.pending.popleft()

    def _enter_backlog(self, outgoing: int) -> None:
        # Reported at once: log, counter, and an alert. The alert joins the
        # queue (nothing may jump it without breaking seq order), so consumers
        # get it after the backlog, as the explanation of the delay they saw.
        self._out.backlogged = True
        self._out.backlog_since = time.monotonic()
        self._counts.backlog_episodes += 1
        log.error("mqtt_outgoing_backlog", outgoing=outgoing, limit=BACKLOG_HIGH)
        alert = self._own_alert(
            BACKLOG_CODE,
            f"{outgoing} messages are waiting for the broker's acknowledgement:"
            " the live feed is delayed (nothing is dropped). Check the broker and the"
            " network; a flood of requests from a client can also cause this.",
        )
        self._send(self.topics.alerts, alert, retain=False)

    def _republish_delay(self) -> float:
        """Seconds before a republish may run (0: now)."""
        wait = self._rebirth.last_republish + REBIRTH_MIN_INTERVAL - time.monotonic()
        if wait > 0:
            return wait
        if self.outgoing >= BULK_LIMIT:
            return 0.1  # the live stream drains first
        return 0.0

    def _schedule_rebirth(self, delay: float) -> None:
        if self._rebirth.timer is not None and self._rebirth.timer.is_alive():
            return
        timer = threading.Timer(delay, self._guard("rebirth_timer", self._rebirth_due))
        timer.daemon = True
        self._rebirth.timer = timer
        timer.start()

    def _rebirth_due(self) -> None:
        # Timer thread. Republishing touches only the publisher's own copies
        # (under its lock), so the deferred request needs no engine round trip.
        with self._lock:
            # This timer is done: a republish deferred again must get a new one.
            self._rebirth.timer = None
            if self._link.life in _ENDED or not self._rebirth.pending:
                return
        self.republish_retained()

    def _republish_locked(self) -> None:
        if self._retained.state is not None:
            seq, ts = self._wire.seq.next(), self._wire.clock()
            public = _stamp(self._retained.state[0], seq, ts)
            secure = _stamp(self._retained.state[1], seq, ts)
            self._retained.state = (public, secure)
            self._send(self.topics.state, public, retain=True)
            self._send(self.topics.secure_state, secure, retain=True)
        for reader_id, status in list(self._retained.readers.items()):
            fresh = _stamp(status, self._wire.seq.next(), self._wire.clock())
            self._retained.readers[reader_id] = fresh
            self._send(self.topics.reader(reader_id), fresh, retain=True)
        kept = self._retained
        if kept.open_alerts is not None:
            kept.open_alerts = _stamp(kept.open_alerts, self._wire.seq.next(), self._wire.clock())
            self._send(self.topics.alerts_open, kept.open_alerts, retain=True)
        if kept.dealer is not None:
            kept.dealer = _stamp(kept.dealer, self._wire.seq.next(), self._wire.clock())
            self._send(self.topics.dealer, kept.dealer, retain=True)

    def _go_online(self) -> None:
        with self._lock:
            if self._link.life in _ENDED:
                return
            self._link.life = PublisherState.ONLINE
            self._claiming.been_online = True
            self._send(self.topics.status, self._live_status(), retain=True)
            self._send_claim(probe=False)  # checked again with every status (issue 21)
            kept = len(self._out.offline_events)
            while self._out.offline_events:
                # Before the republished state: they happened before it.
                seq, ts = self._wire.seq.next(), self._wire.clock()
                for topic, kept_payload in self._out.offline_events.popleft():
                    self._send(topic, _stamp(kept_payload, seq, ts), retain=False)
            self._rebirth.last_republish = time.monotonic()
            self._republish_locked()
            queued = len(self._out.alerts)
            while self._out.alerts:
                # Stamped again as they go out: seq increases in the order messages
                # reach the broker, and the republish above took newer numbers than
                # those they were queued with. (Their ids, and alerts/open's
                # raised_ts, keep when they were raised.)
                seq, ts = self._wire.seq.next(), self._wire.clock()
                for topic, queued_payload in self._out.alerts.popleft():
                    self._send(topic, _stamp(queued_payload, seq, ts), retain=False)
            if self._counts.alerts_dropped:
                dropped, self._counts.alerts_dropped = self._counts.alerts_dropped, 0
                overflow = self._own_alert(
                    OVERFLOW_CODE,
                    f"{dropped} alert(s) dropped while the broker was unreachable (alerts,"
                    " alert changes and hand records share a queue of"
                    f" {self._out.alerts.maxlen}); see the retained alerts/open for the open"
                    " alerts",
                )
                self._send(self.topics.alerts, overflow, retain=False)
                log.error("mqtt_alerts_dropped", dropped=dropped)
            self._report_link_trouble()
            self._link.online_event.set()
            events_dropped = self._counts.events_dropped
        # The client id only at debug: whoever reads the log must not learn how to
        # knock the daemon off the broker.
        log.info("mqtt_online", alerts_delivered=queued, events_delivered=kept,
                 events_dropped_total=events_dropped)
        log.debug("mqtt_client_id", client_id=self.client_id)

    def _report_link_trouble(self) -> None:
        # Once reconnected, tell the floor what a supervisor cannot see: the
        # process lived on but the feed was cut (lock held, online).
        now = time.monotonic()
        if self._link.trouble.takeovers_unreported:
            count = self._link.trouble.takeovers_unreported
            self._link.trouble.takeovers_unreported = 0
            self._link.trouble.suspect_takeover = False
            self._link.trouble.last_takeover_alert = now
            self._send(self.topics.alerts, self._own_alert(
                TAKEOVER_CODE,
                f"Another MQTT client connected with this daemon's client id and"
                f" knocked it off the broker {count} time(s); the feed was cut meanwhile."
                " Find that client (broker log) and check who has broker credentials.",
            ), retain=False)
        elif self._link.trouble.suspect_takeover:
            self._link.trouble.suspect_takeover = False
            if now - self._link.trouble.last_takeover_alert >= UNSTABLE_WINDOW:
                self._link.trouble.last_takeover_alert = now
                self._send(self.topics.alerts, self._own_alert(TAKEOVER_CODE, (
                    "The broker closed the daemon's connection and took it back at once:"
                    " most likely another MQTT client connected with the daemon's client id"
                    " (or the broker was restarted just then). The daemon reconnected"
                    + ("" if self._wire.fixed_id else " with a new id")
                    + "; events meanwhile were kept and delivered. Find that client"
                    " (broker log) and check who has broker credentials.")), retain=False)
        trouble = self._link.trouble
        if trouble.unstable_pending and now - trouble.last_unstable_alert >= UNSTABLE_WINDOW:
            detail, trouble.unstable_pending = trouble.unstable_pending, None
            trouble.last_unstable_alert = now
            self._send(self.topics.alerts, self._own_alert(
                UNSTABLE_CODE,
                f"The daemon could not stay connected to the broker ({detail});"
                f" {self._counts.events_dropped} event(s) in total could not be delivered"
                " (gaps in seq). The retained state is current again. Causes: the"
                " network or the broker, or another client connecting with this"
                " daemon's client id (the broker's log names it).",
            ), retain=False)

    # ------------------------------------------------------------ paho callbacks (loop thread)

    def _guard(self, name: str, handler: Callable[..., None]) -> Callable[..., None]:
        def guarded(*args: Any) -> None:
            try:
                handler(*args)
            except Exception:
                with self._lock:
                    self._counts.callback_errors += 1
                log.exception("mqtt_callback_failed", callback=name)

        return guarded

    def _handle_connect(
        self,
        client: mqtt.Client,
        _userdata: object,
        _flags: mqtt.ConnectFlags,
        reason: ReasonCode,
        props: Properties | None,
    ) -> None:
        if reason.is_failure:
            if reason.value in _NOT_AUTHORISED:
                # The usual cause on an install: a rotated password not in the config.
                user = self._wire.broker.username or "(none)"
                log.error("mqtt_not_authorised", reason=str(reason), username=user,
                          message=f"not authorised: check [broker] username {user!r} and"
                          " password against the broker's (deploy/mosquitto-setup"
                          f" --new-passwords writes /etc/stud-table/mqtt/{user}.password"
                          " and the configs)")
            else:
                log.error("mqtt_connect_refused", reason=str(reason))
            return
        with self._lock:
            self._counts.connects += 1
            line = self._link.trouble.connect_failures.connected(time.monotonic())
        if line is not None:
            getattr(log, line.level)(line.event, host=self._wire.broker.host,
                                     port=self._wire.broker.port, **line.fields)
        # paho keeps its default window (20) and ignores the broker's Receive Maximum;
        # its setter refuses an open connection, but paho sends nothing of this
        # connection before on_connect returns (its resend of what was in flight comes
        # after), and the window is never 0 (the case paho's setter guards).
        client._max_inflight_messages = out_window(getattr(props, "ReceiveMaximum", None))
        sock = client.socket()
        if isinstance(sock, socket.socket) and sock.family in (socket.AF_INET, socket.AF_INET6):
            # Small messages must not wait for Nagle + delayed ACK (about 40 ms each).
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        # No local: our own clearing of a retained command must not come back.
        # Retain as published: a command published retained is recognised as
        # such even when it arrives live, and ignored (docs/mqtt.md).
        options = SubscribeOptions(qos=QOS, noLocal=True, retainAsPublished=True)
        # The claim topic without retain-as-published: a live claim then arrives with
        # the retain flag clear, a stale retained one (a daemon since gone) with it set.
        claim_options = SubscribeOptions(qos=QOS, noLocal=True, retainAsPublished=False)
        result, mid = client.subscribe([(self.topics.cmd_filter, options),
                                        (self.topics.claim, claim_options)])
        with self._lock:
            self._link.subscribe_mid = mid
            if self._link.life not in _ENDED:
                self._link.life = PublisherState.SUBSCRIBING
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
            if mid != self._link.subscribe_mid:
                return
        if any(r.is_failure for r in reasons):
            # Publishing still works; only commands (rebirth) will not reach us.
            log.error("mqtt_command_subscribe_refused", reasons=[str(r) for r in reasons])
        with self._lock:
            first = not self._claiming.been_online and self._link.life not in _ENDED
            if first:
                # Issue 21 item 6: before anything is published as this table, ask
                # whether a daemon is live for it already (it answers with its claim).
                self._claiming.probing = True
                self._send_claim(probe=True)
                timer = threading.Timer(self._wire.claim_wait,
                                        self._guard("claim_probe", self._probe_done))
                timer.daemon = True
                self._claiming.probe_timer = timer
                timer.start()
        if not first:
            self._go_online()

    def _probe_done(self) -> None:
        with self._lock:
            self._claiming.probe_timer = None
            if not self._claiming.probing or self._claiming.refused:
                return
            self._claiming.probing = False
        self._go_online()

    def _renew_client_id(self) -> None:
        """A new random id for the next connection (lock held, paho's thread, before
        paho reconnects): whoever took the old one cannot knock the daemon off
        again with it. paho has no setter; its connect packet reads ``_client_id``."""
        self.client_id = _fresh_client_id(self._wire.table)
        self._client._client_id = self.client_id.encode()

    def _send_claim(self, *, probe: bool) -> None:
        """Publish this daemon's claim (retained) or a probe (not retained)."""
        claim = ClaimPayload(
            table=self._wire.table, seq=self._wire.seq.next(), ts=self._wire.clock(),
            instance=self.instance, pid=os.getpid(), host=socket.gethostname(),
            since=self._claiming.since, probe=probe,
        )
        self._send(self.topics.claim, claim, retain=not probe)

    def _claim_message(self, message: mqtt.MQTTMessage) -> None:
        """A message on ``secure/claim``: another daemon of this table, or nothing."""
        try:
            other = ClaimPayload.model_validate(json.loads(bytes(message.payload)))
        except (ValueError, TypeError):
            log.warning("mqtt_claim_unreadable")  # not a daemon's claim; ignored
            return
        if other.instance == self.instance or other.table != self._wire.table:
            return
        if message.retain:
            # Delivered at subscribe time: a claim kept by the broker, maybe of a
            # daemon long gone. A live one answers the probe.
            log.info("mqtt_claim_retained", other=other.instance)
            return
        news: ClaimNews | None = None
        with self._lock:
            if self._link.life in _ENDED or self._claiming.refused:
                return
            if self._claiming.probing:
                # Two starting at once: the lower instance id goes on.
                if not other.probe or other.instance < self.instance:
                    self._claiming.refused = True
                    self._claiming.probing = False
                    if self._claiming.probe_timer is not None:
                        self._claiming.probe_timer.cancel()
                    news = ClaimNews("refused", other)
            else:
                kind: Literal["probe", "claim"] = "probe" if other.probe else "claim"
                if other.probe or (kind, other.instance) not in self._claiming.others:
                    self._send_claim(probe=False)  # so that the other one learns of us
                if (kind, other.instance) not in self._claiming.others:
                    self._claiming.others.add((kind, other.instance))
                    news = ClaimNews(kind, other)
        if news is not None:
            log.error("mqtt_table_claimed_elsewhere", kind=news.kind, other=news.who())
            if self._wire.on_claim is not None:
                self._wire.on_claim(news)

    def _handle_connect_fail(self, _client: mqtt.Client, _userdata: object) -> None:
        # paho retries every few seconds: the first failure is said at once with its
        # reason, then a summary at most every CONNECT_SUMMARY_PERIOD (issue 24).
        reason = connect_failure_reason()
        with self._lock:
            self._link.trouble.suspect_takeover = False
            line = self._link.trouble.connect_failures.failed(reason, time.monotonic())
        if line is not None:
            getattr(log, line.level)(line.event, host=self._wire.broker.host,
                                     port=self._wire.broker.port, **line.fields)

    def _handle_disconnect(
        self,
        _client: mqtt.Client,
        _userdata: object,
        _flags: mqtt.DisconnectFlags,
        reason: ReasonCode,
        _props: Properties | None,
    ) -> None:
        now = time.monotonic()
        with self._lock:
            was_online = self._link.life is PublisherState.ONLINE
            self._link.online_event.clear()
            self._counts.disconnects += 1
            if self._link.life in _ENDED:
                return
            self._link.life = PublisherState.CONNECTING  # paho reconnects by itself
            self._set_will()
            self._link.trouble.disconnect_times.append(now)
            taken_over = reason.value == _TAKEN_OVER
            if taken_over:
                self._counts.takeovers += 1
                self._link.trouble.takeovers_unreported += 1
            elif was_online and reason.value == _CONNECTION_CLOSED:
                # Closed by the broker: a takeover if the broker takes us back at
                # once (a connect failure meanwhile clears it: the broker was away).
                self._link.trouble.suspect_takeover = True
            if not self._wire.fixed_id:
                self._renew_client_id()
            recent = len(self._link.trouble.disconnect_times)
            first_recent = self._link.trouble.disconnect_times[0]
            unstable = recent == UNSTABLE_COUNT and now - first_recent <= UNSTABLE_WINDOW
            newly_unstable = unstable and self._link.trouble.unstable_pending is None
            if unstable:
                self._link.trouble.unstable_pending = (
                    f"{self._counts.disconnects} disconnects since start, {recent} within"
                    f" {now - self._link.trouble.disconnect_times[0]:.0f} s, last reason: {reason}"
                )
            disconnects = self._counts.disconnects
        log.warning("mqtt_disconnected", reason=str(reason), was_online=was_online,
                    disconnects=disconnects)
        if taken_over:
            # Not a network fault: someone used our client id (docs/mqtt.md).
            log.error("mqtt_session_taken_over", takeovers=self._counts.takeovers)
        if newly_unstable:
            log.error("mqtt_link_unstable", disconnects=disconnects, window=UNSTABLE_WINDOW,
                      reason=str(reason))

    def _handle_publish(
        self,
        _client: mqtt.Client,
        _userdata: object,
        _mid: int,
        reason: ReasonCode,
        _props: Properties | None,
    ) -> None:
        # Called with paho's message mutex held: only the ack lock here (see _AckCounts).
        with self._acks.lock:
            self._acks.acked += 1
            outgoing = self._acks.sent - self._acks.acked
        if reason.is_failure:
            log.error("mqtt_publish_refused", reason=str(reason))
        if outgoing <= BACKLOG_LOW and self._out.backlogged:
            self._leave_backlog(outgoing)
        if outgoing < REPLY_WINDOW:
            self._pump_replies()

    def _leave_backlog(self, outgoing: int) -> None:
        # On the paho thread; _backlogged is only a hint read without the
        # lock above, so check again under it.
        with self._lock:
            if not self._out.backlogged:
                return
            self._out.backlogged = False
            lasted = time.monotonic() - self._out.backlog_since
            shed = self._counts.replies_shed
        with self._acks.lock:
            peak = self._acks.peak
        log.warning("mqtt_outgoing_backlog_cleared", outgoing=outgoing, seconds=round(lasted, 2),
                    peak=peak, replies_shed_total=shed)

    def _handle_message(
        self, client: mqtt.Client, _userdata: object, message: mqtt.MQTTMessage
    ) -> None:
        try:
            topic = message.topic
        except UnicodeDecodeError:
            return  # the broker checks UTF-8; nothing of ours is not UTF-8
        if topic == self.topics.claim:
            self._claim_message(message)
            return
        name = self.topics.command_name(topic)
        if name is None:
            return
        if message.retain:
            self._ignore_retained(client, topic, name, bool(message.payload))
            return
        if name == "rebirth":
            self._rebirth_requested()
            return
        props = message.properties
        request = CommandRequest(
            name=name,
            payload=bytes(message.payload),
            response_topic=getattr(props, "ResponseTopic", None),
            correlation_data=getattr(props, "CorrelationData", None),
        )
        if self._wire.on_command is None:
            log.warning("mqtt_unknown_command", command=request.shown_name)
            return
        if self._wire.on_command(request) is False:
            self._refuse_busy(request)

    def _ignore_retained(self, client: mqtt.Client, topic: str, name: str, clear: bool) -> None:
        # Commands are not state: a retained one would run again at every
        # (re)connect of the daemon (a retained cmd/hand started a hand at each
        # restart). Ignore it and clear it (an empty retained message deletes it).
        with self._lock:
            self._counts.retained_commands_ignored += 1
        log_limited(self.log_quota, log, "warning", "mqtt_retained_command_ignored",
                    command=shown_name(name), cleared=clear)
        if clear:
            with self._lock:
                # Tracked like every QoS 1 message: its ack is counted too.
                self._track(client.publish(topic, b"", qos=QOS, retain=True))

    def _rebirth_requested(self) -> None:
        with self._lock:
            self._counts.rebirths_requested += 1
            if self._rebirth.pending:
                # One pending request serves every consumer: coalesce.
                self._counts.rebirths_coalesced += 1
                return
            self._rebirth.pending = True
        log_limited(self.log_quota, log, "info", "mqtt_rebirth_requested")
        try:
            if self._wire.on_rebirth is not None:
                self._wire.on_rebirth()
            else:
                self.republish_retained()
        except Exception:
            with self._lock:
                self._rebirth.pending = False  # a failed hand-over must not block later ones
            raise

    def _refuse_busy(self, request: CommandRequest) -> None:
        topic = request.response_topic
        unanswerable = topic is None or self.topics.reply_problem(topic) is not None
        with self._lock:
            self._counts.commands_refused_busy += 1
            total = self._counts.commands_refused_busy
        log_limited(self.log_quota, log, "warning", "console_command_refused_busy",
                    command=request.shown_name, refused_total=total)
        if unanswerable:
            return  # counted; no reply could go there (and no log line per request)
        with self._reply_lane.lock:
            full = len(self._reply_lane.queue) >= BULK_LIMIT
        if full or not self.online:
            # Shed before the answer is even built: under a flood this runs for
            # every request the paho thread reads, and it competes for the GIL
            # with the engine thread.
            if full:
                self._shed_reply(request)
            return
        reply = ConsoleReply(
            table=self._wire.table, command=request.shown_name, accepted=False, code=BUSY_CODE,
            reason="too many console commands are waiting; this one was not carried out,"
            " send it again", hand=self._retained.hand, to_act=None, pot=None,
        )
        self.reply(request, to_json(reply), limit=BULK_LIMIT)


def out_window(broker_receive_maximum: int | None) -> int:
    """Our QoS 1 messages in flight at most: :data:`OUT_WINDOW`, or fewer if the broker's
    CONNACK says it takes fewer (its Receive Maximum; ``None``: it did not say, 65,535)."""
    if broker_receive_maximum is None:
        return OUT_WINDOW
    return max(1, min(OUT_WINDOW, broker_receive_maximum))


def _fresh_client_id(table: str) -> str:
    """``stud-table-<table>-<128 random bits>``: unguessable (docs/mqtt.md "Client id")."""
    return f"stud-table-{table}-{secrets.token_hex(16)}"


def _publish_properties() -> Properties:
    # paho's Properties constructor is untyped; confine the ignore to here.
    return Properties(PacketTypes.PUBLISH)  # type: ignore[no-untyped-call]


class _PackedOnce(Properties):
    """PUBLISH properties that are packed once and then reused as bytes.

    paho packs a message's properties on every publish, and ``Properties.pack``
    makes a new attribute-name string for each of the 27 MQTT 5 property names
    and looks it up with ``hasattr``: CPython's type attribute cache keeps each
    such string alive until its slot is reused, which grew the daemon's memory
    with every message (issue 9 item 26). Setting a property drops the cache.
    """

    def pack(self) -> bytes:
        """The packed properties (computed at the first call)."""
        packed: bytes | None = self.__dict__.get("_packed")
        if packed is None:
            packed = bytes(super().pack())  # type: ignore[no-untyped-call]
            object.__setattr__(self, "_packed", packed)
        return packed

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)  # type: ignore[no-untyped-call]
        self.__dict__.pop("_packed", None)


def _json_properties() -> Properties:
    """The properties of every message the publisher sends (JSON content), packed once."""
    props = _PackedOnce(PacketTypes.PUBLISH)  # type: ignore[no-untyped-call]
    props.ContentType = "application/json"
    return props


def _stamp(payload: _M, seq: int, ts: float) -> _M:
    return payload.model_copy(update={"seq": seq, "ts": ts})


def _published(info: mqtt.MQTTMessageInfo) -> bool:
    try:
        return info.is_published()
    except (ValueError, RuntimeError):
        return True  # never queued (queue full / error): nothing to wait for
