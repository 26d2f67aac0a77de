"""A service beside the daemon as a child process in a test: start, wait, log, stop.

``stud-table broadcast``, ``floor`` and ``archive`` (issue 20) run in their tests as
real processes the same way: started in their own session with the log going to a
file, waited for until the log says what ``ready`` looks for (since this start: a
restarted service's old lines do not count), stopped with SIGINT as Ctrl-C would, and
SIGKILL if that does not end it.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import re
import signal
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Self

from table_controller.testing.broker import WAIT, kill9, wait_until

SERVING = re.compile(r"serving on http://[^:]+:(\d+)/")
"""The start line of a web service, with the port it serves on."""


class ServiceProcess:
    """``stud-table <service> --config CONFIG``, logging to ``log``."""

    def __init__(self, service: str, config: Path, log: Path,
                 ready: Callable[[str], bool]) -> None:
        self.service = service
        self.config = config
        self.log = log
        self.ready = ready
        """Whether the log written since this start says the service is up."""
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> Self:
        """Start it and wait until :attr:`ready` holds (an exit first is an
        ``AssertionError`` with the log); itself."""
        start = self.log.stat().st_size if self.log.exists() else 0
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "table_controller", self.service, "--config",
                 str(self.config)],
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                env={**os.environ, "PYTHONUNBUFFERED": "1"})

        def up() -> bool:
            assert self.process is not None
            if self.process.poll() is not None:
                raise AssertionError(f"{self.service} exited: {self.text()}")
            return self.ready(self.text()[start:])

        wait_until(up, WAIT, f"the {self.service} service to start")
        return self

    def __enter__(self) -> Self:
        """The process, stopped (:meth:`stop`) when the ``with`` block ends."""
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    def text(self) -> str:
        """What the service logged (every start's lines)."""
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


class WebServiceProcess(ServiceProcess):
    """A web service's process, with the port it said it serves on."""

    def __init__(self, service: str, config: Path, log: Path, followed: str | None) -> None:
        super().__init__(service, config, log, self._serving)
        self.followed = followed
        """The log event that says it follows the broker; None: serving is enough."""
        self.port = 0

    def _serving(self, text: str) -> bool:
        found = SERVING.findall(text)
        if found:
            self.port = int(found[-1])
        return bool(found) and (self.followed is None or self.followed in text)


def drop_connection(conn: http.client.HTTPConnection | None) -> None:
    """Close an HTTP connection a reader thread is blocked on (an SSE stream)."""
    if conn is None:
        return
    # shutdown first: close() alone waits for the reader thread's readline (the
    # buffered reader's lock) until the next keepalive.
    if conn.sock is not None:
        with contextlib.suppress(OSError):
            conn.sock.shutdown(socket.SHUT_RDWR)
    conn.close()


def sse_events(resp: http.client.HTTPResponse) -> Iterator[dict[str, str]]:
    """Each event of a server-sent-event stream, as its fields (``event``, ``data``,
    ``id``), as soon as its blank line arrives; comments (keepalives) are skipped and
    an event without data is no event. Ends with the stream."""
    fields: dict[str, str] = {}
    while True:
        line = resp.readline()
        if not line:
            return
        text = line.decode().rstrip("\n")
        if text == "":
            if "data" in fields:
                yield fields
            fields = {}
        elif not text.startswith(":"):
            key, _, value = text.partition(": ")
            fields[key] = value


__all__ = ["SERVING", "ServiceProcess", "WebServiceProcess", "drop_connection", "sse_events"]
