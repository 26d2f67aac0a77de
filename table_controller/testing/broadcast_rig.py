"""The broadcast service in a test: a real ``stud-table broadcast`` process, an SSE reader."""

from __future__ import annotations

import base64
import http.client
import json
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from table_controller.testing.broker import WAIT
from table_controller.testing.service_process import (
    WebServiceProcess,
    drop_connection,
    sse_events,
)
from table_controller.web.passwords import hash_password

PASSWORD = "producer-secret-1"
PASSWORD_HASH = hash_password(PASSWORD, salt=b"0123456789abcdef")


def write_config(tmp: Path, broker_port: int, *, delay_s: float = 2.0, reveal: str = "showdown",
                 extra_outputs: str = "", min_public: float = 0.0, tables: str = '["t1"]') -> Path:
    """A broadcast.toml for the test's broker, any free HTTP port (its state_file's
    directory ``bc/`` made: the service never creates one)."""
    (tmp / "bc").mkdir(exist_ok=True)
    path = tmp / "broadcast.toml"
    path.write_text(f"""
tables = {tables}
state_file = "bc/state.sqlite"
min_public_delay_s = {min_public}

[broker]
host = "127.0.0.1"
port = {broker_port}

[http]
port = 0

[producer]
password_hash = "{PASSWORD_HASH}"

[[outputs]]
name = "overlay"
delay_s = {delay_s}
reveal = "{reveal}"
{extra_outputs}
""")
    return path


class Service(WebServiceProcess):
    """``stud-table broadcast --config`` as a child process (``kill -9`` works on it)."""

    def __init__(self, config: Path) -> None:
        super().__init__("broadcast", config, config.parent / "broadcast.log",
                         followed="broadcast_mqtt_connected")

    def get(self, path: str, *, password: str | None = None,
            method: str = "GET", body: Any = None) -> tuple[int, str]:
        """One HTTP request; (status, body text)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=WAIT)
        headers = {"X-Stud-Table": "1"}
        if password is not None:
            headers["Authorization"] = "Basic " + base64.b64encode(
                f"producer:{password}".encode()).decode()
        data = json.dumps(body).encode() if body is not None else None
        if data is not None:
            headers["Content-Type"] = "application/json"
        conn.request(method, path, body=data, headers=headers)
        resp = conn.getresponse()
        text = resp.read().decode()
        conn.close()
        return resp.status, text


@dataclass
class SseEvent:
    """One server-sent event, with when this reader got it (time.time())."""

    id: int | None
    event: str
    data: Any
    at: float


@dataclass
class SseReader:
    """Reads one SSE stream in a thread; ``events`` grows as they come."""

    port: int
    path: str
    last_id: int | None = None
    password: str | None = None
    events: list[SseEvent] = field(default_factory=list)
    status: int = 0
    _conn: http.client.HTTPConnection | None = None

    def start(self) -> SseReader:
        """Connect (and wait for the response's status)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        headers = {"Accept": "text/event-stream"}
        if self.last_id is not None:
            headers["Last-Event-ID"] = str(self.last_id)
        if self.password is not None:
            headers["Authorization"] = "Basic " + base64.b64encode(
                f"producer:{self.password}".encode()).decode()
        conn.request("GET", self.path, headers=headers)
        resp = conn.getresponse()
        self.status = resp.status
        self._conn = conn
        if resp.status == 200:
            threading.Thread(target=self._read, args=(resp,), daemon=True).start()
        return self

    def _read(self, resp: http.client.HTTPResponse) -> None:
        try:
            for fields in sse_events(resp):
                self.events.append(SseEvent(
                    int(fields["id"]) if "id" in fields else None,
                    fields.get("event", "message"), json.loads(fields["data"]), time.time()))
        except Exception:  # closed under the reader by close(): the stream is over
            return

    def msgs(self) -> list[SseEvent]:
        """The ``msg`` events so far."""
        return [e for e in list(self.events) if e.event == "msg"]

    def close(self) -> None:
        """Drop the connection."""
        drop_connection(self._conn)
