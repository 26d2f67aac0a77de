"""``stud-table floor``: every table on the broker on one supervisor's screen.

Thin edges around the pure core (:mod:`.live` folds messages into the view,
:mod:`.report` answers searches and the shift report):

* **in**: two paho-mqtt clients (the broker's ``floor`` user) subscribe to every
  table's public topics by wildcard: one to ``stud/v1/+/alerts``, ``+/alerts/open``
  and ``+/alerts/changes``, the other to ``+/status``, ``+/state``, ``+/dealer``,
  ``+/readers/+`` and ``+/hands`` (so that no state is ahead of an alert anywhere on
  the way): a table is discovered by its first message. A floor that follows a pit
  (``tables`` in floor.toml) subscribes to those tables' topics instead of ``+``
  (:func:`subscriptions`). Never ``secure/``: the role cannot read it. Each message is
  checked (a JSON object with the envelope's ``seq``/``ts``) on the event loop's
  thread, the alerts first, and folded into the view;
* **out**: Starlette over uvicorn (the broadcast service's stack) serves the
  dashboard and one server-sent-event stream per page: the whole view (tables and
  sorted open alerts) once, then only what changed: the open alerts of the tables
  whose alerts changed at once, the cards of the tables that changed at most once per
  :data:`THROTTLE_S` tick, the same ticks for every page. A stream that falls behind
  skips to the newest state of each table: the view is a state, not a log;
* **commands**: acknowledge, resolve and dealer sign-in/out are checked here (a
  malformed one is refused with its reason and nothing is sent), then sent as the
  table's console commands ``cmd/ack``, ``cmd/resolve``, ``cmd/dealer`` through
  :func:`table_controller.mqtt.request.send_request` (MQTT 5 request/response)
  with the logged-in supervisor's name as ``by``; the table's reply goes back to
  the page as it is.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import math
import secrets
import sys
import threading
import time
import urllib.parse
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, Final

import paho.mqtt.client as mqtt
import structlog
from paho.mqtt.enums import MQTTErrorCode
from paho.mqtt.reasoncodes import ReasonCode
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import (
    FileResponse,
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Route

from table_controller.domain.events import AlertAck, AlertResolve, DealerChange
from table_controller.domain.zones import MAX_SEATS
from table_controller.floor.archived import ArchiveUnavailableError, StoreArchive
from table_controller.floor.config import FloorConfig
from table_controller.floor.live import (
    ALERT_FOLLOWED,
    ALERT_KINDS,
    FOLLOWED,
    LATEST_ONLY,
    LiveView,
    route,
)
from table_controller.floor.phh import ExportError, record_to_hand
from table_controller.floor.report import Archive, MemoryArchive, Query, SearchError
from table_controller.handhistory.writer import write_phh
from table_controller.mqtt.console_commands import FLOOR_COMMANDS, REGISTRY, parse_command
from table_controller.mqtt.console_commands import CommandError as ConsoleCommandError
from table_controller.mqtt.follower import connect_follower, follower_client, stop_follower
from table_controller.mqtt.request import NoReplyError, send_request
from table_controller.mqtt.topics import (
    ARCHIVE_LEVEL,
    TopicError,
    check_level,
    pit_filters,
)
from table_controller.mqtt.unreachable import BrokerOutage
from table_controller.records.ops import floor_op
from table_controller.web.inbound import parse_payload
from table_controller.web.passwords import dummy_hash_like
from table_controller.web.security import PostRefusal, SecurityHeaders, cross_origin, guard_post
from table_controller.web.service import WebService

log = structlog.get_logger(__name__)

STATIC: Final = Path(__file__).parent / "static"
KEEPALIVE_S: Final = 15.0
"""An SSE comment this often keeps proxies from closing an idle stream."""
THROTTLE_S: Final = 0.25
"""Shortest time between two views of a page when no open alert changed."""
ALERTS_ROLE: Final = "alerts"
"""The MQTT connection that follows the alert topics only."""
REST_ROLE: Final = "rest"
"""The MQTT connection that follows everything else."""
ROLES: Final = (ALERTS_ROLE, REST_ROLE)
READ_CHUNK: Final = 65536
"""Bytes the MQTT client asks the socket for at once (see :class:`BufferedClient`)."""
SWITCH_INTERVAL_S: Final = 0.0005
"""How long a thread may hold the GIL while another waits for it (CPython's default: 5 ms)."""
COOKIE: Final = "stud_floor"
MAX_BODY: Final = 4096
"""Largest command or login body taken from a page."""
COMMANDS: Final = FLOOR_COMMANDS
"""The commands a page may send: the registry's floor commands (ack, resolve, dealer)."""
MAX_TABLE_ID: Final = 64
"""Longest table id taken from a page (a topic level of the table's own topics)."""


class BufferedClient(mqtt.Client):
    """paho's client reading the socket up to :data:`READ_CHUNK` bytes at a time.

    paho reads each packet with a system call for its first byte, one per byte of its
    length and one for the rest, each giving up the GIL to the event loop's thread: at
    2,000 messages a second (100 tables) that was most of the MQTT thread's time
    (issue 25). The bytes of a read are handed out to paho's reads in order, and a
    read goes on while bytes are left over (the socket's readiness no longer says).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._chunk = b""
        self._chunk_at = 0
        self._chunk_of: object = None  # the socket it came from (a reconnect drops it)

    def _sock_recv(self, bufsize: int) -> bytes:
        if self._sock is not self._chunk_of:
            self._chunk, self._chunk_at, self._chunk_of = b"", 0, self._sock
        if self._chunk_at >= len(self._chunk):
            data = super()._sock_recv(max(bufsize, READ_CHUNK))
            if not data:
                return data  # the broker closed the connection: paho sees it as ever
            self._chunk, self._chunk_at = data, 0
        part = self._chunk[self._chunk_at:self._chunk_at + bufsize]
        self._chunk_at += len(part)
        return part

    def buffered(self) -> int:
        """Bytes read from the socket that paho has not taken yet."""
        return len(self._chunk) - self._chunk_at if self._sock is self._chunk_of else 0

    def loop_read(self, max_packets: int = 1) -> MQTTErrorCode:
        """paho's read, then on while read bytes are left (each is a packet or a part)."""
        rc = super().loop_read(max_packets)
        while rc == MQTTErrorCode.MQTT_ERR_SUCCESS and self._sock is not None and self.buffered():
            rc = super().loop_read(1)
        return rc


def subscriptions(role: str, pit: tuple[str, ...] = ()) -> list[tuple[str, int]]:
    """``(filter, QoS)`` that the connection ``role`` asks the broker for: the alert
    topics (:data:`ALERT_FOLLOWED`) on the alerts' connection, the rest on the other;
    of every table (``+``) or, for a floor that follows one pit, of the ``pit``'s tables
    only (so that it is sent, and reads, nothing of the others: docs/scaling.md). The
    snapshots of :data:`LATEST_ONLY` at QoS 0, the rest at QoS 1."""
    return [(topic, 0 if suffix in LATEST_ONLY else 1)
            for suffix in FOLLOWED if (suffix in ALERT_FOLLOWED) == (role == ALERTS_ROLE)
            for topic in pit_filters(suffix, pit)]


def tick(now: float) -> int:
    """The number of the :data:`THROTTLE_S` tick that monotonic time ``now`` falls in."""
    return math.floor(now / THROTTLE_S)


class CommandError(ValueError):
    """A command from a page that is not sent: ``str()`` says why."""


def _table_of(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise CommandError("table is required (a non-empty string)")
    if len(value) > MAX_TABLE_ID:
        raise CommandError(f"table is longer than {MAX_TABLE_ID} characters")
    try:
        return check_level(value, "table id")
    except TopicError as exc:
        raise CommandError(str(exc)) from None


def build_command(name: str, body: Any, by: str) -> tuple[str, dict[str, Any]]:
    """``(table, payload)`` of a page's command ``name``, with ``by`` set by us (ack and
    resolve; the contract's ``cmd/dealer`` has none).

    Pure: raises :class:`CommandError` with the reason for anything malformed, so
    the page is told and nothing reaches the table. A ``by`` in the body is refused:
    the acting supervisor is the one logged in, never what a page claims. The
    payload is checked by the table's own parser (:func:`parse_command`, the one
    console-command registry, issue 20): what the dashboard sends, the table takes,
    with the same limits and the same words, and it is sent as the table journals it.
    """
    if name not in COMMANDS:
        raise CommandError(f"unknown command {name[:32]!r} ({', '.join(COMMANDS)})")
    if not isinstance(body, dict):
        raise CommandError("the body must be a JSON object")
    if "by" in body:
        raise CommandError("by is set by the dashboard from the login, not by the page")
    table = _table_of(body.get("table"))
    payload = {key: value for key, value in body.items() if key != "table"}
    if "by" in REGISTRY[name].fields:
        # The contract's cmd/dealer has no ``by``: the dealer signs in, the journal and
        # the dashboard's log say which supervisor pressed the button.
        payload["by"] = by
    try:
        # Floor commands name no seat: the seat count is the largest table's, unused.
        command = parse_command(name, json.dumps(payload).encode(), seats=MAX_SEATS)
    except ConsoleCommandError as exc:
        raise CommandError(exc.reason) from None
    assert isinstance(command, AlertAck | AlertResolve | DealerChange)
    # Sent as the table will journal it (spaces squeezed, the journal op's fields).
    return table, {k: v for k, v in floor_op(command).items() if k != "op"}


class Floor(WebService):
    """The service: live view, archive, MQTT follower, command sender and web app."""

    def __init__(self, cfg: FloorConfig, clock: Callable[[], float] = time.time) -> None:
        super().__init__("floor", cfg.http.host, cfg.http.port, COOKIE, clock)
        self.cfg = cfg
        self.clock = clock
        self.view = LiveView()
        self.memory = MemoryArchive(cfg.hands_kept)
        self.archive: Archive = (self.memory if cfg.archive is None
                                 else StoreArchive(cfg.archive))
        self.refused = 0
        """Messages refused (not JSON, no envelope); shown on the page, logged."""
        self.connected = threading.Event()
        # An unknown name is checked against this (the first supervisor's scrypt
        # parameters): the same work, so the answer's timing says nothing.
        self._dummy_hash = dummy_hash_like(cfg.supervisors[0].password_hash)
        # Each waiting stream's future, and whether only an alert change wakes it.
        self._waiters: list[tuple[asyncio.Future[None], bool]] = []
        self._cached: tuple[int, str] = (-1, "")
        # JSON made once per change however many pages follow: each table's card and
        # open alerts (keyed by the version of their last change) and the last delta.
        self._card_json: dict[str, tuple[int, str]] = {}
        self._alerts_json: dict[str, tuple[int, str]] = {}
        self._delta: dict[str, tuple[tuple[int, int], str]] = {}
        # Messages from the MQTT threads, taken on the event loop's thread in batches:
        # the alerts' first, the rest after the streams have sent them (``_later``).
        self._inbox: dict[str, list[tuple[str, bytes]]] = {role: [] for role in ROLES}
        self._inbox_lock = threading.Lock()
        self._draining = False
        self._later: list[tuple[str, bytes]] = []
        self._tasks: set[asyncio.Task[None]] = set()
        # Logged once per outage and reason (paho retries every few seconds): the page
        # shows "broker LOST" meanwhile.
        self.outage = BrokerOutage("floor_mqtt_unreachable", cfg.broker.host, cfg.broker.port)
        self._up: set[str] = set()  # the roles of the clients connected now
        # Two connections: the alerts' own, so that an alert never waits in the broker's
        # queue, the socket or paho behind the states of a hundred tables (ten for each
        # alert), and one for everything else (issue 25).
        self.clients = {role: self._mqtt_client(role) for role in ROLES}

    # ------------------------------------------------------------------ in

    def take(self, topic: str, raw: bytes) -> bool:
        """One message from the broker: checked, folded in; False if refused or not ours."""
        where = route(topic)
        if where is None:
            return False
        table, kind = where
        if table == ARCHIVE_LEVEL:  # the archive services' own status, not a table
            return False
        try:
            check_level(table, "table id")
            payload = parse_payload(raw)
        except (ValueError, TopicError) as exc:
            self.refused += 1
            log.warning("floor_message_refused", topic=topic[:120], problem=str(exc))
            return False
        if table not in self.view.tables and isinstance(self.archive, StoreArchive):
            self._lookup_game(table)
        alert_version = self.view.alert_version
        self.view.take(table, kind, payload)
        if kind == "hand":
            self.memory.add_hand({**payload, "table": table})
        elif kind == "alert_change":
            self.memory.change_alert(table, payload)
        if kind in ALERT_KINDS:
            for alert in self.view.tables[table].open.values():
                self.memory.note_alert(alert)
        self._wake(alerts=self.view.alert_version != alert_version)
        return True

    def take_batch(self, batch: list[tuple[str, bytes]]) -> None:
        """Messages in the order the broker sent them, where a ``state`` or a reader's
        status that a newer one of the same topic follows is skipped unread: each is
        the table's whole retained snapshot of it, so the newest is the truth, and a
        floor that fell behind catches up by reading less (issue 25)."""
        newest = {topic: i for i, (topic, _) in enumerate(batch)
                  if topic.endswith("/state") or "/readers/" in topic}
        for i, (topic, raw) in enumerate(batch):
            if newest.get(topic, i) == i:
                self._take_logged(topic, raw)

    def _lookup_game(self, table: str) -> None:
        """A newly found table's game from its last archived hand (the public state has
        no game; the next finished hand would tell, but a supervisor wants it now)."""
        loop = self._loop
        if loop is None:
            return

        async def lookup() -> None:
            try:
                rows = await asyncio.to_thread(self.archive.search_hands, Query(table=table))
            except (ArchiveUnavailableError, SearchError):
                return  # the page shows the archive's state on search; the live view goes on
            view = self.view.tables.get(table)
            if rows and view is not None and view.game is None and rows[0].get("game"):
                view.game = str(rows[0]["game"])[:16]
                self.view.touch(table)
                self._wake(alerts=False)

        task = loop.create_task(lookup())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def snapshot_json(self) -> str:
        """The view as JSON, encoded once per change however many pages follow it."""
        version, text = self._cached
        if version != self.view.version:
            snap = self.view.snapshot()
            snap["alert_version"] = self.view.alert_version
            snap["refused"] = self.refused
            snap["connected"] = self.connected.is_set()
            text = json.dumps(snap)
            self._cached = (self.view.version, text)
        return text

    def alerts_json(self, since: int) -> str:
        """The ``alerts`` event after alert version ``since``: ``open`` maps each table
        whose alerts changed to all its open alerts now (an empty list: none left)."""
        view = self.view
        key = (since, view.alert_version)
        cached = self._delta.get("alerts")
        if cached is not None and cached[0] == key:
            return cached[1]
        parts = []
        for table, at in view.alerts_changed_since(since):
            entry = self._alerts_json.get(table)
            if entry is None or entry[0] != at:
                entry = self._alerts_json[table] = (at, json.dumps(view.open_alerts(table)))
            parts.append(f"{json.dumps(table)}:{entry[1]}")
        text = f'{{"alert_version":{view.alert_version},"open":{{{",".join(parts)}}}}}'
        self._delta["alerts"] = (key, text)
        return text

    def tables_json(self, since: int) -> str:
        """The ``tables`` event after version ``since``: the cards of the tables that
        changed, and the page-wide figures (connection, messages refused, ignored)."""
        view = self.view
        key = (since, view.version)
        cached = self._delta.get("tables")
        if cached is not None and cached[0] == key:
            return cached[1]
        cards = []
        for table, at in view.changed_since(since):
            entry = self._card_json.get(table)
            if entry is None or entry[0] != at:
                entry = self._card_json[table] = (at, json.dumps(view.tables[table].summary()))
            cards.append(entry[1])
        head = json.dumps({"version": view.version, "ignored": view.ignored,
                           "refused": self.refused, "connected": self.connected.is_set()})
        text = f'{head[:-1]},"tables":[{",".join(cards)}]}}'
        self._delta["tables"] = (key, text)
        return text

    # ------------------------------------------------------------------ MQTT

    def _mqtt_client(self, role: str) -> mqtt.Client:
        client_id = self.cfg.broker.client_id or f"stud-floor-{secrets.token_hex(16)}"
        if role == ALERTS_ROLE:
            client_id = f"{client_id}-alerts"
        return follower_client(self.cfg.broker, client_id, "floor", self.outage,
                               on_connected=self._on_connect, on_lost=self._on_disconnect,
                               on_message=self._on_message, userdata=role,
                               client_class=BufferedClient)

    def _on_connect(self, client: mqtt.Client, role: str) -> None:
        # A fresh session each time: the retained status, state, alerts/open, dealer
        # and readers rebuild the whole view on (re)connect.
        client.subscribe(subscriptions(role, self.cfg.pit))
        self._up.add(role)
        if self._up >= set(ROLES):
            self.connected.set()
        self._wake_threadsafe()
        log.info("floor_mqtt_connected", connection=role)

    def _on_disconnect(self, role: str, reason: ReasonCode) -> None:
        self._up.discard(role)
        self.connected.clear()
        self._wake_threadsafe()
        log.warning("floor_mqtt_disconnected", reason=str(reason), connection=role)

    def _wake_threadsafe(self) -> None:
        loop = self._loop
        if loop is not None:
            loop.call_soon_threadsafe(self._bump)

    def _bump(self) -> None:
        self.view.version += 1  # the connection flag is part of the snapshot
        self._wake(alerts=False)

    def _wake(self, *, alerts: bool) -> None:
        """Wake the streams waiting for a change: all of them on an alert change, else
        those that have nothing pending (the others wait out their throttle anyway:
        waking each page at every state message was most of the floor's work)."""
        keep: list[tuple[asyncio.Future[None], bool]] = []
        for future, alerts_only in self._waiters:
            if future.done():
                continue
            if alerts or not alerts_only:
                future.set_result(None)
            else:
                keep.append((future, alerts_only))
        self._waiters = keep

    async def _wait(self, timeout: float, *, alerts_only: bool) -> bool:
        """Wait for :meth:`_wake` (True) or ``timeout`` (False)."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if len(self._waiters) > 64:
            self._waiters = [w for w in self._waiters if not w[0].done()]
        self._waiters.append((future, alerts_only))
        try:
            await asyncio.wait_for(future, timeout=timeout)
        except TimeoutError:
            return False
        return True

    def _on_message(self, _c: mqtt.Client, role: str, message: mqtt.MQTTMessage) -> None:
        loop = self._loop
        if loop is None:
            return
        # One wake-up of the event loop per batch, not per message.
        with self._inbox_lock:
            self._inbox[role].append((message.topic, bytes(message.payload)))
            if self._draining:
                return
            self._draining = True
        loop.call_soon_threadsafe(self._drain)

    def _drain(self) -> None:
        with self._inbox_lock:
            alerts, rest = self._inbox[ALERTS_ROLE], self._inbox[REST_ROLE]
            self._inbox = {role: [] for role in ROLES}
            self._draining = False
        self.take_batch(alerts)
        if rest:
            # After the streams woken by these alerts have sent them; in the order
            # received across drains (a newer state must not be taken before an older).
            if not self._later:
                asyncio.get_running_loop().call_soon(self._drain_later)
            self._later.extend(rest)

    def _drain_later(self) -> None:
        batch, self._later = self._later, []
        self.take_batch(batch)

    def _take_logged(self, topic: str, raw: bytes) -> None:
        try:
            self.take(topic, raw)
        except Exception:  # a bad message never takes the dashboard down
            self.refused += 1
            log.exception("floor_take_failed", topic=topic[:120])

    # ------------------------------------------------------------------ stream

    async def stream(self) -> AsyncIterator[str]:
        """The SSE stream: the whole view (``view``) now, then only what changed.

        A change to the open alerts goes out at once (``alerts``: those tables' open
        alerts); other changes (a state update at every card, reader heartbeats) at
        most once per :data:`THROTTLE_S` tick (``tables``: the cards that changed). A
        hundred busy tables change the view thousands of times a second; the whole view after
        each alert was 130 KB at 100 tables, and encoding and sending it was what made
        the page late (issue 25).
        """
        yield "retry: 1000\n\n"
        view = self.view
        sent, sent_alerts = view.version, view.alert_version
        yield f"event: view\ndata: {self.snapshot_json()}\n\n"
        # The cards go out once per tick of THROTTLE_S, the same ticks for every page:
        # the pages then ask for the cards changed since the same version at the same
        # moment and share one encoding of them. Each page on a clock of its own (0.25 s
        # after its last send) re-encoded nearly every busy table's card for itself,
        # ten times the work with ten pages (issue 25).
        last = tick(time.monotonic())
        while True:
            if view.alert_version != sent_alerts:
                text, sent_alerts = self.alerts_json(sent_alerts), view.alert_version
                yield f"event: alerts\ndata: {text}\n\n"
                continue
            now = time.monotonic()
            pending = view.version != sent
            if pending and tick(now) > last:
                text, sent, last = self.tables_json(sent), view.version, tick(now)
                yield f"event: tables\ndata: {text}\n\n"
                continue
            wait = (last + 1) * THROTTLE_S - now if pending else KEEPALIVE_S
            if not await self._wait(wait, alerts_only=pending) and not pending:
                yield ": keepalive\n\n"

    # ------------------------------------------------------------------ login

    def supervisor_of(self, request: Request) -> str | None:
        """The logged-in supervisor's name, or None."""
        return self.sessions.who(request)

    async def login(self, request: Request) -> Response:
        """``GET /login``: the form; ``POST /login``: check name and password.

        Same-origin only; per client a backoff and then a lockout after wrong
        guesses (:mod:`table_controller.web.throttle`), answered with 429 without
        checking anything; an unknown name costs the same hash as a known one.
        """
        if request.method == "GET":
            return self._login_page("")
        if (refused := cross_origin(request)) is not None:
            log.warning("floor_cross_origin_refused", path="/login", problem=refused)
            return PlainTextResponse(refused, status_code=403)
        wait = self.passwords.wait(request)
        if wait > 0:
            seconds = math.ceil(wait)
            return self._login_page(f"Too many wrong passwords: try again in {seconds} s.",
                                    status=429, headers={"Retry-After": str(seconds)})
        raw = await request.body()
        form = urllib.parse.parse_qs(raw[:MAX_BODY].decode("utf-8", "replace"))
        name = (form.get("name") or [""])[0]
        password = (form.get("password") or [""])[0]
        supervisor = self.cfg.supervisor(name)
        stored = supervisor.password_hash if supervisor is not None else self._dummy_hash
        if not await self.passwords.check(request, password, stored,
                                          known=supervisor is not None, name=name[:40]):
            return self._login_page("Unknown name or wrong password.", status=401)
        log.info("floor_login", name=name)
        response = RedirectResponse("/", status_code=303)
        self.sessions.open(response, name)
        return response

    async def logout(self, request: Request) -> Response:
        """``POST /logout``: forget the session (same-origin only: a page of another
        origin, even on this host, cannot log the supervisor out)."""
        if (refused := cross_origin(request)) is not None:
            log.warning("floor_cross_origin_refused", path="/logout", problem=refused)
            return PlainTextResponse(refused, status_code=403)
        response = RedirectResponse("/login", status_code=303)
        self.sessions.close(request, response)
        return response

    def _login_page(self, problem: str, status: int = 200,
                    headers: dict[str, str] | None = None) -> Response:
        html = (STATIC / "login.html").read_text().replace(
            "{{PROBLEM}}", problem.replace("<", "&lt;"))
        return HTMLResponse(html, status_code=status, headers=headers)

    # ------------------------------------------------------------------ pages and API

    async def page(self, request: Request) -> Response:
        """``/``: the dashboard (``?tab=report`` opens the shift report)."""
        name = self.supervisor_of(request)
        if name is None:
            return RedirectResponse("/login", status_code=303)
        html = (STATIC / "floor.html").read_text().replace(
            "{{SUPERVISOR}}", name.replace("&", "&amp;").replace("<", "&lt;")
            .replace('"', "&quot;"))
        return HTMLResponse(html, headers={"Cache-Control": "no-store"})

    def _denied(self) -> Response:
        return PlainTextResponse("log in first (/login)", status_code=401)

    async def events(self, request: Request) -> Response:
        """``/sse``: the view's event stream."""
        if self.supervisor_of(request) is None:
            return self._denied()
        return StreamingResponse(self.stream(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store",
                                          "X-Accel-Buffering": "no"})

    async def view_json(self, request: Request) -> Response:
        """``/api/view``: the view now (for scripts and the tests)."""
        if self.supervisor_of(request) is None:
            return self._denied()
        return Response(self.snapshot_json(), media_type="application/json")

    async def command(self, request: Request) -> Response:
        """``POST /api/cmd/{ack|resolve|dealer}``: check, send to the table, return its reply."""
        refused = await guard_post(request, self._gate,
                                   lambda refusal: self._refuse_post(request, refusal))
        if refused is not None:
            return refused
        name = self.supervisor_of(request)
        assert name is not None  # the gate let it through
        raw = await request.body()
        command = request.path_params["name"]
        try:
            if len(raw) > MAX_BODY:
                raise CommandError(f"the body is larger than {MAX_BODY} bytes")
            try:
                body = json.loads(raw)
            except ValueError:
                raise CommandError("the body is not JSON") from None
            table, payload = build_command(command, body, name)
        except CommandError as exc:
            log.warning("floor_command_refused", command=command[:32], by=name,
                        problem=str(exc))
            return self._refuse(str(exc))
        broker = self.cfg.broker
        try:
            reply = await asyncio.to_thread(
                send_request, broker.host, broker.port, table, command,
                json.dumps(payload).encode(), timeout=self.cfg.command_timeout_s,
                username=broker.username, password=broker.password)
        except NoReplyError as exc:
            log.error("floor_command_unanswered", command=command, table=table, by=name,
                      problem=str(exc))
            return JSONResponse({"accepted": False, "code": "no_reply", "reason": str(exc)},
                                status_code=504)
        log.info("floor_command", command=command, table=table, by=name,
                 accepted=reply.get("accepted"), code=reply.get("code"))
        return JSONResponse(reply)

    async def _gate(self, request: Request) -> Response | None:
        return None if self.supervisor_of(request) is not None else self._denied()

    def _refuse_post(self, request: Request, refusal: PostRefusal) -> Response:
        if refusal.code == "cross_origin":
            log.warning("floor_cross_origin_refused", path=request.url.path[:60],
                        problem=refusal.reason)
        return JSONResponse({"accepted": False, "code": refusal.code,
                             "reason": refusal.reason}, status_code=refusal.status)

    def _refuse(self, reason: str) -> Response:
        return JSONResponse({"accepted": False, "code": "malformed", "reason": reason},
                            status_code=400)

    async def search(self, request: Request) -> Response:
        """``/api/search/{hands|alerts}?table=&since=&until=&dealer=&code=``."""
        if self.supervisor_of(request) is None:
            return self._denied()
        try:
            q = Query.from_params(dict(request.query_params))
        except SearchError as exc:
            return PlainTextResponse(str(exc), status_code=400)
        what = request.path_params["what"]
        if what not in ("hands", "alerts"):
            return PlainTextResponse("search hands or alerts", status_code=404)
        try:
            rows = await asyncio.to_thread(
                self.archive.search_hands if what == "hands" else self.archive.search_alerts, q)
        except ArchiveUnavailableError as exc:
            return PlainTextResponse(str(exc), status_code=503)
        return JSONResponse({"rows": rows, "source": self.archive.source})

    async def report(self, request: Request) -> Response:
        """``/api/report?since=&until=``: the shift report (default: the last 8 hours)."""
        if self.supervisor_of(request) is None:
            return self._denied()
        try:
            q = Query.from_params(dict(request.query_params))
            until = q.until if q.until is not None else self.clock()
            since = q.since if q.since is not None else until - 8 * 3600
            body = await asyncio.to_thread(self.archive.report, since, until)
        except SearchError as exc:
            return PlainTextResponse(str(exc), status_code=400)
        except ArchiveUnavailableError as exc:
            return PlainTextResponse(str(exc), status_code=503)
        body["source"] = self.archive.source
        return JSONResponse(body)

    async def _hand_record(self, request: Request) -> tuple[str, dict[str, Any]] | Response:
        """``(hand_id, record)`` of an export request, or the answer refusing it (no
        login, archive unavailable, no such hand)."""
        if self.supervisor_of(request) is None:
            return self._denied()
        hand_id = request.path_params["hand_id"]
        try:
            record = await asyncio.to_thread(self.archive.hand, hand_id)
        except ArchiveUnavailableError as exc:
            return PlainTextResponse(str(exc), status_code=503)
        if record is None:
            return PlainTextResponse("no such hand", status_code=404)
        return hand_id, record

    async def export(self, request: Request) -> Response:
        """``/api/hand/{hand_id}.json``: one hand record, as a download."""
        found = await self._hand_record(request)
        if isinstance(found, Response):
            return found
        hand_id, record = found
        # The floor never shows a down card, even from a secure archive.
        record = {k: v for k, v in record.items() if k != "down_cards"}
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in hand_id)[:100]
        return Response(json.dumps(record, indent=1), media_type="application/json",
                        headers={"Content-Disposition": f'attachment; filename="{safe}.json"'})

    async def export_phh(self, request: Request) -> Response:
        """``/api/hand/{hand_id}.phh``: one hand as a PHH hand history (see :mod:`.phh`)."""
        found = await self._hand_record(request)
        if isinstance(found, Response):
            return found
        hand_id, record = found
        try:
            # Down cards are never used: only what the public saw goes into the file.
            table = str(record.get("table") or hand_id.split(":", 1)[0])
            conf = self.cfg.stakes_of(table)
            stakes = None if conf is None else (conf.ante, conf.bring_in, conf.small_bet,
                                                conf.big_bet)
            text = write_phh(record_to_hand({**record, "down_cards": None}, stakes))
        except (ExportError, ValueError) as exc:
            return PlainTextResponse(f"cannot export this hand as PHH: {exc}",
                                     status_code=422)
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in hand_id)[:100]
        return Response(text, media_type="application/toml",
                        headers={"Content-Disposition": f'attachment; filename="{safe}.phh"'})

    async def static(self, request: Request) -> Response:
        """The page's own CSS and script (nothing is loaded from outside the machine)."""
        name = request.path_params["name"]
        if name not in ("floor.css", "floor.js"):
            return PlainTextResponse("not found", status_code=404)
        return FileResponse(STATIC / name, headers={"Cache-Control": "no-cache"})

    def app(self) -> SecurityHeaders:
        """The ASGI app, every response with the security headers (no page framable)."""
        return SecurityHeaders(self._routes())

    def _routes(self) -> Starlette:
        return Starlette(routes=[
            Route("/", self.page),
            Route("/login", self.login, methods=["GET", "POST"]),
            Route("/logout", self.logout, methods=["POST"]),
            Route("/sse", self.events),
            Route("/api/view", self.view_json),
            Route("/api/cmd/{name}", self.command, methods=["POST"]),
            Route("/api/search/{what:str}", self.search),
            Route("/api/report", self.report),
            Route("/api/hand/{hand_id}.json", self.export),
            Route("/api/hand/{hand_id}.phh", self.export_phh),
            Route("/static/{name}", self.static),
        ])

    # ------------------------------------------------------------------ run

    def started(self) -> None:
        """Follow the broker (uvicorn accepts connections now)."""
        # What start-up made (the web stack, the configuration) lives as long as the
        # process: frozen out of the collector, a full collection scans only the
        # view, not some 70,000 objects (a 50 ms pause that sat in the page's p99).
        gc.collect()
        gc.freeze()
        # The MQTT thread gives up the GIL at every socket call; with the default 5 ms
        # switch interval it then waited behind the loop's thread that long each time,
        # and fell behind the broker at a fraction of a core (issue 25).
        sys.setswitchinterval(SWITCH_INTERVAL_S)
        for client in self.clients.values():
            connect_follower(client, self.cfg.broker)
        log.info("floor_following", tables=",".join(self.cfg.pit) or "+")

    async def stopped(self) -> None:
        """Leave the broker; wake every stream so that it ends."""
        for client in self.clients.values():
            stop_follower(client)
        self._loop = None
        with contextlib.suppress(Exception):
            self._wake(alerts=True)
