"""The floor dashboard in a test: a real ``stud-table floor`` process, a logged-in HTTP
client with its SSE reader, and contract-shaped table messages (issue 14 contract:
``alerts`` with ids, ``alerts/open``, ``alerts/changes``, ``dealer``, ``hands``).

The table side is published here directly (the daemon's part of the contract is
another branch's work): :class:`FakeTable` publishes what a table's daemon would,
and :class:`CommandResponder` answers ``cmd/ack|resolve|dealer`` as the daemon's
console machinery does (MQTT 5 response topic + correlation data, reply
``{accepted, code, reason}``), recording what it got.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import sqlite3
import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion, MQTTProtocolVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from table_controller.floor.live import sort_key
from table_controller.mqtt.topics import TableTopics
from table_controller.testing.broker import WAIT, wait_until
from table_controller.testing.service_process import (
    ServiceProcess,
    WebServiceProcess,
    drop_connection,
    sse_events,
)
from table_controller.web.passwords import hash_password

SUPERVISORS = {"Maria Lopez": "floor-secret-1", "Tom Reyes": "floor-secret-2"}
HASHES = {name: hash_password(pw, salt=b"0123456789abcdef") for name, pw in SUPERVISORS.items()}


def write_config(tmp: Path, broker_port: int, *, username: str | None = None,
                 password: str | None = None, extra: str = "",
                 archive: Path | None = None, http_port: int = 0) -> Path:
    """A floor.toml for the test's broker, any free HTTP port, two supervisors."""
    creds = ""
    if username is not None:
        creds = f'username = "{username}"\npassword = "{password}"\n'
    sups = "".join(f'[[supervisors]]\nname = "{n}"\npassword_hash = "{h}"\n'
                   for n, h in HASHES.items())
    path = tmp / "floor.toml"
    path.write_text(f"""{extra}
command_timeout_s = 5

[broker]
host = "127.0.0.1"
port = {broker_port}
{creds}
[http]
port = {http_port}

{sups}""" + (f'[archive]\npath = "{archive}"\n' if archive is not None else ""))
    return path


class ArchiveProcess(ServiceProcess):
    """``stud-table archive --config`` (the i14-archive service) writing ``database``."""

    def __init__(self, tmp: Path, broker_port: int, database: Path) -> None:
        config = tmp / "archive.toml"
        config.write_text(f"""instance = "floor-test"
status_interval_s = 1

[broker]
host = "127.0.0.1"
port = {broker_port}

[database]
path = "{database}"
""")
        self.database: Path | None = database
        """The SQLite file whose schema start-up waits for (None: not SQLite, or a
        config rewritten by the caller: connected is enough)."""
        super().__init__("archive", config, tmp / "archive.log", self._following)

    def _following(self, text: str) -> bool:
        # Connected, and the writer has laid out the schema: a test that reads the
        # database at once found no table under load ("no such table: hands").
        return "archive_mqtt_connected" in text and (
            self.database is None or _has_hands_table(self.database))


def _has_hands_table(database: Path) -> bool:
    """Whether the archive's SQLite file holds its ``hands`` table yet."""
    if not database.exists():
        return False
    with contextlib.closing(sqlite3.connect(database)) as conn:
        return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table'"
                            " AND name = 'hands'").fetchone() is not None


class FloorService(WebServiceProcess):
    """``stud-table floor --config`` as a child process."""

    def __init__(self, config: Path) -> None:
        super().__init__("floor", config, config.parent / "floor.log",
                         followed="floor_mqtt_connected")

    def start(self, *, connected: bool = True) -> FloorService:
        """Start it and wait until it serves (and follows the broker, if ``connected``)."""
        self.followed = "floor_mqtt_connected" if connected else None
        return super().start()


@dataclass
class Page:
    """What a browser does over HTTP, as a supervisor: log in, GET, POST JSON."""

    port: int
    cookie: str = ""

    def request(self, method: str, path: str, body: bytes | None = None,
                headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], str]:
        """One request with the session cookie: (status, headers, body text)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=WAIT)
        all_headers = dict(headers or {})
        if self.cookie:
            all_headers["Cookie"] = self.cookie
        conn.request(method, path, body=body, headers=all_headers)
        resp = conn.getresponse()
        text = resp.read().decode()
        conn.close()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, text

    def login(self, name: str, password: str | None = None) -> int:
        """Log in; return the status (303 on success)."""
        form = urllib.parse.urlencode({"name": name,
                                       "password": password or SUPERVISORS[name]})
        status, headers, _ = self.request(
            "POST", "/login", form.encode(),
            {"Content-Type": "application/x-www-form-urlencoded"})
        cookie = headers.get("set-cookie", "")
        if cookie:
            self.cookie = cookie.split(";", 1)[0]
        return status

    def command(self, name: str, body: Any) -> tuple[int, dict[str, Any]]:
        """POST a command as the page does; (status, the JSON reply)."""
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        status, _, text = self.request("POST", f"/api/cmd/{name}", data,
                                       {"Content-Type": "application/json",
                                        "X-Stud-Table": "1"})
        return status, json.loads(text)

    def view(self) -> dict[str, Any]:
        """``/api/view``."""
        status, _, text = self.request("GET", "/api/view")
        assert status == 200, (status, text)
        result: dict[str, Any] = json.loads(text)
        return result

    def get_json(self, path: str) -> Any:
        """GET a JSON API path (asserting 200)."""
        status, _, text = self.request("GET", path)
        assert status == 200, (status, text)
        return json.loads(text)


class _Merged:
    """The page's view, kept up to date from the stream's events."""

    def __init__(self) -> None:
        self.view: dict[str, Any] | None = None
        self.cards: dict[str, dict[str, Any]] = {}
        self.open: dict[str, list[dict[str, Any]]] = {}

    def take(self, event: str, data: str) -> dict[str, Any] | None:
        """The view after one event (a new dict each time), or None before the first."""
        body = json.loads(data) if event in ("view", "alerts", "tables") else None
        if event == "view":
            self.view = body
            self.cards = {t["table"]: t for t in body["tables"]}
            self.open = {}
            for alert in body["alerts"]:
                self.open.setdefault(alert["table"], []).append(alert)
            return {**body}
        if self.view is None or body is None:
            return None
        if event == "alerts":
            for table, alerts in body["open"].items():
                self.open[table] = alerts
                if table in self.cards:  # the card's count follows at once, as on the page
                    self.cards[table] = {**self.cards[table], "open_alerts": len(alerts)}
            self.view = {**self.view, "alert_version": body["alert_version"],
                         "alerts": sorted((a for v in self.open.values() for a in v),
                                          key=sort_key),
                         "tables": [self.cards[t] for t in sorted(self.cards)]}
        else:
            self.cards.update((t["table"], t) for t in body["tables"])
            self.view = {**self.view, **{k: v for k, v in body.items() if k != "tables"},
                         "tables": [self.cards[t] for t in sorted(self.cards)]}
        return self.view


@dataclass
class SseView:
    """Reads ``/sse`` in a thread; ``views`` grows with (time received, view): the whole
    view as the page holds it after each event (the first ``view``, then each ``alerts``
    and ``tables`` delta merged into it, as floor.js does)."""

    port: int
    cookie: str
    views: list[tuple[float, dict[str, Any]]] = field(default_factory=list)
    _conn: http.client.HTTPConnection | None = None
    on_view: Callable[[float, dict[str, Any]], None] | None = None
    on_event: Callable[[float, str, str], None] | None = None
    """If set, each event's (time received, name, data) goes here as it is, merged into
    no view (the benchmarks: reading a page costs them as little as it can)."""

    def start(self) -> SseView:
        """Connect; the reader thread merges the events into views."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=300)
        conn.request("GET", "/sse", headers={"Cookie": self.cookie,
                                             "Accept": "text/event-stream"})
        resp = conn.getresponse()
        assert resp.status == 200, resp.status
        self._conn = conn
        threading.Thread(target=self._read, args=(resp,), daemon=True).start()
        return self

    def _read(self, resp: http.client.HTTPResponse) -> None:
        merged = _Merged()
        with contextlib.suppress(Exception):  # closed under the reader: the stream is over
            for fields in sse_events(resp):
                at = time.time()  # when it arrived, before merging it
                event, data = fields.get("event", ""), fields["data"]
                if not data:
                    continue
                if self.on_event is not None:
                    self.on_event(at, event, data)
                    continue
                view = merged.take(event, data)
                if view is not None:
                    if self.on_view is not None:
                        self.on_view(at, view)
                    else:
                        self.views.append((at, view))

    def wait(self, predicate: Callable[[dict[str, Any]], bool], what: str) -> dict[str, Any]:
        """The first view (newest first) that fits ``predicate``, waiting for it."""
        found: list[dict[str, Any]] = []

        def check() -> bool:
            for _, view in reversed(list(self.views)):
                if predicate(view):
                    found.append(view)
                    return True
            return False

        wait_until(check, WAIT, what)
        return found[0]

    def close(self) -> None:
        """Drop the connection."""
        drop_connection(self._conn)


def mqtt_client(port: int, name: str, username: str | None = None,
                password: str | None = None) -> mqtt.Client:
    """A connected MQTT 5 client (network loop running)."""
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=name,
                         protocol=MQTTProtocolVersion.MQTTv5)
    if username is not None:
        client.username_pw_set(username, password)
    client.connect("127.0.0.1", port)
    client.loop_start()
    return client


class FakeTable:
    """Publishes one table's contract-shaped messages (as its daemon would)."""

    def __init__(self, client: mqtt.Client, table: str) -> None:
        self.client = client
        self.table = table
        self.topics = TableTopics(table)
        self.seq = 0
        self.hand = 1
        self.open: dict[str, dict[str, Any]] = {}
        self.dealer: dict[str, str] | None = None

    def _env(self, ts: float | None = None) -> dict[str, Any]:
        self.seq += 1
        return {"table": self.table, "hand": self.hand, "seq": self.seq,
                "ts": time.time() if ts is None else ts}

    def _pub(self, suffix: str, body: dict[str, Any], retain: bool = False) -> None:
        info = self.client.publish(f"{self.topics.base}/{suffix}", json.dumps(body), qos=1,
                                   retain=retain)
        info.wait_for_publish(WAIT)

    def online(self, readers: tuple[str, ...] = ("r1", "r2")) -> None:
        """Retained status, state, dealer, readers, empty open set."""
        self._pub("status", {**self._env(), "status": "online", "reason": None}, True)
        self.state()
        for reader in readers:
            self.reader(reader, "online")
        self._pub("alerts/open", {**self._env(), "alerts": []}, True)

    def state(self, street: int = 3, pot: int = 40) -> None:
        """The retained public ``state`` of the hand in progress (three seats in)."""
        self._pub("state", {**self._env(), "street": street, "pot": pot, "seats": [
            {"seat": s, "status": "active", "up": [], "down_count": 2} for s in (1, 3, 5)]},
            True)

    def reader(self, reader: str, state: str) -> None:
        """One reader's retained status."""
        self._pub(f"readers/{reader}", {**self._env(), "reader": reader, "state": state,
                                        "last_heartbeat": time.time(), "frame_errors": {},
                                        "zones": []}, True)

    def sign_in(self, ident: str, name: str) -> None:
        """The retained ``dealer``."""
        self.dealer = {"id": ident, "name": name}
        self._pub("dealer", {**self._env(), "dealer": self.dealer, "since": time.time()}, True)

    def raise_alert(self, code: str, severity: str, message: str = "",
                    ts: float | None = None) -> str:
        """``alerts`` then the retained ``alerts/open``; returns the alert id."""
        env = self._env(ts)
        ident = f"{self.table}:{env['seq']}"
        message = message or code.replace("_", " ")  # the same in both, as the daemon's
        self._pub("alerts", {**env, "id": ident, "code": code, "severity": severity,
                             "message": message, "seat": None,
                             "street": None, "rule": None, "dealer": self.dealer,
                             "state": "open"})
        self.open[ident] = {"id": ident, "code": code, "severity": severity,
                            "message": message, "raised_ts": env["ts"],
                            "hand": self.hand, "dealer": self.dealer, "state": "open",
                            "acknowledged_by": None, "acknowledged_ts": None}
        self.publish_open()
        return ident

    def publish_open(self) -> None:
        """The retained ``alerts/open``."""
        self._pub("alerts/open", {**self._env(), "alerts": list(self.open.values())}, True)

    def change(self, ident: str, state: str, by: str, note: str | None = None) -> None:
        """``alerts/changes`` then ``alerts/open``."""
        now = time.time()
        self._pub("alerts/changes", {**self._env(), "id": ident, "state": state, "by": by,
                                     "note": note, "at_ts": now})
        if state == "resolved":
            self.open.pop(ident, None)
        else:
            self.open[ident].update(state="acknowledged", acknowledged_by=by,
                                    acknowledged_ts=now)
        self.publish_open()

    def finish_hand(self, *, alerts: list[dict[str, str]] = (),  # type: ignore[assignment]
                    ended_ts: float | None = None, game: str = "stud") -> dict[str, Any]:
        """A public ``hands`` record of the contract; the hand number moves on."""
        end = time.time() if ended_ts is None else ended_ts
        record = {**self._env(end), "hand_id": f"{self.table}:{self.hand}:{int(end) - 90}",
                  "game": game, "dealer": self.dealer, "started_ts": end - 90,
                  "ended_ts": end,
                  "players": [{"seat": s, "name": f"P{s}", "stack_start": 100,
                               "stack_end": 100} for s in (1, 3, 5)],
                  "actions": [{"street": 3, "seat": 1, "action": "bring_in", "amount": 1}],
                  "up_cards": {"1": ["Qs"], "3": ["4h"], "5": ["Tc"]}, "shown": {},
                  "down_cards": None, "pot": 30, "winners": [1], "winners_high": [1],
                  "winners_low": [], "alerts": list(alerts), "notices": [],
                  "ended": "fold"}
        self._pub("hands", record)
        self.hand += 1
        return record


@dataclass
class Got:
    """One command the responder received."""

    name: str
    table: str
    body: Any
    by_user: str | None = None


class CommandResponder:
    """Answers every table's ``cmd/ack|resolve|dealer`` like the daemon's console does.

    ``decide(got) -> (accepted, code, reason)``; the default accepts. Every request is
    recorded in :attr:`got` (what reached the broker).
    """

    def __init__(self, port: int, decide: Callable[[Got], tuple[bool, str | None, str]]
                 | None = None, username: str | None = None,
                 password: str | None = None) -> None:
        self.got: list[Got] = []
        self.decide = decide or (lambda _g: (True, None, ""))
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="fake-daemons",
                                  protocol=MQTTProtocolVersion.MQTTv5)
        self.client.on_message = self._on_message
        if username is not None:
            self.client.username_pw_set(username, password)
        ready = threading.Event()
        self.client.on_subscribe = lambda *_a: ready.set()
        self.client.connect("127.0.0.1", port)
        self.client.loop_start()
        self.client.subscribe("stud/v1/+/cmd/#", qos=1)
        assert ready.wait(WAIT)

    def _on_message(self, client: mqtt.Client, _u: object, msg: mqtt.MQTTMessage) -> None:
        parts = msg.topic.split("/")
        table, name = parts[2], "/".join(parts[4:])
        try:
            body = json.loads(msg.payload)
        except ValueError:
            body = msg.payload
        got = Got(name, table, body)
        self.got.append(got)
        accepted, code, reason = self.decide(got)
        props = Properties(PacketTypes.PUBLISH)  # type: ignore[no-untyped-call]
        props.CorrelationData = msg.properties.CorrelationData  # type: ignore[union-attr]
        client.publish(msg.properties.ResponseTopic,  # type: ignore[union-attr]
                       json.dumps({"table": table, "command": name, "accepted": accepted,
                                   "code": code, "reason": reason, "hand": None,
                                   "to_act": None, "pot": None}),
                       qos=1, properties=props)

    def close(self) -> None:
        """Disconnect."""
        self.client.disconnect()
        self.client.loop_stop()
