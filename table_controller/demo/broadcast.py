"""``stud-table demo --broadcast``: the broadcast service beside the demo table.

:class:`DemoBroadcast` writes a ``broadcast.toml`` into the demo's work directory
(the demo table, one overlay output delayed ``delay`` seconds revealing every hole
card, a producer password generated at random and stored there only as its scrypt
hash) and runs the real service, ``python -m table_controller broadcast --config
broadcast.toml``, as a child process in its own session, like the daemon. The
password exists only in this process's memory and on the terminal, printed once
with the pages' URLs (:meth:`DemoBroadcast.lines`).

The demo's broker has no users (anonymous, loopback only), so the service follows
the secure feed without the production user's credentials: fine on a private demo
broker that only this machine reaches; a real table's path is docs/broadcast.md.
"""

from __future__ import annotations

import os
import re
import secrets
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Final

from table_controller.mqtt.local_broker import stop_process
from table_controller.simulation.session import TABLE_ID, DemoError, _toml_str
from table_controller.web.passwords import hash_password

DEFAULT_DELAY: Final = 10.0
"""Seconds the demo's overlay runs behind the table: long enough to see the delay
work, short enough to watch (a real show runs 15 to 60 minutes)."""

START_TIMEOUT: Final = 60.0
"""Seconds the service gets to serve its pages (a loaded 2-core machine)."""

STOP_TIMEOUT: Final = 20.0
"""Seconds the service gets to stop after SIGTERM before it is killed."""

PREFERRED_PORT: Final = 8480
"""The service's usual port: the same overlay URL from one demo run to the next, so an
OBS browser source set up once keeps working. Taken: any free port (printed)."""

SERVICE_COMMAND: Final = (sys.executable, "-m", "table_controller", "broadcast")
"""``stud-table broadcast``, with the same Python as this process."""

SEAT_NAMES: Final = (
    ("Ada Lovelace", "GB"), ("Alan Turing", "GB"), ("Grace Hopper", "US"),
    ("Emmy Noether", "DE"), ("Kurt Goedel", "AT"), ("Sofia Kovalevskaya", "RU"),
    ("Henri Poincare", "FR"), ("Maryam Mirzakhani", "IR"),
)
"""The demo's players, seats 1 to 8 (name, ISO 3166 country), sent as ``cmd/seat``."""

_SERVING = re.compile(r"serving on http://[^\s:]+:(\d+)/")


class DemoBroadcast:
    """The broadcast service for the demo table (see module docstring)."""

    def __init__(self, workdir: Path, broker_port: int, *, delay: float = DEFAULT_DELAY,
                 table_id: str = TABLE_ID) -> None:
        """Prepare (nothing starts before :meth:`start`); a new random password."""
        if delay < 0:
            raise ValueError("delay must be zero or positive")
        self.workdir = workdir
        self.broker_port = broker_port
        self.delay = delay
        self.table_id = table_id
        self.password = secrets.token_urlsafe(12)
        """The producer password: never written to a file, printed once by :meth:`lines`."""
        self.config_path = workdir / "broadcast.toml"
        self.log_path = workdir / "broadcast.log"
        self.process: subprocess.Popen[bytes] | None = None
        self.port = 0
        """The port the service serves on, once :meth:`start` has returned."""
        self.http_port = _preferred_port()
        """The configured port: :data:`PREFERRED_PORT`, or 0 (any) if it is taken."""

    def config_text(self) -> str:
        """The ``broadcast.toml``: the demo table, an overlay revealing all after ``delay``.

        ``min_public_delay_s`` is the chosen delay: the overlay shows hole cards
        unlocked, so the producer's control may lengthen it but never shorten it.
        """
        lines = [
            f"tables = [{_toml_str(self.table_id)}]",
            'state_file = "broadcast/backlog.sqlite"',
            "retention_hours = 1",
            f"min_public_delay_s = {self.delay}",
            "[broker]",
            'host = "127.0.0.1"',
            f"port = {self.broker_port}",
            "reconnect_max_delay = 2",
            "[http]",
            'host = "127.0.0.1"',
            f"port = {self.http_port}",
            "[producer]",
            f"password_hash = {_toml_str(hash_password(self.password))}",
            "[[outputs]]",
            'name = "overlay"',
            f"delay_s = {self.delay}",
            'reveal = "all"',
        ]
        return "\n".join(lines) + "\n"

    def start(self, stop: Callable[[], bool] = lambda: False) -> DemoBroadcast:
        """Write the config, start the service and wait until it serves its pages.

        Raises :class:`DemoError` (with the end of its log) if it exits or does not
        serve within :data:`START_TIMEOUT`; returns early if ``stop()`` turns true.
        """
        (self.workdir / "broadcast").mkdir(parents=True, exist_ok=True)  # its state_file's
        self.config_path.write_text(self.config_text(), encoding="utf-8")
        with self.log_path.open("ab") as log:
            # Its own session: Ctrl-C reaches only the demo, which stops it in order.
            self.process = subprocess.Popen(
                [*SERVICE_COMMAND, "--config", str(self.config_path)],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True, env=_unbuffered(),
            )
        deadline = time.monotonic() + START_TIMEOUT
        while not stop():
            found = _SERVING.search(self.log_tail(200))
            if found:
                self.port = int(found[1])
                return self
            code = self.process.poll()
            if code is not None:
                raise DemoError(f"the broadcast service exited (code {code}); its log ends"
                                f" with:\n{self.log_tail()}")
            if time.monotonic() > deadline:
                raise DemoError(f"the broadcast service did not serve within"
                                f" {START_TIMEOUT:.0f} s; its log ends with:\n{self.log_tail()}")
            time.sleep(0.1)
        return self

    @property
    def pid(self) -> int | None:
        """The service's process id while it runs."""
        return self.process.pid if self.process is not None else None

    def alive(self) -> bool:
        """True while the service runs."""
        return self.process is not None and self.process.poll() is None

    def url(self, page: str) -> str:
        """The URL of ``page`` (``overlay``, ``venue`` or ``producer``) for the demo table."""
        return f"http://127.0.0.1:{self.port}/{page}/{self.table_id}"

    def lines(self) -> list[str]:
        """What the demo prints once: the three pages, the password, OBS, the caveat.

        Each URL (and the password) comes first on its line: a terminal redrawn in
        place cuts lines at its width, and a cut URL would be useless.
        """
        return [
            f"broadcast pid {self.pid} (demo broker: anonymous, loopback only; not for a"
            f" show), log {self.log_path}",
            f"  overlay  {self.url('overlay')}  (delayed {self.delay:g} s, every hole card)",
            f"  venue    {self.url('venue')}  (live, public information only)",
            f"  producer {self.url('producer')}  password {self.password}"
            "  (user producer; live, every card; new each run)",
            "  OBS: Browser source = overlay URL, 1920x1080. Real table: docs/broadcast.md",
        ]

    def log_tail(self, lines: int = 15) -> str:
        """The last ``lines`` lines the service wrote."""
        try:
            text = self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def stop(self) -> int | None:
        """SIGTERM the service and wait (SIGKILL after :data:`STOP_TIMEOUT`); its exit
        code, or None if it never started. Idempotent."""
        if self.process is None:
            return None
        return stop_process(self.process, STOP_TIMEOUT, group=True)


def _preferred_port() -> int:
    """:data:`PREFERRED_PORT` if nothing listens on it now, else 0 (the service picks a
    free one): a second demo, or another program on 8480, must not stop this one."""
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", PREFERRED_PORT))
        except OSError:
            return 0
    return PREFERRED_PORT


def _unbuffered() -> dict[str, str]:
    """This environment with unbuffered Python output: the "serving on" line must
    reach the log file at once (it is how :meth:`DemoBroadcast.start` finds the port)."""
    return {**os.environ, "PYTHONUNBUFFERED": "1"}
