"""The daemon core in process, without a broker: a recording publisher, a fake-clock table.

:class:`RecordingPublisher` is a :class:`~table_controller.daemon.core.TablePublisher`
that keeps what the core published (topic and payload, in order) and the console
replies, so a test can check the core's decisions without Mosquitto (the real-broker
tests in tests/daemon/ check the same paths end to end). :class:`CoreTable` wires a
:class:`~table_controller.daemon.core.TableCore` to the 8-seat demo layout and deck,
feeds it reader reports and runs its timers on a clock the test advances.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from firmware_bridge.link import ConnectionState, LinkStats
from firmware_bridge.messages import TagArrived, TagLeft
from table_controller.daemon.core import ReaderReport, ReaderStateChange, TableCore
from table_controller.demo.dealer import Motion, plan_hand
from table_controller.domain.engine.settings import TableSettings
from table_controller.domain.engine.variants import warm_up
from table_controller.domain.events import CardPlaced
from table_controller.mqtt.payloads import (
    AlertChangePayload,
    AlertPayload,
    DealerPayload,
    NoticePayload,
    OpenAlertsPayload,
    PublicEvent,
    PublicHandRecord,
    PublicState,
    ReaderStats,
    ReaderStatus,
    SecureEvent,
    SecureHandRecord,
    SecureState,
)
from table_controller.mqtt.publisher import CommandRequest
from table_controller.records.journal import Journal
from table_controller.simulation.session import DECK_FILE, LAYOUT_FILE
from table_controller.table.deck import load_decks
from table_controller.table.layout import load_layout
from table_controller.table.presence import PresenceTracker


class RecordingPublisher:
    """A publisher that records every message as ``(topic, payload dict)``.

    ``keep=False`` only counts (a soak must not grow the heap with its own records).
    Topics are the level under the table root (``state``, ``secure/state``, ...).
    """

    def __init__(self, *, keep: bool = True) -> None:
        """Start empty; ``keep`` says whether payloads are kept or only counted."""
        self.keep = keep
        self.published = 0
        self.messages: list[tuple[str, dict[str, Any]]] = []
        self.alerts: list[str] = []
        """Codes of the alerts published (always kept: a soak reports them)."""
        self.replies: list[tuple[CommandRequest, dict[str, Any]]] = []
        self.health: list[str | None] = []
        self.republished = 0
        self.equity_updates: list[dict[str, Any]] = []
        """The ``secure/state`` payloads published alone (equity updates)."""

    def start(self) -> None:
        """Nothing to connect."""

    def stop(self, timeout: float = 0.0) -> None:
        """Nothing to disconnect."""

    def _add(self, topic: str, payload: Any) -> None:
        self.published += 1
        if self.keep:
            self.messages.append((topic, json.loads(payload.model_dump_json())))

    def publish_state(self, public: PublicState, secure: SecureState) -> None:
        """Record both snapshots."""
        self._add("state", public)
        self._add("secure/state", secure)

    def publish_secure_state(self, secure: SecureState) -> None:
        """Record an equity update (secure/state alone)."""
        self._add("secure/state", secure)
        if self.keep:
            self.equity_updates.append(self.messages[-1][1])

    def publish_event(self, public: PublicEvent, secure: SecureEvent) -> None:
        """Record both event streams."""
        self._add("events", public)
        self._add("secure/events", secure)

    def publish_alert(self, alert: AlertPayload) -> None:
        """Record an alert (public)."""
        self.alerts.append(alert.code)
        self._add("alerts", alert)

    def publish_notice(self, public: NoticePayload | None, secure: NoticePayload) -> None:
        """Record a notice: the public one unless it is secret, and its secure twin."""
        if public is not None:
            self._add("notices", public)
        self._add("secure/notices", secure)

    def publish_reader(self, status: ReaderStatus) -> None:
        """Record a reader status (public)."""
        self._add("readers", status)

    def publish_reader_stats(self, stats: ReaderStats) -> None:
        """Record a reader's periodic figures (public)."""
        self._add("readers/stats", stats)

    def publish_open_alerts(self, payload: OpenAlertsPayload) -> None:
        """Record the open alerts (``alerts/open``, retained)."""
        self._add("alerts/open", payload)

    def publish_alert_change(self, change: AlertChangePayload) -> None:
        """Record one alert's acknowledgement or resolution."""
        self._add("alerts/changes", change)

    def publish_dealer(self, payload: DealerPayload) -> None:
        """Record the dealer on duty (retained)."""
        self._add("dealer", payload)

    def publish_hand(self, public: PublicHandRecord, secure: SecureHandRecord) -> None:
        """Record a finished hand's public and secure records."""
        self._add("hands", public)
        self._add("secure/hands", secure)

    def set_health(self, problem: str | None) -> None:
        """Record a health change (None: healthy again)."""
        self.health.append(problem)

    def republish_retained(self) -> None:
        """Count a rebirth."""
        self.republished += 1

    def reply(self, request: CommandRequest, payload: bytes) -> bool:
        """Record the answer to a console request; False without a response topic."""
        if request.response_topic is None:
            return False
        self.replies.append((request, json.loads(payload)))
        return True

    def on(self, topic: str) -> list[dict[str, Any]]:
        """The payloads recorded on ``topic``, in order."""
        return [p for t, p in self.messages if t == topic]

    def last(self, topic: str) -> dict[str, Any]:
        """The last payload recorded on ``topic`` (IndexError if none)."""
        return self.on(topic)[-1]

    def public(self) -> list[tuple[str, dict[str, Any]]]:
        """What the public could read."""
        return [(t, p) for t, p in self.messages if not t.startswith("secure/")]


class CoreTable:
    """A :class:`TableCore` for the 8-seat demo layout fed reader reports on a fake clock."""

    def __init__(self, workdir: Path, presence_hold: float = 0.5, *, keep: bool = True,
                 settle_time: float = 0.0,
                 publisher: type[RecordingPublisher] | None = None) -> None:
        """Open a journal in ``workdir``, every reader online; ``keep`` as the publisher's;
        ``settle_time``: presence's settle window (the daemon's is 0.3 s: rule 1);
        ``publisher``: a :class:`RecordingPublisher` subclass to record with instead."""
        warm_up()  # as the daemon does before its first input
        self.layout = load_layout(LAYOUT_FILE)
        self.registry = load_decks([DECK_FILE])
        self.now = 1000.0
        self.publisher = (publisher or RecordingPublisher)(keep=keep)
        self.journal = Journal.open(workdir / "core.journal.jsonl", fsync="never")
        self.core = TableCore(
            table_id="soak", settings=TableSettings(seats=self.layout.seats, auto_hands=True),
            layout=self.layout,
            presence=PresenceTracker(self.layout, self.registry, presence_hold,
                                     settle_time=settle_time),
            journal=self.journal, publisher=self.publisher, registry=self.registry,
            mono_clock=lambda: self.now, wall_clock=lambda: self.now + 1.7e9,
        )
        self.hold = presence_hold
        for reader in self.layout.readers:
            self.core.handle(ReaderStateChange(reader.id, ConnectionState.ONLINE, LinkStats()))

    def advance(self, seconds: float) -> None:
        """Let ``seconds`` pass, running the core's timers when due."""
        end = self.now + seconds
        while (deadline := self.core.next_deadline()) <= end:
            self.now = max(self.now, deadline)
            self.core.tick()
        self.now = end

    def play(self, motions: tuple[Motion, ...]) -> None:
        """Put each motion's tags on (or off) the antennas, pausing as the dealer does."""
        deck = self.registry.decks[0]
        for motion in motions:
            for event in motion.events:
                reader, port = self.layout.antennas_of(event.zone)[0]
                uid = self.registry.uid_for(event.card, deck)
                message = (TagArrived(port, uid) if isinstance(event, CardPlaced)
                           else TagLeft(port, uid))
                self.core.handle(ReaderReport(reader, message, self.now))
            self.advance(max(motion.pause, self.hold + 0.1) if motion.settle else motion.pause)

    def hand(self, rng: random.Random) -> None:
        """One demo hand: dealt, cleared, and the piles gathered once it is over."""
        plan = plan_hand(rng, seats=self.layout.seats)
        self.play(plan.motions)
        self.advance(self.hold + 0.1)
        self.play((plan.gather,))
        self.advance(self.hold + 0.1)

    def close(self) -> None:
        """Close the journal."""
        self.journal.close()
