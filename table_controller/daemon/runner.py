"""Wiring of ``stud-table run``: links, queue, core, journal, MQTT and signals.

This is the only module of the daemon that starts threads or installs signal
handlers; everything it builds is handed to :class:`TableCore`, which runs on
the thread that calls :meth:`Daemon.run`.
"""

from __future__ import annotations

import gc
import math
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

import structlog

from firmware_bridge.kinds import AnyReaderLink, open_link
from firmware_bridge.link import ConnectionState, LinkStats
from firmware_bridge.messages import ReaderMessage
from table_controller.daemon.config import DaemonConfig
from table_controller.daemon.core import (
    ConsoleCommand,
    DaemonInput,
    PublishedAlert,
    ReaderReport,
    ReaderStateChange,
    RebirthRequest,
    StopRequest,
    TableCore,
)
from table_controller.daemon.equity_feed import ChildProcess, Compute, EquityWorker
from table_controller.daemon.inbox import ANONYMOUS, Inbox
from table_controller.daemon.journal_gate import StartEvidence, start_finding
from table_controller.daemon.reconcile import leftover_piles
from table_controller.domain.engine.alerts import AlertCode
from table_controller.domain.engine.settings import TableSettings
from table_controller.domain.engine.variants import warm_up
from table_controller.domain.equity.live import compute_live, table_game
from table_controller.domain.equity.live import warm_up as warm_up_equity
from table_controller.domain.events import SeatName
from table_controller.mqtt.log_quota import LogQuota
from table_controller.mqtt.publisher import (
    CLAIM_PROBE_WAIT,
    ClaimNews,
    CommandRequest,
    MqttPublisher,
)
from table_controller.mqtt.sequence import SequenceCounter, SequenceFileError
from table_controller.records.journal import (
    Journal,
    JournalError,
    JournalLock,
    JournalLockedError,
    current_hand_records,
    last_hand_number,
    newest_archive,
    read_journal,
)
from table_controller.records.script import event_to_op, parse_settings
from table_controller.table.deck import DeckRegistry, load_decks
from table_controller.table.layout import TableLayout, load_layout
from table_controller.table.presence import DEFAULT_SETTLE_TIME, PresenceTracker

log = structlog.get_logger(__name__)

CLAIM_CONNECT_WAIT = 2.0
"""Seconds, beyond the claim probe, that the start waits for the broker before the
readers start (see :meth:`Daemon.run`)."""

REFUSAL_BROKER_WAIT = 5.0
"""Seconds a daemon that cannot start waits for the broker to say so."""

GIL_SWITCH_INTERVAL = 0.0005
"""Seconds a thread may hold the GIL while another waits (CPython default 0.005)."""

EQUITY_WORKER_ENV = "STUD_TABLE_EQUITY_WORKER"
"""Where live equity is computed: ``process`` (default: a child process at a lower
priority), ``thread`` (a thread of the daemon) or ``off`` (readings, no equity).
For benchmarks and diagnosis (bench/bench_daemon_equity.py compares them)."""

TICK_OVERDUE = 0.5
"""Seconds a due timer may wait for the table lane to empty (a reader pouring
frames without pause must not stop the timers altogether)."""


FILE_CHECK_PERIOD = 1.0
"""Seconds between checks that the live journal is still at its path and the lock
file still ours (issue 21 items 1 and 5); the journal also checks at every append."""


HEAP_COLLECT_PERIOD = 60.0
"""Seconds between the full garbage collections a settled daemon runs itself
(see :func:`settle_heap`): a steady daemon frees nearly everything by reference
counting, so the collector's own full collections may come only every few
hundred hands."""


def settle_heap() -> None:
    """Freeze what start-up built, so the garbage collector's full collections run.

    Issue 9 item 26. CPython runs a full collection only when the objects that
    survived younger collections reach a quarter of those already in the oldest
    generation; with the 50,000 objects a daemon holds after start-up (modules,
    the evaluator's tables, configuration) that took hours. A full collection is
    also what empties CPython's free lists, and many library paths (a
    ``tuple(<generator>)`` anywhere, in pydantic or the engine) leave a tuple on
    one of them per call: up to 2,000 tuples of each size, about 1 MB in all,
    kept for nothing (measured: about 12 tuples a hand). Frozen, the start-up
    objects are never scanned again; the second collection resets the count of
    long-lived objects to those not frozen (none), so full collections run again
    when due, each over the few objects made since. A steady daemon frees nearly
    everything by reference counting, so "when due" can still be hundreds of
    hands: the engine loop also runs one every :data:`HEAP_COLLECT_PERIOD`
    seconds (measured: 0.2 ms once frozen, 37 ms over all 43,000 objects unfrozen).
    Objects alive at start-up are freed as before when no longer used; only
    reference cycles among them would never be collected.
    """
    gc.collect()
    gc.freeze()
    gc.collect()


def table_settings(config: DaemonConfig, layout: TableLayout) -> TableSettings:
    """The engine settings of a configured table (card-only: hands found from cards)."""
    return TableSettings(
        seats=layout.seats,
        ante=config.stakes.ante,
        bring_in=config.stakes.bring_in,
        small_bet=config.stakes.small_bet,
        big_bet=config.stakes.big_bet,
        rules=config.rules,  # the engine's RuleProfile itself: no field-by-field copy
        auto_hands=True,
        game=config.table.game,
        unread_stacks=config.table.unread_stacks,
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


def alert_ids_path(config: DaemonConfig) -> Path:
    """The file holding the high-water mark of the table's alert ids (issue 14)."""
    return config.journal.directory / f"{config.table.id}.alert-ids"


def hand_floor_path(config: DaemonConfig) -> Path:
    """The file holding the next hand number (a floor under the journal's numbers)."""
    return config.journal.directory / f"{config.table.id}.hands"


class StartRefusedError(RuntimeError):
    """The daemon cannot run and restarting it will not help: a person must act.

    ``stud-table run`` prints it as one line and exits :data:`EXIT_NEEDS_PERSON`.
    """


EXIT_NEEDS_PERSON = 3
"""Exit code for :class:`StartRefusedError` (the service unit does not restart on it)."""


@dataclass(slots=True)
class _StartFindings:
    """What the start found of the table's past on disk (restore, the journal gate)."""

    journal_path: Path
    records: list[dict[str, Any]]
    """The live journal's records as read at start; dropped once restored."""
    unreadable: str | None
    """Why the live journal cannot be read at all (the daemon is then refused)."""
    evidence: StartEvidence
    open_error: str | None = None
    """Why the journal could not be opened for writing (the daemon runs degraded)."""


@dataclass(frozen=True, slots=True)
class _Counters:
    """The numbers persisted beside the journal: hand floor, ``seq`` and alert ids."""

    hand_floor: SequenceCounter | None
    sequence: SequenceCounter
    new_alert_id: Callable[[], str]


@dataclass(frozen=True, slots=True)
class _EquityParts:
    """The live-equity worker as :data:`EQUITY_WORKER_ENV` says (``off``: none)."""

    mode: str
    child: ChildProcess | None
    worker: EquityWorker | None


@dataclass(slots=True)
class _LoopState:
    """The engine loop's own flags and times."""

    stopping: threading.Event = field(default_factory=threading.Event)
    next_collect: float = math.inf
    """When the engine loop runs its next full collection (settled daemons only)."""
    refused_by_claim: str | None = None
    """Another daemon publishes as this table: why this one stopped (issue 21)."""
    verify_failed: bool = False
    """The journal's check failed; said once per streak."""


class Daemon:
    """One table's daemon. ``run()`` blocks until :meth:`request_stop` or a signal."""

    def __init__(self, config: DaemonConfig) -> None:
        """Load the layout and decks (raising ``ConfigError``), lock the journal
        (raising :class:`StartRefusedError` if another daemon holds it) and prepare
        every part. A journal that cannot be opened does not stop the start: the
        daemon runs degraded and retries it (docs/daemon.md). Whatever fails on
        the way, what was taken (the lock, the journal) is given back."""
        with ExitStack() as stack:
            self._prepare(config, stack)
            stack.pop_all()  # all built: run() and its shutdown release them now

    def _prepare(self, config: DaemonConfig, stack: ExitStack) -> None:
        """The body of :meth:`__init__`; everything taken is pushed on ``stack``."""
        self.config = config
        self.layout = load_layout(config.table.layout)
        registry = load_decks(config.table.decks)
        self.settings = table_settings(config, self.layout)
        # Reader frames and timers before console work (daemon/inbox.py).
        self.inbox: Inbox[DaemonInput | ClaimNews] = Inbox()
        self._flags = _LoopState()
        directory = config.journal.directory
        try:
            directory.mkdir(parents=True, exist_ok=True)
            # Issue 9 item 8: a second daemon on one table must not run at all
            # (not even connect: it would take the first one's client id).
            self.lock = JournalLock.acquire(directory, config.table.id)
        except JournalLockedError as exc:
            raise StartRefusedError(str(exc)) from None
        except (OSError, JournalError) as exc:
            raise StartRefusedError(
                f"{directory}: cannot use the journal directory: {exc}"
            ) from None
        stack.callback(self.lock.release)
        path = journal_path(config)
        live_exists = path.exists()
        damaged = False
        unreadable: str | None = None
        try:
            found = read_journal(path)
            records = found.records
            damaged = found.damaged
        except OSError as exc:
            # Not damage we can recover from by reading around it: the file
            # itself cannot be read. Refused once the broker has been told.
            records = []
            unreadable = f"{path}: cannot read the journal: {exc}"
        had_floor = hand_floor_path(config).exists()
        had_floor = self._open_counters(config, had_floor)
        self._found = _StartFindings(
            journal_path=path, records=records, unreadable=unreadable,
            evidence=self._start_evidence(path, records, live_exists, damaged, had_floor))
        self.journal: Journal | None = None
        if unreadable is None:
            try:
                self.journal = self._open_journal()
            except JournalLockedError as exc:
                # Issue 21 item 5: the lock file was deleted, the journal's own is held.
                raise StartRefusedError(str(exc)) from None  # the stack releases the lock
            except JournalError as exc:
                self._found.open_error = str(exc)
            else:
                stack.callback(self.journal.close)
        self._build_parts(config, registry)

    def _open_counters(self, config: DaemonConfig, had_floor: bool) -> bool:
        """The hand floor, the sequence counter (raising :class:`StartRefusedError`)
        and the alert ids, each persisted beside the journal. Returns whether the
        hand floor counts as evidence the table ran (``had_floor``, or unreadable)."""
        hand_floor: SequenceCounter | None
        try:
            hand_floor = SequenceCounter(hand_floor_path(config), block=1)
        except SequenceFileError as exc:
            # Only a floor under the journal's own numbers: go on without it.
            log.error("hand_floor_unreadable", error=str(exc))
            hand_floor = None
            had_floor = True  # it exists, unreadable: not evidence of a lost journal
        try:
            sequence = SequenceCounter(sequence_path(config), clock=time.time)
        except SequenceFileError as exc:
            raise StartRefusedError(str(exc)) from None
        try:
            # Alert ids (issue 14) never repeat: a counter of their own (so they
            # leave no gap in seq), persisted and started from the clock like seq.
            alert_ids = SequenceCounter(alert_ids_path(config), block=100, clock=time.time)
        except SequenceFileError as exc:
            log.error("alert_ids_file_unreadable", error=str(exc))
            alert_ids = sequence  # still never repeats; costs a seq gap per alert
        table_id = config.table.id
        self._counters = _Counters(
            hand_floor=hand_floor, sequence=sequence,
            new_alert_id=lambda: f"{table_id}:{alert_ids.next()}")
        return had_floor

    def _build_parts(self, config: DaemonConfig, registry: DeckRegistry) -> None:
        """The publisher, the links, the equity worker and the core (nothing started)."""
        # One quota for the log lines console clients can cause (publisher and core).
        self.log_quota = LogQuota()
        self.publisher = MqttPublisher(
            config.table.id,
            config.broker,
            self._counters.sequence,
            # None: an unguessable id per start (docs/mqtt.md "Client id").
            client_id=config.broker.client_id,
            # paho's thread only enqueues; the engine thread parses and applies.
            # The publisher coalesces rebirths (one pending at most).
            on_rebirth=self._on_rebirth,
            on_command=self._on_command,
            alert_ids=self._counters.new_alert_id,
            on_alert=lambda alert: self.inbox.put(PublishedAlert(alert)),
            log_quota=self.log_quota,
            on_claim=self.inbox.put,  # another daemon of this table: the engine thread acts
        )
        # Our boards or a commercial reader (the layout's `kind`): the same messages.
        self.links: dict[int, AnyReaderLink] = {
            reader.id: open_link(
                reader.kind,
                reader.device,
                reader.id,
                on_message=self._on_message,
                on_state=self._on_state,
                antennas=reader.antennas,
                heartbeat_period=config.table.heartbeat_period,
            )
            for reader in self.layout.readers
        }
        self._build_equity()
        self.core = TableCore(
            table_id=config.table.id,
            settings=self.settings,
            layout=self.layout,
            # The settle window lets the stronger of two reads decide a card's zone
            # (docs/presence.md, rule 1), as in the simulator's fast mode.
            presence=PresenceTracker(self.layout, registry, config.table.presence_hold,
                                     DEFAULT_SETTLE_TIME),
            journal=self.journal,
            publisher=self.publisher,
            link_stats=self._link_stats,
            registry=registry,
            open_journal=self._open_journal,
            hand_floor=self._counters.hand_floor,
            equity=self._equity.worker,
            alert_ids=self._counters.new_alert_id,
            log_quota=self.log_quota,
            # Reader frames queued behind this one: their cards' state is published
            # once, after the last (issue 20), their events each as applied.
            more_waiting=lambda: self.inbox.table_waiting() > 0,
        )

    def _build_equity(self) -> None:
        """The live-equity worker as :data:`EQUITY_WORKER_ENV` says (not started)."""
        mode = os.environ.get(EQUITY_WORKER_ENV, "process")
        child: ChildProcess | None = None
        worker: EquityWorker | None = None
        if mode != "off":
            compute: Compute = compute_live
            if mode != "thread":
                child = compute = ChildProcess(table_game(self.settings))
            # The worker only enqueues its results; the engine thread publishes them.
            worker = EquityWorker(
                self.inbox.put, compute,
                prepare=child.start if child is not None else None,
            )
        self._equity = _EquityParts(mode=mode, child=child, worker=worker)

    def _start_evidence(self, path: Path, records: list[dict[str, Any]], live_exists: bool,
                        damaged: bool, had_floor: bool) -> StartEvidence:
        """What the files say about this table's past (issue 21: for journal_gate)."""
        last_hand = last_hand_number(records)
        newest = newest_archive(path)
        if not last_hand and newest is not None:
            try:  # a live file without hands: its hands are in the newest rotated file
                last_hand = last_hand_number(read_journal(newest[0]).records)
            except OSError as exc:
                log.error("journal_archive_unreadable", path=str(newest[0]), error=str(exc))
        floor = self._counters.hand_floor
        return StartEvidence(
            live_exists=live_exists, live_records=len(records), live_damaged=damaged,
            ran_before=sequence_path(self.config).exists(), archived=newest is not None,
            journal_last_hand=last_hand,
            hand_floor_next=floor.peek() if floor is not None and had_floor else None,
        )

    def _open_journal(self) -> Journal:
        """Open the live journal, recovering a damaged one, headed by the ``table`` op."""
        config = self.config
        journal = Journal.open(
            self._found.journal_path, fsync=config.journal.fsync,
            max_bytes=config.journal.max_bytes, recover=True,
        )
        try:
            if not journal.found.records and journal.recovery is None:
                journal.append(settings_record(self.settings), at=time.time())
        except JournalError:
            journal.close()
            raise
        journal.header = self._journal_header
        journal.on_incident = self._journal_incident
        return journal

    def _journal_incident(self, problem: str) -> None:
        """The live journal vanished while running and a new one was begun (engine thread)."""
        self.core.journal_replaced(problem)

    def _check_files(self) -> None:
        """Issue 21 items 1 and 5, every :data:`FILE_CHECK_PERIOD` (and the journal at
        every append): the live journal still at its path, the lock file still ours."""
        if self.lock.check():
            log.warning("journal_lock_file_replaced", path=str(self.lock.path),
                        note="the lock file was deleted or replaced; taken again")
        journal = self.core.journal
        if journal is not None:
            try:
                journal.verify(time.time())
                self._flags.verify_failed = False
            except JournalError as exc:
                # Once per streak: the next card's append fails too and takes the
                # journal-write-failed path (backlog, retries, status degraded).
                if not self._flags.verify_failed:
                    self._flags.verify_failed = True
                    self.core.journal_unavailable(str(exc))

    def _journal_header(self) -> list[dict[str, Any]]:
        """What heads a journal file begun by rotation: the table's settings, the
        players' names (each file replays alone as this table's game), the dealer
        on duty and the open alerts (so the file alone restores them, issue 14)."""
        names = self.core.engine.names
        return [settings_record(self.settings),
                *(event_to_op(SeatName(seat, name, country))
                  for seat, (name, country) in sorted(names.items())),
                *self.core.book.header_ops()]

    # Link threads and the MQTT thread only ever put on the queue.
    def _on_message(self, reader_id: int, message: ReaderMessage, at: float) -> None:
        self.inbox.put(ReaderReport(reader_id, message, at))

    def _on_state(self, reader_id: int, state: ConnectionState, stats: LinkStats) -> None:
        self.inbox.put(ReaderStateChange(reader_id, state, stats))

    def _on_rebirth(self) -> None:
        # Console work, but never shed: the publisher keeps one pending at most.
        self.inbox.offer(ANONYMOUS, RebirthRequest(), bounded=False)

    def _on_command(self, request: CommandRequest) -> bool:
        """Queue a console command on its client's console queue; False (the
        publisher answers ``busy``) when it is shed (daemon/inbox.py, shed policy)."""
        client = self.publisher.topics.reply_client(request.response_topic)
        return self.inbox.offer(client or ANONYMOUS, ConsoleCommand(request))

    def _link_stats(self, reader_id: int) -> LinkStats | None:
        link = self.links.get(reader_id)
        return link.stats if link else None

    def request_stop(self) -> None:
        """Ask the engine thread to stop (thread- and signal-safe)."""
        self._flags.stopping.set()
        self.inbox.put(StopRequest())

    def _restore(self) -> None:
        core = self.core
        if self.journal is not None:
            core.report_journal(self.journal)
        elif self._found.open_error is not None:
            core.journal_unavailable(self._found.open_error)
        finding = start_finding(self._found.evidence, time.time())
        if finding.lost is not None:
            core.report_missing_journal(str(self._found.journal_path), finding.lost)
        if finding.from_clock:
            log.warning("hand_numbers_from_clock", next_hand=finding.last_hand + 1,
                        note="the journal and the hand number file are both gone")
        core.last_hand = max(core.last_hand, finding.last_hand)
        if self._counters.sequence.damaged is not None:
            log.error("sequence_file_damaged", error=self._counters.sequence.damaged)
            core.alert(
                AlertCode.SEQUENCE_FILE_DAMAGED,
                f"The sequence file could not be read ({self._counters.sequence.damaged}); seq goes"
                " on from the clock, so it still never goes backwards. Check the disk.",
            )
        records = self._found.records
        table_lines = [r for r in records if r.get("op") == "table"]
        if table_lines:
            try:
                journaled: TableSettings | None = parse_settings(table_lines[-1])
            except ValueError:  # e.g. stakes journaled before check_stakes refused them
                journaled = None
            if journaled != self.settings:
                log.warning("journal_settings_differ", note="using the configuration")
                if self.journal is not None:
                    # The next hand begins a file headed by the new settings, so a
                    # replay of it deals the configured game (and stakes).
                    self.journal.begin_new_file_at_next_hand()
        # Issue 9 item 9: the hand numbers go on from the highest ever used.
        core.last_hand = max(core.last_hand, last_hand_number(records))
        core.restore(current_hand_records(records), leftovers=leftover_piles(records))
        core.begin_reconcile()
        # Read once, for this: kept, the whole journal read at start would stay
        # in memory (and be frozen by settle_heap) for the daemon's life.
        self._found.records = []

    def run(self, install_signals: bool = True) -> int:
        """Run until stopped; return the process exit code."""
        owns_process = install_signals and threading.current_thread() is threading.main_thread()
        if owns_process:
            for sig in (signal.SIGTERM, signal.SIGINT):
                signal.signal(sig, self._on_signal)
        if self._found.unreadable is not None:
            return self._refuse(self._found.unreadable)
        warm_up()  # the first showdown must not wait for the evaluator's tables
        self._start_equity()
        # The engine thread hands every message to paho's network thread; with
        # CPython's default 5 ms switch interval that thread can wait that long
        # for the GIL while the engine thread works on.
        sys.setswitchinterval(GIL_SWITCH_INTERVAL)
        self._restore()
        if owns_process:
            # Not in a test's process (a daemon on a thread): it would freeze the tests' objects.
            settle_heap()
            self._flags.next_collect = time.monotonic() + HEAP_COLLECT_PERIOD
        self.core.publish_snapshot()
        self.publisher.start()
        # Issue 21 item 6: the publisher asks the broker whether another daemon is
        # live for this table before it goes online (CLAIM_PROBE_WAIT). The readers
        # start after that, so the start-up reconciliation's events (an interrupted
        # hand's result) are not dropped as published while offline; a broker that
        # is down holds the start up by this much at most.
        self.publisher.wait_online(CLAIM_PROBE_WAIT + CLAIM_CONNECT_WAIT)
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
        return EXIT_NEEDS_PERSON if self._flags.refused_by_claim is not None else 0

    def _start_equity(self) -> None:
        """Build the public readings' tables here and start the equity worker (its
        child process builds its own tables meanwhile: about a second, once)."""
        # The readings are computed here; equity's tables only where it runs.
        warm_up_equity(self.core.game, equity=self._equity.mode == "thread")
        if self._equity.worker is None:
            return
        self._equity.worker.start()  # its thread starts the child process
        log.info("equity_worker_started", mode=self._equity.mode)

    def _refuse(self, reason: str) -> int:
        """Cannot run: tell the floor (alert, retained ``failed`` status), then exit
        with :data:`EXIT_NEEDS_PERSON` so the supervisor does not loop (item 12)."""
        log.error("daemon_cannot_start", reason=reason)
        print(f"stud-table run: {reason}", file=sys.stderr)
        self.publisher.start()
        if self.publisher.wait_online(REFUSAL_BROKER_WAIT):
            self.core.alert(
                AlertCode.DAEMON_CANNOT_START,
                f"The table controller cannot start: {reason}. A person must fix this;"
                " it will not be restarted automatically.",
            )
        self.publisher.stop(failure=reason)
        self.lock.release()
        return EXIT_NEEDS_PERSON

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        del frame
        log.info("daemon_signal", signal=signal.Signals(signum).name)
        self.request_stop()

    def _loop(self) -> None:
        """Serve the inbox: the table lane first; the core's timers when due and the
        table lane is empty (or overdue by :data:`TICK_OVERDUE`); then console work."""
        core, inbox = self.core, self.inbox
        next_check = time.monotonic() + FILE_CHECK_PERIOD
        while True:
            now = time.monotonic()
            if now >= self._flags.next_collect:
                gc.collect()  # empties CPython's free lists too (settle_heap)
                self._flags.next_collect = now + HEAP_COLLECT_PERIOD
            if now >= next_check:
                self._check_files()
                next_check = now + FILE_CHECK_PERIOD
            deadline = core.next_deadline()
            due = now >= deadline
            if due and (inbox.table_waiting() == 0 or now >= deadline + TICK_OVERDUE):
                with self.publisher.corked():
                    core.tick()
                if core.next_deadline() > time.monotonic():
                    continue
                due = False  # a timer that stays due must not stop console work
            # While a timer is due only the table lane is served (it empties first).
            timeout = 0.0 if due else max(
                0.0, min(deadline, self._flags.next_collect, next_check) - now)
            item = inbox.get(timeout, console=not due)
            if item is None:
                continue
            if isinstance(item, ClaimNews):
                if not self._claimed(item):
                    return
                continue
            with self.publisher.corked():  # one wake-up of paho's thread per input
                going_on = core.handle(item)
            if not going_on:
                return

    def _claimed(self, news: ClaimNews) -> bool:
        """Another daemon publishes as this table (issue 21 item 6, docs/mqtt.md "One
        daemon per table"); False when this one must stop (it was the second)."""
        table = self.config.table.id
        who = news.who()
        if news.kind == "refused":
            self._flags.refused_by_claim = (
                f"another daemon publishes as table {table!r} on the broker ({who}); stop"
                " that one first, or give this table its own id")
            log.error("table_claimed_elsewhere", other=who)
            print(f"stud-table run: {self._flags.refused_by_claim}", file=sys.stderr)
            return False
        if news.kind == "probe":
            log.warning("table_claim_refused_second", other=who)
            self.core.alert(
                AlertCode.TABLE_CLAIMED_TWICE,
                f"A second daemon for table {table!r} tried to start on this broker ({who})"
                " and was refused: two daemons with one table id would mix their feeds."
                " Check that machine's configuration.")
            return True
        self.core.table_claimed(
            f"another daemon publishes as table {table!r} ({who})",
            f"Another daemon publishes as table {table!r} on this broker ({who}): the two"
            " feeds are mixed (seq, state, replies). Stop one of them now.")
        return True

    def _shutdown(self, clean: bool = True) -> None:
        if not clean:
            log.error("daemon_crashed", table=self.config.table.id)
        for link in self.links.values():
            link.stop()
        if self._equity.worker is not None:
            self._equity.worker.stop()
        journal = self.core.journal
        if journal is not None:
            try:
                journal.close()
            except JournalError as exc:
                log.error("journal_close_failed", error=str(exc))
        self.publisher.stop(status="offline" if clean else "lost",
                            announce=self._flags.refused_by_claim is None)
        self.lock.release()
        log.info("daemon_stopped", table=self.config.table.id, clean=clean)
