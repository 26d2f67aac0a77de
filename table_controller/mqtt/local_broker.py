"""A private Mosquitto broker for the demo, the benchmarks and the tests.

:class:`LocalBroker` runs the system's ``mosquitto`` binary on a free loopback
port with a throw-away config (anonymous access, no persistence), waits until
it accepts connections, and stops it again (and can start it again on the same
port). It listens on 127.0.0.1 only, so the demo never exposes anything to the
network. The tests' broker (``table_controller/testing/broker.py``) is a subclass with its own
config.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Final

START_TIMEOUT: Final = 30.0
"""Seconds to wait for the broker to accept connections (a loaded CI machine is slow)."""

STOP_TIMEOUT: Final = 10.0
"""Seconds to wait after SIGTERM before killing the broker."""

_SEARCH_PATH: Final = "/usr/sbin:/usr/local/sbin:/sbin"
"""Debian installs the broker in /usr/sbin, which is not on a normal user's PATH."""


class BrokerError(RuntimeError):
    """The broker is missing or would not start; ``str()`` is one line for the user."""


def find_mosquitto() -> str | None:
    """Path of the ``mosquitto`` binary (PATH first, then the sbin directories)."""
    return shutil.which("mosquitto") or shutil.which("mosquitto", path=_SEARCH_PATH)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def stop_process(proc: subprocess.Popen[bytes], timeout: float, *,
                 group: bool = False) -> int:
    """SIGTERM ``proc`` and wait up to ``timeout`` s, then SIGKILL it (its whole
    process group with ``group``: a child in a session of its own may have
    children of its own); its exit code. A process already gone is fine."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                if group:
                    os.killpg(proc.pid, signal.SIGKILL)
                else:
                    proc.kill()
            proc.wait()
    return proc.returncode


def run_as_user_lines() -> list[str]:
    """Config lines that keep mosquitto running as the current user.

    Started as root, mosquitto drops to the ``mosquitto`` user, which cannot read
    our private temp directory; ``user root`` keeps it as it is.
    """
    return ["user root"] if os.geteuid() == 0 else []


def base_config_lines(port: int) -> list[str]:
    """The lines every private broker starts from: a listener on loopback ``port``
    only, Nagle off, errors and warnings logged to stderr (our log file)."""
    return [
        f"listener {port} 127.0.0.1",
        # Small messages go out at once instead of waiting for the previous
        # one's ACK (Nagle), as in deploy/mosquitto.conf.
        "set_tcp_nodelay true",
        "log_dest stderr",
        "log_type error",
        "log_type warning",
        *run_as_user_lines(),
    ]


def config_text(port: int) -> str:
    """The demo broker's config: anonymous clients on loopback ``port``, nothing persisted."""
    lines = [*base_config_lines(port), "allow_anonymous true", "persistence false"]
    return "\n".join(lines) + "\n"


class LocalBroker:
    """One mosquitto process on 127.0.0.1:``port``; use as a context manager.

    The first :meth:`start` picks a free port; a later one (after :meth:`stop`)
    starts on the same port, so clients reconnect to a restarted broker. The
    config comes from :meth:`config`, which a subclass may override (the tests'
    broker adds users, an ACL and persistence).
    """

    def __init__(self, directory: Path | None = None) -> None:
        """Keep config and log in ``directory`` (a new temp directory if None)."""
        self._own_dir = directory is None
        self.directory = directory or Path(tempfile.mkdtemp(prefix="stud-broker-"))
        self.port = 0
        self.log_path = self.directory / "mosquitto.log"
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int | None:
        """The broker's process id while it runs."""
        return self._proc.pid if self._proc is not None else None

    @property
    def running(self) -> bool:
        """True while the broker process is alive."""
        return self._proc is not None and self._proc.poll() is None

    def config(self) -> str:
        """The config file's text for :attr:`port` (an override may also write the
        files it names, such as a password file, into :attr:`directory`)."""
        return config_text(self.port)

    def start(self, timeout: float = START_TIMEOUT) -> LocalBroker:
        """Start the broker (on a free port the first time, on the same port after
        a :meth:`stop`); raise :class:`BrokerError` if it cannot."""
        if self._proc is not None:
            raise BrokerError("the broker is already running")
        binary = find_mosquitto()
        if binary is None:
            raise BrokerError(
                "mosquitto is not installed: run scripts/setup (it installs the Debian"
                " package 'mosquitto')"
            )
        self.directory.mkdir(parents=True, exist_ok=True)
        first = self.port == 0
        for _attempt in range(5):
            if first:
                # Another process may grab the free port between our probe and
                # the broker's bind: try a few ports before giving up.
                self.port = free_port()
            config = self.directory / "mosquitto.conf"
            config.write_text(self.config(), encoding="utf-8")
            with self.log_path.open("ab") as log:
                # A session of its own: a Ctrl-C in the terminal reaches the demo
                # only, and the demo stops the broker after the daemon is gone.
                self._proc = subprocess.Popen(
                    [binary, "-c", str(config)],
                    stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            if self._wait_listening(timeout):
                return self
            self._kill()
            if not first:
                break  # the port it must keep is taken: another try will not help
        log_tail = self.log_text().strip().splitlines()[-1:] or ["no log output"]
        raise BrokerError(f"mosquitto did not start: {log_tail[0]}")

    def _wait_listening(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._proc is None or self._proc.poll() is not None:
                return False
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1.0):
                    return True
            except OSError:
                time.sleep(0.05)
        return False

    def _kill(self) -> None:
        if self._proc is not None:
            with contextlib.suppress(ProcessLookupError):
                self._proc.kill()
            self._proc.wait()
            self._proc = None

    def stop(self) -> None:
        """Stop the broker (SIGTERM, so a persistent one saves its state; SIGKILL
        if it lingers); idempotent. The port is kept for the next :meth:`start`."""
        if self._proc is not None:
            stop_process(self._proc, STOP_TIMEOUT)
        self._proc = None

    def restart(self) -> None:
        """Stop, then start again on the same port."""
        self.stop()
        self.start()

    def close(self) -> None:
        """Stop the broker and remove its directory if this object created it."""
        self.stop()
        if self._own_dir:
            shutil.rmtree(self.directory, ignore_errors=True)

    def log_text(self) -> str:
        """The broker's log so far (for error messages)."""
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def __enter__(self) -> LocalBroker:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
