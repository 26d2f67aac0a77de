"""``stud-table broadcast``: follow tables' feeds over MQTT, serve delayed / venue / producer pages.

Thin edges around the pure core (:mod:`.delay`):

* **in**: a paho-mqtt client (as the production user) subscribes to every listed
  table's secure topics and its public ``state``/``events``; each message is
  checked (a JSON object with the envelope's ``seq`` and ``ts``), stored on disk
  (:mod:`.store`, committed) and only then handed to the delay lines;
* **out**: Starlette over uvicorn serves the pages and one server-sent-event stream
  per page. Every SSE event carries the output's own dense number of the message
  as its ``id`` (:mod:`.store`, "Per-output event ids"): a browser's
  ``EventSource`` reconnects by itself after a blip and sends ``Last-Event-ID``;
  the stream resumes right after it (no gap, no duplicate).

Nothing a public or delayed output sends depends on what it may not show yet
(issue 22): its ids count only what it shows, a ``reset`` compares the page's id
only with what this output has released, keepalives keep their own rhythm,
the daemon's envelope ``seq`` (which counts secure-only messages too) is left
out of what it shows, and a malformed id is a 400 like any other.

Outputs (docs/broadcast.md): ``venue`` (public feed, live), ``producer`` (secure
feed, live, locked) and the configured delayed ones (secure feed, delay ``D``,
reveal mode, optionally locked).

Why Starlette + uvicorn: small, typed, maintained ASGI pieces (Encode), pure-Python
wheels (offline stream machines install them from a wheel cache), SSE is a plain
streaming response, and a test can run the real server on a free port.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import json
import math
import secrets
import sqlite3
import threading
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import paho.mqtt.client as mqtt
import structlog
from paho.mqtt.reasoncodes import ReasonCode
from sqlalchemy.exc import SQLAlchemyError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import (
    FileResponse,
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Route

from table_controller.archive.stats import player_stats
from table_controller.archive.store import ArchiveStore, database_url, sqlite_url
from table_controller.broadcast.config import BroadcastConfig, OutputConfig
from table_controller.broadcast.delay import (
    DelayError,
    DelayLine,
    Reveal,
    check_delay,
    check_offset,
    filter_message,
    shown_seats,
)
from table_controller.broadcast.manual import (
    ConfirmEntryError,
    EntryError,
    EntryLimiter,
    parse_entry,
    producer_words,
)
from table_controller.broadcast.store import Store, Stored
from table_controller.mqtt.follower import connect_follower, follower_client, stop_follower
from table_controller.mqtt.request import NoReplyError, send_request
from table_controller.mqtt.topics import TableTopics, TopicKind
from table_controller.mqtt.unreachable import BrokerOutage
from table_controller.web.inbound import parse_payload
from table_controller.web.security import SecurityHeaders, event_id, guard_post
from table_controller.web.service import WebService

log = structlog.get_logger(__name__)

STATIC: Final = Path(__file__).parent / "static"
KEEPALIVE_S: Final = 15.0
"""An SSE comment this often keeps proxies from closing an idle stream."""
COOKIE: Final = "stud_broadcast"
SESSION_EXPIRY_S: Final = 24 * 3600
"""How long the broker keeps our session (and queues messages) while we are down."""
PRODUCER_ONLY_INFO: Final = ("delay_source", "config_delay_s", "delay_why")
"""Output settings only the producer's stream and API carry."""
STATS_CACHE_S: Final = 20.0
"""Player statistics are computed again at most this often per output and table."""
CARD_TIMEOUT_S: Final = 10.0
"""How long a manual card entry waits for the daemon's reply."""
MAX_CARD_BODY: Final = 1024
"""A manual entry's body is a few dozen bytes; anything larger is refused unread."""

_ROUTES: Final = {
    TopicKind.SECURE_STATE: ("secure", "state"),
    TopicKind.SECURE_EVENTS: ("secure", "event"),
    TopicKind.SECURE_NOTICES: ("secure", "notice"),
    TopicKind.ALERTS: ("secure", "alert"),
    TopicKind.STATUS: ("secure", "status"),
    TopicKind.READER: ("secure", "reader"),
    TopicKind.STATE: ("public", "state"),
    TopicKind.EVENTS: ("public", "event"),
}
"""The kinds of topic the service follows -> (feed, kind stored)."""


def route(topic: str) -> tuple[str, str, str] | None:
    """``(table, feed, kind)`` of a topic the service follows, else ``None``; the
    topic is read by :meth:`TableTopics.parse`, the one parser (issue 20)."""
    parsed = TableTopics.parse(topic)
    if parsed is None or parsed.kind not in _ROUTES:
        return None
    return (parsed.table, *_ROUTES[parsed.kind])


@dataclass
class Output:
    """One output: its feed, delay line, reveal mode, lock, and who waits on it."""

    name: str
    feed: str
    line: DelayLine
    reveal: Reveal | None  # None: pass through (venue: public feed; producer: everything)
    locked: bool
    floor_s: float = 0.0
    delayed: bool = True
    source: str = "config"
    """Where the delay in force comes from: ``config`` or ``producer``."""
    stats: str = "off"
    """Player statistics shown: ``off``, ``session``, ``all`` (the producer: both)."""
    config_delay_s: float = 0.0
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def id_class(self) -> str:
        """The store's id class this output numbers its events in."""
        return "n_all" if self.reveal is None else self.reveal.id_class

    def why(self) -> str:
        """One line: the delay in force and why (the producer page and the start line)."""
        delay = f"{self.line.delay_s:g} s + {self.line.offset_ms} ms"
        if self.source == "producer":
            return (f"{delay}, set on the producer page (broadcast.toml says"
                    f" {self.config_delay_s:g} s; a longer delay there would win)")
        return f"{delay}, from broadcast.toml"

    def info(self) -> dict[str, Any]:
        """What a page shows about its output (no secret)."""
        return {"output": self.name, "delay_s": self.line.delay_s,
                "offset_ms": self.line.offset_ms,
                "reveal": self.reveal.value if self.reveal else None,
                "delayed": self.delayed, "backlog": self.line.backlog,
                "min_delay_s": self.floor_s, "delay_source": self.source,
                "config_delay_s": self.config_delay_s,
                "delay_why": self.why() if self.delayed else "live", "stats": self.stats}

    def wake(self) -> None:
        """Wake every stream waiting on this output (they re-read the store)."""
        self.changed.set()
        self.changed = asyncio.Event()


class ConfirmNeededError(DelayError):
    """A delay change that needs the producer's confirmation (a large cut)."""


class Broadcast(WebService):
    """The service: store, outputs, MQTT follower and the web app."""

    def __init__(self, cfg: BroadcastConfig, clock: Callable[[], float] = time.time) -> None:
        super().__init__("broadcast", cfg.http.host, cfg.http.port, COOKIE, clock)
        self.cfg = cfg
        self.clock = clock
        self.store = Store(cfg.state_file)
        self.outputs: dict[str, Output] = {}
        self._tick = asyncio.Event()
        self._ticker: asyncio.Task[None] | None = None
        self.refused = 0
        self.store_errors = 0
        """Messages that could not be stored (shown on the producer page, logged)."""
        self.connected = threading.Event()
        self.entries = EntryLimiter()
        """Manual card entries (issue 19): one at a time, a few a minute."""
        self._add("venue", "public", None, locked=False, delay=0.0, delayed=False)
        self._add("producer", "secure", None, locked=True, delay=0.0, delayed=False)
        for out in cfg.outputs:
            self._add_configured(out)
            self.outputs[out.name].stats = out.stats
        self._archive: ArchiveStore | None = None
        self._stats_cache: dict[tuple[str, str], tuple[float, dict[str, Any]]] = {}
        if cfg.archive is not None:
            self.outputs["producer"].stats = "both"
            db = cfg.archive
            url = sqlite_url(str(db.path)) if db.path is not None else database_url(str(db.dsn))
            # Read only, never migrated here (the archive service owns the schema).
            self._archive = ArchiveStore(url, connect_timeout_s=db.connect_timeout_s,
                                         migrate=False)
        self.outage = BrokerOutage("broadcast_mqtt_unreachable", cfg.broker.host,
                                   cfg.broker.port)
        """Says once, with the reason, that the broker cannot be reached (issue 24)."""
        self.client = self._mqtt_client()

    # ------------------------------------------------------------------ outputs

    def _add_configured(self, out: OutputConfig) -> None:
        self._add(out.name, "secure", out.reveal, locked=out.locked, delay=out.delay_s,
                  offset=out.offset_ms, floor=self.cfg.public_floor(out))

    def _add(self, name: str, feed: str, reveal: Reveal | None, *, locked: bool, delay: float,
             offset: int = 0, floor: float = 0.0, delayed: bool = True) -> None:
        row = self.store.output(name)
        config_delay, source = delay, "config"
        if row is not None and delayed and row.source == "producer":
            # Precedence (docs/broadcast.md "Which delay is in force"): a delay set on
            # the producer page survives a restart, unless broadcast.toml now asks
            # for a longer one (an operator matching a longer video delay must get
            # it); a delay only ever written from the file follows the file.
            if delay > row.delay_s:
                log.info("broadcast_delay_from_config", output=name, delay_s=delay,
                         producer_delay_s=row.delay_s)
            else:
                delay, offset, source = max(row.delay_s, floor), row.offset_ms, "producer"
                log.info("broadcast_delay_from_producer", output=name, delay_s=delay,
                         offset_ms=offset, config_delay_s=config_delay)
        line = DelayLine(delay_s=delay, offset_ms=offset, released=row.released if row else 0)
        for seq, ts in self.store.pending(feed, line.released):
            line.push(seq, ts)
        self.outputs[name] = Output(name, feed, line, reveal, locked, floor, delayed,
                                    source=source, config_delay_s=config_delay)
        self._save(self.outputs[name])

    def _save(self, out: Output) -> None:
        self.store.save_output(out.name, out.line.delay_s, out.line.offset_ms,
                               out.line.released, out.source)

    def delay_lines(self) -> list[str]:
        """Each delayed output's delay in force and why (printed at start)."""
        return [f"output {out.name}: delay {out.why()}" for out in self.outputs.values()
                if out.delayed]

    def set_delay(self, name: str, delay_s: float | None, offset_ms: int | None,
                  *, confirmed: bool = True) -> Output:
        """Change an output's delay and/or offset (persisted before it takes effect).

        A delay below the output's floor is refused; one that cuts the delay in force
        by more than ``[producer] confirm_cut`` needs ``confirmed`` (the page asks).
        """
        out = self.outputs[name]
        if not out.delayed:
            raise DelayError(f"output {name} is live and has no delay")
        if delay_s is not None:
            check_delay(delay_s)
            if delay_s < out.floor_s:
                raise DelayError(f"delay {delay_s:g} s is below this output's minimum of"
                                 f" {out.floor_s:g} s (min_public_delay_s)")
        new_delay = out.line.delay_s if delay_s is None else float(delay_s)
        new_offset = out.line.offset_ms if offset_ms is None else check_offset(offset_ms)
        cut = 1.0 - new_delay / out.line.delay_s if out.line.delay_s > 0 else 0.0
        if cut > self.cfg.producer.confirm_cut and not confirmed:
            raise ConfirmNeededError(
                f"cutting the delay of {name} from {out.line.delay_s:g} s to {new_delay:g} s"
                f" ({cut:.0%}) releases what was held back: confirm to go ahead")
        self.store.save_output(name, new_delay, new_offset, out.line.released, "producer")
        out.line.set_delay(new_delay)
        out.line.set_offset(new_offset)
        out.source = "producer"
        log.info("broadcast_delay_set", output=name, delay_s=new_delay, offset_ms=new_offset)
        self._tick.set()
        out.wake()
        return out

    def take(self, topic: str, raw: bytes) -> Stored | None:
        """One message from the broker: checked, stored, pushed to the delay lines."""
        where = route(topic)
        if where is None:
            return None
        table, feed, kind = where
        if table not in self.cfg.tables:
            return None
        try:
            payload = parse_payload(raw)
        except ValueError as exc:
            self.refused += 1
            log.warning("broadcast_message_refused", topic=topic[:120], problem=str(exc))
            return None
        stored = self.store.add(feed, table, kind, payload)
        if stored is None:
            return None  # a redelivery or the retained message seen again
        for out in self.outputs.values():
            if out.feed == feed:
                out.line.push(stored.seq, stored.ts)
        self._tick.set()
        return stored

    def release(self, now: float) -> float | None:
        """Release what is due on every output; return when the next message is due."""
        nxt: float | None = None
        for out in self.outputs.values():
            if out.line.release(now):
                self._save(out)
                out.wake()
            due = out.line.next_due()
            if due is not None:
                nxt = due if nxt is None else min(nxt, due)
        return nxt

    def prune(self, now: float) -> int:
        """Drop what every output has released and is older than the retention."""
        below = min(out.line.released for out in self.outputs.values()) + 1
        return self.store.prune(now - self.cfg.retention_hours * 3600, below)

    async def ticker(self) -> None:
        """Release messages as they fall due; prune the store now and then."""
        last_prune = 0.0
        while True:
            now = self.clock()
            nxt = self.release(now)
            if now - last_prune > 60:
                self.prune(now)
                last_prune = now
            wait = 1.0 if nxt is None else min(max(nxt - self.clock(), 0.0), 1.0)
            self._tick.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._tick.wait(), timeout=wait)

    # ------------------------------------------------------------------ what a page gets

    def view(self, out: Output, msg: Stored) -> dict[str, Any] | None:
        """What ``out`` shows of ``msg`` (``None``: nothing).

        Only the producer gets the daemon's envelope ``seq``: it counts every message
        of the table, secure-only ones too, so a gap in it would tell a public or
        delayed page that a secret notice was published.
        """
        if out.reveal is None:
            if out.feed == "public" and msg.kind not in ("state", "event"):
                return None
            if out.feed == "public":
                return {"kind": msg.kind, "p": _without_seq(msg.payload)}
            return {"kind": msg.kind, "p": msg.payload}
        # No spoiler: the result counts once this output has reached it (it comes
        # before this message); early: as soon as the service has taken it.
        before = msg.seq if out.reveal is Reveal.SHOWDOWN else None
        result = self.store.result(msg.table, msg.hand, before=before)
        shown = shown_seats(result)
        body = filter_message(msg.kind, msg.payload, out.reveal, shown)
        return None if body is None else {"kind": msg.kind, "p": _without_seq(body)}

    async def stream(self, out: Output, table: str, last_id: int | None) -> AsyncIterator[str]:
        """The SSE stream of ``out`` for ``table``, resuming after ``last_id``.

        Ids are ``out``'s own numbers (:attr:`Output.id_class`). A ``reset`` is sent
        for an id above the newest *this output* has released for the table (a
        replaced store): never by comparing with anything the output has not shown.
        """
        yield "retry: 1000\n\n"
        cls = out.id_class
        if last_id is not None and last_id > self.store.released_id(
                out.feed, table, out.line.released, cls):
            # An id this output never gave: start afresh, and tell the page to forget
            # its ids, or it would ignore every new one.
            last_id = None
            yield "event: reset\ndata: {}\n\n"
        if last_id is not None:
            cursor = last_id
        else:
            cursor = self.store.snapshot_start(out.feed, table, out.line.released, cls)
            # The daemon's status and the readers' health come before that state and
            # only when they change: a page opened later gets the newest of each first
            # (it showed "unknown" status until the next change). The producer only:
            # no other output shows them.
            if out.reveal is None and out.feed == "secure":
                for msg in self.store.context(out.feed, table, cursor):
                    body = self.view(out, msg)
                    if body is not None:
                        yield f"id: {msg.id}\nevent: msg\ndata: {json.dumps(body)}\n\n"
        sent_info: dict[str, Any] | None = None
        keepalive_at = time.monotonic() + KEEPALIVE_S
        while True:
            waiter = out.changed
            info = out.info()
            info.pop("backlog")
            if out.name != "producer":  # where a delay came from is for the production room
                for key in PRODUCER_ONLY_INFO:
                    info.pop(key, None)
            if info != sent_info:
                sent_info = info
                yield f"event: info\ndata: {json.dumps(info)}\n\n"
            batch = self.store.read(out.feed, table, cursor, out.line.released, cls)
            for msg in batch:
                assert msg.id is not None
                cursor = msg.id
                body = self.view(out, msg)
                if body is not None:
                    yield f"id: {msg.id}\nevent: msg\ndata: {json.dumps(body)}\n\n"
            if batch:
                continue
            # The keepalive keeps its own rhythm: a wake-up for messages this page
            # does not get (another table's, secure-only ones) must not shift it.
            left = keepalive_at - time.monotonic()
            if left <= 0:
                yield ": keepalive\n\n"
                keepalive_at = time.monotonic() + KEEPALIVE_S
                continue
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(waiter.wait(), timeout=left)

    # ------------------------------------------------------------------ MQTT

    def _mqtt_client(self) -> mqtt.Client:
        # A persistent session under an id drawn once and kept in the store: the
        # broker queues the QoS 1 messages of a restart's downtime for us (nothing
        # lost), and the id stays unguessable (nobody can knock the service off).
        client_id = self.cfg.broker.client_id or self.store.meta(
            "client_id", f"stud-broadcast-{secrets.token_hex(16)}")
        return follower_client(self.cfg.broker, client_id, "broadcast", self.outage,
                               on_connected=self._on_connect, on_lost=self._on_disconnect,
                               on_message=self._on_message)

    def _on_connect(self, client: mqtt.Client, _userdata: object) -> None:
        for table in self.cfg.tables:
            topics = TableTopics(table)
            for topic in (topics.secure_state, topics.secure_events, topics.secure_notices,
                          topics.alerts, topics.status, topics.readers_filter, topics.state,
                          topics.events):
                client.subscribe(topic, qos=1)
        self.connected.set()
        log.info("broadcast_mqtt_connected", tables=self.cfg.tables)

    def _on_disconnect(self, _userdata: object, reason: ReasonCode) -> None:
        self.connected.clear()
        log.warning("broadcast_mqtt_disconnected", reason=str(reason))

    def _on_message(self, _c: mqtt.Client, _u: object, message: mqtt.MQTTMessage) -> None:
        loop = self._loop
        if loop is not None:
            # Stored on the event loop's thread: one writer to the SQLite file.
            loop.call_soon_threadsafe(self._take_logged, message.topic, bytes(message.payload))

    def _take_logged(self, topic: str, raw: bytes) -> None:
        try:
            self.take(topic, raw)
        except sqlite3.Error as exc:  # disk full, file damaged: a person must act
            self.store_errors += 1
            log.error("broadcast_store_failed", topic=topic[:120], error=str(exc),
                      failures=self.store_errors)
        except Exception:  # a bad message never takes the service down
            log.exception("broadcast_take_failed", topic=topic[:120])

    # ------------------------------------------------------------------ web

    async def _authorised(self, request: Request) -> bool | Response:
        """True for the producer (cookie or password); False: ask for the password; a
        429 response while this client is throttled (:mod:`table_controller.web.throttle`)."""
        if self.sessions.who(request) is not None:
            return True
        header = request.headers.get("authorization", "")
        if not header.lower().startswith("basic "):
            return False
        wait = self.passwords.wait(request)
        if wait > 0:
            return _too_many(wait)
        try:
            _user, _, password = base64.b64decode(header[6:]).decode().partition(":")
        except (binascii.Error, UnicodeDecodeError):
            password = ""
        return await self.passwords.check(request, password, self.cfg.producer.password_hash)

    async def _gate(self, request: Request) -> Response | None:
        """``None`` if the producer is logged in, else the answer to send."""
        ok = await self._authorised(request)
        if isinstance(ok, Response):
            return ok
        return None if ok else self._challenge()

    def _challenge(self) -> Response:
        return PlainTextResponse("producer password needed", status_code=401,
                                 headers={"WWW-Authenticate": 'Basic realm="stud-table"'})

    def _session(self, response: Response, request: Request) -> Response:
        if self.sessions.who(request) is None:
            self.sessions.open(response, "producer")
        return response

    def _output_for(self, page: str, name: str | None) -> Output | None:
        if page == "venue":
            return self.outputs["venue"]
        if page == "producer":
            return self.outputs["producer"]
        if name is None:
            name = self.cfg.outputs[0].name if self.cfg.outputs else ""
        out = self.outputs.get(name)
        return out if out is not None and out.delayed else None

    async def page(self, request: Request) -> Response:
        """``/overlay/<table>[/<output>]``, ``/venue/<table>``, ``/producer/<table>``."""
        page = request.url.path.split("/")[1]
        table = request.path_params["table"]
        out = self._output_for(page, request.path_params.get("output"))
        if table not in self.cfg.tables or out is None:
            return PlainTextResponse("no such table or output", status_code=404)
        if out.locked and (denied := await self._gate(request)) is not None:
            return denied
        html = (STATIC / "page.html").read_text()
        html = (html.replace("{{PAGE}}", page).replace("{{TABLE}}", table)
                .replace("{{OUTPUT}}", out.name))
        response = HTMLResponse(html)
        return self._session(response, request) if out.locked else response

    async def events(self, request: Request) -> Response:
        """``/sse/<output>/<table>``: the page's event stream."""
        table = request.path_params["table"]
        out = self.outputs.get(request.path_params["output"])
        if table not in self.cfg.tables or out is None:
            return PlainTextResponse("no such table or output", status_code=404)
        if out.locked and (denied := await self._gate(request)) is not None:
            return denied
        try:
            last_id = event_id(request.headers.get("last-event-id")
                               or request.query_params.get("last"))
        except ValueError as exc:
            return PlainTextResponse(str(exc), status_code=400)
        return StreamingResponse(
            self.stream(out, table, last_id), media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})

    async def _producer_post(self, request: Request) -> Response | None:
        """The refusal of a producer's POST from another origin, without the producer's
        login, or without the ``X-Stud-Table`` header (:func:`guard_post`); None when
        it may go on."""
        return await guard_post(request, self._gate, lambda refusal: PlainTextResponse(
            refusal.reason, status_code=refusal.status))

    async def delay(self, request: Request) -> Response:
        """``POST /api/delay/<output>`` ``{"delay_s": .., "offset_ms": .., "confirm": ..}``
        (producer only): 409 when the change needs ``"confirm": true``."""
        if (refused := await self._producer_post(request)) is not None:
            return refused
        name = request.path_params["output"]
        if name not in self.outputs:
            return PlainTextResponse("no such output", status_code=404)
        try:
            body = json.loads(await request.body())
            if not isinstance(body, dict):
                raise ValueError("body must be a JSON object")
            delay_s, offset_ms = body.get("delay_s"), body.get("offset_ms")
            confirm = body.get("confirm", False)
            if not isinstance(confirm, bool):
                raise ValueError("confirm must be true or false")
            if delay_s is None and offset_ms is None:
                raise ValueError("give delay_s and/or offset_ms")
            for value, what in ((delay_s, "delay_s"), (offset_ms, "offset_ms")):
                if value is not None and (isinstance(value, bool)
                                          or not isinstance(value, int | float)):
                    raise ValueError(f"{what} must be a number")
            if offset_ms is not None and not isinstance(offset_ms, int):
                raise ValueError("offset_ms must be a whole number")
            out = self.set_delay(name, delay_s, offset_ms, confirmed=confirm)
        except ConfirmNeededError as exc:
            return PlainTextResponse(str(exc), status_code=409)
        except (ValueError, DelayError) as exc:
            return PlainTextResponse(str(exc), status_code=400)
        return JSONResponse(out.info())

    async def manual_card(self, request: Request) -> Response:
        """``POST /api/card/<table>`` ``{"zone": "seat3.down", "card": "As", "confirm":
        true}`` (producer only, issue 19): the dealer console's ``card`` command sent to
        the table's daemon as the production user; the daemon's reply with the words
        the page shows. 409 without ``"confirm": true``, 429 while the limit holds,
        504 when the table does not answer."""
        if (refused := await self._producer_post(request)) is not None:
            return refused
        table = request.path_params["table"]
        if table not in self.cfg.tables:
            return PlainTextResponse("no such table", status_code=404)
        raw = await request.body()
        try:
            if len(raw) > MAX_CARD_BODY:
                raise EntryError(f"the body is larger than {MAX_CARD_BODY} bytes")
            try:
                body = json.loads(raw)
            except ValueError:
                raise EntryError("the body is not JSON") from None
            entry = parse_entry(body)
        except ConfirmEntryError as exc:
            return PlainTextResponse(str(exc), status_code=409)
        except EntryError as exc:
            return PlainTextResponse(str(exc), status_code=400)
        now = time.monotonic()
        if not self.entries.begin(now):
            wait = math.ceil(self.entries.wait(now))
            return PlainTextResponse(
                f"too many manual entries: try again in {wait} s", status_code=429,
                headers={"Retry-After": str(wait)})
        broker = self.cfg.broker
        try:
            reply = await asyncio.to_thread(
                send_request, broker.host, broker.port, table, "card",
                json.dumps(entry.payload()).encode(), timeout=CARD_TIMEOUT_S,
                username=broker.username, password=broker.password)
        except NoReplyError as exc:
            # The card is never logged: a down card's identity stays off the log.
            log.error("broadcast_manual_card_unanswered", table=table, zone=entry.zone,
                      problem=str(exc))
            return JSONResponse({"accepted": False, "code": "no_reply", "reason": str(exc),
                                 "words": f"No answer from table {table}: {exc}."},
                                status_code=504)
        finally:
            self.entries.end()
        log.info("broadcast_manual_card", table=table, zone=entry.zone,
                 accepted=reply.get("accepted"), code=reply.get("code"))
        return JSONResponse({"accepted": reply.get("accepted") is True,
                             "code": reply.get("code"), "reason": reply.get("reason", ""),
                             "zone": entry.zone, "card": entry.card,
                             "words": producer_words(reply, entry)})

    async def outputs_info(self, request: Request) -> Response:
        """``/api/outputs``: every output's settings (producer only)."""
        if (denied := await self._gate(request)) is not None:
            return denied
        return JSONResponse([{**out.info(), "store_errors": self.store_errors,
                              "refused": self.refused} for out in self.outputs.values()])

    def player_stats(self, out: Output, table: str) -> dict[str, Any]:
        """The statistics ``out`` shows for ``table``'s players (blocking: a thread).

        A delayed output counts only hands that ended at least its delay ago: a hand
        still being played on the output must not show in its players' numbers (a
        won showdown would spoil it). The game is that of the table's newest hand.
        """
        store = self._archive
        assert store is not None
        path = self.cfg.archive.path if self.cfg.archive is not None else None
        if path is not None and not path.exists():
            raise FileNotFoundError(f"no archive at {path}")
        until = self.clock() - (out.line.delay_s + out.line.offset_ms / 1000.0
                                if out.delayed else 0.0)
        latest = store.search_hands(table=table, until=until, limit=1)
        game = str(latest[0]["game"]) if latest and latest[0].get("game") else None
        if game is None:
            return {"game": None, "players": {}}
        session = until - self.cfg.stats_session_hours * 3600

        def rows(since: float | None) -> dict[str, Any]:
            return {r["name"]: r for r in player_stats(store, game=game, since=since,
                                                        until=until)}

        if out.stats == "both":
            return {"game": game, "session": rows(session), "all": rows(None)}
        return {"game": game, "scope": out.stats,
                "players": rows(session if out.stats == "session" else None)}

    async def stats(self, request: Request) -> Response:
        """``/api/stats/<output>/<table>``: the players' statistics that output shows."""
        table = request.path_params["table"]
        out = self.outputs.get(request.path_params["output"])
        if (table not in self.cfg.tables or out is None or out.stats == "off"
                or self._archive is None):
            return PlainTextResponse("no statistics for this output", status_code=404)
        if out.locked and (denied := await self._gate(request)) is not None:
            return denied
        key = (out.name, table)
        cached = self._stats_cache.get(key)
        now = time.monotonic()
        if cached is None or now - cached[0] > STATS_CACHE_S:
            try:
                body = await asyncio.to_thread(self.player_stats, out, table)
            except (OSError, SQLAlchemyError) as exc:
                log.warning("broadcast_stats_unavailable", problem=str(exc).splitlines()[0][:200])
                return PlainTextResponse("the archive cannot be read now", status_code=503)
            self._stats_cache[key] = (now, body)
        else:
            body = cached[1]
        return JSONResponse(body)

    async def static(self, request: Request) -> Response:
        """The pages' own CSS and script (nothing is loaded from outside the machine)."""
        name = request.path_params["name"]
        if name not in ("page.css", "page.js"):
            return PlainTextResponse("not found", status_code=404)
        return FileResponse(STATIC / name, headers={"Cache-Control": "no-cache"})

    async def index(self, _request: Request) -> Response:
        """A list of the pages."""
        links = "".join(
            f'<li><a href="/overlay/{t}">overlay {t}</a> · <a href="/venue/{t}">venue {t}</a>'
            f' · <a href="/producer/{t}">producer {t}</a></li>' for t in self.cfg.tables)
        return HTMLResponse(f"<!doctype html><title>stud-table broadcast</title><ul>{links}</ul>")

    def _frame_ancestors(self, path: str) -> str | None:
        if path.startswith("/overlay/") and self.cfg.http.overlay_frame_ancestors:
            return " ".join(self.cfg.http.overlay_frame_ancestors)
        return None

    def app(self) -> SecurityHeaders:
        """The ASGI app, every response with the security headers (:mod:`..web.security`)."""
        return SecurityHeaders(self._routes(), self._frame_ancestors)

    def _routes(self) -> Starlette:
        return Starlette(routes=[
            Route("/", self.index),
            Route("/overlay/{table}", self.page),
            Route("/overlay/{table}/{output}", self.page),
            Route("/venue/{table}", self.page),
            Route("/producer/{table}", self.page),
            Route("/sse/{output}/{table}", self.events),
            Route("/api/delay/{output}", self.delay, methods=["POST"]),
            Route("/api/card/{table}", self.manual_card, methods=["POST"]),
            Route("/api/outputs", self.outputs_info),
            Route("/api/stats/{output}/{table}", self.stats),
            Route("/static/{name}", self.static),
        ])

    # ------------------------------------------------------------------ run

    def unbound(self) -> None:
        """The port could not be bound: close the store opened for serving."""
        self.store.close()

    def started(self) -> None:
        """Follow the broker and start releasing (uvicorn accepts connections now)."""
        connect_follower(self.client, self.cfg.broker, session_expiry_s=SESSION_EXPIRY_S)
        self._ticker = asyncio.create_task(self.ticker())

    async def stopped(self) -> None:
        """Stop releasing, leave the broker, close the store and the archive."""
        if self._ticker is not None:
            self._ticker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._ticker
            self._ticker = None
        stop_follower(self.client)
        self._loop = None  # a late message is not handed to a closed store
        self.store.close()
        if self._archive is not None:
            self._archive.close()


def _without_seq(payload: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in payload.items() if k != "seq"}


def _too_many(wait: float) -> Response:
    return PlainTextResponse(f"too many wrong passwords: try again in {math.ceil(wait)} s",
                             status_code=429, headers={"Retry-After": str(math.ceil(wait))})
