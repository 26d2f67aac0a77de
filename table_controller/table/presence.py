"""Presence tracking: per-antenna tag reports in, zone events out.

Theory of operation
-------------------
Readers report, per antenna, that a tag UID appeared (``tag_arrived``), vanished
(``tag_left``), or the full list of UIDs an antenna sees right now
(``inventory``). The tracker keeps two layers of state:

* **sightings**: for every antenna, the UIDs it currently reports. This mirrors
  the readers exactly; an inventory replaces an antenna's set, and the difference
  is handled as the arrivals and departures that frames lost on the wire hid.
* **placements**: for every UID, the one zone the tracker says the tag is in.
  This is what the events describe. A tag seen by two antennas of one zone is
  one card in that zone.

Rules, per UID:

1. A sighting in zone Z of a tag not placed anywhere: it is placed in Z at once
   (``CardPlaced``, or ``UnknownTag`` for a UID no deck knows); with a *settle
   window* (``settle_time`` > 0, the daemon's and the simulator's default
   :data:`DEFAULT_SETTLE_TIME`) its zone is first decided when the window ends:
   every zone that may cross-read Z (:func:`may_cross_read`) and sees the tag
   within the window is a candidate, and the **stronger read wins** (the
   strength the reader reports, in dBm). Reads strength cannot tell apart
   (strengths within ``tie_margin_db`` of each other, or a reader that reports
   none) are decided by the **deal order**: of a card first seen, the candidate
   the dealer is due to deal to soonest wins (:meth:`PresenceTracker.expect`,
   the engine's :func:`~table_controller.domain.engine.due.due_zones`: the due
   seat and the face due decide between seats and between a seat's down and up
   zones, a burn due decides burn against the other piles); a card that lay at a
   seat and lands among the dealer's piles goes to the muck (a fold: the burn and
   the board are dealt from the stub), and so does a card first seen among the piles
   when no burn or board card is due. Where nothing is due among them it is a
   **tie**: the zone that saw it first keeps it and the tie is named
   (:meth:`PresenceTracker.ties`, ``stats.cross_read_ties``). ``at`` is the
   first sighting.
2. The last antenna of Z losing the tag does not remove it: a *hold* starts, and
   ``CardRemoved`` is emitted by :meth:`PresenceTracker.tick` once ``hold_time``
   has passed with no antenna of Z seeing it again. A tag that drops out of a
   scan for a cycle or two therefore never flickers; if it is seen again in Z
   before the hold expires, nothing is emitted at all.
3. A sighting in another zone Y of a tag placed in Z that Z has lost (it is held)
   is a move, reported at once as ``CardRemoved(Z)`` then ``CardPlaced(Y)``.
   While an antenna of Z still sees the tag, a sighting in a neighbouring zone Y
   (:func:`may_cross_read`: side by side on the felt) is a **cross-read** (an
   antenna reaching over, issue 19): counted, no event; the card stays in Z,
   unless Y's read is **stronger** than Z's by more than ``tie_margin_db`` (both
   with a strength): then Z's was the cross-read (or the card moved) and it moves
   to Y at once. A read in Y far *weaker* than Z's last one, or either read
   without a strength (nothing tells a neighbour reaching over from a move), is a
   cross-read even while Z has lost the tag for a scan. When Z then loses it, it
   moves to Y at once if Y's sighting is recent (no older than ``hold_time``: the
   new zone's reader simply scanned first) and, by strength, not far weaker, else
   after the hold (rule 4: a long cross-read and a flicker of Z look alike until
   then). A cross-read
   therefore never becomes a card in a second zone. (A zone whose reader is
   offline is frozen: its sightings are stale, so a sighting elsewhere is a move
   at once.)
4. When a hold expires but some antenna of another zone still reports the tag
   (a stale or overlapping sighting), the tag moves there instead of vanishing,
   placed from when it left its zone or from when that antenna began seeing it,
   the later (the reads date it, not the moment the hold was checked).

``at`` of a ``CardPlaced`` is the time of the sighting. ``at`` of a
``CardRemoved`` is when the tag was last seen in its zone (the start of the
hold), so it is the true departure time even though it is emitted up to
``hold_time`` later; events of one card are in time order, but a removal can
carry an earlier ``at`` than other cards' events emitted before it. A
departure only learned from an inventory is dated at that inventory.

Unknown tags follow the same rules, with ``UnknownTag`` for an arrival (once
per arrival, not once per inventory) and ``UnknownTagRemoved`` for a departure.

A second physical copy of a card (a UID of another deck mapping to a card that
is already present under a different UID) is placed like any card, with its own
deck name, so the engine sees the same card twice and flags ``duplicate_card``;
:meth:`PresenceTracker.duplicates` and the stats expose it too.

An offline reader (:meth:`PresenceTracker.reader_lost`) freezes: its sightings
stay, so its cards are not removed, and holds in the zones it covers do not
expire while it is away (it cannot confirm or deny them). When it reports again
(or :meth:`PresenceTracker.reader_restored` is called) those holds get a fresh
``hold_time``, and its next inventory reconciles whatever changed meanwhile.

The tracker does no I/O and reads no clock: every method takes ``now``
(seconds, any monotonic base) and returns the events it caused. Each report
first expires the holds due by its ``now`` (as :meth:`PresenceTracker.tick`
would), so events come out in the right order however late the daemon ticks;
the daemon still calls ``tick`` by :meth:`PresenceTracker.next_deadline` so that
a removal is published while the table is otherwise quiet.
UIDs are expected in canonical form (uppercase hex, as the frame decoder gives
them); they are never logged.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from table_controller.domain.cards import Card
from table_controller.domain.events import (
    CardPlaced,
    CardRemoved,
    UnknownTag,
    UnknownTagRemoved,
    ZoneEvent,
)
from table_controller.domain.zones import MUCK, Zone
from table_controller.table.deck import DeckRegistry
from table_controller.table.layout import TableLayout

__all__ = [
    "DEFAULT_HOLD_TIME",
    "DEFAULT_SETTLE_TIME",
    "TIE_MARGIN_DB",
    "CrossReadTie",
    "PresenceStats",
    "PresenceTracker",
    "TagPresence",
    "may_cross_read",
]

DEFAULT_HOLD_TIME = 1.5
"""Seconds a tag must stay unseen before it counts as gone.

Long enough to ride out a few missed scan cycles of a multi-tag reader (a tag
shadowed by a hand or by the cards stacked on it), short enough that a card
picked up and folded shows in the feed within a couple of seconds.
"""

DEFAULT_SETTLE_TIME = 0.3
"""Seconds a tag first seen waits before its zone is committed (rule 1).

Two scan cycles of a multiplexed reader (0.15 s): a card read by its own antenna
and cross-read by a neighbour is seen by both within one cycle of landing, in
either order, and the own read may miss one scan. Short next to the 0.5 s
between two cards dealt, so cards still come out in the order they were dealt.
"""

TIE_MARGIN_DB = 2.0
"""Two reads of one tag whose strengths differ by this or less are a tie (dB).

Below the channel's smallest cross-read margin (3 dB): a cross-read reaches
over the gap between two antennas and loses at least that much, while two reads
of one card by one antenna differ by much less."""

MAX_TIES = 64
"""Ties kept for :meth:`PresenceTracker.ties` (the newest; a counter keeps the rest)."""

Antenna = tuple[int, int]
"""(reader id, antenna port)."""


def may_cross_read(placed: Zone, other: Zone) -> bool:
    """Whether an antenna of ``other`` can reach a card lying in ``placed``: the zones
    lie side by side (a seat's down and up areas, the up rows of neighbouring seats,
    the dealer's piles in front of him). A seat and a pile are a table's width apart:
    a sighting there is the card having moved (rule 3)."""
    if placed.seat is None or other.seat is None:
        return placed.seat is None and other.seat is None
    return abs(placed.seat - other.seat) <= 1


@dataclass(frozen=True, slots=True)
class TagPresence:
    """One tag the tracker places in a zone (a read-only snapshot).

    ``card``/``deck`` are None for an unknown tag. ``held`` means no antenna
    sees it right now and its removal is pending. ``uid`` is secret, so it is
    kept out of ``repr``.
    """

    zone: Zone
    card: Card | None
    deck: str | None
    since: float
    held: bool
    uid: str = field(repr=False)


@dataclass(frozen=True, slots=True)
class CrossReadTie:
    """Two neighbouring zones read one tag and neither strength nor the deal order
    told them apart (rule 1): the card was placed in ``kept`` (the zone that saw it
    first), ``other`` read it as well.

    A presence observation, not a card in two zones: someone may look which of
    the two the card lies on. ``card`` is None for an unknown tag; no UID. The
    strengths are None where the reader reports none."""

    card: Card | None
    kept: Zone
    other: Zone
    at: float
    strength_dbm: float | None
    other_dbm: float | None


@dataclass(slots=True)
class PresenceStats:
    """Counters for monitoring; never contains UIDs."""

    reports: int = 0
    """Reader reports handled (arrivals, departures, inventories)."""
    unmapped_reports: int = 0
    """Reports from a (reader, port) the layout does not map; ignored."""
    arrivals: int = 0
    """Tags placed in a zone from nowhere."""
    departures: int = 0
    """Tags removed after their hold expired."""
    moves: int = 0
    """Tags seen in another zone than the one they were placed in."""
    flickers_suppressed: int = 0
    """Tags seen again in their zone while held: a removal that was not emitted."""
    unknown_arrivals: int = 0
    """Arrivals of UIDs no deck knows."""
    duplicate_arrivals: int = 0
    """Arrivals of a card already present under another UID (a second copy)."""
    inventory_corrections: int = 0
    """Tags an inventory showed that incremental reports had missed, either way."""
    cross_reads: int = 0
    """Sightings of a placed tag by another zone's antenna while its own zone still
    sees it: a neighbouring antenna reaching over (rule 3), no event; and the
    candidates a settle window decided against (rule 1)."""
    settled_by_strength: int = 0
    """First placements whose zone the stronger of two reads decided (rule 1)."""
    settled_by_deal: int = 0
    """Placements strength could not decide that the deal order did (rule 1): the
    zone due soonest, or the muck for a card that left a seat for the piles."""
    cross_read_ties: int = 0
    """Reads of one tag by two neighbouring zones that neither strength nor the
    deal order told apart (rule 1): the first zone kept them, the tie named."""
    stronger_moves: int = 0
    """Placed tags moved at once by a stronger read next door (rule 3)."""
    turned_by_deal: int = 0
    """Hole cards the deal order had put face down that the deal since showed were
    dealt face up, moved to the seat's up zone that read them too (rule 1,
    :meth:`PresenceTracker.expect`'s ``face_up``)."""


@dataclass(slots=True)
class _Tag:
    """Mutable placement of one UID."""

    zone: Zone
    card: Card | None
    deck: str | None
    since: float
    left_at: float | None = None
    """When the zone last lost sight of it; set while held."""
    strength: float | None = None
    """The strength (dBm) of the zone's last read of it, where the reader reports one."""


@dataclass(slots=True)
class _Pending:
    """A tag first seen, its zone not committed yet (rule 1's settle window)."""

    since: float
    deadline: float
    reads: dict[Zone, int]
    """Sightings per candidate zone; insertion order is the order first seen."""
    strength: dict[Zone, float | None]
    """The strongest read per zone, None once a read of that zone had none."""
    lost: dict[Zone, float] = field(default_factory=dict)
    """When each zone last lost sight of it within the window."""
    left_at: float | None = None
    """For a tag placed elsewhere (a move settling): when its old zone last saw it."""

    def note(self, zone: Zone, rssi: float | None) -> None:
        """One more sighting in ``zone``."""
        self.reads[zone] = self.reads.get(zone, 0) + 1
        self.lost.pop(zone, None)
        if zone not in self.strength:
            self.strength[zone] = rssi
            return
        old = self.strength[zone]
        self.strength[zone] = None if old is None or rssi is None else max(old, rssi)


class PresenceTracker:
    """Turns per-antenna tag reports into zone events (see the module docstring)."""

    def __init__(
        self, layout: TableLayout, registry: DeckRegistry, hold_time: float = DEFAULT_HOLD_TIME,
        settle_time: float = 0.0, tie_margin_db: float = TIE_MARGIN_DB,
    ) -> None:
        if not (math.isfinite(hold_time) and hold_time >= 0):
            raise ValueError(f"hold_time must be a finite number >= 0, got {hold_time!r}")
        if not (math.isfinite(settle_time) and 0 <= settle_time <= hold_time + 1.0):
            raise ValueError(f"settle_time must be in [0, hold_time + 1], got {settle_time!r}")
        if not (math.isfinite(tie_margin_db) and tie_margin_db >= 0):
            raise ValueError(f"tie_margin_db must be a finite number >= 0, got {tie_margin_db!r}")
        self._settle_time = float(settle_time)
        self._tie_margin = float(tie_margin_db)
        self._pending: dict[str, _Pending] = {}
        self._ties: list[CrossReadTie] = []
        # The zones the dealer is due to deal to next, soonest first (expect()).
        self._due: tuple[Zone, ...] = ()
        self._returning: dict[Card, Zone] = {}  # cards away from a live seat (expect())
        self._face_up: dict[Card, Zone] = {}  # hole cards the deal turns up (expect())
        self._layout = layout
        self._registry = registry
        self._hold_time = float(hold_time)
        self._zone_of: dict[Antenna, Zone] = dict(layout.antenna_map)
        self._antennas_of: dict[Zone, tuple[Antenna, ...]] = {
            zone: layout.antennas_of(zone) for zone in layout.zones
        }
        self._readers_of: dict[Zone, frozenset[int]] = {
            zone: frozenset(reader for reader, _ in antennas)
            for zone, antennas in self._antennas_of.items()
        }
        # uid -> time the sighting began; per antenna.
        self._seen: dict[Antenna, dict[str, float]] = {a: {} for a in self._zone_of}
        # uid -> the strength (dBm) the antenna last reported for it, where it reports one.
        self._rssi: dict[Antenna, dict[str, float]] = {a: {} for a in self._zone_of}
        self._tags: dict[str, _Tag] = {}
        self._holds: dict[str, float] = {}  # uid -> deadline; the truth about holds
        # (deadline, uid) min-heap over _holds, so every report can check "anything
        # due?" in O(1). Entries go stale when a hold ends or moves; a stale entry
        # is one whose deadline no longer equals _holds[uid], and is skipped.
        self._heap: list[tuple[float, str]] = []
        self._copies: dict[Card, set[str]] = {}  # card -> UIDs placed, for duplicates
        self._offline: set[int] = set()
        self._stats = PresenceStats()

    # ------------------------------------------------------------------ reports

    def tag_arrived(self, reader_id: int, antenna: int, uid: str, now: float,
                    rssi: float | None = None, *, settle: bool = True) -> list[ZoneEvent]:
        """Antenna ``antenna`` of reader ``reader_id`` started seeing ``uid``.

        ``rssi``: the read's strength in dBm where the reader reports one (rule 1).
        ``settle=False`` places a tag first seen at once, whatever the settle
        window (the daemon telling presence where a restored hand's cards lie).
        Like every report, first emits whatever holds expired by ``now`` (see
        :meth:`tick`), so a late tick can never reorder events.
        """
        due, zone = self._report_on(reader_id, antenna, now)
        if zone is None:
            return due
        key = (reader_id, antenna)
        seen = self._seen[key]
        if uid in seen:
            return due  # a repeated report: this antenna already sees it
        seen[uid] = now
        if rssi is not None:
            self._rssi[key][uid] = rssi
        events = self._sighted(uid, zone, now, rssi, settle)
        return due + events if due else events

    def tag_left(self, reader_id: int, antenna: int, uid: str, now: float) -> list[ZoneEvent]:
        """Antenna ``antenna`` of reader ``reader_id`` stopped seeing ``uid``.

        Its own removal is held (see :meth:`tick`); returns only other tags'
        holds that expired by ``now``.
        """
        due, zone = self._report_on(reader_id, antenna, now)
        if zone is None:
            return due
        key = (reader_id, antenna)
        seen = self._seen[key]
        if uid in seen:
            del seen[uid]
            strengths = self._rssi[key]
            if strengths:  # empty for a reader that reports no strength
                strengths.pop(uid, None)
            due += self._unsighted(uid, zone, now)
        return due

    def inventory(
        self, reader_id: int, antenna: int, uids: Iterable[str], now: float,
        rssi: Mapping[str, float] | None = None, *, settle: bool = True,
    ) -> list[ZoneEvent]:
        """The complete set of UIDs antenna ``antenna`` of ``reader_id`` sees now.

        Reconciles: UIDs new to this antenna arrive, UIDs it no longer lists
        leave (held like :meth:`tag_left`). Repeating an unchanged inventory
        emits nothing. ``rssi``: the strength (dBm) per UID where the reader
        reports one (rule 1). ``settle=False``: tags first seen are placed at once
        (the daemon's start-up picture, reconciled as a whole).
        """
        events, zone = self._report_on(reader_id, antenna, now)
        if zone is None:
            return events
        key = (reader_id, antenna)
        seen = self._seen[key]
        strengths = self._rssi[key]
        current = set(uids)
        # Sorted, so the events of one inventory come in a reproducible order.
        for uid in sorted(seen.keys() - current):
            self._stats.inventory_corrections += 1
            del seen[uid]
            strengths.pop(uid, None)
            events += self._unsighted(uid, zone, now)
        if self._pending:
            for uid in current & seen.keys() & self._pending.keys():
                if self._candidate(uid, zone):
                    self._pending[uid].note(zone, None if rssi is None else rssi.get(uid))
        for uid in sorted(current - seen.keys()):
            self._stats.inventory_corrections += 1
            seen[uid] = now
            strength = None if rssi is None else rssi.get(uid)
            if strength is not None:
                strengths[uid] = strength
            events += self._sighted(uid, zone, now, strength, settle)
        return events

    def reader_lost(self, reader_id: int, now: float) -> list[ZoneEvent]:
        """Reader ``reader_id`` went offline: freeze what it last reported.

        Its cards stay placed and holds in zones it covers stop running until it
        is back. Returns no events; the list keeps every report method alike.
        """
        del now  # nothing is dated: freezing changes no placement
        if self._layout.reader(reader_id) is not None:
            self._offline.add(reader_id)
        return []

    def reader_restored(self, reader_id: int, now: float) -> list[ZoneEvent]:
        """Reader ``reader_id`` is back; any report from it implies this too.

        Holds in the zones it covers restart with a full ``hold_time`` from
        ``now``, leaving room for its first inventory to confirm the tags.
        """
        self._mark_online(reader_id, now)
        return []

    def expect(self, zones: Iterable[Zone],
               returning: Mapping[Card, Zone] | None = None,
               face_up: Mapping[Card, Zone] | None = None) -> None:
        """The zones the dealer is due to deal his next cards to, soonest first (the
        engine's deal order, :func:`~table_controller.domain.engine.due.due_zones`),
        and the cards a live seat owns that left its zones, with the zone each lay in
        (:func:`~table_controller.domain.engine.due.returning_cards`: a peek put back
        is no new card): what decides a card first seen between zones its reads
        cannot tell apart (rule 1). An input like any report: the caller passes the
        engine's view after applying the events; each first placement committed
        meanwhile moves the expectation past its zone, so two cards settling in one
        call are decided in turn.

        ``face_up``: face-down hole cards the deal since says were dealt face up, with
        the seat's up zone (:func:`~table_controller.domain.engine.due.face_up_holes`:
        the seat passed over since, its other hole card exposed). Each one the deal
        order put face down while that up zone read it too, with no strength to tell
        the reads apart, moves there at the next report or :meth:`tick` (rule 1: the
        deal decides, later). A card its down antenna alone reads, or one a strength
        placed, stays."""
        self._due = tuple(zones)
        self._returning = dict(returning) if returning else {}
        self._face_up = dict(face_up) if face_up else {}

    # -------------------------------------------------------------------- clock

    def tick(self, now: float) -> list[ZoneEvent]:
        """Commit the tags whose settle window ended by ``now`` (rule 1), then expire
        the holds whose deadline is ``<= now``; returns the placements, removals and
        moves."""
        events: list[ZoneEvent] = self._turn_face_up(now) if self._face_up else []
        if self._pending:
            settled = sorted((p.deadline, uid) for uid, p in self._pending.items()
                             if p.deadline <= now)
            for _deadline, uid in settled:
                events += self._commit(uid)
        if not self._holds:
            return events
        due: list[str] = []
        if self._offline:
            # Rare path (a reader is away): skip frozen holds, leave the heap alone;
            # entries of holds expired here go stale and are dropped later.
            due = [
                uid
                for deadline, uid in sorted((d, u) for u, d in self._holds.items())
                if deadline <= now and not self._frozen(self._tags[uid].zone)
            ]
        else:
            heap, holds = self._heap, self._holds
            while heap and heap[0][0] <= now:
                deadline, uid = heapq.heappop(heap)
                # A hold ended and restarted at the same instant leaves two equal
                # entries; both look live, so skip the one just taken.
                if holds.get(uid) == deadline and (not due or due[-1] != uid):
                    due.append(uid)
        for uid in due:
            del self._holds[uid]
            tag = self._tags[uid]
            left_at = tag.left_at if tag.left_at is not None else now
            latest = self._latest_sighting(uid)
            if latest is None:
                self._stats.departures += 1
                events += self._unplace(uid, tag, left_at)
            else:
                # Rule 4: still reported by another zone's antenna; it is there, since
                # it left its zone or since that antenna began seeing it, the later.
                began, elsewhere = latest
                self._stats.moves += 1
                events += self._move(uid, tag, elsewhere, left_at, max(left_at, began))
        return events

    def next_deadline(self) -> float | None:
        """When :meth:`tick` must next be called, or None if no hold or settle window
        is running."""
        settle = self._next_settle()
        hold = self._next_hold()
        if settle is None or hold is None:
            return hold if settle is None else settle
        return min(settle, hold)

    def holding(self) -> bool:
        """Whether a departure hold is running (settle windows aside): the daemon's
        start-up waits for these, a card whose zone is settling is a live arrival."""
        return self._next_hold() is not None

    def _next_settle(self) -> float | None:
        """The end of the first settle window running, if any (few run at once)."""
        if not self._pending:
            return None
        return min(p.deadline for p in self._pending.values())

    def _next_hold(self) -> float | None:
        if not self._holds:
            return None
        if not self._offline:
            heap, holds = self._heap, self._holds
            while holds.get(heap[0][1]) != heap[0][0]:
                heapq.heappop(heap)  # stale; a live entry exists for every hold
            return heap[0][0]
        running = [
            deadline
            for uid, deadline in self._holds.items()
            if not self._frozen(self._tags[uid].zone)
        ]
        return min(running) if running else None

    # ------------------------------------------------------------------- views

    @property
    def hold_time(self) -> float:
        """Seconds a tag must stay unseen before it is removed."""
        return self._hold_time

    @property
    def settle_time(self) -> float:
        """Seconds a tag first seen waits before its zone is committed (rule 1)."""
        return self._settle_time

    @property
    def tie_count(self) -> int:
        """Ties named so far (``stats.cross_read_ties`` without copying the stats): a
        caller publishing them compares it with the count it last saw."""
        return self._stats.cross_read_ties

    def ties(self) -> tuple[CrossReadTie, ...]:
        """The newest ties between two zones' reads of one tag (rule 1), oldest first."""
        return tuple(self._ties)

    @property
    def stats(self) -> PresenceStats:
        """A copy of the counters."""
        return replace(self._stats)

    @property
    def offline_readers(self) -> frozenset[int]:
        """Readers currently marked offline."""
        return frozenset(self._offline)

    def present(self) -> tuple[TagPresence, ...]:
        """Every tag placed on the table, by zone (layout order) then arrival time."""
        order = {zone: index for index, zone in enumerate(self._layout.zones)}
        snapshot = [self._view(uid, tag) for uid, tag in self._tags.items()]
        snapshot.sort(key=lambda p: (order.get(p.zone, len(order)), p.since, p.uid))
        return tuple(snapshot)

    def in_zone(self, zone: Zone) -> tuple[TagPresence, ...]:
        """The tags placed in ``zone``, by arrival time."""
        return tuple(p for p in self.present() if p.zone == zone)

    def cards_in(self, zone: Zone) -> tuple[Card, ...]:
        """The registered cards placed in ``zone``, by arrival time."""
        return tuple(p.card for p in self.in_zone(zone) if p.card is not None)

    def duplicates(self) -> Mapping[Card, tuple[TagPresence, ...]]:
        """Cards present under more than one UID (several physical copies), with each copy."""
        result: dict[Card, tuple[TagPresence, ...]] = {}
        for card, uids in self._copies.items():
            if len(uids) > 1:
                copies = sorted(
                    (self._view(uid, self._tags[uid]) for uid in uids),
                    key=lambda p: (p.since, p.uid),
                )
                result[card] = tuple(copies)
        return result

    # ---------------------------------------------------------------- internals

    def _report_on(
        self, reader_id: int, antenna: int, now: float
    ) -> tuple[list[ZoneEvent], Zone | None]:
        """Bookkeeping of a report about one antenna (:meth:`_report`): the holds
        expired by ``now``, and the antenna's zone, or None, counted as an unmapped
        report, for an antenna the layout does not map (its reports are ignored)."""
        due = self._report(reader_id, now)
        zone = self._zone_of.get((reader_id, antenna))
        if zone is None:
            self._stats.unmapped_reports += 1
        return due, zone

    def _report(self, reader_id: int, now: float) -> list[ZoneEvent]:
        """Bookkeeping common to every report; returns the holds expired by ``now``."""
        self._stats.reports += 1
        self._mark_online(reader_id, now)
        if self._face_up or (self._heap and self._heap[0][0] <= now):
            return self.tick(now)
        if self._pending and (settle := self._next_settle()) is not None and settle <= now:
            return self.tick(now)
        return []

    def _sighted(self, uid: str, zone: Zone, now: float, rssi: float | None = None,
                 settle: bool = True) -> list[ZoneEvent]:
        """An antenna of ``zone`` began seeing ``uid`` (with strength ``rssi``)."""
        tag = self._tags.get(uid)
        pending = self._pending.get(uid) if self._pending else None
        if pending is not None and not (tag is not None and tag.zone == zone):
            if all(may_cross_read(z, zone) for z in pending.reads):
                pending.note(zone, rssi)  # rule 1: one more candidate or read
                return []
            # A table's width away within the window: the card moved. Commit
            # what the window saw, then this is a move (rule 3).
            return self._commit(uid) + self._sighted(uid, zone, now, rssi, settle)
        if tag is None:
            if settle and self._settle_time > 0:
                self._pending[uid] = _Pending(now, now + self._settle_time, {zone: 1},
                                              {zone: rssi})
                return []
            self._stats.arrivals += 1
            self._dealt(zone)
            return self._place(uid, zone, now, rssi)
        if tag.zone == zone:
            if rssi is not None:
                tag.strength = rssi
            if self._pending and self._pending.pop(uid, None) is not None:
                # Back where it lay before a landing elsewhere settled: that was a
                # cross-read of a card lifted for a moment, not a move.
                self._stats.cross_reads += 1
            if self._holds.pop(uid, None) is not None:
                self._stats.flickers_suppressed += 1
                tag.left_at = None
            return []
        if (uid not in self._holds and not self._frozen(tag.zone)
                and may_cross_read(tag.zone, zone)
                and any(uid in self._seen[a] for a in self._antennas_of[tag.zone])):
            own = self._zone_strength(uid, tag.zone)
            if rssi is not None and own is not None and rssi > own + self._tie_margin:
                # Rule 3: a stronger read next door: the card lies there (the
                # incumbent's read was the cross-read, or the card moved).
                self._stats.stronger_moves += 1
                self._stats.moves += 1
                return self._move(uid, tag, zone, now, now, strength=rssi)
            # Rule 3: its own zone still sees it: a neighbouring antenna reaching
            # over, not a move (the hold and rule 4 move it if it really went).
            self._stats.cross_reads += 1
            return []
        if not self._frozen(tag.zone) and self._weaker(tag, zone, rssi):
            # Rule 3: its own zone lost it for a scan, and a read next door is far
            # weaker than its own was: the neighbour reaching over (its cross-read
            # flickering too), not the card; the hold (rule 4) decides.
            self._stats.cross_reads += 1
            return []
        # Rule 3: a move. The old zone had lost it: it left when last seen there.
        held = self._holds.pop(uid, None) is not None
        left_at = tag.left_at if held and tag.left_at is not None else None
        if settle and self._settle_time > 0:
            # Where it landed is settled like a first placement (rule 1): a card
            # dropped on the muck is cross-read by the board too. It stays placed
            # where it was meanwhile (its hold ended: the commit moves it).
            self._pending[uid] = _Pending(now, now + self._settle_time, {zone: 1},
                                          {zone: rssi}, left_at=left_at)
            return []
        self._stats.moves += 1
        return self._move(uid, tag, zone, now if left_at is None else left_at, now, strength=rssi)

    def _unsighted(self, uid: str, zone: Zone, now: float) -> list[ZoneEvent]:
        """An antenna of ``zone`` stopped seeing ``uid``: start a hold if it was the
        last, or finish a move another zone's recent sighting began (rule 3)."""
        tag = self._tags.get(uid)
        pending = self._pending.get(uid) if self._pending else None
        if pending is not None:
            if any(uid in self._seen[a] for a in self._antennas_of[zone]):
                return []
            if zone in pending.reads:
                pending.lost[zone] = now  # lost within its settle window (rule 1)
            elif tag is not None and tag.zone == zone and pending.left_at is None:
                pending.left_at = now  # the old zone noticed: the commit moves it
            return []
        if tag is None or tag.zone != zone:
            return []  # a stale sighting of a tag that has since moved
        if any(uid in self._seen[a] for a in self._antennas_of[zone]):
            return []  # another antenna of the same zone still sees it
        recent = self._recent_sighting(uid, now - self._hold_time)
        if recent is not None:
            antenna = recent
            elsewhere = self._zone_of[antenna]
            strength = self._rssi[antenna].get(uid)
            if not self._weaker(tag, elsewhere, strength):
                # The new zone's reader scanned before the old one noticed: a move.
                self._stats.moves += 1
                return self._move(uid, tag, elsewhere, now, now, strength=strength)
            # Far weaker than its own read: a cross-read, not where it went (rule 3).
        tag.left_at = now
        self._hold(uid, now + self._hold_time)
        return []

    def _zone_strength(self, uid: str, zone: Zone) -> float | None:
        """The strongest read of ``uid`` by an antenna of ``zone`` that sees it now;
        None if one of them reported no strength (or none sees it)."""
        best: float | None = None
        for antenna in self._antennas_of[zone]:
            if uid in self._seen[antenna]:
                strength = self._rssi[antenna].get(uid)
                if strength is None:
                    return None
                best = strength if best is None else max(best, strength)
        return best

    def _candidate(self, uid: str, zone: Zone) -> bool:
        """Whether an inventory that still lists ``uid`` in ``zone`` (an antenna that saw
        it all along) makes ``zone`` a candidate of its settle window, as a new sighting
        would (:meth:`_sighted`): a zone already read in the window, or one beside all
        of them. Not the zone the card lies in while it moves: that antenna's report
        of the departure is only late (its reader scans on its own), and a card back
        there would be a new sighting that ends the window (rule 3). Without this a
        fold read in the muck while the seat's reader had not yet reported it gone
        was a tie of the muck and the seat (issue 19)."""
        pending = self._pending[uid]
        if zone in pending.reads:
            return True
        tag = self._tags.get(uid)
        if tag is not None and tag.zone == zone:
            return False
        return all(may_cross_read(z, zone) for z in pending.reads)

    def _commit(self, uid: str) -> list[ZoneEvent]:
        """Rule 1: the settle window of ``uid`` is over: place it in the zone the
        reads decide, dated at its first sighting (or move it there, rule 3)."""
        pending = self._pending.pop(uid)
        moving = self._tags.get(uid)
        zones = list(pending.reads)  # in the order first seen
        winner = zones[0]
        if len(zones) > 1:
            self._stats.cross_reads += len(zones) - 1
            strengths = pending.strength
            known = [(s, z) for z in zones if (s := strengths[z]) is not None]
            tied = zones  # a read without strength: strength tells nothing
            if len(known) == len(zones):
                best = max(s for s, _z in known)
                tied = [z for s, z in known if best - s <= self._tie_margin]
            if len(tied) == 1:
                winner = tied[0]
                self._stats.settled_by_strength += 1
            else:
                decided = self._by_deal(uid, tied, moving)
                if decided is not None:
                    winner = decided
                    self._stats.settled_by_deal += 1
                else:
                    winner = tied[0]  # the zone that saw it first keeps a tie
                    self._tie(uid, winner, tied[1], pending.since, strengths)
        if moving is None:
            self._dealt(winner)
        strength = pending.strength[winner]
        if moving is None:
            self._stats.arrivals += 1
            events = self._place(uid, winner, pending.since, strength)
        else:
            self._stats.moves += 1
            left_at = pending.since if pending.left_at is None else pending.left_at
            events = self._move(uid, moving, winner, left_at, pending.since, strength=strength)
        if not any(uid in self._seen[a] for a in self._antennas_of[winner]):
            # Seen in the window and lost again before it ended: held from then,
            # like any departure (rule 2; rule 4 if another zone still sees it).
            left_at = pending.lost.get(winner, pending.since)
            self._tags[uid].left_at = left_at
            self._hold(uid, left_at + self._hold_time)
        return events

    def _by_deal(self, uid: str, tied: list[Zone], moving: _Tag | None) -> Zone | None:
        """Rule 1: which of the zones strength cannot tell apart the deal decides, if
        any. A card first seen (from the stub): the one the dealer is due to deal to
        soonest (:meth:`expect`). A card that lay at a seat and landed among the
        dealer's piles: the muck, where a folded or gathered card goes (the burn and
        the board are dealt from the stub, never from a seat); so does a card first
        seen among the piles when no burn or board card is due. A card a live seat
        owns coming back (a peek): the zone it lay in, before any deal order. An
        unknown tag is no card of the deal: nothing decides it."""
        found = self._registry.lookup(uid)
        if found is None:
            return None
        if moving is not None:
            if (moving.zone.seat is not None and MUCK in tied
                    and all(zone.seat is None for zone in tied)):
                return MUCK
            return None
        back = self._returning.pop(found.card, None) if self._returning else None
        if back is not None and back in tied:
            return back
        for zone in self._due:
            if zone in tied:
                return zone
        if MUCK in tied and all(zone.seat is None for zone in tied):
            # Among the dealer's piles with no burn or board card due: the muck, the
            # pile cards reach out of the deal order (a folded card no seat antenna
            # read; a burn or board card not due would itself be a dealing error).
            return MUCK
        return None

    def _turn_face_up(self, now: float) -> list[ZoneEvent]:
        """Rule 1, decided late: move each hole card :meth:`expect` names as dealt face
        up to its seat's up zone, where the card lies in that seat's down zone, an
        antenna of the up zone sees it now, and no strength tells the two reads
        apart (a strength that did would have placed it already). Dated ``now``:
        the moment the deal decided, not a read."""
        requests, self._face_up = self._face_up, {}
        events: list[ZoneEvent] = []
        for card, up in requests.items():
            if up.seat is None:
                continue
            down = Zone.down(up.seat)
            for uid in sorted(self._copies.get(card, ())):
                tag = self._tags.get(uid)
                if (tag is None or tag.zone != down or uid in self._holds
                        or self._frozen(down) or self._frozen(up)
                        or not any(uid in self._seen[a] for a in self._antennas_of.get(up, ()))):
                    continue
                strength = self._zone_strength(uid, up)
                own = self._zone_strength(uid, down)
                if (strength is not None and own is not None
                        and abs(strength - own) > self._tie_margin):
                    continue  # the strengths told them apart: it lies where they said
                self._stats.turned_by_deal += 1
                self._stats.moves += 1
                events += self._move(uid, tag, up, now, now, strength=strength)
        return events

    def _dealt(self, zone: Zone) -> None:
        """A card first seen was placed in ``zone``: the expectation moves past it."""
        due = self._due
        if zone in due:
            self._due = due[due.index(zone) + 1:]

    def _tie(self, uid: str, kept: Zone, other: Zone, at: float,
             strengths: Mapping[Zone, float | None]) -> None:
        """Name a tie of two zones' reads (rule 1); keeps the newest :data:`MAX_TIES`."""
        self._stats.cross_read_ties += 1
        found = self._registry.lookup(uid)
        self._ties.append(CrossReadTie(None if found is None else found.card, kept, other, at,
                                       strengths[kept], strengths[other]))
        if len(self._ties) > MAX_TIES:
            del self._ties[0]

    def _recent_sighting(self, uid: str, since: float) -> Antenna | None:
        """The antenna that most recently began seeing ``uid``, if that was at
        ``since`` or later."""
        best: tuple[float, Antenna] | None = None
        for antenna, seen in self._seen.items():
            began = seen.get(uid)
            if began is not None and began >= since and (best is None or began > best[0]):
                best = (began, antenna)
        return None if best is None else best[1]

    def _weaker(self, tag: _Tag, zone: Zone, rssi: float | None) -> bool:
        """Whether a read of ``tag`` in ``zone`` is taken for a cross-read while its own
        zone misses it: a zone beside its own, and weaker than its own last read by more
        than the tie margin, or either read without a strength. Without strengths nothing
        tells a neighbour reaching over from the card having moved, so a card already
        placed is not moved by it at once: the hold decides (rule 4 moves it if its own
        zone never sees it again), and a cross-read never becomes a card in a second
        zone (rule 3)."""
        if not may_cross_read(tag.zone, zone):
            return False
        if rssi is None or tag.strength is None:
            return True
        return rssi < tag.strength - self._tie_margin

    def _place(self, uid: str, zone: Zone, now: float,
               strength: float | None = None) -> list[ZoneEvent]:
        found = self._registry.lookup(uid)
        if found is None:
            self._tags[uid] = _Tag(zone, None, None, now, strength=strength)
            self._stats.unknown_arrivals += 1
            return [UnknownTag(zone, uid, now)]
        self._tags[uid] = _Tag(zone, found.card, found.deck, now, strength=strength)
        copies = self._copies.setdefault(found.card, set())
        if copies:
            self._stats.duplicate_arrivals += 1
        copies.add(uid)
        return [CardPlaced(zone, found.card, now, found.deck)]

    def _move(self, uid: str, tag: _Tag, zone: Zone, left_at: float, now: float, *,
              strength: float | None = None) -> list[ZoneEvent]:
        """``uid`` left ``tag.zone`` (last seen there at ``left_at``) for ``zone``."""
        removed = self._unplace(uid, tag, left_at)
        placed = self._place(uid, zone, now, strength)
        if tag.zone.seat is not None and tag.zone.seat == zone.seat:
            # In flight between one seat's zones (turned over, slid, a cross-read
            # corrected): the new zone first, so the seat is never bare meanwhile
            # and an auto hand does not end under it (issue 19).
            return placed + removed
        return removed + placed

    def _unplace(self, uid: str, tag: _Tag, at: float) -> list[ZoneEvent]:
        del self._tags[uid]
        if tag.card is None:
            return [UnknownTagRemoved(tag.zone, uid, at)]
        copies = self._copies[tag.card]
        copies.discard(uid)
        if not copies:
            del self._copies[tag.card]
        return [CardRemoved(tag.zone, tag.card, at, tag.deck)]

    def _latest_sighting(self, uid: str) -> tuple[float, Zone] | None:
        """When the antenna that most recently began seeing ``uid`` began, and its
        zone, if any antenna sees it."""
        best: tuple[float, Zone] | None = None
        for antenna, seen in self._seen.items():
            since = seen.get(uid)
            if since is not None and (best is None or since > best[0]):
                best = (since, self._zone_of[antenna])
        return best

    def _frozen(self, zone: Zone) -> bool:
        """True if an offline reader covers ``zone``, so its holds must not expire."""
        return bool(self._offline) and not self._offline.isdisjoint(self._readers_of[zone])

    def _mark_online(self, reader_id: int, now: float) -> None:
        if reader_id not in self._offline:
            return
        self._offline.discard(reader_id)
        fresh = now + self._hold_time
        for uid, deadline in list(self._holds.items()):
            if reader_id in self._readers_of[self._tags[uid].zone] and deadline < fresh:
                self._hold(uid, fresh)

    def _hold(self, uid: str, deadline: float) -> None:
        self._holds[uid] = deadline
        heapq.heappush(self._heap, (deadline, uid))

    def _view(self, uid: str, tag: _Tag) -> TagPresence:
        return TagPresence(tag.zone, tag.card, tag.deck, tag.since, uid in self._holds, uid)
