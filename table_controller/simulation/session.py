"""Everything a simulated table needs, started and stopped as one: broker, readers, daemon.

:class:`DemoTable` builds, inside a work directory:

* a :class:`LocalBroker` (mosquitto on a free loopback port);
* an :class:`EmulatedTable`: one emulated reader per reader of the 8-seat layout
  ``hardware/layouts/table-8.toml``, each on a pty with a stable symlink, and a
  copy of the layout whose devices point at those symlinks;
* a ``table.toml`` for that layout and its decks (``hardware/decks/example-deck.toml``
  unless told otherwise);
* the real daemon, ``python -m table_controller run --config table.toml``, as a
  child process in its own session, logging to ``daemon.log``.

The demo (``stud-table demo``), ``stud-table simulate --mode daemon`` (table
``sim``, with the blue deck too) and the latency benchmarks all run on it.
:meth:`DemoTable.close` stops the daemon first (SIGTERM: it publishes
``offline`` and flushes its journal), then the readers, then the broker.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Final, Literal

from firmware_bridge.rf_channel import RFParams, leaves_cards_unread
from table_controller.mqtt.local_broker import LocalBroker, stop_process
from table_controller.simulation.emulated_table import EmulatedTable
from table_controller.table.deck import DeckRegistry, load_decks
from table_controller.table.layout import TableLayout, load_layout

TABLE_ID: Final = "demo"
"""The demo table's id: its topics are ``stud/v1/demo/...``."""

HARDWARE_DIR: Final = Path(__file__).resolve().parents[2] / "hardware"
"""The repository's hardware files (the project is installed from its checkout)."""

LAYOUT_FILE: Final = HARDWARE_DIR / "layouts" / "table-8.toml"
DECK_FILE: Final = HARDWARE_DIR / "decks" / "example-deck.toml"
BLUE_DECK_FILE: Final = HARDWARE_DIR / "decks" / "example-deck-blue.toml"
"""A second deck with the same cards (other tags), for tables with duplicate cards."""

PRESENCE_HOLD: Final = 0.5
"""Seconds a tag must stay unseen before the daemon reports it removed. Shorter
than a real room's 1.5 s: the emulated readers never drop a tag, and the
dealer's shuffle pause between hands must outlast it."""

READER_HEARTBEAT: Final = 0.5
"""Seconds between the emulated readers' heartbeats (the daemon expects 2 s)."""

DAEMON_STOP_TIMEOUT: Final = 20.0
"""Seconds the daemon gets to stop after SIGTERM before it is killed."""

DAEMON_COMMAND: Final = (sys.executable, "-m", "table_controller", "run")
"""``stud-table run``, with the same Python as this process."""

FsyncPolicy = Literal["always", "batch", "never"]


class DemoError(RuntimeError):
    """The simulated table could not be set up; ``str()`` is one line for the user."""


class DemoTable:
    """Broker, emulated readers and daemon process for one table (module docstring)."""

    def __init__(
        self,
        workdir: Path,
        *,
        table_id: str = TABLE_ID,
        decks: Sequence[Path] = (DECK_FILE,),
        scan_period: float = 0.05,
        presence_hold: float = PRESENCE_HOLD,
        fsync: FsyncPolicy = "always",
        log_level: str = "info",
        daemon_command: Sequence[str] = DAEMON_COMMAND,
        rf: RFParams | None = None,
    ) -> None:
        """Prepare (nothing starts before :meth:`start`). ``daemon_command`` is run
        with ``--config table.toml`` appended (the benchmark wraps the daemon)."""
        for path in (LAYOUT_FILE, *decks):
            if not path.is_file():
                raise DemoError(f"{path} is missing: run from the project checkout")
        self.workdir = workdir
        self.table_id = table_id
        self.decks = _private_copies(decks, workdir / "decks")
        self.layout: TableLayout = load_layout(LAYOUT_FILE)
        self.registry: DeckRegistry = load_decks(self.decks)
        self.scan_period = scan_period
        self.rf = rf
        """The RF channel the emulated readers read through (None: every tag, always)."""
        self.presence_hold = presence_hold
        self.fsync = fsync
        self.log_level = log_level
        self.daemon_command = list(daemon_command)
        self.broker = LocalBroker(workdir / "broker")
        self.table: EmulatedTable | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self.config_path = workdir / "table.toml"
        self.log_path = workdir / "daemon.log"
        self.journal_path = workdir / "journal" / f"{table_id}.journal.jsonl"
        """The daemon's journal (``[journal] directory`` below, named by table id)."""

    # ------------------------------------------------------------ lifecycle

    def start(self) -> DemoTable:
        """Start the broker, plug the readers in, then start the daemon."""
        self.broker.start()
        self.table = EmulatedTable(
            self.layout, self.registry, self.workdir / "dev",
            scan_period=self.scan_period, heartbeat_period=READER_HEARTBEAT, rf=self.rf,
        ).start()
        self.table.write_layout(LAYOUT_FILE, self.workdir / "layout.toml")
        self.config_path.write_text(self._config_text(), encoding="utf-8")
        with self.log_path.open("ab") as log:
            # Its own session: Ctrl-C in the terminal reaches only the demo, which
            # then stops the daemon in order (SIGTERM) before the broker.
            self.process = subprocess.Popen(
                [*self.daemon_command, "--config", str(self.config_path)],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        return self

    def _config_text(self) -> str:
        return table_config_toml(
            table_id=self.table_id,
            layout="layout.toml",
            decks=[str(path) for path in self.decks],
            port=self.broker.port,
            presence_hold=self.presence_hold,
            heartbeat_period=2.0,
            reconnect_max_delay=2,
            fsync=self.fsync,
            log_level=self.log_level,
            unread_stacks=self.rf is not None and leaves_cards_unread(self.rf),
        )

    @property
    def port(self) -> int:
        """The broker's port."""
        return self.broker.port

    @property
    def daemon_pid(self) -> int | None:
        """The daemon's process id while it runs."""
        return self.process.pid if self.process is not None else None

    def daemon_alive(self) -> bool:
        """True while the daemon process runs."""
        return self.process is not None and self.process.poll() is None

    def daemon_exit_code(self) -> int | None:
        """The daemon's exit code once it has ended."""
        return self.process.poll() if self.process is not None else None

    def daemon_log_tail(self, lines: int = 15) -> str:
        """The last ``lines`` lines the daemon wrote."""
        try:
            text = self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def stop_daemon(self, timeout: float = DAEMON_STOP_TIMEOUT) -> int | None:
        """SIGTERM the daemon and wait (SIGKILL after ``timeout``); its exit code."""
        if self.process is None:
            return None
        return stop_process(self.process, timeout, group=True)

    def close(self) -> None:
        """Stop the daemon, the readers and the broker, in that order (idempotent);
        each step runs even if an earlier one failed."""
        try:
            self.stop_daemon()
        finally:
            try:
                if self.table is not None:
                    self.table.stop()
            finally:
                self.broker.stop()

    def __enter__(self) -> DemoTable:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


def table_config_toml(
    *,
    table_id: str,
    layout: str,
    decks: list[str],
    port: int,
    presence_hold: float | None = None,
    heartbeat_period: float | None = None,
    reconnect_max_delay: float | None = None,
    fsync: str | None = None,
    log_level: str | None = None,
    unread_stacks: bool = False,
) -> str:
    """The ``table.toml`` of a local test or demo table (docs/daemon.md): stakes 1/2/5/10,
    the broker on loopback ``port``, the journal in ``journal/`` beside the file. The
    one writer of such a file for the demo, the daemon test rigs and the config tests;
    a key left ``None`` is left out (the daemon's default)."""
    lines = ["[table]", f"id = {_toml_str(table_id)}", f"layout = {_toml_str(layout)}"]
    lines.append(f"decks = [{', '.join(_toml_str(deck) for deck in decks)}]")
    if presence_hold is not None:
        lines.append(f"presence_hold = {presence_hold}")
    if heartbeat_period is not None:
        lines.append(f"heartbeat_period = {heartbeat_period}")
    if unread_stacks:
        lines.append("unread_stacks = true")
    lines += ["[stakes]", "ante = 1", "bring_in = 2", "small_bet = 5", "big_bet = 10"]
    lines += ["[broker]", 'host = "127.0.0.1"', f"port = {port}"]
    if reconnect_max_delay is not None:
        lines.append(f"reconnect_max_delay = {reconnect_max_delay}")
    lines += ["[journal]", 'directory = "journal"']
    if fsync is not None:
        lines.append(f"fsync = {_toml_str(fsync)}")
    if log_level is not None:
        lines += ["[log]", 'format = "console"', f"level = {_toml_str(log_level)}"]
    return "\n".join(lines) + "\n"


def _toml_str(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _private_copies(decks: Sequence[Path], directory: Path) -> list[Path]:
    """The deck files copied owner-only into the work directory: the shipped example
    decks are 0644 in the checkout, and a deck readable by others is warned about (a
    real deck's map reveals hole cards through the backs); the emulated table's daemon
    reads the copies, as an installed daemon reads its 0600 decks."""
    directory.mkdir(parents=True, exist_ok=True)
    copies = []
    for index, path in enumerate(decks):
        (directory / str(index)).mkdir(exist_ok=True)
        copy = directory / str(index) / path.name  # the same name: a deck may be named by it
        fd = os.open(copy, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(path.read_bytes())
        os.chmod(copy, 0o600)
        copies.append(copy)
    return copies
