"""Wiring of ``stud-table run``: links, queue, core, journal, MQTT and signals.

This is the only module of the daemon that starts threads or installs signal
handlers; everything it builds is handed to :class:`TableCore`, which runs on
the thread that calls :meth:`Daemon.run`.
"""

from __future__ import annotations

import queue
import signal
import sys
import threading
import time
from pathlib import Path
from types import FrameType
from typing import Any

import structlog

from firmware_bridge.link import ConnectionState, LinkStats, ReaderLink
from firmware_bridge.messages import ReaderMessage
from table_controller.config import DaemonConfig
from table_controller.daemon.core import (
    ConsoleCommand,
    DaemonInput,
    ReaderReport,
    ReaderStateChange,
    RebirthRequest,
    StopRequest,
    TableCore,
)
from table_controller.deck import load_decks
from table_controller.engine.settings import RuleProfile, TableSettings
from table_controller.hands import warm_up
from table_controller.journal import Journal, current_hand_records, read_journal
from table_controller.layout import TableLayout, load_layout
from table_controller.presence import PresenceTracker
from table_controller.publisher import CommandRequest, MqttPublisher
from table_controller.script import parse_settings
from table_controller.sequence import SequenceCounter

log = structlog.get_logger(__name__)

GIL_SWITCH_INTERVAL = 0.0005
"""Seconds a thread may hold the GIL while another waits (CPython default 0.005)."""

MAX_WAITING_COMMANDS = 64
"""Console commands that may wait in the inbox; more are refused ``busy``. A
dealer's console sends one at a time; 64 leave room for several consoles."""


def table_settings(config: DaemonConfig, layout: TableLayout) -> TableSettings:
    """The engine settings of a configured table (card-only: hands found from cards)."""
    rules = config.rules
    return TableSettings(
        seats=layout.seats,
        ante=config.stakes.ante,
        bring_in=config.stakes.bring_in,
        small_bet=config.stakes.small_bet,
        big_bet=config.stakes.big_bet,
        rules=RuleProfile(
            bring_in_tiebreak=rules.bring_in_tiebreak,
            burn_before_third=rules.burn_before_third,
            raise_cap=rules.raise_cap,
            tournament=rules.tournament,
        ),
        auto_hands=True,
    )


def journal_path(config: DaemonConfig) -> Path:
    """The live journal file of the configured table."""
    return config.journal.directory / f"{config.table.id}.journal.jsonl"


def sequence_path(config: DaemonConfig) -> Path:
    """The file holding the table's sequence-number high-water mark."""
    return config.journal.directory / f"{config.table.id}.seq"


def settings_record(settings: TableSettings) -> dict[str, Any]:
    """The ``table`` op that heads a journal, so a replay uses the same settings."""
    return {"op": "table", **settings.model_dump(mode="json")}


class Daemon:
    """One table's daemon. ``run()`` blocks until :meth:`request_stop` or a signal."""

    def __init__(self, config: DaemonConfig) -> None:
        """Load the layout and decks (raising ``ConfigError``) and prepare every part."""
        self.config = config
        self.layout = load_layout(config.table.layout)
        registry = load_decks(config.table.decks)
        self.settings = table_settings(config, self.layout)
        self.inbox: queue.SimpleQueue[DaemonInput] = queue.SimpleQueue()
        self._commands_lock = threading.Lock()
        self._commands_waiting = 0
        config.journal.directory.mkdir(parents=True, exist_ok=True)
        self.journal = Journal.open(
            journal_path(config), fsync=config.journal.fsync, max_bytes=config.journal.max_bytes
        )
        self.publisher = MqttPublisher(
            config.table.id,
            config.broker,
            SequenceCounter(sequence_path(config)),
            # None: an unguessable id per start (docs/mqtt.md "Client id").
            client_id=config.broker.client_id,
            # paho's thread only enqueues; the engine thread parses and applies.
            # The publisher coalesces rebirths (one pending at most).
            on_rebirth=lambda: self.inbox.put(RebirthRequest()),
            on_command=self._on_command,
        )
        self.links = {
            reader.id: ReaderLink(
                reader.device,
                reader.id,
                on_message=self._on_message,
                on_state=self._on_state,
                heartbeat_period=config.table.heartbeat_period,
            )
            for reader in self.layout.readers
        }
        self.core = TableCore(
            table_id=config.table.id,
            settings=self.settings,
            layout=self.layout,
            presence=PresenceTracker(self.layout, registry, config.table.presence_hold),
            journal=self.journal,
            publisher=self.publisher,
            link_stats=self._link_stats,
            registry=registry,
        )
        self._stopping = threading.Event()

    # Link threads and the MQTT thread only ever put on the queue.
    def _on_message(self, reader_id: int, message: ReaderMessage, at: float) -> None:
        self.inbox.put(ReaderReport(reader_id, message, at))

    def _on_state(self, reader_id: int, state: ConnectionState, stats: LinkStats) -> None:
        self.inbox.put(ReaderStateChange(reader_id, state, stats))

    def _on_command(self, request: CommandRequest) -> bool:
        """Enqueue a console command unless :data:`MAX_WAITING_COMMANDS` already wait.

        Bounds the inbox against a flood (each command is journaled with an
        fsync): a refused command is answered ``busy`` by the publisher.
        """
        with self._commands_lock:
            if self._commands_waiting >= MAX_WAITING_COMMANDS:
                return False
            self._commands_waiting += 1
        self.inbox.put(ConsoleCommand(request))
        return True

    def _link_stats(self, reader_id: int) -> LinkStats | None:
        link = self.links.get(reader_id)
        return link.stats if link else None

    def request_stop(self) -> None:
        """Ask the engine thread to stop (thread- and signal-safe)."""
        self._stopping.set()
        self.inbox.put(StopRequest())

    def _restore(self) -> None:
        result = read_journal(self.journal.path)
        if result.torn_tail:
            log.warning("journal_torn_tail_dropped", path=str(self.journal.path))
        if not result.records:
            self.journal.append(settings_record(self.settings), at=time.time())
            return
        table_lines = [r for r in result.records if r.get("op") == "table"]
        if table_lines:
            try:
                journaled: TableSettings | None = parse_settings(table_lines[-1])
            except ValueError:  # e.g. stakes journaled before check_stakes refused them
                journaled = None
            if journaled != self.settings:
                log.warning("journal_settings_differ", note="using the configuration")
        self.core.restore(current_hand_records(result.records))

    def run(self, install_signals: bool = True) -> int:
        """Run until stopped; return the process exit code."""
        if install_signals and threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGINT):
                signal.signal(sig, self._on_signal)
        warm_up()  # the first showdown must not wait for the evaluator's tables
        # The engine thread hands every message to paho's network thread; with
        # CPython's default 5 ms switch interval that thread can wait that long
        # for the GIL while the engine thread works on.
        sys.setswitchinterval(GIL_SWITCH_INTERVAL)
        self._restore()
        self.core.publish_snapshot()
        self.publisher.start()
        for link in self.links.values():
            link.start()
        log.info("daemon_started", table=self.config.table.id, readers=len(self.links))
        clean = False
        try:
            self._loop()
            clean = True
        finally:
            # An exception out of the loop is a crash, not a stop: say `lost`
            # and let it propagate (exit 1), so systemd restarts the daemon.
            self._shutdown(clean)
        return 0

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        del frame
        log.info("daemon_signal", signal=signal.Signals(signum).name)
        self.request_stop()

    def _loop(self) -> None:
        core = self.core
        while True:
            timeout = max(0.0, core.next_deadline() - time.monotonic())
            try:
                item = self.inbox.get(timeout=timeout)
            except queue.Empty:
                core.tick()
                continue
            if isinstance(item, ConsoleCommand):
                with self._commands_lock:
                    self._commands_waiting -= 1
            if not core.handle(item):
                return
            if time.monotonic() >= core.next_deadline():
                core.tick()

    def _shutdown(self, clean: bool = True) -> None:
        if not clean:
            log.error("daemon_crashed", table=self.config.table.id)
        for link in self.links.values():
            link.stop()
        self.journal.close()
        self.publisher.stop(status="offline" if clean else "lost")
        log.info("daemon_stopped", table=self.config.table.id, clean=clean)
