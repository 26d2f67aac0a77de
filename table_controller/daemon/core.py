"""The daemon's single-threaded heart: reader reports in, journal, engine, publish.

Theory of operation
-------------------
Every input reaches :meth:`TableCore.handle` from one queue, on one thread:
reader messages and link-state changes (from the serial link threads), rebirth
requests (from the MQTT thread), stop requests (from signal handlers). Only this
thread touches the presence tracker, the engine and the journal, so none of
them needs a lock and their order of events is the order of the queue.

Console commands (``cmd/hand``, ``act``, ``kill``, ``live``, ``end``) come the
same way: the MQTT thread only enqueues the raw request; here it is parsed
(:mod:`table_controller.mqtt.console_commands`), journaled, applied, published, and
answered on the request's response topic with the engine's
:class:`ConsoleResult` (docs/console.md). A well-formed command is journaled
even when the engine rejects it, so a replay meets the same rejection; a
malformed one never reaches the engine or the journal: it is logged, alerted
(``console_rejected``) and answered.

Console requests come from other clients and are untrusted (docs/console.md):
a request whose *Response Topic* is not the table's own ``reply/<client>`` is
refused before anything else (never carried out: its requester could not learn
the outcome); a request whose *Correlation Data* (with the same command and
payload) was carried out recently is answered again with the first reply
instead of being applied twice; ``console_rejected`` alerts and their warning
log lines are limited to :data:`REJECTED_ALERT_BURST` per
:data:`REJECTED_ALERT_WINDOW`, the rest counted and summed up in one alert and
one log line at the end of the window; and no console input, however hostile,
can raise out of :meth:`TableCore.handle`.

For every zone event presence produces, the core first appends it to the
journal (which returns only once the record is on disk per the fsync policy),
then applies it to the engine, then publishes what the engine said. Nothing is
published that is not journaled first, so a restart that replays the journal
reaches the same state that consumers last saw.

When the journal cannot be written (disk full, I/O error, read-only file
system) the table does not stop and nothing unjournaled is published: the zone
events presence produces wait, in order, in a bounded backlog (the engine and
the published state stay at the last journaled event), the floor gets one
``journal_write_failed`` alert and ``status`` turns ``degraded`` with the
reason, and the write is retried every :data:`JOURNAL_RETRY_PERIOD` seconds.
Once it succeeds the backlog is journaled, applied and published in order and
``status`` goes back to ``online``. Console commands are refused
(``journal_unavailable``) meanwhile: they cannot be journaled, and applying
them ahead of the waiting cards would change the order of the table.

Start-up: the core replays the journal (:meth:`TableCore.restore`), then
collects what the readers report until the table has settled and reconciles
it with the restored hand (:mod:`table_controller.daemon.reconcile`), so that
a hand that ended while the daemon was down ends as *interrupted* instead of
merging with the next deal. Hand numbers come from the journal (each ``hand``
record carries its ``hand_id``) and a small floor file, so they never go
backwards across restarts.

Equity (docs/equity.md "Live equity"): every public state carries what each
seat's up cards show; the hand's equity spot goes to the equity worker
(:mod:`table_controller.daemon.equity_feed`) *after* the card's event and state
are out, and its result (numbers and the live seats' readings) comes back on the
queue (:class:`EquityReady`), to be published on ``secure/state`` only, and only
if the hand is still at that spot.

Clocks live here, at the edge: presence hold times run on the monotonic clock
the links stamp their reports with; the journal and payloads get wall time.
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol, runtime_checkable

import structlog

from firmware_bridge.figures import FigureCounter
from firmware_bridge.link import ConnectionState, LinkProblem, LinkStats
from firmware_bridge.messages import Inventory, ReaderFault, ReaderMessage, TagArrived, TagLeft
from table_controller.daemon.equity_feed import EquityReady
from table_controller.daemon.floor import (
    MAX_OPEN_ALERTS,
    TABLE_ACTOR,
    AlertBook,
    BookAlert,
    alert_from_op,
)
from table_controller.daemon.projection import (
    HandFacts,
    alert_payload,
    betting_of,
    event_payloads,
    hand_records,
    notice_payloads,
    public_state,
    secure_state,
)
from table_controller.daemon.reconcile import net_difference, reconcile
from table_controller.domain.cards import Card
from table_controller.domain.engine.alerts import Alert, AlertCode, Notice, alert_severity
from table_controller.domain.engine.dealing import DealingEngine, HandState
from table_controller.domain.engine.outputs import (
    ConsoleResult,
    EngineOutput,
    GameEvent,
    GameEventKind,
    ReplyCode,
)
from table_controller.domain.engine.settings import TableSettings
from table_controller.domain.equity.live import EquitySpot, LiveEquity, equity_spot, table_game
from table_controller.domain.events import (
    AlertAck,
    AlertResolve,
    CardPlaced,
    DealerChange,
    HandEnded,
    HandStarted,
    TableEvent,
    ZoneEvent,
)
from table_controller.domain.zones import Zone
from table_controller.mqtt.console_commands import CommandError, parse_command
from table_controller.mqtt.payloads import (
    AlertChangePayload,
    AlertPayload,
    AntennaStats,
    ConsoleReply,
    DealerInfo,
    DealerPayload,
    FloorAlert,
    OpenAlertsPayload,
    PublicHandRecord,
    ReaderStats,
    ReaderStatus,
    SecureHandRecord,
    SecureState,
    to_json,
)
from table_controller.mqtt.publisher import CommandRequest, Publisher
from table_controller.mqtt.sequence import SequenceCounter, SequenceFileError
from table_controller.mqtt.topics import TableTopics
from table_controller.records.journal import Journal, JournalError, strip_envelope
from table_controller.records.ops import ALERT_OP, FLOOR_OPS, floor_op
from table_controller.records.script import event_to_op, op_to_event
from table_controller.table.deck import DeckRegistry
from table_controller.table.layout import TableLayout
from table_controller.table.presence import PresenceTracker

log = structlog.get_logger(__name__)

READER_REFRESH_PERIOD: Final = 5.0
"""Seconds between checks of the reader statuses (heartbeat age, error counters):
a reader's retained topic is republished only if its status changed, so an online
reader's moves with its heartbeat and an offline reader's stays put."""

_BAD_STATES: Final = frozenset(
    {
        ConnectionState.DISCONNECTED,
        ConnectionState.STALE,
        ConnectionState.WRONG_READER,
        ConnectionState.INCOMPATIBLE,
    }
)
"""Link states in which a reader's zones are not being read."""

_PROBLEM_WHY: Final = {
    LinkProblem.PORT_MISSING: "its port does not exist: unplugged, or a wrong device path",
    LinkProblem.PERMISSION_DENIED: "the daemon may not open its port (permission denied)",
    LinkProblem.PORT_BUSY: "another program holds its port",
    LinkProblem.OPEN_FAILED: "its port cannot be opened",
    LinkProblem.PORT_LOST: "it is unplugged or not answering",
    LinkProblem.NO_HELLO: "its port opens but no reader answers on it",
    LinkProblem.INCOMPATIBLE: "it speaks an unsupported protocol version",
    LinkProblem.SILENT: "it stopped sending heartbeats",
}
"""The floor's words for why a reader is offline (the alert message)."""


def _reader_down(state: ConnectionState, stats: LinkStats) -> bool:
    """Whether a reader's zones are not being read: a bad state, or not online with
    a known problem (a port that opens but never answers stays in HANDSHAKE)."""
    return state in _BAD_STATES or (
        state is not ConnectionState.ONLINE and stats.problem is not None
    )


@dataclass(frozen=True, slots=True)
class ReaderReport:
    """A message from reader ``reader_id``; ``at`` is the monotonic time it was read."""

    reader_id: int
    message: ReaderMessage
    at: float


@dataclass(frozen=True, slots=True)
class ReaderStateChange:
    """Reader ``reader_id``'s link entered ``state``."""

    reader_id: int
    state: ConnectionState
    stats: LinkStats


@dataclass(frozen=True, slots=True)
class RebirthRequest:
    """A consumer asked for the full retained set again (``cmd/rebirth``)."""


@dataclass(frozen=True, slots=True)
class ConsoleCommand:
    """A console command from ``cmd/<name>``, still raw (parsed on the engine thread)."""

    request: CommandRequest


JOURNAL_RETRY_PERIOD: Final = 1.0
"""Seconds between attempts to write the journal again after a failure."""

MAX_BACKLOG: Final = 100_000
"""Zone events kept in memory while the journal cannot be written (a day of
dealing); past it the newest are refused, counted, logged and alerted."""

RECONCILE_TIMEOUT: Final = 10.0
"""Seconds at most the start-up reconciliation waits for every antenna's first
inventory (a reader that does not answer must not hold the table up)."""

JOURNAL_WRITE_FAILED: Final = AlertCode.JOURNAL_WRITE_FAILED
"""Alert: the journal cannot be written; cards wait in memory, nothing new is published."""
JOURNAL_DAMAGED: Final = AlertCode.JOURNAL_DAMAGED
"""Alert: the journal was damaged at start; what could be recovered was."""
JOURNAL_MISSING: Final = AlertCode.JOURNAL_MISSING
"""Alert: the journal file is gone although this table has run before."""
HAND_INTERRUPTED: Final = AlertCode.HAND_INTERRUPTED
"""Alert: a hand ended while the daemon was down; how it ended is not known."""

CONSOLE_REJECTED: Final = AlertCode.CONSOLE_REJECTED
"""Alert code for a console command refused before the engine (malformed JSON,
unknown command, bad fields, a seat the table does not have, a response topic
outside the table's ``reply/`` tree)."""

BAD_RESPONSE_TOPIC: Final = ReplyCode.BAD_RESPONSE_TOPIC
"""Result code of a console command refused for its *Response Topic*."""

REJECTED_ALERT_BURST: Final = 20
"""``console_rejected`` alerts published per :data:`REJECTED_ALERT_WINDOW`; more
are counted and reported in one summary alert: a client sending garbage by the
thousand must not bury the floor's alerts (or the feed) under its own."""

REJECTED_ALERT_WINDOW: Final = 10.0
"""Seconds of the ``console_rejected`` alert window."""

REQUEST_MEMORY: Final = 1000
"""Recent console requests (by correlation data) remembered for idempotency."""


@dataclass(frozen=True, slots=True)
class PublishedAlert:
    """An alert the MQTT side raised and published itself (backlog, link trouble):
    it joins the open set (issue 14) like every other."""

    alert: AlertPayload


@dataclass(frozen=True, slots=True)
class StopRequest:
    """Shut down cleanly (SIGTERM/SIGINT)."""


class TablePublisher(Publisher, Protocol):
    """What the core needs of the MQTT side: :class:`Publisher` plus console replies
    and notices."""

    def reply(self, request: CommandRequest, payload: bytes) -> bool:
        """Answer a console request on its response topic (False if it cannot)."""

    def set_health(self, problem: str | None) -> None:
        """``status`` degraded with ``problem``, or online again with None."""

    def publish_secure_state(self, secure: SecureState) -> None:
        """Publish a newer ``secure/state`` alone (the equity update)."""


@runtime_checkable
class FloorPublisher(Protocol):
    """The floor's topics (issue 14); a publisher without them (a test's fake) simply
    publishes none, while the lifecycle is still kept and journaled."""

    def publish_open_alerts(self, payload: OpenAlertsPayload) -> None:
        """``alerts/open``, retained."""

    def publish_alert_change(self, change: AlertChangePayload) -> None:
        """``alerts/changes``."""

    def publish_dealer(self, payload: DealerPayload) -> None:
        """``dealer``, retained."""

    def publish_hand(self, public: PublicHandRecord, secure: SecureHandRecord) -> None:
        """``hands`` and ``secure/hands``."""


class EquitySink(Protocol):
    """Where the core sends each new equity spot (an :class:`EquityWorker`)."""

    def submit(self, spot: EquitySpot | None) -> None:
        """Compute ``spot`` next (``None``: nothing to compute); returns at once."""


class NotJournaledError(Exception):
    """An input could not be journaled (the core has already reported why)."""


LinkStatsSource = Callable[[int], LinkStats | None]
"""Latest counters of reader ``id``'s link (read from the link, thread-safe)."""


DaemonInput = (
    ReaderReport | ReaderStateChange | RebirthRequest | ConsoleCommand | EquityReady
    | PublishedAlert | StopRequest
)
"""Everything the core's queue carries."""


class TableCore:
    """Presence, journal, engine and publishing for one table (see module docstring)."""

    def __init__(
        self,
        *,
        table_id: str,
        settings: TableSettings,
        layout: TableLayout,
        presence: PresenceTracker,
        journal: Journal | None,
        publisher: TablePublisher,
        link_stats: LinkStatsSource | None = None,
        registry: DeckRegistry | None = None,
        wall_clock: Callable[[], float] = time.time,
        mono_clock: Callable[[], float] = time.monotonic,
        open_journal: Callable[[], Journal] | None = None,
        hand_floor: SequenceCounter | None = None,
        equity: EquitySink | None = None,
        alert_ids: Callable[[], str] | None = None,
    ) -> None:
        """Wire the parts. ``journal`` may be None when it could not be opened at
        start; ``open_journal`` then opens it when retried. ``hand_floor`` keeps
        the next hand number on disk beside the journal. ``equity`` computes the
        live equity (None: the secure state has neither equity nor readings).
        ``alert_ids`` hands out alert ids that are never reused (the daemon's
        persistent counter; without it ids count on from the highest the book saw)."""
        self.table_id = table_id
        self.layout = layout
        self.engine = DealingEngine(settings)
        self.presence = presence
        self.journal = journal
        self._open_journal = open_journal
        self._hand_floor = hand_floor
        self.last_hand = hand_floor.peek() - 1 if hand_floor is not None else 0
        """The highest hand number used so far (journal and floor file)."""
        self.publisher = publisher
        self._backlog: deque[ZoneEvent | HandEnded] = deque()
        self._journal_problem: str | None = None
        self._journal_note: str | None = None  # damage found at start, until the next hand
        self._next_journal_retry = 0.0
        self.backlog_refused = 0
        self._reconciling = False
        self._reconcile_deadline = 0.0
        self._inventoried: set[tuple[int, int]] = set()
        self._start_positions: dict[Card, list[tuple[Zone, str | None]]] = {}
        self._buffer: list[ZoneEvent] = []
        self._quiet = False
        self._seq_failed = False
        self._settling = False

        self._link_stats = link_stats
        self.registry = registry
        self._wall = wall_clock
        self._mono = mono_clock
        self._reader_state: dict[int, ConnectionState] = {}
        self._reader_stats: dict[int, LinkStats] = {}
        self._offline_alerted: set[int] = set()
        self._reader_published: dict[int, tuple[object, ...]] = {}
        self._figures: dict[int, FigureCounter] = {
            reader.id: FigureCounter() for reader in layout.readers
        }
        """Per reader: tags per antenna, reads/s, dropouts (``readers/<id>/stats``)."""
        """What each reader's retained topic last said (see :meth:`_publish_reader`)."""
        self._next_reader_refresh = 0.0
        self.events_applied = 0
        self._topics = TableTopics(table_id)
        self._answered: OrderedDict[bytes, tuple[ConsoleResult, bytes]] = OrderedDict()
        self._rejected_window_end: float | None = None
        self._rejected_in_window = 0
        self._rejected_suppressed = 0
        self._rejected_last = ""
        self.console_repeats = 0
        """Console requests answered from memory instead of applied again."""
        self.game = table_game(settings)
        self._equity_sink = equity
        self._spot: EquitySpot | None = None
        """The hand's equity spot as last published (None: equity does not apply)."""
        self._equity: LiveEquity | None = None
        """The equity of :attr:`_spot`, once computed."""
        self.equity_published = 0
        self.equity_stale = 0
        """Results that reached the engine thread after a newer card: not published."""
        self.book = AlertBook()
        """Open alerts and the dealer on duty (issue 14), journaled and restored."""
        self._alert_ids = alert_ids
        self._floor = publisher if isinstance(publisher, FloorPublisher) else None
        self._facts: dict[int, HandFacts] = {}
        """Facts of the hands not yet recorded (the current one, and one just closed)."""
        self._last_at = 0.0
        """Wall time of the last journal record written."""

    # --------------------------------------------------------------- start-up

    def restore(
        self,
        records: Sequence[Mapping[str, Any]],
        leftovers: Mapping[Card, Sequence[tuple[Zone, str | None]]] | None = None,
    ) -> int:
        """Replay journal ``records`` (the current hand) into the engine, publishing
        nothing; return how many events were applied. ``leftovers``: pile cards of
        earlier hands still on the felt (:func:`~.reconcile.leftover_piles`), seeded
        into presence so the readers' first inventories do not deal them again."""
        count = 0
        decks: dict[Card, str] = {}
        for record in records:
            op = strip_envelope(record)
            name = op.get("op")
            if name == "table":
                continue  # settings come from the configuration
            at = record.get("at", 0.0)
            at = float(at) if isinstance(at, int | float) else 0.0
            if name in FLOOR_OPS or name == ALERT_OP:
                self._restore_floor(op, at)
                continue
            event = op_to_event(op, self.layout.seats)
            if isinstance(event, CardPlaced) and event.deck is not None:
                decks[event.card] = event.deck
            if isinstance(event, HandStarted) and event.hand_id is not None:
                self.last_hand = max(self.last_hand, event.hand_id)
            before = self.engine.hand
            self._note_facts(before, self._apply_safely(event, record), at)
            count += 1
        self.events_applied += count
        if self.engine.hand is not None:
            self.last_hand = max(self.last_hand, self.engine.hand.number)
        self._seed_presence(decks)
        self._seed_leftovers(leftovers or {})
        log.info("journal_restored", events=count,
                 hand=self.engine.hand.number if self.engine.hand else None)
        return count

    def _restore_floor(self, op: Mapping[str, Any], at: float) -> None:
        """Replay one journaled alert or floor command into the book (and the hand's
        facts); a damaged one is logged and skipped, never fatal."""
        try:
            self.book.restore_op(op, at)
            if op.get("op") == ALERT_OP:
                alert = alert_from_op(op, at)
                self._note_alert(alert.hand, alert.id, alert.code.value,
                                 alert.severity.value)
        except (ValueError, KeyError, TypeError) as exc:
            log.warning("journal_floor_record_skipped", op=str(op.get("op")), error=str(exc))

    def _seed_presence(self, decks: Mapping[Card, str]) -> None:
        """Tell presence where the restored hand's cards lie, so that the readers'
        first inventories after a restart also report cards that left meanwhile."""
        hand = self.engine.hand
        if hand is None or self.registry is None:
            return
        now = self._mono()
        for card, zones in hand.where.items():
            deck = decks.get(card)
            if deck is None:
                continue
            uid = self.registry.uid_for(card, deck)
            for zone in zones:
                for reader, port in self.layout.antennas_of(zone)[:1]:
                    self.presence.tag_arrived(reader, port, uid, now)  # known already
                    self._start_positions.setdefault(card, []).append((zone, deck))

    def _seed_leftovers(self, leftovers: Mapping[Card, Sequence[tuple[Zone, str | None]]]
                        ) -> None:
        """Tell presence about the earlier hands' pile cards still lying on the felt
        (issue 19: the last hand's burn pile read at a restart is not this hand's)."""
        if self.registry is None:
            return
        now = self._mono()
        for card, places in leftovers.items():
            for zone, deck in places:
                if deck is None or deck not in self.registry.decks:
                    continue  # a scripted record, or a deck no longer loaded: no tag
                uid = self.registry.uid_for(card, deck)
                for reader, port in self.layout.antennas_of(zone)[:1]:
                    self.presence.tag_arrived(reader, port, uid, now)
                    self._start_positions.setdefault(card, []).append((zone, deck))

    def publish_snapshot(self) -> None:
        """Publish the retained state, every reader's status, the open alerts and the
        dealer; and the record of a restored hand that had ended (it may not have
        gone out before the restart: the archive keeps a hand once, by its id)."""
        self._publish_state()
        for reader in self.layout.readers:
            self._publish_reader(reader.id, force=True)
        self._publish_open()
        self._publish_dealer()
        self._record_finished(None)

    # ------------------------------------------------------------------- loop

    def handle(self, item: DaemonInput) -> bool:
        """Apply one input; return False when the daemon should stop."""
        if isinstance(item, ReaderReport):
            self._reader_report(item)
        elif isinstance(item, ReaderStateChange):
            self._reader_state_change(item)
        elif isinstance(item, RebirthRequest):
            self.publisher.republish_retained()
        elif isinstance(item, EquityReady):
            self._equity_ready(item.result)
        elif isinstance(item, PublishedAlert):
            self._adopt_alert(item.alert)
        elif isinstance(item, ConsoleCommand):
            try:
                self.console_command(item.request)
            except Exception:
                # Console input comes from any client of the broker: whatever it
                # holds must not end the engine thread (and the table with it).
                log.exception("console_command_failed", command=item.request.shown_name)
                self._daemon_alert(
                    AlertCode.ENGINE_ERROR,
                    "The table controller failed on a console command and skipped it:"
                    " check the table by eye and report the daemon's log.",
                )
        elif isinstance(item, StopRequest):
            return False
        return True

    def next_deadline(self) -> float:
        """Monotonic time by which :meth:`tick` must run next."""
        deadline = self._next_reader_refresh
        if self._rejected_window_end is not None:
            deadline = min(deadline, self._rejected_window_end)
        if self._backlog or self._journal_problem is not None:
            deadline = min(deadline, self._next_journal_retry)
        if self._reconciling:
            deadline = min(deadline, self._reconcile_deadline)
        hold = self.presence.next_deadline()
        return min(deadline, hold) if hold is not None else deadline

    def tick(self) -> None:
        """Expire presence holds, retry the journal, settle the start and refresh
        reader statuses, each when due."""
        now = self._mono()
        if self._rejected_window_end is not None and now >= self._rejected_window_end:
            self._close_rejected_window()
        events = self.presence.tick(now)
        if events:
            self.feed(events)
        if self._reconciling:
            self._maybe_settle()
        if (self._backlog or self._journal_problem is not None) and (
            now >= self._next_journal_retry
        ):
            self._retry_journal()
        if now >= self._next_reader_refresh:
            self._next_reader_refresh = now + READER_REFRESH_PERIOD
            for reader in self.layout.readers:
                self._publish_reader(reader.id)
                self._publish_reader_stats(reader.id, now)

    # ------------------------------------------------------------ zone events

    def feed(self, events: Sequence[ZoneEvent]) -> None:
        """Journal, apply and publish zone events, then publish the new state.

        During the start-up reconciliation they are collected instead; while the
        journal cannot be written they wait in the backlog (module docstring).
        """
        if self._reconciling:
            self._buffer.extend(events)
            self._maybe_settle()
            return
        if not events:
            return
        applied = False
        for event in events:
            applied = self._feed_one(event) or applied
        if applied:
            self._publish_state()

    def _feed_one(self, event: ZoneEvent | HandEnded) -> bool:
        """Journal and apply one zone event, or queue it; True if it was applied."""
        if self._backlog:
            self._queue(event)  # keep the order: nothing overtakes the waiting cards
            return False
        try:
            self._journal_zone_event(event)
        except NotJournaledError:
            self._queue(event)
            return False
        return True

    def _journal_zone_event(self, event: ZoneEvent | HandEnded) -> None:
        """Journal and apply ``event``, opening a card-only hand first when it starts
        one; raises :class:`NotJournaledError` as :meth:`_journal_and_apply` does."""
        if self.engine.starts_hand(event):
            # Card-only table: the journal records the hand start before the card,
            # so replay from the journal opens the same hand, with the same number.
            self._journal_and_apply(HandStarted((), at=event.at, hand_id=self.last_hand + 1))
        self._journal_and_apply(event)

    def _queue(self, event: ZoneEvent | HandEnded) -> None:
        if len(self._backlog) >= MAX_BACKLOG:
            self.backlog_refused += 1
            if self.backlog_refused == 1:
                log.error("journal_backlog_full", size=MAX_BACKLOG)
                self._daemon_alert(
                    AlertCode.JOURNAL_BACKLOG_FULL,
                    f"{MAX_BACKLOG} card movements are waiting for the journal; newer ones"
                    " are being lost. Fix the journal's disk now.",
                )
            return
        self._backlog.append(event)

    def _journal_and_apply(self, event: TableEvent) -> list[EngineOutput]:
        if isinstance(event, HandStarted) and event.hand_id is None:
            event = dataclasses.replace(event, hand_id=self.last_hand + 1)
        self._append(event)
        if isinstance(event, HandStarted) and event.hand_id is not None:
            self._hand_started(event.hand_id)
        before = self.engine.hand
        outputs = self._apply_safely(event)
        self.events_applied += 1
        self._note_facts(before, outputs, self._last_at)
        self._publish_outputs(outputs, before)
        self._record_finished(before)
        return outputs

    def _append(self, event: TableEvent) -> None:
        """Journal ``event`` or raise :class:`NotJournaledError` (after reporting why)."""
        self._append_op(event_to_op(event))

    def _append_op(self, op: Mapping[str, Any]) -> None:
        """Journal ``op`` (its time in :attr:`_last_at`) or raise
        :class:`NotJournaledError` (after reporting why)."""
        try:
            if self.journal is None:
                if self._open_journal is None:
                    raise JournalError("no journal")
                journal = self._open_journal()
                self.journal = journal
                self.report_journal(journal)
            at = self._wall()
            self.journal.append(op, at=at)
            self._last_at = at
        except JournalError as exc:
            self._journal_failed(str(exc))
            raise NotJournaledError from exc
        if self._journal_problem is not None and not self._backlog:
            self._journal_ok()

    def _hand_started(self, number: int) -> None:
        self.last_hand = max(self.last_hand, number)
        if self._hand_floor is not None:
            try:
                self._hand_floor.advance_to(self.last_hand + 1)
            except (OSError, SequenceFileError) as exc:
                # The journal holds the number too; the floor only guards a lost journal.
                log.warning("hand_floor_not_saved", error=str(exc))
        if self._journal_note is not None and not self._settling:
            # The damaged hand is behind us (a hand opened while the start-up is
            # reconciled is the one whose records were lost: not yet).
            self._journal_note = None
            self._update_health()

    # ---------------------------------------------------------------- journal health

    def report_journal(self, journal: Journal) -> None:
        """Report what opening ``journal`` found: a torn tail (log), damage and
        its recovery (log, alert, ``status`` degraded until the next hand)."""
        found = journal.found
        if found.torn_tail and not found.damaged:
            # A write cut by a crash: never acknowledged, so nothing published
            # depended on it. Worth a line, not a person.
            log.warning("journal_torn_tail_dropped", path=str(journal.path))
        recovery = journal.recovery
        if recovery is None:
            return
        log.error("journal_damaged", path=str(journal.path), damage=recovery.summary,
                  records_lost=recovery.lost, records_kept=recovery.kept,
                  moved_to=str(recovery.moved_to))
        self._daemon_alert(
            JOURNAL_DAMAGED,
            f"The journal was damaged ({recovery.summary}): {recovery.lost} record(s)"
            f" lost, {recovery.kept} recovered. The damaged file is kept as"
            f" {recovery.moved_to.name}. Check the current hand by eye.",
        )
        self._journal_note = (f"journal damaged, {recovery.lost} record(s) lost; kept as"
                              f" {recovery.moved_to.name}")
        self._update_health()

    def report_missing_journal(self, path: str,
                               why: str = "journal file was missing at start") -> None:
        """The journal lost its records though the table ran before (``why``:
        missing, emptied, hand records gone; issue 21 journal_gate): say so."""
        log.error("journal_missing", path=path, why=why)
        self._daemon_alert(
            JOURNAL_MISSING,
            f"The journal {path} lost its records although this table has run before"
            f" ({why}): the hand in progress could not be restored. Check the table by eye.",
        )
        self._journal_note = why
        self._update_health()

    def journal_replaced(self, problem: str) -> None:
        """The live journal vanished while running (``problem``: deleted, moved, its
        directory removed) and the journal began a new file with the current hand
        (issue 21 item 1): log, alert, ``status`` degraded until the next hand."""
        path = self.journal.path if self.journal is not None else "the journal"
        log.error("journal_file_lost", path=str(path), problem=problem)
        self._daemon_alert(
            JOURNAL_MISSING,
            f"While the table controller was running, {problem} ({path}). A new journal"
            " file was begun with the current hand, so nothing on the table is lost and"
            " hand numbers go on; the records of earlier hands went with the old file"
            " (rotated files are kept). Find out who removed it.",
        )
        self._journal_note = f"{problem}; a new journal file was begun"
        self._update_health()

    def journal_unavailable(self, reason: str) -> None:
        """The journal could not be opened at start: run degraded and retry it."""
        self._journal_failed(reason)

    def alert(self, code: AlertCode, message: str) -> None:
        """Publish a table alert from the daemon itself (not the rules engine)."""
        self._daemon_alert(code, message)

    def _journal_failed(self, reason: str) -> None:
        self._next_journal_retry = self._mono() + JOURNAL_RETRY_PERIOD
        if self._journal_problem is not None:
            return
        self._journal_problem = reason
        log.error("journal_write_failed", error=reason)
        self._daemon_alert(
            JOURNAL_WRITE_FAILED,
            f"The journal cannot be written ({reason}). The table is still read and the"
            " cards are kept in order in memory, but nothing new is published until the"
            " journal can be written again: free disk space or fix the disk.",
        )
        self._update_health()

    def _journal_ok(self) -> None:
        log.warning("journal_writable_again", was=self._journal_problem)
        self._journal_problem = None
        self._update_health()

    def _retry_journal(self) -> None:
        """Journal, apply and publish the backlog in order, as far as it goes."""
        applied = 0
        if not self._backlog:
            try:
                if self.journal is None:
                    self._append_nothing()
                self._journal_ok()
            except NotJournaledError:
                return
            return
        while self._backlog:
            event = self._backlog.popleft()
            try:
                self._journal_zone_event(event)
            except NotJournaledError:
                self._backlog.appendleft(event)
                break
            applied += 1
        if applied:
            self._publish_state()
        if not self._backlog:
            log.warning("journal_backlog_applied", events=applied)
            if self._journal_problem is not None:
                self._journal_ok()

    def _append_nothing(self) -> None:
        """Open a journal that could not be opened before (nothing to write yet)."""
        try:
            assert self._open_journal is not None
            journal = self._open_journal()
        except JournalError as exc:
            self._journal_failed(str(exc))
            raise NotJournaledError from exc
        self.journal = journal
        self.report_journal(journal)

    def _update_health(self) -> None:
        problem = self._journal_problem
        if problem is not None:
            problem = f"journal not writable: {problem}"
        self.publisher.set_health(problem or self._journal_note)

    # ---------------------------------------------------------------- start-up reconciliation

    def begin_reconcile(self) -> None:
        """Collect the readers' first reports, then reconcile them with the restored
        hand (see :mod:`table_controller.daemon.reconcile`)."""
        self._reconciling = True
        self._reconcile_deadline = self._mono() + RECONCILE_TIMEOUT
        self._inventoried.clear()
        self._buffer = []

    @property
    def reconciling(self) -> bool:
        """True until the start-up reconciliation has been fed."""
        return self._reconciling

    def _maybe_settle(self) -> None:
        everyone = set(self.layout.antenna_map)
        settled = everyone <= self._inventoried and self.presence.next_deadline() is None
        if settled or self._mono() >= self._reconcile_deadline:
            self._settle(timed_out=not settled)

    def _settle(self, timed_out: bool) -> None:
        self._reconciling = False
        self._settling = True
        try:
            self._settle_now(timed_out)
        finally:
            self._settling = False

    def _settle_now(self, timed_out: bool) -> None:
        buffered, self._buffer = self._buffer, []
        gone, new, unknown = net_difference(self._start_positions, buffered)
        try:
            plan = reconcile(self.engine, gone, new, unknown)
        except Exception:
            # A bug here must not take the table down: feed what the readers
            # reported as it came, as a daemon without reconciliation would.
            log.exception("start_reconcile_failed")
            for event in buffered:
                self._feed_one(event)
            self._publish_state()
            return
        log.info("start_reconciled", gone=len(gone), new=len(new), timed_out=timed_out,
                 interrupted=plan.interrupted)
        hand = self.engine.hand
        kept = len(hand.alerts) if hand is not None else 0
        # An interrupted hand's last moves are guessed (their order, and what
        # the downtime hid): what the engine makes of them is not the dealer's
        # error, so it is not published; the one alert below says what is known.
        self._quiet = plan.interrupted
        if plan.interrupted and hand is not None and hand.number in self._facts:
            self._facts[hand.number].interrupted = True  # its record says so
        try:
            for event in plan.before_end:
                self._feed_one(event)
            if plan.interrupted and hand is not None and not hand.finished:
                # Close it now (journaled as an "end" op, so a replay closes it
                # too): later removals of its cards must not judge it again.
                self._feed_one(HandEnded(at=self._mono()))
        finally:
            self._quiet = False
        if plan.interrupted and hand is not None:
            del hand.alerts[kept:]
        if plan.interrupted:
            log.warning("hand_interrupted", hand=plan.hand)
            self._daemon_alert(
                HAND_INTERRUPTED,
                f"Hand {plan.hand} ended while the table controller was down and the next"
                " deal had begun: it was closed with the cards as last seen, but folds and"
                " anything else done during the downtime are unknown. Check its result.",
            )
        for event in plan.after:
            self._feed_one(event)
        self._publish_state()

    def _apply_safely(
        self, event: TableEvent, record: Mapping[str, Any] | None = None
    ) -> list[EngineOutput]:
        """Apply one event; a bug in the engine must not kill the table (nor, the
        event being journaled already, every restart after it): log it, tell the
        floor, and go on with the next event."""
        try:
            return self.engine.apply(event)
        except Exception:
            log.exception("engine_error", input=type(event).__name__,
                          jseq=record.get("jseq") if record else None)
            if record is None:
                self._daemon_alert(
                    AlertCode.ENGINE_ERROR,
                    "The table controller failed on an input and skipped it: check the"
                    " table by eye and report the daemon's log.",
                )
            return []

    # ---------------------------------------------------------------- console

    def console_command(self, request: CommandRequest) -> ConsoleResult:
        """Parse, journal, apply and publish one console command; answer it.

        Returns the result the requester was sent (or would have been: a
        request with a bad response topic is refused without an answer).
        """
        name = request.shown_name
        if request.response_topic is not None:
            problem = self._topics.reply_problem(request.response_topic)
            if problem is not None:
                # Refused, not carried out: its requester could never learn the
                # outcome, and a reply there could forge table data or get the
                # daemon disconnected (docs/console.md "Replies").
                self._console_rejected(
                    name, BAD_RESPONSE_TOPIC, problem,
                    f"Console command {name!r} refused ({BAD_RESPONSE_TOPIC}): {problem}",
                    seat=None,
                )
                return ConsoleResult(False, BAD_RESPONSE_TOPIC, problem)
        key = self._request_key(request)
        if key is not None and key in self._answered:
            # The same request again (a QoS 1 redelivery or a console's retry):
            # answer as the first time, apply nothing twice.
            result, payload = self._answered[key]
            self._answered.move_to_end(key)
            self.console_repeats += 1
            log.info("console_command_repeated", command=name)
            self._send_reply(request, payload)
            return result
        try:
            event = parse_command(request.name, request.payload, self.layout.seats,
                                  at=self._mono())
        except CommandError as exc:
            # Nothing to journal: the command is no table event. The floor hears
            # about it because a console sending garbage may be sending it for real.
            self._console_rejected(
                name, exc.code, exc.reason,
                f"Console command {name!r} rejected ({exc.code}): {exc.reason}",
                seat=exc.seat,
            )
            result = ConsoleResult(False, exc.code, exc.reason)
            self._remember(key, result, self._reply(request, result))
            return result
        if isinstance(event, AlertAck | AlertResolve | DealerChange):
            return self._floor_command(request, key, event)
        if isinstance(event, HandStarted):
            refusal = self.engine.refuse_hand(event)
        elif isinstance(event, CardPlaced):
            refusal = self._manual_card_refusal(event)
        else:
            refusal = None
        if refusal is not None:
            # Not journaled: a journal's current hand starts at its last "hand"
            # record, so a refused one there would restart the wrong hand.
            # The refusal changes nothing; the requester is told why.
            log.warning("console_command_rejected", command=request.name, code=refusal.code,
                        reason=refusal.message)
            self._reply(request, refusal)
            return refusal
        if self._reconciling:
            # The dealer acts on the table as it is now: settle the start-up with
            # what the readers reported so far, then apply the command after it.
            self._settle(timed_out=True)
        if self._backlog:
            result = ConsoleResult(
                False, ReplyCode.JOURNAL_UNAVAILABLE,
                "the journal cannot be written; cards are waiting to be journaled",
            )
            self._reply(request, result)
            return result
        try:
            if isinstance(event, CardPlaced):
                # A manual card (issue 19): a zone event like a read one, opening a
                # card-only hand first when it starts one; the engine does not
                # answer zone events, so the reply is the daemon's.
                self._journal_zone_event(event)
                outputs: list[EngineOutput] = [ConsoleResult(
                    True, message=f"card entered by hand at {event.zone.name}")]
            else:
                outputs = self._journal_and_apply(event)
        except NotJournaledError:
            result = ConsoleResult(False, ReplyCode.JOURNAL_UNAVAILABLE,
                                   "the journal cannot be written; try again later")
            self._reply(request, result)
            return result
        results = [output for output in outputs if isinstance(output, ConsoleResult)]
        if len(results) != 1:
            # The engine's contract is one answer per console input; say so loudly
            # rather than guess, but still answer the requester.
            log.error("console_result_missing", command=request.name, results=len(results))
        result = results[0] if results else ConsoleResult(
            False, ReplyCode.INTERNAL_ERROR, "the engine gave no answer to this command"
        )
        log.info("console_command", command=name, accepted=result.accepted,
                 code=result.code)
        self._publish_state()  # before the reply: a requester reading state sees the change
        self._remember(key, result, self._reply(request, result))
        return result

    def _manual_card_refusal(self, event: CardPlaced) -> ConsoleResult | None:
        """Why a manual ``card`` contradicts the table (issue 19), or None.

        A card entered by hand stands for a tag no reader reads: if a reader sees
        that card anywhere, or the hand already has it on the table, the entry is
        wrong (a mistyped card, or the tag works after all) and changes nothing.
        The reason names where, never the card (it is logged).
        """
        for placed in self.presence.present():
            if placed.card is event.card:
                return ConsoleResult(
                    False, ReplyCode.CARD_SEEN,
                    f"the readers see that card at {placed.zone.name}: enter by hand only"
                    " a card no reader can read")
        hand = self.engine.hand
        if hand is not None and not hand.finished and hand.where.get(event.card):
            return ConsoleResult(
                False, ReplyCode.CARD_SEEN,
                f"that card is on the table already, at {hand.where[event.card][0].name}")
        return None

    @staticmethod
    def _request_key(request: CommandRequest) -> bytes | None:
        """The request id of ``request``: its correlation data, with the command and
        payload (so a console that reuses correlation data for different commands
        is not answered from memory); ``None`` without correlation data."""
        if request.correlation_data is None:
            return None
        digest = hashlib.sha256()
        for part in (request.name.encode("utf-8", "surrogatepass"), request.payload,
                     request.correlation_data):
            digest.update(len(part).to_bytes(4, "big"))
            digest.update(part)
        return digest.digest()

    def _remember(self, key: bytes | None, result: ConsoleResult, payload: bytes) -> None:
        if key is None:
            return
        self._answered[key] = (result, payload)
        while len(self._answered) > REQUEST_MEMORY:
            self._answered.popitem(last=False)

    def _console_rejected(
        self, name: str, code: str, reason: str, message: str, seat: int | None
    ) -> None:
        """Log and alert a refused console command: a warning and a ``console_rejected``
        alert each for the first :data:`REJECTED_ALERT_BURST` of a window, then
        only counted (and logged at debug) until the window's summary."""
        now = self._mono()
        if self._rejected_window_end is None:
            self._rejected_window_end = now + REJECTED_ALERT_WINDOW
            self._rejected_in_window = 0
        if self._rejected_in_window < REJECTED_ALERT_BURST:
            self._rejected_in_window += 1
            log.warning("console_command_rejected", command=name, code=code, reason=reason)
            self._daemon_alert(CONSOLE_REJECTED, message, seat=seat)
            return
        # A flood: one line per command would fill the disk (and journald
        # would drop them anyway); the summary below counts them.
        log.debug("console_command_rejected", command=name, code=code, reason=reason)
        self._rejected_suppressed += 1
        self._rejected_last = message

    def _close_rejected_window(self) -> None:
        suppressed, self._rejected_suppressed = self._rejected_suppressed, 0
        self._rejected_window_end = None
        if suppressed:
            log.warning("console_rejected_summarised", count=suppressed,
                        window=REJECTED_ALERT_WINDOW, last=self._rejected_last)
            self._daemon_alert(
                CONSOLE_REJECTED,
                f"{suppressed} more console command(s) were rejected in the last"
                f" {REJECTED_ALERT_WINDOW:g} s (a flood from a client?). The last:"
                f" {self._rejected_last}",
            )

    def _reply(self, request: CommandRequest, result: ConsoleResult) -> bytes:
        """Answer ``request`` with ``result``; return the reply's bytes."""
        hand = self.engine.hand
        betting = betting_of(hand)
        reply = ConsoleReply(
            table=self.table_id,
            command=request.shown_name,
            accepted=result.accepted,
            code=None if result.accepted else (result.code or ReplyCode.INTERNAL_ERROR),
            reason="" if result.accepted else result.message,
            hand=hand.number if hand else None,
            to_act=betting.to_act if betting is not None else None,
            pot=betting.pot_total if betting is not None else None,
        )
        payload = to_json(reply)
        self._send_reply(request, payload)
        return payload

    def _send_reply(self, request: CommandRequest, payload: bytes) -> None:
        if request.response_topic is None:
            log.warning("console_command_without_response_topic", command=request.shown_name)
            return
        if not self.publisher.reply(request, payload):
            log.warning("console_reply_not_sent", command=request.shown_name)

    def _publish_outputs(
        self, outputs: Sequence[EngineOutput], before: HandState | None = None
    ) -> None:
        """Publish alerts, notices and events; ``before``: the hand before the input.

        A new hand first closes the one in progress (its result, its last alerts),
        so what comes before the ``hand_started`` event belongs to the old hand
        and carries its number.
        """
        hand = before if before is not None else self.engine.hand
        for output in outputs:
            if isinstance(output, GameEvent) and output.kind is GameEventKind.HAND_STARTED:
                hand = self.engine.hand
            if isinstance(output, Alert) and self._quiet:
                log.info("alert_withheld_interrupted_hand", code=output.code.value)
            elif isinstance(output, Alert):
                self._raise(alert_payload(self.table_id, hand, output))
                log.warning("dealing_alert", code=output.code.value, seat=output.seat,
                            street=output.street, rule=output.rule,
                            severity=output.severity.value)
            elif isinstance(output, Notice) and self._quiet:
                log.debug("notice_withheld_interrupted_hand")
            elif isinstance(output, Notice):
                self._publish(self.publisher.publish_notice,
                              *notice_payloads(self.table_id, hand, output))
                if output.secret:
                    # Computed from a down card (rule 19): not even its code in the log.
                    log.debug("dealing_notice", secret=True)
                else:
                    log.info("dealing_notice", code=output.code.value, seat=output.seat,
                             street=output.street, rule=output.rule)
            elif isinstance(output, GameEvent):
                payloads = event_payloads(self.table_id, hand, output)
                if payloads is not None:
                    self._publish(self.publisher.publish_event, *payloads)

    def _publish(self, method: Callable[..., None], *payloads: Any) -> None:
        """Publish through ``method``, surviving a sequence file that can no longer
        be written (full or read-only disk, reserve used up): the message is not
        sent, since its ``seq`` could repeat after a restart, and it is said once."""
        try:
            method(*payloads)
        except SequenceFileError as exc:
            if not self._seq_failed:
                self._seq_failed = True
                log.error("publish_stopped_sequence_not_persisted", error=str(exc))

    def _publish_state(self) -> None:
        hand = self.engine.hand
        seats = self.layout.seats
        spot = equity_spot(hand, self.game) if self._equity_sink is not None else None
        moved = spot != self._spot
        if moved:
            self._spot, self._equity = spot, None
        self._publish(
            self.publisher.publish_state,
            public_state(self.table_id, seats, hand, self.game, self.engine.names),
            secure_state(self.table_id, seats, hand, self.game, spot=spot, equity=self._equity,
                         names=self.engine.names),
        )
        if moved and self._equity_sink is not None:
            # After the card's event and state are out: equity never delays a card.
            self._equity_sink.submit(spot)

    def _equity_ready(self, result: LiveEquity) -> None:
        """Publish a finished equity on ``secure/state``, if the hand is still at its spot."""
        if result.spot != self._spot:
            self.equity_stale += 1  # a newer card came while it was computed
            return
        self._equity = result
        self.equity_published += 1
        self._publish(
            self.publisher.publish_secure_state,
            secure_state(self.table_id, self.layout.seats, self.engine.hand, self.game,
                         spot=self._spot, equity=result, names=self.engine.names),
        )

    # ---------------------------------------------------------------- readers

    def _reader_report(self, item: ReaderReport) -> None:
        message, reader, at = item.message, item.reader_id, item.at
        figures = self._figures.get(reader)
        if figures is not None:  # figures only: the table's state comes from presence
            figures.feed(message, at)
        if isinstance(message, TagArrived):
            events = self.presence.tag_arrived(reader, message.antenna, message.uid, at)
        elif isinstance(message, TagLeft):
            events = self.presence.tag_left(reader, message.antenna, message.uid, at)
        elif isinstance(message, Inventory):
            events = self.presence.inventory(reader, message.antenna, message.uids, at)
            if self._reconciling:
                self._inventoried.add((reader, message.antenna))
        elif isinstance(message, ReaderFault):
            self._reader_fault(reader, message)
            return
        else:
            return  # hello and heartbeat are the link's business
        self.feed(events)  # (also when empty: during start-up it may settle the table)

    def _reader_fault(self, reader: int, fault: ReaderFault) -> None:
        zone = self.layout.zone_for(reader, fault.antenna) if fault.antenna is not None else None
        where = f"antenna {fault.antenna} ({zone.name})" if zone else "the reader itself"
        self._daemon_alert(
            AlertCode.READER_FAULT,
            f"Reader {reader} reports a fault on {where}: {fault.text or 'no details'}."
            " Cards there may not be seen until it is fixed.",
            seat=zone.seat if zone else None,
        )

    def _reader_state_change(self, item: ReaderStateChange) -> None:
        """A link changed state or problem: presence, one alert per outage, and the
        retained topic if what it shows changed."""
        reader, state, stats = item.reader_id, item.state, item.stats
        was_down = reader in self._offline_alerted
        self._reader_state[reader] = state
        self._reader_stats[reader] = stats
        now = self._mono()
        if state is ConnectionState.ONLINE:
            if was_down:
                self._offline_alerted.discard(reader)
                log.info("reader_back", reader=reader)
            self.feed(self.presence.reader_restored(reader, now))
        elif _reader_down(state, stats) and not was_down:
            # Once per outage, whatever the retries and the link's steps in between.
            self._offline_alerted.add(reader)
            self.presence.reader_lost(reader, now)
            self._reader_offline_alert(reader, state, stats)
        self._publish_reader(reader)

    def _reader_offline_alert(self, reader: int, state: ConnectionState, stats: LinkStats) -> None:
        zones = ", ".join(zone.name for zone in self.layout.zones_of_reader(reader))
        problem = stats.problem
        if state is ConnectionState.WRONG_READER or problem is LinkProblem.WRONG_READER:
            code = AlertCode.WRONG_READER
            why = (
                "another reader answered on its port (a reader plugged into the wrong"
                " USB port); its tags are ignored so no card lands on the wrong seat"
            )
        else:
            code = AlertCode.READER_OFFLINE
            known = _PROBLEM_WHY.get(problem) if problem is not None else None
            why = known or {
                ConnectionState.DISCONNECTED: "it is unplugged or not answering",
                ConnectionState.STALE: "it stopped sending heartbeats",
                ConnectionState.INCOMPATIBLE: "it speaks an unsupported protocol version",
            }.get(state, state.value)
        self._daemon_alert(
            code, f"Reader {reader} is offline ({why}): {zones} are not being read."
        )

    def _daemon_alert(self, code: AlertCode, message: str, seat: int | None = None) -> None:
        hand = self.engine.hand
        log.warning("table_alert", code=code.value, severity=alert_severity(code).value)
        self._raise(
            AlertPayload(
                table=self.table_id, hand=hand.number if hand else None, seq=0, ts=0.0,
                code=code, severity=alert_severity(code), seat=seat, street=None, rule=None,
                message=message,
            )
        )

    # ---------------------------------------------------------------- the floor (issue 14)

    def _new_alert_id(self) -> str:
        if self._alert_ids is not None:
            return self._alert_ids()
        return f"{self.table_id}:{self.book.highest_number + 1}"

    def _dealer_info(self) -> DealerInfo | None:
        dealer = self.book.dealer
        return DealerInfo(id=dealer.id, name=dealer.name) if dealer is not None else None

    def _raise(self, payload: AlertPayload) -> None:
        """Raise one alert: give it its id and the dealer on duty, journal it, add it to
        the open set, publish it and the new ``alerts/open``. An alert that cannot be
        journaled (the journal is what failed) is still published and kept open in
        memory: the floor must see it; it is said in the log."""
        alert_id = self._new_alert_id()
        dealer = self.book.dealer
        payload = payload.model_copy(update={"id": alert_id, "dealer": self._dealer_info()})
        entry = BookAlert(
            id=alert_id, code=payload.code, message=payload.message, hand=payload.hand,
            raised_ts=self._wall(), dealer=dealer, seat=payload.seat, street=payload.street,
            rule=payload.rule,
        )
        self._keep_alert(entry)
        self._publish(self.publisher.publish_alert, payload)
        self._publish_open()

    def _adopt_alert(self, payload: AlertPayload) -> None:
        """An alert the MQTT side raised and published: it joins the open set."""
        if not payload.id:
            return
        dealer = payload.dealer
        self._keep_alert(BookAlert(
            id=payload.id, code=payload.code, message=payload.message, hand=payload.hand,
            raised_ts=payload.ts, seat=payload.seat, street=payload.street, rule=payload.rule,
            dealer=None if dealer is None else self.book.dealer,
        ))
        self._publish_open()

    def _keep_alert(self, entry: BookAlert) -> None:
        """Journal and book one raised alert (and note it in its hand's facts)."""
        self._journal_fact(entry.as_op())
        pushed = self.book.raise_alert(entry)
        self._note_alert(entry.hand, entry.id, entry.code.value, entry.severity.value)
        for old in pushed:
            # The open set is bounded (floor.MAX_OPEN_ALERTS): the oldest is closed
            # by the table itself, visibly: journaled, published, logged.
            log.warning("alert_closed_open_set_full", alert=old.id, code=old.code.value)
            self._apply_floor(AlertResolve(
                old.id, TABLE_ACTOR, f"closed by the table: more than {MAX_OPEN_ALERTS}"
                " alerts were open (the oldest are closed first)"))

    def _journal_fact(self, op: Mapping[str, Any]) -> bool:
        """Journal an alert or lifecycle record; False (said in the log) if it cannot
        be: what it records is then kept in memory only, until the next restart."""
        if self.journal is None:
            log.error("alert_record_not_journaled", op=str(op.get("op")), error="no journal")
            return False
        try:
            at = self._wall()
            self.journal.append(op, at=at)
            self._last_at = at
        except JournalError as exc:
            log.error("alert_record_not_journaled", op=str(op.get("op")), error=str(exc))
            self._journal_failed(str(exc))
            return False
        return True

    def _apply_floor(self, command: AlertAck | AlertResolve | DealerChange) -> None:
        """Journal (best effort: the table's own closing), apply and publish."""
        self._journal_fact(floor_op(command))
        self._apply_and_publish(command, self._last_at)

    def _apply_and_publish(self, command: AlertAck | AlertResolve | DealerChange,
                           at: float) -> None:
        change = self.book.apply(command, at)
        if change is None:
            self._publish_dealer()
            return
        if self._floor is not None:
            hand = self.engine.hand
            self._publish(self._floor.publish_alert_change, AlertChangePayload(
                table=self.table_id, hand=hand.number if hand else None, seq=0, ts=0.0,
                id=change.id, state=change.state, by=change.by, note=change.note,
                at_ts=change.at_ts,
            ))
        self._publish_open()

    def _floor_command(self, request: CommandRequest, key: bytes | None,
                       command: AlertAck | AlertResolve | DealerChange) -> ConsoleResult:
        """``ack``, ``resolve`` or ``dealer``: checked against the book (a refusal
        changes nothing and is not journaled), journaled, applied, published, answered."""
        name = request.name
        refusal = self.book.refusal(command)
        if refusal is not None:
            code, reason = refusal
            log.warning("console_command_rejected", command=name, code=code, reason=reason)
            result = ConsoleResult(False, code, reason)
            self._remember(key, result, self._reply(request, result))
            return result
        try:
            self._append_op(floor_op(command))
        except NotJournaledError:
            result = ConsoleResult(False, ReplyCode.JOURNAL_UNAVAILABLE,
                                   "the journal cannot be written; try again later")
            self._reply(request, result)
            return result
        self._apply_and_publish(command, self._last_at)
        if isinstance(command, DealerChange):
            message = (f"dealer {command.dealer_id} ({command.name}) signed in"
                       if command.dealer_id is not None else "dealer signed out")
        else:
            message = f"alert {command.alert} " + (
                "acknowledged" if isinstance(command, AlertAck) else "resolved")
        # Dealer and supervisor names are public (they are on the public topics).
        log.info("floor_command", command=name, message=message)
        result = ConsoleResult(True, message=message)
        self._remember(key, result, self._reply(request, result))
        return result

    def _publish_open(self) -> None:
        if self._floor is None:
            return
        hand = self.engine.hand
        self._publish(self._floor.publish_open_alerts, OpenAlertsPayload(
            table=self.table_id, hand=hand.number if hand else None, seq=0, ts=0.0,
            alerts=[FloorAlert.model_validate(a.as_open()) for a in self.book.open_alerts()],
        ))

    def _publish_dealer(self) -> None:
        if self._floor is None:
            return
        hand = self.engine.hand
        self._publish(self._floor.publish_dealer, DealerPayload(
            table=self.table_id, hand=hand.number if hand else None, seq=0, ts=0.0,
            dealer=self._dealer_info(), since=self.book.dealer_since,
        ))

    # ---------------------------------------------------------------- hand records

    def _note_facts(self, before: HandState | None, outputs: Sequence[EngineOutput],
                    at: float) -> None:
        """Gather the hand record's facts from one input's outputs; a new hand gets
        new facts (started at ``at``, the journal time of its ``hand`` record)."""
        current = before
        chunk: list[EngineOutput] = []
        for output in outputs:
            if isinstance(output, GameEvent) and output.kind is GameEventKind.HAND_STARTED:
                self._facts_of(current, chunk)
                chunk = []
                current = self.engine.hand
                if current is not None:
                    dealer = self.book.dealer
                    self._facts[current.number] = HandFacts(
                        number=current.number, started_ts=at,
                        dealer=dealer.as_dict() if dealer is not None else None)
                continue
            chunk.append(output)
        self._facts_of(current, chunk)

    def _facts_of(self, hand: HandState | None, outputs: Sequence[EngineOutput]) -> None:
        if hand is not None and outputs and hand.number in self._facts:
            self._facts[hand.number].note_outputs(outputs)

    def _note_alert(self, hand: int | None, alert_id: str, code: str, severity: str) -> None:
        facts = self._facts.get(hand) if hand is not None else None
        if facts is not None:
            facts.alerts.append((alert_id, code, severity))

    def _record_finished(self, before: HandState | None) -> None:
        """Publish the record of every hand that has ended and has none yet."""
        for hand in (before, self.engine.hand):
            if hand is None or not hand.finished or hand.number not in self._facts:
                continue
            facts = self._facts.pop(hand.number)
            if self._floor is None:
                continue
            try:
                public, secure = hand_records(self.table_id, hand, facts, self._wall(),
                                              game=self.game, names=self.engine.names)
            except Exception:
                # A bug here must not take the table down; the hand is in the journal.
                log.exception("hand_record_failed", hand=hand.number)
                continue
            self._publish(self._floor.publish_hand, public, secure)
            log.info("hand_recorded", hand=hand.number, ended=public.ended)
        # Facts of hands that vanished unrecorded (never finished) are dropped.
        current = self.engine.hand.number if self.engine.hand is not None else None
        for number in [n for n in self._facts if n != current]:
            if before is None or number != before.number:
                del self._facts[number]

    def _publish_reader(self, reader: int, *, force: bool = False) -> None:
        """Publish reader ``reader``'s retained status if it changed since it was last
        published (or ``force``): its shown state, last heartbeat or error counters.
        Consumers get a message when there is something new to show, not one per
        link retry or per refresh of a reader that stays offline."""
        state, stats = self._reader_link(reader)
        last_hb = stats.last_heartbeat
        shown = _shown_state(state, stats)
        reason = stats.problem.value if stats.problem is not None else None
        detail = stats.problem_detail if reason is not None else ""
        firmware = (".".join(map(str, stats.hello.firmware_version))
                    if stats.hello is not None else None)
        frame_errors = _frame_errors(stats)
        # The heartbeat's monotonic stamp, not its wall-clock rendering: the latter
        # drifts by float noise between two refreshes of an unchanged reader. The
        # reason and its detail are part of what it shows: a change of cause is news,
        # the link's retries with the same cause are not (issue 13).
        key = (shown, reason, detail, firmware, last_hb, tuple(frame_errors.values()))
        if not force and self._reader_published.get(reader) == key:
            return
        self._reader_published[reader] = key
        hand = self.engine.hand
        self._publish(
            self.publisher.publish_reader,
            ReaderStatus(
                table=self.table_id,
                hand=hand.number if hand else None,
                seq=0,
                ts=0.0,
                reader=str(reader),
                state=shown,
                reason=reason,  # type: ignore[arg-type]  # LinkProblem values == ReaderProblem
                detail=detail,
                firmware=firmware,
                last_heartbeat=(
                    self._wall() - (self._mono() - last_hb) if last_hb is not None else None
                ),
                frame_errors=frame_errors,
                zones=[zone.name for zone in self.layout.zones_of_reader(reader)],
            )
        )

    def _reader_link(self, reader: int) -> tuple[ConnectionState, LinkStats]:
        """Reader ``reader``'s link state and freshest counters."""
        state = self._reader_state.get(reader, ConnectionState.CONNECTING)
        fresh = self._link_stats(reader) if self._link_stats else None
        return state, fresh or self._reader_stats.get(reader, LinkStats())

    def _publish_reader_stats(self, reader: int, now: float) -> None:
        """Publish reader ``reader``'s periodic figures: counts per antenna, never
        a UID (``readers/<id>/stats``, issue 13)."""
        state, stats = self._reader_link(reader)
        figures = self._figures[reader].snapshot(now)
        config = self.layout.reader(reader)
        ports = sorted({a.port for a in figures.antennas} | set(config.antennas if config else ()))
        antennas = []
        for port in ports:
            zone = self.layout.zone_for(reader, port)
            seen = figures.antenna(port)
            antennas.append(AntennaStats(
                port=port,
                zone=zone.name if zone is not None else None,
                tags=seen.count if seen is not None else 0,
                reads_per_s=round(seen.reads_per_s, 2) if seen is not None else 0.0,
                dropouts=seen.dropouts if seen is not None else 0,
            ))
        self._publish(
            self.publisher.publish_reader_stats,
            ReaderStats(
                table=self.table_id,
                ts=0.0,
                reader=str(reader),
                state=_shown_state(state, stats),
                firmware=figures.firmware_text,
                heartbeat_age=(round(figures.heartbeat_age, 3)
                               if figures.heartbeat_age is not None else None),
                frame_errors=_frame_errors(stats),
                antennas=antennas,
            ),
        )


def _shown_state(state: ConnectionState, stats: LinkStats) -> str:
    """The state a reader's topic shows: ``offline`` for a port that cannot be
    opened; for one still connecting or in handshake once the link knows why
    nothing arrives, the state that reason leads to (the link names the reason a
    moment before it changes state: shown this way, the topic changes once)."""
    if state is ConnectionState.DISCONNECTED:
        return "offline"
    if state in (ConnectionState.CONNECTING, ConnectionState.HANDSHAKE) and stats.problem:
        return _PROBLEM_STATE.get(stats.problem, "offline")
    return str(state.value)


_PROBLEM_STATE: Final = {
    LinkProblem.WRONG_READER: ConnectionState.WRONG_READER.value,
    LinkProblem.INCOMPATIBLE: ConnectionState.INCOMPATIBLE.value,
}
"""Problems with a state of their own (see :func:`_shown_state`)."""


def _frame_errors(stats: LinkStats) -> dict[str, int]:
    """The frame error counters every reader payload carries (``missed``: sequence gaps)."""
    return {
        "crc": stats.crc_errors,
        "framing": stats.framing_errors,
        "oversized": stats.oversized,
        "truncated": stats.truncated,
        "unknown_type": stats.unknown_type,
        "unsupported_version": stats.unsupported_version,
        "malformed": stats.malformed,
        "missed": stats.frames_missed,
    }
