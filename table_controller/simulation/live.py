"""Daemon mode of ``stud-table simulate``: the planned hands dealt through the real table.

Theory of operation
-------------------
:class:`SimulatedTable` is the demo's table session
(:class:`~table_controller.simulation.session.DemoTable`): in a work directory, a
private mosquitto, one emulated reader per reader of the 8-seat layout on ptys
(with the example deck and its blue copy, for duplicate cards), and the real
daemon as a child process (``python -m table_controller run``). :class:`AlertWatch` subscribes to
the table's ``alerts`` topic (every payload names its hand), its retained
``state`` and the reader statuses.

:func:`run_daemon` deals each planned hand card by card at the dealer's pace
divided by ``speed``; a reader-kind hand turns on its reader disturbance (tag
dropouts, wire noise) for the hand. The table has no console: a hand ends when
the seats are clear. So after the dealer clears the table, it waits until the
daemon's **journal** shows every card it placed gone again (the journal is what
the engine applied, in order; a removal reaches it only after the presence hold)
before dealing the next hand. Nothing waits a fixed time for correctness.

At the end a ``cmd/rebirth`` request makes the daemon republish its retained
state; once that arrives, every alert published before it has arrived too (one
connection, QoS 1, in order). The journal also tells, per hand, which cards the
daemon saw where: ``wrong_cards`` counts placements the dealer never made and
``missed_cards`` placements never seen, the figures wire noise must keep at zero.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from types import FrameType
from typing import Any, Final

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion, MQTTProtocolVersion
from paho.mqtt.subscribeoptions import SubscribeOptions

from firmware_bridge.rf_channel import RFParams, leaves_cards_unread
from table_controller.domain.events import (
    CardPlaced,
    CardRemoved,
    TableEvent,
    UnknownTag,
    UnknownTagRemoved,
)
from table_controller.mqtt.local_broker import BrokerError
from table_controller.mqtt.topics import TableTopics
from table_controller.records.journal import decode_line
from table_controller.simulation.kinds import ReaderSettings
from table_controller.simulation.plan import SimHand, plan_hands
from table_controller.simulation.report import HandRF, ObservedAlert, SimulationInterrupted
from table_controller.simulation.rf import cross_read_untold, masked, timeline
from table_controller.simulation.session import BLUE_DECK_FILE, DECK_FILE, DemoError, DemoTable

TABLE_ID: Final = "sim"
"""The simulated table's id: its topics are ``stud/v1/sim/...``."""

DECK_FILES: Final = (DECK_FILE, BLUE_DECK_FILE)
"""The example deck and its blue copy: the plans deal duplicate cards."""

CARD_PAUSE: Final = 0.5
"""Seconds between two cards dealt at speed 1 (a dealer takes 0.4-0.6 s)."""

MOVE_PAUSE: Final = 0.05
"""Seconds between a card leaving a zone and landing in the next (one movement)."""

SEAT_PAUSE: Final = 0.3
"""Seconds between picking up two seats' cards when clearing, at speed 1."""

PRESENCE_HOLD: Final = 0.5
"""The daemon's presence hold: longer than any run of missed scans flicker makes
(at 20% dropout and a 20-50 ms scan, 10+ misses in a row are ~1e-7 events)."""

READY_TIMEOUT: Final = 60.0
"""Seconds for the daemon's first state with every reader online."""

HAND_TIMEOUT: Final = 60.0
"""Seconds for the journal to show a hand's cards all gone after the clear."""

CARD_SEEN_TIMEOUT: Final = 5.0
"""Seconds the dealer waits at most for the journal to show a card just put down."""

MISSED_GRACE: Final = 3.0
"""Seconds a card the daemon never saw may still turn up once the table is clear:
the emulated readers' inventory period (2 s) plus the presence hold."""

SYNC_TIMEOUT: Final = 30.0
"""Seconds for the retained state to come back after ``cmd/rebirth``."""


class LiveError(RuntimeError):
    """The simulated table could not run; ``str()`` is one line for the user."""


def scan_period_for(speed: float) -> float:
    """Reader scan cycle for ``speed``: well under the time between two cards, since
    readers scan independently and only cards further apart than a cycle reach the
    daemon in the order they were dealt; never faster than a real board needs."""
    return min(0.05, max(0.02, 0.1 / speed))


class SimulatedTable(DemoTable):
    """The demo's table session as table ``sim`` with both decks, quiet and without
    fsync, plus what the simulator needs: reader disturbances and unknown tags."""

    def __init__(self, workdir: Path, *, speed: float = 1.0, rf: RFParams | None = None
                 ) -> None:
        """Prepare everything in ``workdir``; nothing runs before :meth:`start`.
        ``rf``: the emulated readers read through this RF channel."""
        try:
            # fsync "never": a simulation has nothing to lose in a power cut, and
            # the journal is still written line by line before the engine runs.
            super().__init__(workdir, table_id=TABLE_ID, decks=DECK_FILES,
                             scan_period=scan_period_for(speed), presence_hold=PRESENCE_HOLD,
                             fsync="never", log_level="warning", rf=rf)
        except DemoError as exc:
            raise LiveError(str(exc)) from exc

    def start(self) -> SimulatedTable:
        """Start the broker, plug the readers in, start the daemon."""
        try:
            super().start()
        except BrokerError as exc:
            raise LiveError(str(exc)) from exc
        return self

    def set_readers(self, settings: ReaderSettings | None) -> None:
        """Turn a reader disturbance on (or every disturbance off, with None)."""
        assert self.table is not None
        wanted = settings or ReaderSettings()
        if self.table.channel is not None:
            # The channel decides what is read: a flicker hand flickers there.
            self.table.set_flicker(wanted.dropout_probability or None)
        for reader in self.table.readers.values():
            reader.model.dropout_probability = wanted.dropout_probability
            reader.noise.frame_drop_probability = wanted.frame_drop_probability
            reader.noise.byte_error_rate = wanted.byte_error_rate

    def apply(self, event: TableEvent) -> None:
        """Make the emulated table show ``event`` (unknown tags taken off too)."""
        assert self.table is not None
        if isinstance(event, UnknownTagRemoved):
            self.table.remove_tag(event.zone, event.uid)
        else:
            self.table.apply(event)

    def __enter__(self) -> SimulatedTable:
        return self.start()


class AlertWatch:
    """Records the table's alerts and notices, its retained state's ``seq`` and reader
    states."""

    def __init__(self, port: int, table: str = TABLE_ID) -> None:
        """Prepare the client; :meth:`start` connects."""
        self.topics = TableTopics(table)
        self._port = port
        self._lock = threading.Lock()
        self.alerts: list[ObservedAlert] = []
        self.states = 0
        self.readers: dict[str, str] = {}
        self._client = mqtt.Client(CallbackAPIVersion.VERSION2,
                                   client_id=f"stud-simulate-{os.getpid()}-{id(self):x}",
                                   protocol=MQTTProtocolVersion.MQTTv5)
        self._client.on_connect = self._on_connect
        self._client.on_message = self._on_message

    def start(self) -> AlertWatch:
        """Connect in the background."""
        self._client.connect_async("127.0.0.1", self._port, keepalive=30)
        self._client.loop_start()
        return self

    def stop(self) -> None:
        """Disconnect."""
        self._client.disconnect()
        self._client.loop_stop()

    def _on_connect(self, client: mqtt.Client, *_: Any) -> None:
        # secure/notices: every notice, also those kept off the public topic.
        filters = [self.topics.alerts, self.topics.secure_notices, self.topics.state,
                   self.topics.readers_filter]
        client.subscribe([(f, SubscribeOptions(qos=1)) for f in filters])

    def _on_message(self, _c: mqtt.Client, _u: object, message: mqtt.MQTTMessage) -> None:
        try:
            payload = json.loads(message.payload)
        except ValueError:
            return
        if not isinstance(payload, dict):
            return
        with self._lock:
            if message.topic in (self.topics.alerts, self.topics.secure_notices):
                self.alerts.append(ObservedAlert(
                    payload.get("hand"), str(payload.get("code")), payload.get("seat"),
                    notice=message.topic == self.topics.secure_notices,
                ))
            elif message.topic == self.topics.state:
                self.states += 1
            else:
                self.readers[message.topic] = str(payload.get("state"))

    def ready(self, readers: int) -> bool:
        """The retained state has arrived and ``readers`` readers are online."""
        with self._lock:
            online = sum(1 for state in self.readers.values() if state == "online")
            return self.states > 0 and online >= readers

    def request_rebirth(self) -> int:
        """Ask the daemon to republish its retained set; the state count before."""
        with self._lock:
            before = self.states
        self._client.publish(self.topics.cmd_rebirth, b"", qos=1)
        return before

    def state_count(self) -> int:
        """How many state messages arrived so far."""
        with self._lock:
            return self.states

    def snapshot(self) -> list[ObservedAlert]:
        """Every alert and notice so far."""
        with self._lock:
            return list(self.alerts)


class JournalWatch:
    """Reads the daemon's journal as it grows: per hand, the cards placed, and which
    (zone, card) pairs are on the table as far as the daemon knows."""

    def __init__(self, path: Path) -> None:
        """Watch ``path`` (it may not exist yet)."""
        self.path = path
        self._offset = 0
        self._partial = b""
        self._inode: int | None = None
        self.hands = 0
        self.placed: dict[int, set[tuple[str, str]]] = {}
        self.on_table: set[tuple[str, str]] = set()

    def poll(self) -> None:
        """Read whatever was appended since the last poll."""
        try:
            with self.path.open("rb") as journal:
                inode = os.fstat(journal.fileno()).st_ino
                if inode != self._inode:
                    # Rotated (at a hand record, past max_bytes): a fresh file. The
                    # old one was read to its end while waiting for the last clear.
                    self._inode, self._offset, self._partial = inode, 0, b""
                journal.seek(self._offset)
                data = journal.read()
        except FileNotFoundError:
            return
        self._offset += len(data)
        lines = (self._partial + data).split(b"\n")
        self._partial = lines.pop()  # an incomplete last line waits for the rest
        for line in lines:
            if line:
                self._record(decode_line(line))

    def _record(self, record: Mapping[str, Any]) -> None:
        op = record.get("op")
        if op == "hand":
            self.hands += 1
            self.placed[self.hands] = set()
            return
        card = record.get("card")
        if not isinstance(card, str):
            return  # table settings, unknown tags
        key = (str(record.get("zone")), card)
        if op == "place":
            self.placed.setdefault(self.hands, set()).add(key)
            self.on_table.add(key)
        elif op == "remove":
            self.on_table.discard(key)


def _wait(condition: Callable[[], bool], timeout: float, alive: Callable[[], bool]) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline or not alive():
            return False
        time.sleep(0.02)
    return True


def _dealt(hand: SimHand) -> set[tuple[str, str]]:
    return {(e.zone.name, e.card.code) for e in hand.events if isinstance(e, CardPlaced)}


def _play(table: SimulatedTable, hand: SimHand, speed: float, journal: JournalWatch) -> None:
    """Deal ``hand`` card by card, then clear it seat by seat, at the dealer's pace.

    A pickup (cards taken off a zone and not put down elsewhere: the burn pile
    gathered for the rule-15 scramble) is followed by the scramble, which takes a
    dealer seconds; the presence hold reports the pickup only after it, so the
    dealer goes on once the journal shows the pickup, never sooner.
    """
    events = hand.events
    for index, event in enumerate(events):
        table.apply(event)
        if isinstance(event, CardPlaced):
            # A dealer sees each card land: readers are independent, so on a busy
            # machine two cards a pause apart on different antennas could reach the
            # daemon in the other order. Pacing only: after CARD_SEEN_TIMEOUT the
            # dealer goes on (the report judges what the daemon made of it).
            seen = partial(_journal_shows, journal, (event.zone.name, event.card.code))
            _wait(seen, CARD_SEEN_TIMEOUT, table.daemon_alive)
        following = events[index + 1] if index + 1 < len(events) else None
        if isinstance(event, CardRemoved) and not _moves_on(event, following):
            shown_gone = partial(_journal_shows_gone, journal, _pickup(events, index))
            if not _wait(shown_gone, HAND_TIMEOUT, table.daemon_alive):
                raise LiveError(f"hand {hand.number}: the daemon did not see the cards"
                                " picked up for the rule-15 scramble leave the table")
        moving = isinstance(event, CardRemoved | UnknownTagRemoved)
        time.sleep((MOVE_PAUSE if moving else CARD_PAUSE) / speed)
    zone = None
    for clear in hand.clear:
        if zone is not None and clear.zone != zone and clear.zone.seat != zone.seat:
            time.sleep(SEAT_PAUSE / speed)
        zone = clear.zone
        table.apply(clear)


def _play_timed(table: SimulatedTable, hand: SimHand, speed: float, rf: RFParams,
                journal: JournalWatch) -> HandRF:
    """Deal ``hand`` on a table read through an RF channel: the fast mode's timeline
    (:func:`~.rf.timeline`: betting pauses, folds and pickups outlasting the presence
    hold, players peeking at hole cards), its gaps divided by ``speed``. As in
    :func:`_play`, the dealer sees a card land before the next (the journal shows it),
    but only for a card the channel reads: one it never reads is never shown. The
    pauses after a fold or a pickup outlast the daemon's hold at any speed; a peek
    lasts its planned time divided by ``speed``. Returns what the channel did."""
    emulated = table.table
    assert emulated is not None
    channel = emulated.channel
    rng = random.Random(f"{hand.number}:dealer")
    actions, _console = timeline(hand, table.registry, rf, rng, hold=PRESENCE_HOLD * speed)
    previous = actions[0].at if actions else 0.0
    dead: set[str] = set()
    unread: Counter[str] = Counter()
    never_read: dict[int, str] = {}  # hand event index -> why (the masking rule's input)
    untold: set[int] = set()  # hand event indexes cross-read with reads not told apart
    cross = 0
    for action in actions:
        time.sleep(max(0.0, action.at - previous) / speed)
        previous = action.at
        found = table.registry.lookup(action.uid)
        if found is None:
            if action.place:
                table.apply(UnknownTag(action.zone, action.uid))
            else:
                emulated.remove_tag(action.zone, action.uid)
            continue
        if not action.place:
            table.apply(CardRemoved(action.zone, found.card, deck=found.deck))
            continue
        table.apply(CardPlaced(action.zone, found.card, deck=found.deck))
        placement = channel.placement(action.uid) if channel is not None else None
        if placement is None:
            continue
        cross += placement.cross is not None
        if cross_read_untold(rf, placement) and action.source >= 0:
            untold.add(action.source)
        if placement.why_unread is not None and action.source >= 0:
            unread[placement.why_unread] += 1
            dead.update([action.uid] if placement.why_unread == "dead" else [])
            never_read[action.source] = placement.why_unread
        if placement.read and placement.cross is None:
            seen = partial(_journal_shows, journal, (action.zone.name, found.card.code))
            _wait(seen, CARD_SEEN_TIMEOUT, table.daemon_alive)
    peeks = sum(1 for a in actions if a.peek and a.place)
    hidden = masked(hand, never_read, untold, rounds_unread=leaves_cards_unread(rf))
    return HandRF(len(dead), hidden, peeks, cross, tuple(sorted(unread.items())))


def _moves_on(removed: CardRemoved, following: TableEvent | None) -> bool:
    """Whether ``following`` continues the movement that ``removed`` began: the same
    card landing in another zone (a fold to the muck), or the next card of the same
    pickup. The same card put back on the *same* zone (the rule-15 scramble can
    bring a burn card back to the burn pile) is a pickup and a new placement: the
    presence hold would take a quick return for a flicker, and no dealer scrambles
    that fast."""
    if isinstance(following, CardRemoved):
        return True
    return (isinstance(following, CardPlaced) and following.card == removed.card
            and following.zone != removed.zone)


def _pickup(events: tuple[TableEvent, ...], last: int) -> set[tuple[str, str]]:
    """The (zone, card) pairs of the run of removals ending at ``events[last]``."""
    gone: set[tuple[str, str]] = set()
    index = last
    while index >= 0 and isinstance(events[index], CardRemoved):
        event = events[index]
        assert isinstance(event, CardRemoved)
        gone.add((event.zone.name, event.card.code))
        index -= 1
    return gone


def _journal_shows(journal: JournalWatch, placed: tuple[str, str]) -> bool:
    journal.poll()
    return placed in journal.on_table


def _journal_shows_gone(journal: JournalWatch, gone: set[tuple[str, str]]) -> bool:
    journal.poll()
    return not gone & journal.on_table


def _wait_cleared(table: SimulatedTable, journal: JournalWatch, number: int,
                  dealt: set[tuple[str, str]]) -> None:
    """Wait until the journal shows hand ``number`` over and nothing on the table.

    Then give cards the daemon has not seen yet (a frame lost on a noisy wire is
    made good by the reader's next inventory) :data:`MISSED_GRACE` to show up;
    the ones that never do are counted as missed.
    """
    def clear() -> bool:
        journal.poll()
        return journal.hands >= number and not journal.on_table

    if not _wait(clear, HAND_TIMEOUT, table.daemon_alive):
        raise LiveError(
            f"hand {number}: the daemon did not see the table clear within"
            f" {HAND_TIMEOUT:.0f} s (still on it: {sorted(journal.on_table)[:6]});"
            f" its log ends with:\n{table.daemon_log_tail()}")

    def all_seen() -> bool:
        journal.poll()
        return dealt <= journal.placed.get(number, set())

    if not all_seen():
        _wait(all_seen, MISSED_GRACE, table.daemon_alive)
        _wait(clear, HAND_TIMEOUT, table.daemon_alive)


@contextmanager
def _stopped_by_sigterm() -> Iterator[None]:
    """SIGTERM unwinds like Ctrl-C, so the daemon and broker are stopped, not orphaned."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        del frame
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def _running(speed: float, rf: RFParams | None = None
             ) -> Iterator[tuple[SimulatedTable, AlertWatch]]:
    workdir = Path(tempfile.mkdtemp(prefix="stud-simulate-"))
    table = SimulatedTable(workdir, speed=speed, rf=rf)
    watch: AlertWatch | None = None
    with _stopped_by_sigterm():
        try:
            table.start()
            watch = AlertWatch(table.broker.port).start()
            yield table, watch
        finally:
            try:
                table.close()
            finally:
                if watch is not None:
                    watch.stop()
                shutil.rmtree(workdir, ignore_errors=True)


def run_daemon(
    hands: int,
    seed: int,
    rates: Mapping[str, float],
    *,
    speed: float = 1.0,
    progress: Callable[[int], None] | None = None,
    rf: RFParams | None = None,
    facts: dict[int, HandRF] | None = None,
) -> tuple[list[SimHand], list[ObservedAlert], dict[str, int]]:
    """Deal the planned hands through the real table (module docstring); return the
    hands, the alerts read from MQTT, and the wire figures. ``rf``: the emulated
    readers read through this RF channel (``facts`` gets what it did per hand).
    Raises :class:`LiveError`."""
    return deal_through_daemon(plan_hands(hands, seed, rates), speed=speed, progress=progress,
                               rf=rf, facts=facts)


def deal_through_daemon(
    hands: Iterable[SimHand],
    *,
    speed: float = 1.0,
    progress: Callable[[int], None] | None = None,
    rf: RFParams | None = None,
    facts: dict[int, HandRF] | None = None,
) -> tuple[list[SimHand], list[ObservedAlert], dict[str, int]]:
    """Deal ``hands`` through a fresh table, in order; see :func:`run_daemon`. Hands
    must be numbered 1, 2, ... (the daemon numbers its hands from 1)."""
    if speed <= 0:
        raise ValueError("speed must be positive")
    with _running(speed, rf) as (table, watch):
        readers = len(table.layout.readers)
        if not _wait(lambda: watch.ready(readers), READY_TIMEOUT, table.daemon_alive):
            raise LiveError("the daemon did not publish its table with every reader online"
                            f" within {READY_TIMEOUT:.0f} s; its log ends with:\n"
                            + table.daemon_log_tail())
        journal = JournalWatch(table.journal_path)
        planned: list[SimHand] = []
        wrong = missed = 0
        try:
            for expected_number, hand in enumerate(hands, start=1):
                if hand.number != expected_number:
                    raise ValueError(f"hand {hand.number} dealt as the table's hand"
                                     f" {expected_number}: renumber it")
                table.set_readers(hand.readers)
                if rf is None:
                    _play(table, hand, speed, journal)
                else:
                    found = _play_timed(table, hand, speed, rf, journal)
                    if facts is not None:
                        facts[hand.number] = found
                dealt = _dealt(hand)
                _wait_cleared(table, journal, hand.number, dealt)
                planned.append(hand)  # dealt whole: a Ctrl-C drops the hand half dealt
                table.set_readers(None)
                seen = journal.placed.get(hand.number, set())
                wrong += len(seen - dealt)
                missed += len(dealt - seen)
                if progress is not None:
                    progress(hand.number)
        except KeyboardInterrupt:
            # The report of the hands dealt whole, from the alerts read so far (the
            # table is stopped by the context manager as on every exit).
            done = {hand.number for hand in planned}
            seen_alerts = [a for a in watch.snapshot() if a.hand in done]
            raise SimulationInterrupted(planned, seen_alerts,
                                        {"wrong_cards": wrong, "missed_cards": missed}
                                        ) from None
        before = watch.request_rebirth()
        if not _wait(lambda: watch.state_count() > before, SYNC_TIMEOUT, table.daemon_alive):
            raise LiveError("the daemon did not republish its state on cmd/rebirth")
        return planned, watch.snapshot(), {"wrong_cards": wrong, "missed_cards": missed}
