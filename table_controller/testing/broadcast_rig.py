"""The broadcast service in a test: a real ``stud-table broadcast`` process, an SSE reader."""

from __future__ import annotations

import base64
import contextlib
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from table_controller.testing.broker import WAIT, kill9, wait_until
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


class Service:
    """``stud-table broadcast --config`` as a child process (``kill -9`` works on it)."""

    def __init__(self, config: Path) -> None:
        self.config = config
        self.log = config.parent / "broadcast.log"
        self.process: subprocess.Popen[bytes] | None = None
        self.port = 0

    def start(self) -> Service:
        """Start it and wait until it serves and follows the broker."""
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "table_controller", "broadcast", "--config",
                 str(self.config)],
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )
        start = self.log.stat().st_size if self.log.exists() else 0

        def serving() -> bool:
            assert self.process is not None
            if self.process.poll() is not None:
                raise AssertionError(f"broadcast exited: {self.text()}")
            found = re.findall(r"serving on http://[^:]+:(\d+)/", self.text()[start:])
            if found:
                self.port = int(found[-1])
            return bool(found) and "broadcast_mqtt_connected" in self.text()[start:]

        wait_until(serving, WAIT, "the broadcast service to serve")
        return self

    def text(self) -> str:
        """What the service logged."""
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def kill9(self) -> None:
        """``kill -9`` it."""
        assert self.process is not None
        kill9(self.process)
        self.process = None

    def stop(self) -> None:
        """Stop it (SIGINT, then SIGKILL if it does not go)."""
        if self.process is None:
            return
        os.killpg(self.process.pid, signal.SIGINT)
        try:
            self.process.wait(timeout=WAIT)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=WAIT)
        self.process = None

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
        fields: dict[str, str] = {}
        try:
            while True:
                line = resp.readline()
                if not line:
                    return
                text = line.decode().rstrip("\n")
                if text == "":
                    if "data" in fields:
                        self.events.append(SseEvent(
                            int(fields["id"]) if "id" in fields else None,
                            fields.get("event", "message"), json.loads(fields["data"]),
                            time.time()))
                    fields = {}
                elif not text.startswith(":"):
                    key, _, value = text.partition(": ")
                    fields[key] = value
        except Exception:  # closed under the reader by close(): the stream is over
            return

    def msgs(self) -> list[SseEvent]:
        """The ``msg`` events so far."""
        return [e for e in list(self.events) if e.event == "msg"]

    def close(self) -> None:
        """Drop the connection."""
        if self._conn is not None:
            # shutdown first: close() alone waits for the reader thread's readline
            # (the buffered reader's lock) until the next keepalive.
            if self._conn.sock is not None:
                with contextlib.suppress(OSError):
                    self._conn.sock.shutdown(socket.SHUT_RDWR)
            self._conn.close()
