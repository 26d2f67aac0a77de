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

Console requests come from other clients and are untrusted (docs/console.md);
the console guard (:mod:`table_controller.daemon.console_guard`) decides: a
request whose *Response Topic* is not the table's own ``reply/<client>`` is
refused before anything else (never carried out: its requester could not learn
the outcome); a request whose *Correlation Data* (with the same command and
payload) was carried out recently is answered again with the first reply
instead of being applied twice; ``console_rejected`` alerts and their warning
log lines are limited per window, the rest counted and summed up in one alert
and one log line at the end of the window; and no console input, however
hostile, can raise out of :meth:`TableCore.handle`. Every other log line a
client can cause is within the log quota (:mod:`table_controller.mqtt.log_quota`).
Reader state, figures and statuses are the reader board's decisions
(:mod:`table_controller.daemon.reader_board`), alert ids and the floor's payloads
the alert bridge's (:mod:`table_controller.daemon.alert_bridge`), the start-up's
phase the start machine's (:mod:`table_controller.daemon.start_phase`).

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

import contextlib
import dataclasses
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol, runtime_checkable

import structlog

from firmware_bridge.link import ConnectionState, LinkStats
from firmware_bridge.messages import Inventory, ReaderFault, ReaderMessage, TagArrived, TagLeft
from table_controller.daemon.alert_bridge import AlertBridge
from table_controller.daemon.arrival_order import ArrivalOrder, dealer_expects
from table_controller.daemon.console_guard import ConsoleGuard
from table_controller.daemon.equity_feed import EquityReady
from table_controller.daemon.floor import (
    AlertBook,
    BookAlert,
    alert_from_op,
)
from table_controller.daemon.manual_entry import manual_contradiction
from table_controller.daemon.projection import (
    HandFacts,
    alert_payload,
    betting_of,
    event_payloads,
    hand_records,
    notice_payloads,
    secure_state,
    state_payloads,
)
from table_controller.daemon.reader_board import BoardAlert, LinkStatsSource, ReaderBoard
from table_controller.daemon.reconcile import net_difference, reconcile
from table_controller.daemon.start_phase import StartMachine, StartMove
from table_controller.domain.cards import Card
from table_controller.domain.engine.alerts import Alert, AlertCode, Notice, alert_severity
from table_controller.domain.engine.dealing import DealingEngine, HandState
from table_controller.domain.engine.due import due_zones, face_up_holes, returning_cards
from table_controller.domain.engine.outputs import (
    ConsoleResult,
    EngineOutput,
    GameEvent,
    GameEventKind,
    ReplyCode,
)
from table_controller.domain.engine.settings import TableSettings
from table_controller.domain.equity.evaluate import Game
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
from table_controller.mqtt.log_quota import LogQuota, log_limited, write_summaries
from table_controller.mqtt.payloads import (
    AlertChangePayload,
    AlertPayload,
    ConsoleReply,
    DealerPayload,
    OpenAlertsPayload,
    PublicHandRecord,
    SecureHandRecord,
    SecureState,
    to_json,
)
from table_controller.mqtt.publisher import CommandRequest, Publisher
from table_controller.mqtt.sequence import SequenceCounter, SequenceFileError
from table_controller.mqtt.topics import TableTopics
from table_controller.records.journal import Journal, JournalError, strip_envelope
from table_controller.records.ops import ALERT_OP, FLOOR_OPS, NOTICE_OP, floor_op
from table_controller.records.script import event_to_op, op_to_event
from table_controller.table.deck import DeckRegistry
from table_controller.table.layout import TableLayout
from table_controller.table.presence import MAX_TIES, CrossReadTie, PresenceTracker

log = structlog.get_logger(__name__)

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

STATE_BURST: Final = 16
"""Inputs that changed the table after which the state is published even though more
table input waits (a long burst still shows the table as it goes)."""

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


DaemonInput = (
    ReaderReport | ReaderStateChange | RebirthRequest | ConsoleCommand | EquityReady
    | PublishedAlert | StopRequest
)
"""Everything the core's queue carries."""


@dataclass(slots=True)
class _JournalHealth:
    """What stands between a zone event and the journal, and what ``status`` says."""

    backlog: deque[ZoneEvent | HandEnded] = dataclasses.field(default_factory=deque)
    """Zone events waiting, in order, while the journal cannot be written."""
    problem: str | None = None
    """Why the journal cannot be written now (None: it can)."""
    note: str | None = None
    """Damage found at start (or the journal replaced), said until the next hand."""
    claim_problem: str | None = None
    """Another daemon publishes as this table (issue 21)."""
    next_retry: float = 0.0
    """Monotonic time of the next attempt to write the journal."""
    refused: int = 0
    """Zone events refused because the backlog was full (:data:`MAX_BACKLOG`)."""


@dataclass(slots=True)
class _StartCollection:
    """What the start-up reconciliation collects until the table has settled."""

    deadline: float = 0.0
    """Monotonic time it settles at the latest (:data:`RECONCILE_TIMEOUT`)."""
    inventoried: set[tuple[int, int]] = dataclasses.field(default_factory=set)
    """(reader, antenna) pairs that sent their first inventory."""
    positions: dict[Card, list[tuple[Zone, str | None]]] = dataclasses.field(
        default_factory=dict)
    """Where the restored hand's (and earlier piles') cards lay: seeded into presence."""
    buffer: list[ZoneEvent] = dataclasses.field(default_factory=list)
    """Zone events presence produced meanwhile, to be reconciled."""


@dataclass(slots=True)
class _LiveEquityView:
    """Live equity as the engine thread sees it (docs/equity.md "Live equity")."""

    sink: EquitySink | None
    """The equity worker (None: the secure state has neither equity nor readings)."""
    spot: EquitySpot | None = None
    """The hand's equity spot as last published (None: equity does not apply)."""
    equity: LiveEquity | None = None
    """The equity of :attr:`spot`, once computed."""
    published: int = 0
    stale: int = 0


@dataclass(frozen=True, slots=True)
class _CoreWiring:
    """What the core was given or built at wiring: fixed for its life."""

    table_id: str
    layout: TableLayout
    engine: DealingEngine
    game: Game
    registry: DeckRegistry | None
    publisher: TablePublisher
    floor: FloorPublisher | None
    """The publisher, if it carries the floor's topics too."""
    open_journal: Callable[[], Journal] | None
    """Opens the journal when a retry is due (None: it cannot be reopened)."""
    hand_floor: SequenceCounter | None
    """The next hand number, on disk beside the journal."""
    wall: Callable[[], float]
    mono: Callable[[], float]
    more_waiting: Callable[[], bool]
    """True while more table input waits (the daemon's inbox): a burst goes on."""


@dataclass(slots=True)
class _HandBookkeeping:
    """Hand numbers, facts and timestamps the core keeps across the hands it runs."""

    last_hand: int
    """The highest hand number used so far (journal and floor file)."""
    events_applied: int = 0
    facts: dict[int, HandFacts] = dataclasses.field(default_factory=dict)
    """Facts of the hands not yet recorded (the current one, and one just closed)."""
    last_at: float = 0.0
    """Wall time of the last journal record written."""
    result_hand: int | None = None
    """The hand whose ``hand_result`` event was published last (issue 21 item 10)."""
    state_owed: int = 0
    """Inputs applied since the last state was published (a burst: one state at its end)."""


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
        log_quota: LogQuota | None = None,
        more_waiting: Callable[[], bool] | None = None,
    ) -> None:
        """Wire the parts. ``journal`` may be None when it could not be opened at
        start; ``open_journal`` then opens it when retried. ``hand_floor`` keeps
        the next hand number on disk beside the journal. ``equity`` computes the
        live equity (None: the secure state has neither equity nor readings).
        ``alert_ids`` hands out alert ids that are never reused (the daemon's
        persistent counter; without it ids count on from the highest the book saw).
        ``log_quota`` limits the log lines other clients can cause (shared with the
        publisher). ``more_waiting``: more table input waits (:meth:`_state_changed`)."""
        self._wire = _CoreWiring(
            table_id=table_id, layout=layout, engine=DealingEngine(settings),
            game=table_game(settings), registry=registry, publisher=publisher,
            floor=publisher if isinstance(publisher, FloorPublisher) else None,
            open_journal=open_journal, hand_floor=hand_floor,
            wall=wall_clock, mono=mono_clock,
            more_waiting=more_waiting if more_waiting is not None else _nothing_waits)
        self._hands = _HandBookkeeping(
            last_hand=hand_floor.peek() - 1 if hand_floor is not None else 0)
        self.presence = presence
        self._ties_seen = presence.tie_count  # cross-read ties already published
        self.journal = journal
        self._journal_health = _JournalHealth()
        """The journal's trouble and the zone events waiting for it (module docstring)."""
        self.start = StartMachine()
        """The start-up's phase (daemon/start_phase.py)."""
        self._collected = _StartCollection()
        """What the start-up reconciliation collects (deadline, inventories, reports)."""
        self._seq_failed = False
        """Publishing stopped: the sequence file can no longer be written (said once)."""
        self.readers = ReaderBoard(table_id, layout, link_stats)
        """Link states, figures and what to publish of them (daemon/reader_board.py)."""
        self.console = ConsoleGuard(TableTopics(table_id))
        """Response topics, idempotency, rejected-alert windows (daemon/console_guard.py)."""
        self._live = _LiveEquityView(equity)
        """The equity worker, the spot last published and its equity once computed."""
        self.alerts = AlertBridge(table_id, AlertBook(), alert_ids)
        """Raised alerts to the floor's book and its payloads (daemon/alert_bridge.py)."""
        self.log_quota = log_quota or LogQuota()
        """Lines per event name per window for what console clients cause."""
        self.arrivals = ArrivalOrder()
        """Cards of two readers read the other way round (daemon/arrival_order.py)."""

    @property
    def table_id(self) -> str:
        """The table this core runs."""
        return self._wire.table_id

    @property
    def layout(self) -> TableLayout:
        """Seats, readers and antennas of the table."""
        return self._wire.layout

    @property
    def engine(self) -> DealingEngine:
        """The rules engine (docs/rules.md)."""
        return self._wire.engine

    @property
    def game(self) -> Game:
        """The game dealt at the table (for equity)."""
        return self._wire.game

    @property
    def registry(self) -> DeckRegistry | None:
        """The decks known to the table (None: none registered)."""
        return self._wire.registry

    @property
    def publisher(self) -> TablePublisher:
        """The outbound edge."""
        return self._wire.publisher

    @property
    def last_hand(self) -> int:
        """The highest hand number used so far (journal and floor file)."""
        return self._hands.last_hand

    @last_hand.setter
    def last_hand(self, number: int) -> None:
        self._hands.last_hand = number

    @property
    def events_applied(self) -> int:
        """Table events applied to the engine since start."""
        return self._hands.events_applied

    @property
    def book(self) -> AlertBook:
        """Open alerts and the dealer on duty (issue 14), journaled and restored."""
        return self.alerts.book

    @property
    def backlog_refused(self) -> int:
        """Zone events refused because the journal's backlog was full."""
        return self._journal_health.refused

    @property
    def equity_published(self) -> int:
        """Equity results published on ``secure/state``."""
        return self._live.published

    @property
    def equity_stale(self) -> int:
        """Results that reached the engine thread after a newer card: not published."""
        return self._live.stale

    @property
    def console_repeats(self) -> int:
        """Console requests answered from memory instead of applied again."""
        return self.console.repeats

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
            if name == NOTICE_OP:
                self._restore_notice(op, at)
                continue
            event = op_to_event(op, self.layout.seats)
            if isinstance(event, CardPlaced) and event.deck is not None:
                decks[event.card] = event.deck
            if isinstance(event, HandStarted) and event.hand_id is not None:
                self._hands.last_hand = max(self._hands.last_hand, event.hand_id)
            before = self.engine.hand
            self._note_facts(before, self._apply_safely(event, record), at)
            count += 1
        self._hands.events_applied += count
        if self.engine.hand is not None:
            self._hands.last_hand = max(self._hands.last_hand, self.engine.hand.number)
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

    def _restore_notice(self, op: Mapping[str, Any], at: float) -> None:
        """Put one journaled daemon notice (:meth:`_notice_ties`) back in its hand's
        record; a damaged one is logged and skipped, never fatal."""
        try:
            notice = Notice(AlertCode(op["code"]), op.get("seat"), op.get("street"), None,
                            str(op["message"]), at)
            self._facts_of_hand(op.get("hand"), notice)
        except (ValueError, KeyError, TypeError) as exc:
            log.warning("journal_notice_record_skipped", error=str(exc))

    def _facts_of_hand(self, number: object, notice: Notice) -> None:
        facts = self._hands.facts.get(number) if isinstance(number, int) else None
        if facts is not None:
            facts.note_outputs([notice])

    def _notice_ties(self) -> None:
        """Publish the cross-read ties presence named since the last look (rule 1:
        neither strength nor the deal order told two antennas' reads apart) as
        ``cross_read_tie`` notices, journaled first and kept in the hand's record. No
        card is named: the card may be a hole card (zones only)."""
        count = self.presence.tie_count
        new = count - self._ties_seen
        if new <= 0:
            return
        self._ties_seen = count
        for tie in self.presence.ties()[-min(new, MAX_TIES):]:
            self._tie_notice(tie)

    def _tie_notice(self, tie: CrossReadTie) -> None:
        hand = self.engine.hand
        seat = tie.kept.seat if tie.kept.seat is not None else tie.other.seat
        street = hand.street if hand is not None else None
        message = (f"The antennas of {tie.kept.name} and {tie.other.name} read one card"
                   " alike and the deal order did not tell which it lies on: it was taken"
                   f" as lying in {tie.kept.name}, the first read. Look if it matters.")
        notice = Notice(AlertCode.CROSS_READ_TIE, seat, street, None, message, tie.at)
        number = hand.number if hand is not None else None
        # Not journaled: journal_write_failed is raised for that; the notice goes out.
        with contextlib.suppress(NotJournaledError):
            self._append_op({"op": NOTICE_OP, "code": notice.code.value, "seat": seat,
                             "street": street, "message": message, "hand": number})
        self._facts_of_hand(number, notice)
        if self.start.quiet:
            log.debug("notice_withheld_interrupted_hand")
            return
        self._publish(self.publisher.publish_notice,
                      *notice_payloads(self.table_id, hand, notice))
        log.info("presence_notice", code=notice.code.value, kept=tie.kept.name,
                 other=tie.other.name)

    def _seed_presence(self, decks: Mapping[Card, str]) -> None:
        """Tell presence where the restored hand's cards lie, so that the readers'
        first inventories after a restart also report cards that left meanwhile."""
        hand = self.engine.hand
        if hand is None or self.registry is None:
            return
        now = self._wire.mono()
        for card, zones in hand.where.items():
            deck = decks.get(card)
            if deck is None:
                continue
            uid = self.registry.uid_for(card, deck)
            for zone in zones:
                for reader, port in self.layout.antennas_of(zone)[:1]:
                    self.presence.tag_arrived(reader, port, uid, now,
                                              settle=False)  # known already
                    self._collected.positions.setdefault(card, []).append((zone, deck))

    def _seed_leftovers(self, leftovers: Mapping[Card, Sequence[tuple[Zone, str | None]]]
                        ) -> None:
        """Tell presence about the earlier hands' pile cards still lying on the felt
        (issue 19: the last hand's burn pile read at a restart is not this hand's)."""
        if self.registry is None:
            return
        now = self._wire.mono()
        for card, places in leftovers.items():
            for zone, deck in places:
                if deck is None or deck not in self.registry.decks:
                    continue  # a scripted record, or a deck no longer loaded: no tag
                uid = self.registry.uid_for(card, deck)
                for reader, port in self.layout.antennas_of(zone)[:1]:
                    self.presence.tag_arrived(reader, port, uid, now, settle=False)
                    self._collected.positions.setdefault(card, []).append((zone, deck))

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
            self.feed_held()  # a held card is the table's: journaled before the stop
            return False
        if self._hands.state_owed and not self._wire.more_waiting():
            self._publish_state()  # the burst is over
        return True

    def next_deadline(self) -> float:
        """Monotonic time by which :meth:`tick` must run next."""
        deadline = self.readers.next_refresh
        window_end = self.console.next_deadline()
        if window_end is not None:
            deadline = min(deadline, window_end)
        if self._journal_health.backlog or self._journal_health.problem is not None:
            deadline = min(deadline, self._journal_health.next_retry)
        if self.start.collecting:
            deadline = min(deadline, self._collected.deadline)
        held = self.arrivals.next_deadline()
        if held is not None:
            deadline = min(deadline, held)
        hold = self.presence.next_deadline()
        return min(deadline, hold) if hold is not None else deadline

    def tick(self) -> None:
        """Expire presence holds, retry the journal, settle the start and refresh
        reader statuses, each when due."""
        now = self._wire.mono()
        self._close_rejected_window(now)
        write_summaries(self.log_quota, log, now)
        if self.arrivals.holding:
            self._feed_expired(now)
        self._expect_deal()
        events = self.presence.tick(now)
        if events:
            self.feed(events)
        if self.start.collecting:
            self._maybe_settle()
        if (self._journal_health.backlog or self._journal_health.problem is not None) and (
            now >= self._journal_health.next_retry
        ):
            self._retry_journal()
        if self.readers.refresh_due(now):
            for reader in self.layout.readers:
                self._publish_reader(reader.id)
                self._publish(self.publisher.publish_reader_stats,
                              self.readers.stats(reader.id, now))
        if self._hands.state_owed and not self._wire.more_waiting():
            self._publish_state()

    # ------------------------------------------------------------ zone events

    def feed(self, events: Sequence[ZoneEvent]) -> None:
        """Journal, apply and publish zone events, then publish the new state.

        During the start-up reconciliation they are collected instead; while the
        journal cannot be written they wait in the backlog (module docstring).
        """
        if self.start.collecting:
            self._collected.buffer.extend(events)
            self._maybe_settle()
            return
        if not events:
            return
        applied = False
        for event in self.arrivals.admit(events):
            applied = self._feed_one(event) or applied
        applied = self._feed_due() or applied
        if applied:
            self._state_changed()
        if self.presence.tie_count != self._ties_seen:
            self._notice_ties()

    def _feed_due(self) -> bool:
        """Apply the held cards the dealer is now expected to deal (the arrival order's
        decision, asked again after each); True if one was applied."""
        applied = False
        while (event := self.arrivals.due(self._expects)) is not None:
            applied = self._feed_one(event) or applied
        return applied

    def _expects(self, event: ZoneEvent) -> bool:
        return dealer_expects(self.engine, event)

    def _feed_expired(self, now: float) -> None:
        """Apply the held cards whose window ended (as they came), and what they let in."""
        applied = False
        while (event := self.arrivals.expire(now)) is not None:
            applied = self._feed_one(event) or applied
            applied = self._feed_due() or applied
        if applied:
            self._state_changed()

    def feed_held(self) -> None:
        """Apply every held card now, as they came (a console command or the stop must
        not overtake them)."""
        applied = False
        for event in self.arrivals.release_all():
            applied = self._feed_one(event) or applied
        if applied:
            self._publish_state()
        else:
            self.publish_owed_state()

    def _feed_one(self, event: ZoneEvent | HandEnded) -> bool:
        """Journal and apply one zone event, or queue it; True if it was applied."""
        if self._journal_health.backlog:
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
            self._journal_and_apply(HandStarted((), at=event.at, hand_id=self._hands.last_hand + 1))
        self._journal_and_apply(event)

    def _queue(self, event: ZoneEvent | HandEnded) -> None:
        if len(self._journal_health.backlog) >= MAX_BACKLOG:
            self._journal_health.refused += 1
            if self._journal_health.refused == 1:
                log.error("journal_backlog_full", size=MAX_BACKLOG)
                self._daemon_alert(
                    AlertCode.JOURNAL_BACKLOG_FULL,
                    f"{MAX_BACKLOG} card movements are waiting for the journal; newer ones"
                    " are being lost. Fix the journal's disk now.",
                )
            return
        self._journal_health.backlog.append(event)

    def _journal_and_apply(self, event: TableEvent) -> list[EngineOutput]:
        if isinstance(event, HandStarted) and event.hand_id is None:
            event = dataclasses.replace(event, hand_id=self._hands.last_hand + 1)
        self._append(event)
        if isinstance(event, HandStarted) and event.hand_id is not None:
            self._hand_started(event.hand_id)
        before = self.engine.hand
        outputs = self._apply_safely(event)
        self._hands.events_applied += 1
        self._note_facts(before, outputs, self._hands.last_at)
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
                if self._wire.open_journal is None:
                    raise JournalError("no journal")
                journal = self._wire.open_journal()
                self.journal = journal
                self.report_journal(journal)
            at = self._wire.wall()
            self.journal.append(op, at=at)
            self._hands.last_at = at
        except JournalError as exc:
            self._journal_failed(str(exc))
            raise NotJournaledError from exc
        if self._journal_health.problem is not None and not self._journal_health.backlog:
            self._journal_ok()

    def _hand_started(self, number: int) -> None:
        self._hands.last_hand = max(self._hands.last_hand, number)
        if self._wire.hand_floor is not None:
            try:
                self._wire.hand_floor.advance_to(self._hands.last_hand + 1)
            except (OSError, SequenceFileError) as exc:
                # The journal holds the number too; the floor only guards a lost journal.
                log.warning("hand_floor_not_saved", error=str(exc))
        if self._journal_health.note is not None and not self.start.settling:
            # The damaged hand is behind us (a hand opened while the start-up is
            # reconciled is the one whose records were lost: not yet).
            self._journal_health.note = None
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
        self._journal_health.note = (f"journal damaged, {recovery.lost} record(s) lost; kept as"
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
        self._journal_health.note = why
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
        self._journal_health.note = f"{problem}; a new journal file was begun"
        self._update_health()

    def table_claimed(self, problem: str, message: str) -> None:
        """Another daemon publishes as this table on the broker (issue 21 item 6):
        log, alert, ``status`` degraded with ``problem`` until a restart."""
        log.error("table_claimed_twice", problem=problem)
        self._daemon_alert(AlertCode.TABLE_CLAIMED_TWICE, message)
        self._journal_health.claim_problem = problem
        self._update_health()

    def journal_unavailable(self, reason: str) -> None:
        """The journal could not be opened at start: run degraded and retry it."""
        self._journal_failed(reason)

    def alert(self, code: AlertCode, message: str) -> None:
        """Publish a table alert from the daemon itself (not the rules engine)."""
        self._daemon_alert(code, message)

    def _journal_failed(self, reason: str) -> None:
        self._journal_health.next_retry = self._wire.mono() + JOURNAL_RETRY_PERIOD
        if self._journal_health.problem is not None:
            return
        self._journal_health.problem = reason
        log.error("journal_write_failed", error=reason)
        self._daemon_alert(
            JOURNAL_WRITE_FAILED,
            f"The journal cannot be written ({reason}). The table is still read and the"
            " cards are kept in order in memory, but nothing new is published until the"
            " journal can be written again: free disk space or fix the disk.",
        )
        self._update_health()

    def _journal_ok(self) -> None:
        log.warning("journal_writable_again", was=self._journal_health.problem)
        self._journal_health.problem = None
        self._update_health()

    def _retry_journal(self) -> None:
        """Journal, apply and publish the backlog in order, as far as it goes."""
        applied = 0
        if not self._journal_health.backlog:
            try:
                if self.journal is None:
                    self._append_nothing()
                self._journal_ok()
            except NotJournaledError:
                return
            return
        while self._journal_health.backlog:
            event = self._journal_health.backlog.popleft()
            try:
                self._journal_zone_event(event)
            except NotJournaledError:
                self._journal_health.backlog.appendleft(event)
                break
            applied += 1
        if applied:
            self._publish_state()
        if not self._journal_health.backlog:
            log.warning("journal_backlog_applied", events=applied)
            if self._journal_health.problem is not None:
                self._journal_ok()

    def _append_nothing(self) -> None:
        """Open a journal that could not be opened before (nothing to write yet)."""
        try:
            assert self._wire.open_journal is not None
            journal = self._wire.open_journal()
        except JournalError as exc:
            self._journal_failed(str(exc))
            raise NotJournaledError from exc
        self.journal = journal
        self.report_journal(journal)

    def _update_health(self) -> None:
        problem = self._journal_health.problem
        if problem is not None:
            problem = f"journal not writable: {problem}"
        health = self._journal_health
        self.publisher.set_health(problem or health.claim_problem or health.note)

    # ---------------------------------------------------------------- start-up reconciliation

    def begin_reconcile(self) -> None:
        """Collect the readers' first reports, then reconcile them with the restored
        hand (see :mod:`table_controller.daemon.reconcile`)."""
        self.start.move(StartMove.BEGIN)
        self._collected.deadline = self._wire.mono() + RECONCILE_TIMEOUT
        self._collected.inventoried.clear()
        self._collected.buffer = []

    @property
    def reconciling(self) -> bool:
        """True until the start-up reconciliation has been fed."""
        return self.start.collecting

    def _maybe_settle(self) -> None:
        everyone = set(self.layout.antenna_map)
        settled = everyone <= self._collected.inventoried and not self.presence.holding()
        if settled or self._wire.mono() >= self._collected.deadline:
            self._settle(timed_out=not settled)

    def _settle(self, timed_out: bool) -> None:
        self.start.move(StartMove.SETTLE)
        try:
            self._settle_now(timed_out)
        finally:
            self.start.move(StartMove.DONE)

    def _settle_now(self, timed_out: bool) -> None:
        buffered, self._collected.buffer = self._collected.buffer, []
        gone, new, unknown = net_difference(self._collected.positions, buffered)
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
        if plan.interrupted:
            self.start.move(StartMove.QUIET)
        if plan.interrupted and hand is not None and hand.number in self._hands.facts:
            self._hands.facts[hand.number].interrupted = True  # its record says so
        try:
            for event in plan.before_end:
                self._feed_one(event)
            if plan.interrupted and hand is not None and not hand.finished:
                # Close it now (journaled as an "end" op, so a replay closes it
                # too): later removals of its cards must not judge it again.
                self._feed_one(HandEnded(at=self._wire.mono()))
            if plan.interrupted and hand is not None and hand.finished:
                self._interrupted_result(hand)
        finally:
            if plan.interrupted:
                self.start.move(StartMove.LOUD)
        if plan.interrupted and hand is not None:
            hand.withdraw_alerts(kept)
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

    def _interrupted_result(self, hand: HandState) -> None:
        """Issue 21 item 10: an interrupted hand closed without a result still ends on
        ``events`` with a ``hand_result`` (no winners, the text says why), so that
        consumers of the events learn the hand is over, as its ``hands`` record says."""
        if self._hands.result_hand == hand.number:
            return  # the engine's own result went out (its cards reached a showdown)
        event = GameEvent(GameEventKind.HAND_RESULT, None, hand.street, None,
                          "interrupted: the hand ended while the table controller was down",
                          tuple(hand.winners), (), self._wire.mono())
        payloads = event_payloads(self.table_id, hand, event)
        if payloads is not None:
            self._publish(self.publisher.publish_event, *payloads)

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
        problem = self.console.reply_problem(request)
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
        key = self.console.key(request)
        recalled = self.console.recall(key)
        if recalled is not None:
            # The same request again (a QoS 1 redelivery or a console's retry):
            # answer as the first time, apply nothing twice.
            self._log("info", "console_command_repeated", command=name)
            self._send_reply(request, recalled.payload)
            return recalled.result
        try:
            event = parse_command(request.name, request.payload, self.layout.seats,
                                  at=self._wire.mono())
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
        return self._table_command(request, key, event)

    def _table_command(self, request: CommandRequest, key: bytes | None,
                       event: TableEvent) -> ConsoleResult:
        """A parsed command for the table (not the floor's): refused, or journaled,
        applied, published and answered (see :meth:`console_command`)."""
        self.feed_held()  # the cards read before the command come before it
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
            self._log("warning", "console_command_rejected", command=request.shown_name,
                      code=refusal.code, reason=refusal.message)
            self._reply(request, refusal)
            return refusal
        if self.start.collecting:
            # The dealer acts on the table as it is now: settle the start-up with
            # what the readers reported so far, then apply the command after it.
            self._settle(timed_out=True)
        if self._journal_health.backlog:
            result = ConsoleResult(
                False, ReplyCode.JOURNAL_UNAVAILABLE,
                "the journal cannot be written; cards are waiting to be journaled",
            )
            self._reply(request, result)
            return result
        try:
            outputs = self._apply_command(event)
        except NotJournaledError:
            result = ConsoleResult(False, ReplyCode.JOURNAL_UNAVAILABLE,
                                   "the journal cannot be written; try again later")
            self._reply(request, result)
            return result
        result = self._the_answer(request, outputs)
        self._log("info", "console_command", command=request.shown_name,
                  accepted=result.accepted, code=result.code)
        self._publish_state()  # before the reply: a requester reading state sees the change
        self._remember(key, result, self._reply(request, result))
        return result

    def _apply_command(self, event: TableEvent) -> list[EngineOutput]:
        """Journal and apply a table command; raises :class:`NotJournaledError`."""
        if isinstance(event, CardPlaced):
            # A manual card (issue 19): a zone event like a read one, opening a
            # card-only hand first when it starts one; the engine does not
            # answer zone events, so the reply is the daemon's.
            self._journal_zone_event(event)
            return [ConsoleResult(True, message=f"card entered by hand at {event.zone.name}")]
        return self._journal_and_apply(event)

    @staticmethod
    def _the_answer(request: CommandRequest, outputs: Sequence[EngineOutput]) -> ConsoleResult:
        """The engine's one answer among ``outputs`` (its contract), or an internal error."""
        results = [output for output in outputs if isinstance(output, ConsoleResult)]
        if len(results) != 1:
            # The engine's contract is one answer per console input; say so loudly
            # rather than guess, but still answer the requester.
            log.error("console_result_missing", command=request.name, results=len(results))
        return results[0] if results else ConsoleResult(
            False, ReplyCode.INTERNAL_ERROR, "the engine gave no answer to this command"
        )

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
        return manual_contradiction(hand, event.zone)  # a seat not in the hand, a card too many

    def _remember(self, key: bytes | None, result: ConsoleResult, payload: bytes) -> None:
        self.console.remember(key, result, payload)

    def _console_rejected(
        self, name: str, code: str, reason: str, message: str, seat: int | None
    ) -> None:
        """Log and alert a refused console command within the guard's window (then
        only counted, and logged at debug, until the window's summary)."""
        if self.console.rejected(message, self._wire.mono()):
            log.warning("console_command_rejected", command=name, code=code, reason=reason)
            self._daemon_alert(CONSOLE_REJECTED, message, seat=seat)
            return
        # A flood: one line per command would fill the disk (and journald
        # would drop them anyway); the summary counts them.
        log.debug("console_command_rejected", command=name, code=code, reason=reason)

    def _close_rejected_window(self, now: float) -> None:
        summary = self.console.close_window(now)
        if summary is None:
            return
        window = self.console.window
        log.warning("console_rejected_summarised", count=summary.count, window=window,
                    last=summary.last)
        self._daemon_alert(
            CONSOLE_REJECTED,
            f"{summary.count} more console command(s) were rejected in the last"
            f" {window:g} s (a flood from a client?). The last: {summary.last}",
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
            self._log("warning", "console_command_without_response_topic",
                      command=request.shown_name)
            return
        if not self.publisher.reply(request, payload):
            self._log("warning", "console_reply_not_sent", command=request.shown_name)

    def _log(self, level: str, event: str, **fields: Any) -> None:
        """A log line a console client causes: within :attr:`log_quota` (then summed up)."""
        log_limited(self.log_quota, log, level, event, now=self._wire.mono(), **fields)

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
            if isinstance(output, Alert) and self.start.quiet:
                log.info("alert_withheld_interrupted_hand", code=output.code.value)
            elif isinstance(output, Alert):
                self._raise(alert_payload(self.table_id, hand, output))
                log.warning("dealing_alert", code=output.code.value, seat=output.seat,
                            street=output.street, rule=output.rule,
                            severity=output.severity.value)
            elif isinstance(output, Notice) and self.start.quiet:
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
                if output.kind is GameEventKind.HAND_RESULT and hand is not None:
                    self._hands.result_hand = hand.number

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

    def _state_changed(self) -> None:
        """Cards were applied: publish the state now, or owe it while the burst they
        came in goes on (more table input waiting; issue 20, a state per burst, not
        per card). A card's event never waits for it: events go out as applied."""
        self._hands.state_owed += 1
        if self._hands.state_owed >= STATE_BURST or not self._wire.more_waiting():
            self._publish_state()

    def publish_owed_state(self) -> None:
        """Publish the state owed to a burst, if any (before anything that must see the
        table as it is: a console command's reply, the stop)."""
        if self._hands.state_owed:
            self._publish_state()

    def _publish_state(self) -> None:
        self._hands.state_owed = 0
        hand = self.engine.hand
        seats = self.layout.seats
        live = self._live
        spot = equity_spot(hand, self.game) if live.sink is not None else None
        moved = spot != live.spot
        if moved:
            live.spot, live.equity = spot, None
        self._publish(
            self.publisher.publish_state,
            *state_payloads(self.table_id, seats, hand, self.game, spot=spot,
                            equity=live.equity, names=self.engine.names),
        )
        if moved and live.sink is not None:
            # After the card's event and state are out: equity never delays a card.
            live.sink.submit(spot)

    def _equity_ready(self, result: LiveEquity) -> None:
        """Publish a finished equity on ``secure/state``, if the hand is still at its spot."""
        # Cards applied in a burst whose state is still owed may have moved the hand
        # off the spot last published: their state first, so the spot is the hand's
        # (an equity is never shown beside cards of another position).
        self.publish_owed_state()
        live = self._live
        if result.spot != live.spot:
            live.stale += 1  # a newer card came while it was computed
            return
        live.equity = result
        live.published += 1
        self._publish(
            self.publisher.publish_secure_state,
            secure_state(self.table_id, self.layout.seats, self.engine.hand, self.game,
                         spot=live.spot, equity=result, names=self.engine.names),
        )

    # ---------------------------------------------------------------- readers

    def _expect_deal(self) -> None:
        """Tell presence where the dealer is due next (the engine's deal order), which
        decides a card's zone its reads cannot (docs/presence.md rule 1). Not while
        the arrival order holds cards the engine has not had yet: presence's own
        expectation, moved on by its placements, is the newer one then."""
        if not self.arrivals.holding:
            hand = self.engine.hand
            self.presence.expect(
                due_zones(hand, range(1, self.layout.seats + 1),
                          burn_before_third=self.engine.settings.rules.burn_before_third),
                returning_cards(hand), face_up_holes(hand))

    def _reader_report(self, item: ReaderReport) -> None:
        message, reader, at = item.message, item.reader_id, item.at
        self.readers.feed(reader, message, at)
        if isinstance(message, TagArrived | TagLeft | Inventory):
            self._expect_deal()
        if isinstance(message, TagArrived):
            events = self.presence.tag_arrived(reader, message.antenna, message.uid, at,
                                               message.rssi)
        elif isinstance(message, TagLeft):
            events = self.presence.tag_left(reader, message.antenna, message.uid, at)
        elif isinstance(message, Inventory):
            # During the start-up the inventories are the table's picture, placed at
            # once; afterwards a tag first seen settles (docs/presence.md rule 1).
            events = self.presence.inventory(reader, message.antenna, message.uids, at,
                                             message.strengths(),
                                             settle=not self.start.collecting)
            if self.start.collecting:
                self._collected.inventoried.add((reader, message.antenna))
        elif isinstance(message, ReaderFault):
            self._board_alert(self.readers.fault_alert(reader, message))
            return
        else:
            return  # hello and heartbeat are the link's business
        self.feed(events)  # (also when empty: during start-up it may settle the table)

    def _reader_state_change(self, item: ReaderStateChange) -> None:
        """A link changed state or problem: presence, one alert per outage, and the
        retained topic if what it shows changed (the board decides)."""
        reader = item.reader_id
        verdict = self.readers.state_change(reader, item.state, item.stats)
        now = self._wire.mono()
        if verdict.online:
            if verdict.back:
                log.info("reader_back", reader=reader)
            self.feed(self.presence.reader_restored(reader, now))
        elif verdict.lost is not None:
            self.presence.reader_lost(reader, now)
            self._board_alert(verdict.lost)
        self._publish_reader(reader)

    def _board_alert(self, alert: BoardAlert) -> None:
        self._daemon_alert(alert.code, alert.message, seat=alert.seat)

    def _publish_reader(self, reader: int, *, force: bool = False) -> None:
        """Publish reader ``reader``'s retained status if the board says it changed."""
        hand = self.engine.hand
        status = self.readers.status(reader, hand=hand.number if hand else None,
                                     wall=self._wire.wall(), mono=self._wire.mono(), force=force)
        if status is not None:
            self._publish(self.publisher.publish_reader, status)

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

    def _raise(self, payload: AlertPayload) -> None:
        """Raise one alert: the bridge gives it its id and the dealer on duty; journal
        it, add it to the open set, publish it and the new ``alerts/open``. An alert
        that cannot be journaled (the journal is what failed) is still published and
        kept open in memory: the floor must see it; it is said in the log."""
        raised = self.alerts.raise_alert(payload, self._wire.wall())
        self._keep_alert(raised.entry)
        self._publish(self.publisher.publish_alert, raised.payload)
        self._publish_open()

    def _adopt_alert(self, payload: AlertPayload) -> None:
        """An alert the MQTT side raised and published: it joins the open set."""
        entry = self.alerts.adopt(payload)
        if entry is None:
            return
        self._keep_alert(entry)
        self._publish_open()

    def _keep_alert(self, entry: BookAlert) -> None:
        """Journal and book one raised alert (and note it in its hand's facts)."""
        self._journal_fact(entry.as_op())
        closings = self.alerts.keep(entry)
        self._note_alert(entry.hand, entry.id, entry.code.value, entry.severity.value)
        for closing in closings:
            # The open set is bounded (floor.MAX_OPEN_ALERTS): the oldest is closed
            # by the table itself, visibly: journaled, published, logged.
            log.warning("alert_closed_open_set_full", alert=closing.alert)
            self._apply_floor(closing)

    def _journal_fact(self, op: Mapping[str, Any]) -> bool:
        """Journal an alert or lifecycle record; False (said in the log) if it cannot
        be: what it records is then kept in memory only, until the next restart."""
        if self.journal is None:
            log.error("alert_record_not_journaled", op=str(op.get("op")), error="no journal")
            return False
        try:
            at = self._wire.wall()
            self.journal.append(op, at=at)
            self._hands.last_at = at
        except JournalError as exc:
            log.error("alert_record_not_journaled", op=str(op.get("op")), error=str(exc))
            self._journal_failed(str(exc))
            return False
        return True

    def _apply_floor(self, command: AlertAck | AlertResolve | DealerChange) -> None:
        """Journal (best effort: the table's own closing), apply and publish."""
        self._journal_fact(floor_op(command))
        self._apply_and_publish(command, self._hands.last_at)

    def _apply_and_publish(self, command: AlertAck | AlertResolve | DealerChange,
                           at: float) -> None:
        change = self.book.apply(command, at)
        if change is None:
            self._publish_dealer()
            return
        if self._wire.floor is not None:
            self._publish(self._wire.floor.publish_alert_change,
                          self.alerts.change(change, self._hand_number()))
        self._publish_open()

    def _floor_command(self, request: CommandRequest, key: bytes | None,
                       command: AlertAck | AlertResolve | DealerChange) -> ConsoleResult:
        """``ack``, ``resolve`` or ``dealer``: checked against the book (a refusal
        changes nothing and is not journaled), journaled, applied, published, answered."""
        name = request.name
        refusal = self.book.refusal(command)
        if refusal is not None:
            code, reason = refusal
            self._log("warning", "console_command_rejected", command=name, code=code,
                      reason=reason)
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
        self._apply_and_publish(command, self._hands.last_at)
        if isinstance(command, DealerChange):
            message = (f"dealer {command.dealer_id} ({command.name}) signed in"
                       if command.dealer_id is not None else "dealer signed out")
        else:
            message = f"alert {command.alert} " + (
                "acknowledged" if isinstance(command, AlertAck) else "resolved")
        # Dealer and supervisor names are public (they are on the public topics).
        self._log("info", "floor_command", command=name, message=message)
        result = ConsoleResult(True, message=message)
        self._remember(key, result, self._reply(request, result))
        return result

    def _publish_open(self) -> None:
        if self._wire.floor is not None:
            self._publish(self._wire.floor.publish_open_alerts,
                          self.alerts.open_alerts(self._hand_number()))

    def _publish_dealer(self) -> None:
        if self._wire.floor is not None:
            self._publish(self._wire.floor.publish_dealer, self.alerts.dealer(self._hand_number()))

    def _hand_number(self) -> int | None:
        hand = self.engine.hand
        return hand.number if hand else None

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
                    self._hands.facts[current.number] = HandFacts(
                        number=current.number, started_ts=at,
                        dealer=dealer.as_dict() if dealer is not None else None)
                continue
            chunk.append(output)
        self._facts_of(current, chunk)

    def _facts_of(self, hand: HandState | None, outputs: Sequence[EngineOutput]) -> None:
        if hand is not None and outputs and hand.number in self._hands.facts:
            self._hands.facts[hand.number].note_outputs(outputs)

    def _note_alert(self, hand: int | None, alert_id: str, code: str, severity: str) -> None:
        facts = self._hands.facts.get(hand) if hand is not None else None
        if facts is not None:
            facts.alerts.append((alert_id, code, severity))

    def _record_finished(self, before: HandState | None) -> None:
        """Publish the record of every hand that has ended and has none yet."""
        for hand in (before, self.engine.hand):
            if hand is None or not hand.finished or hand.number not in self._hands.facts:
                continue
            facts = self._hands.facts.pop(hand.number)
            if self._wire.floor is None:
                continue
            try:
                public, secure = hand_records(self.table_id, hand, facts, self._wire.wall(),
                                              game=self.game, names=self.engine.names)
            except Exception:
                # A bug here must not take the table down; the hand is in the journal.
                log.exception("hand_record_failed", hand=hand.number)
                continue
            self._publish(self._wire.floor.publish_hand, public, secure)
            log.info("hand_recorded", hand=hand.number, ended=public.ended)
        # Facts of hands that vanished unrecorded (never finished) are dropped.
        current = self.engine.hand.number if self.engine.hand is not None else None
        for number in [n for n in self._hands.facts if n != current]:
            if before is None or number != before.number:
                del self._hands.facts[number]


def _nothing_waits() -> bool:
    """A core without an inbox: every input is a burst of its own."""
    return False
