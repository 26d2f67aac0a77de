"""The simulator's table seen through the RF channel: physical deal in, zone events out.

Theory of operation
-------------------
A planned hand (:class:`~.plan.SimHand`) is what the dealer's hands do. With an RF
channel (``--rf PROFILE``) the table does not see that directly:

1. :func:`timeline` times the hand as a dealer deals it: 0.5 s a card, a movement
   (a card leaving a zone and landing in the next) 0.05 s, a betting pause before
   every street's burn, a pause after a fold (its cards leave the seat before the
   next street) and after a pickup (the rule-15 scramble), the showdown before the
   clear, then the clear seat by seat. Players **peek**: in ``peek_rate`` of hands one
   live player lifts a hole card during a betting pause for ``peek_min``-``peek_max``
   seconds (the dealing goes on meanwhile), never past that seat's next fold or pickup.
2. :class:`RFTable` puts every placement and removal on the antennas of the 8-seat
   layout through one :class:`~firmware_bridge.rf_channel.RFChannel` per hand
   (dead tags, stack loss, pile depth, cross-reads, the dealer's hand passing
   over antennas as he deals), turns each antenna's reads into the reports a reader
   sends (TAG_ARRIVED at the first scan that reads a tag, TAG_LEFT at the first scan
   that misses it: flicker, shadows, removal), and feeds them in time order to the
   daemon's own :class:`~table_controller.table.presence.PresenceTracker`. Its zone
   events (and a betting hand's console inputs, at their time) are what the engine gets.

The per-hand :class:`RFFacts` say what the channel did (unread placements and why,
dead tags dealt), so the report can tell an error the channel hid from one the table
missed. Pure: no clock, no I/O; seeded per hand.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Final

from firmware_bridge.rf_channel import (
    Placement,
    RFChannel,
    RFParams,
    ZoneKind,
    plan_peek,
    read_probability,
)
from table_controller.domain.cards import Card
from table_controller.domain.events import (
    CardPlaced,
    CardRemoved,
    TableEvent,
    UnknownTag,
    UnknownTagRemoved,
)
from table_controller.domain.zones import BOARD, BURN, MUCK, Zone
from table_controller.domain.zones import ZoneKind as TableZoneKind
from table_controller.simulation.plan import SimHand
from table_controller.table.deck import DeckRegistry
from table_controller.table.layout import TableLayout
from table_controller.table.presence import (
    DEFAULT_HOLD_TIME,
    DEFAULT_SETTLE_TIME,
    PresenceTracker,
)

CARD_PAUSE: Final = 0.5
"""Seconds between two cards dealt (a dealer takes 0.4-0.6 s)."""
MOVE_PAUSE: Final = 0.05
"""Seconds between a card leaving a zone and landing in the next (one movement)."""
ROUND_PAUSE: Final = 3.0
"""Seconds of betting before a street's burn (players act; they peek then)."""
SEAT_PAUSE: Final = 0.3
"""Seconds between picking up two seats' cards when clearing."""
HAND_GAP: Final = 5.0
"""Seconds between one hand's clear and the next hand's first card (the shuffle)."""
CROSS_READ_UNTOLD: Final = "cross-read, reads not told apart"
"""Why a mistake was masked when its card was cross-read by a neighbour whose read
presence cannot tell from the own one (no strength, or a tie): the deal order puts
the card where the correct deal would have (docs/presence.md, rule 1)."""

Antenna = tuple[int, int]


@dataclass(frozen=True, slots=True)
class Action:
    """One physical movement of a tag at time ``at``: ``place`` or ``remove``.

    ``source`` is the index of the hand event it comes from (-1: the clear or a peek);
    ``dealt``: a card the dealer puts down (his hand passes over the antennas)."""

    at: float
    place: bool
    zone: Zone
    uid: str
    source: int = -1
    dealt: bool = False
    peek: bool = False


@dataclass(slots=True)
class RFFacts:
    """What the channel did to one hand."""

    unread: list[tuple[int, str, str]] = field(default_factory=list)
    """(hand event index, zone name, why) of every dealt placement never read there."""
    dead: int = 0
    """Dead tags among the cards dealt in the hand."""
    peeks: int = 0
    peek_seconds: float = 0.0
    cross_reads: int = 0
    shadows: int = 0
    untold: set[int] = field(default_factory=set)
    """Hand event indexes of dealt placements cross-read by a neighbour with a read
    presence cannot tell from the own one (no strength reported, or a tie): the deal
    order decides where such a card lies, so a mistake whose card it is looks like
    the correct deal (docs/presence.md, the decision table)."""


def masked(hand: SimHand, unread: Mapping[int, str], untold: AbstractSet[int], *,
           rounds_unread: bool) -> str | None:
    """Why the table cannot see ``hand``'s injected mistake, or None; the one rule of
    fast and daemon mode (docs/simulation.md "Masked"). ``unread``: hand event index
    -> why its placement was never read; ``untold``: the placements cross-read with
    reads not told apart (:func:`cross_read_untold`); ``rounds_unread``: the table
    infers unread cards. Hidden as :meth:`SimHand.hidden` says, or the mistake's own
    card cross-read with reads not told apart (it then looks like the correct deal)."""
    why = hand.hidden(unread, rounds_unread=rounds_unread)
    if why is None and hand.evidence is not None and hand.evidence in untold:
        return CROSS_READ_UNTOLD
    return why


def cross_read_untold(params: RFParams, placement: Placement) -> bool:
    """Whether ``placement`` was cross-read with reads presence cannot tell apart: the
    readers report no strength, or the neighbour's read is as strong as the own
    antenna's (a tie). Its card may then be taken for the neighbour zone's."""
    if placement.cross is None:
        return False
    return not params.strength_reported or placement.cross[1] == placement.strength


def zone_kind(zone: Zone) -> ZoneKind:
    """The channel's zone kind of a table zone."""
    if zone.seat is not None:
        return ZoneKind.SEAT_DOWN if zone.kind is TableZoneKind.DOWN else ZoneKind.SEAT_UP
    return {TableZoneKind.BURN: ZoneKind.BURN, TableZoneKind.MUCK: ZoneKind.MUCK,
            TableZoneKind.BOARD: ZoneKind.BOARD}[zone.kind]


def neighbour_zones(zone: Zone, seats: int) -> list[Zone]:
    """The zones whose antennas lie next to ``zone``'s: a seat's down and up areas
    touch, up rows of neighbouring seats touch, and burn, muck and board lie together
    in front of the dealer."""
    if zone.seat is not None:
        if zone.kind is TableZoneKind.DOWN:
            return [Zone.up(zone.seat)]
        near = [Zone.down(zone.seat)]
        near += [Zone.up(s) for s in (zone.seat - 1, zone.seat + 1) if 1 <= s <= seats]
        return near
    return [z for z in (BURN, MUCK, BOARD) if z != zone]


class UidLookup:
    """``registry.uid_for`` remembered: the simulator asks for the same 104 tags again
    and again (a registry lookup walks its deck)."""

    def __init__(self, registry: DeckRegistry, deck: str | None = None) -> None:
        self.registry = registry
        self.deck = deck or registry.decks[0]
        self._known: dict[tuple[Card, str], str] = {}

    def __call__(self, card: Card, deck: str | None) -> str:
        """The UID of ``card`` in ``deck`` (the first deck when None)."""
        key = (card, deck or self.deck)
        uid = self._known.get(key)
        if uid is None:
            uid = self._known[key] = self.registry.uid_for(*key)
        return uid


def timeline(hand: SimHand, registry: DeckRegistry | UidLookup, params: RFParams,
             rng: random.Random, *, start: float = 0.0, hold: float = DEFAULT_HOLD_TIME,
             ) -> tuple[list[Action], list[tuple[float, TableEvent]]]:
    """The physical actions of ``hand`` in time (module docstring), and its console
    inputs (betting hands) with their times."""
    uid_for = registry if isinstance(registry, UidLookup) else UidLookup(registry)
    actions: list[Action] = []
    console: list[tuple[float, TableEvent]] = []
    pauses: list[float] = []  # betting pauses (start times), where players peek
    events = hand.events
    t = start
    previous: TableEvent | None = None
    for index, event in enumerate(events):
        following = events[index + 1] if index + 1 < len(events) else None
        if isinstance(event, CardPlaced | UnknownTag):
            if event.zone == BURN and not _burn_pile(previous):
                pauses.append(t)
                t += ROUND_PAUSE
            uid = uid_for(event.card, event.deck) if isinstance(event, CardPlaced) else event.uid
            actions.append(Action(t, True, event.zone, uid, index, dealt=True))
            t += CARD_PAUSE
        elif isinstance(event, CardRemoved | UnknownTagRemoved):
            uid = uid_for(event.card, event.deck) if isinstance(event, CardRemoved) else event.uid
            actions.append(Action(t, False, event.zone, uid, index))
            if _continues(event, following):
                t += MOVE_PAUSE
            else:
                # The end of a fold or of a pickup: the betting (or the scramble) goes
                # on for longer than the presence hold before the next card.
                t += hold + 1.0
        else:
            console.append((t, event))
            t += CARD_PAUSE
        previous = event
    t += ROUND_PAUSE  # showdown
    zone: Zone | None = None
    for clear in hand.clear:
        if zone is not None and clear.zone.seat != zone.seat:
            t += SEAT_PAUSE
        zone = clear.zone
        uid = uid_for(clear.card, clear.deck) if isinstance(clear, CardRemoved) else clear.uid
        actions.append(Action(t, False, clear.zone, uid))
        t += MOVE_PAUSE
    _add_peek(actions, pauses, params, rng)
    actions.sort(key=lambda a: a.at)
    return actions, console


def _burn_pile(event: TableEvent | None) -> bool:
    """Whether ``event`` was at the burn pile (a second burn follows no betting)."""
    return isinstance(event, CardPlaced | CardRemoved) and event.zone == BURN


def _continues(removed: CardRemoved | UnknownTagRemoved, following: TableEvent | None) -> bool:
    """Whether ``following`` goes on with the movement ``removed`` began (the card landing
    elsewhere, or the next card of one pickup or fold)."""
    if isinstance(following, CardRemoved | UnknownTagRemoved):
        return (following.zone.seat == removed.zone.seat and following.zone.seat is not None) \
            or following.zone == removed.zone
    if isinstance(following, CardPlaced) and isinstance(removed, CardRemoved):
        return following.card == removed.card and following.zone != removed.zone
    return False


def _add_peek(actions: list[Action], pauses: Sequence[float], params: RFParams,
              rng: random.Random) -> None:
    """One player of the hand lifts a hole card in a betting pause (``peek_rate``)."""
    seconds = plan_peek(params, rng)
    if seconds is None or not pauses:
        return
    begin = rng.choice(list(pauses)) + rng.uniform(0.0, 0.5)
    lying: dict[str, Zone] = {}
    for action in sorted(actions, key=lambda a: a.at):
        if action.at > begin:
            break
        if action.place:
            lying[action.uid] = action.zone
        else:
            lying.pop(action.uid, None)
    holes = sorted((uid, zone) for uid, zone in lying.items()
                   if zone.seat is not None and zone.kind is TableZoneKind.DOWN)
    if not holes:
        return
    uid, zone = rng.choice(holes)
    # Never past the seat's next removal (its fold or the clear): the card is back first.
    later = [a.at for a in actions if a.at > begin and not a.place and a.zone.seat == zone.seat]
    end = begin + seconds
    if later and end > min(later) - 0.2:
        end = min(later) - 0.2
    if end - begin < params.peek_min / 2:
        return
    actions.append(Action(begin, False, zone, uid, peek=True))
    actions.append(Action(end, True, zone, uid, peek=True))


def channel_map(
    layout: TableLayout,
) -> tuple[dict[Antenna, ZoneKind], dict[Antenna, list[Antenna]]]:
    """The channel's view of ``layout``: each antenna's zone kind, and the antennas next
    to it (:func:`neighbour_zones`, through each zone's first antenna)."""
    kinds = {antenna: zone_kind(zone) for antenna, zone in layout.antenna_map.items()}
    home = {zone: layout.antennas_of(zone)[0] for zone in layout.zones}
    neighbours = {antenna: [home[z] for z in neighbour_zones(zone, layout.seats) if z in home]
                  for zone, antenna in home.items()}
    return kinds, neighbours


def same_seat_antennas(layout: TableLayout) -> dict[Antenna, tuple[Antenna, ...]]:
    """For each seat antenna, the seat's other zone's antenna: the dealer's hand passes
    over a seat's cards as he puts one down there (not over other seats': he pitches)."""
    out: dict[Antenna, tuple[Antenna, ...]] = {}
    for zone in layout.zones:
        if zone.seat is None:
            continue
        other = Zone.up(zone.seat) if zone.kind is TableZoneKind.DOWN else Zone.down(zone.seat)
        if layout.antennas_of(other):
            out[layout.antennas_of(zone)[0]] = (layout.antennas_of(other)[0],)
    return out


class RFTable:
    """Hands dealt on the layout's antennas through the RF channel (module docstring)."""

    def __init__(self, params: RFParams, layout: TableLayout, registry: DeckRegistry, *,
                 seed: int, hold_time: float = DEFAULT_HOLD_TIME,
                 settle_time: float = DEFAULT_SETTLE_TIME) -> None:
        self.params = params
        self.layout = layout
        self.registry = registry
        self.seed = seed
        self.hold_time = hold_time
        # The daemon's own tracker and decision (settle window, stronger read wins):
        # one model, so the grid measures what the daemon does.
        self.tracker = PresenceTracker(layout, registry, hold_time, settle_time)
        self._uids = UidLookup(registry)
        self._kinds, self._neighbours = channel_map(layout)
        self._home: dict[Zone, Antenna] = {zone: layout.antennas_of(zone)[0]
                                           for zone in layout.zones}
        self._same_seat = same_seat_antennas(layout)
        self._clock = 0.0

    def channel(self, number: int) -> RFChannel:
        """Hand ``number``'s channel (its own seed: dead tags are per hand)."""
        return RFChannel(self.params, self._kinds, self._neighbours,
                         seed=f"{self.seed}:{number}:rf")

    def deal(self, hand: SimHand, params: RFParams | None = None, *,
             apply: Callable[[Sequence[TableEvent]],
                             tuple[Iterable[Zone], Mapping[Card, Zone], Mapping[Card, Zone]]]
             | None = None,
             ) -> tuple[list[TableEvent], RFFacts]:
        """The engine's inputs for ``hand`` as the readers and presence give them, and
        what the channel did. ``params``: this hand's channel, if not the table's.
        ``apply``: the engine, fed each batch of inputs as presence gives it and
        answering where the dealer is due next, which cards are away from a live
        seat and which hole cards the deal says lie face up (presence's deal order,
        rule 1), as the daemon does; without it presence decides with no deal order."""
        params = params or self.params
        rng = random.Random(f"{self.seed}:{hand.number}:dealer")
        start = self._clock
        actions, console = timeline(hand, self._uids, params, rng, start=start,
                                    hold=self.hold_time)
        channel = RFChannel(params, self._kinds, self._neighbours,
                            seed=f"{self.seed}:{hand.number}:rf")
        facts = RFFacts()
        reports = self._reports(actions, channel, rng, facts)
        events: list[TableEvent] = []
        tracker = self.tracker
        queue = sorted([(at, 0, seq, item) for seq, (at, item) in enumerate(reports)]
                       + [(at, 1, seq, event) for seq, (at, event) in enumerate(console)],
                       key=lambda q: (q[0], q[1], q[2]))
        end = start

        def take(batch: list[TableEvent]) -> None:
            events.extend(batch)
            if apply is not None and batch:
                tracker.expect(*apply(batch))

        if apply is not None:
            tracker.expect(*apply(()))  # where the hand's first card is due
        for at, is_console, _seq, item in queue:
            end = max(end, at)
            if is_console:
                assert not isinstance(item, tuple)
                take([*tracker.tick(at), item])
                continue
            assert isinstance(item, tuple)
            arrived, (reader, port), uid, strength = item
            if arrived:
                # The strength the reader reports on the wire (docs/protocol.md), or
                # none from a reader that measures none.
                rssi = strength if params.strength_reported else None
                take(list(tracker.tag_arrived(reader, port, uid, at, rssi=rssi)))
            else:
                take(list(tracker.tag_left(reader, port, uid, at)))
        last = max([end, *(a.at for a in actions)]) + self.hold_time + 0.01
        take(list(tracker.tick(last)))
        self._clock = last + HAND_GAP
        return events, facts

    def _reports(self, actions: list[Action], channel: RFChannel, rng: random.Random,
                 facts: RFFacts) -> list[tuple[float, tuple[bool, Antenna, str, float]]]:
        """Every reader report the actions cause, in time order."""
        spans: list[tuple[Placement, float, float]] = []
        open_: dict[str, tuple[Placement, float]] = {}
        dead: set[str] = set()
        for action in actions:
            antenna = self._home[action.zone]
            if action.place:
                if action.dealt:
                    over = self._same_seat.get(antenna, ())
                    facts.shadows += len(channel.hand_pass(antenna, action.at, rng, over))
                placement = channel.place(action.uid, antenna, action.at)
                if placement.why_unread == "dead":
                    dead.add(action.uid)
                if placement.why_unread is not None and action.source >= 0:
                    facts.unread.append((action.source, action.zone.name, placement.why_unread))
                if placement.cross is not None:
                    facts.cross_reads += 1
                    if cross_read_untold(channel.params, placement) and action.source >= 0:
                        facts.untold.add(action.source)
                if action.uid in open_:
                    old, since = open_.pop(action.uid)
                    spans.append((old, since, action.at))
                open_[action.uid] = (placement, action.at)
            else:
                found = open_.pop(action.uid, None)
                channel.remove(action.uid, action.at)
                if found is not None:
                    spans.append((found[0], found[1], action.at))
        peeks = [a for a in actions if a.peek]
        facts.peeks = len(peeks) // 2
        facts.peek_seconds = sum(a.at if a.place else -a.at for a in peeks)
        # Tags still lying at the end (a hand not cleared) are read to the end, and stay.
        last = actions[-1].at + 1.0 if actions else 0.0
        still = [(placement, since, last) for placement, since in open_.values()]
        facts.dead = len(dead)
        out: list[tuple[float, tuple[bool, Antenna, str, float]]] = []
        for spans_of, stays in ((spans, False), (still, True)):
            for placement, since, until in spans_of:
                for read in placement.reading():
                    out += self._antenna_reports(channel, placement, read, since, until,
                                                 stays=stays)
        out.sort(key=lambda r: r[0])
        return out

    @staticmethod
    def _antenna_reports(channel: RFChannel, placement: Placement, read: tuple[Antenna, float],
                         since: float, until: float, *, stays: bool = False,
                         ) -> list[tuple[float, tuple[bool, Antenna, str, float]]]:
        """The reports of one antenna about one placement lying there from ``since``
        to ``until``: arrival, flicker and shadow gaps, departure (none if it ``stays``
        there after ``until``)."""
        antenna, strength = read
        period = channel.params.scan_period
        first = channel.next_scan(antenna, since)
        stop = channel.next_scan(antenna, until)
        if first >= stop - 1e-9:
            return []  # put down and taken away within one scan cycle: never seen
        missed = {round((m - first) / period)
                  for m in channel.misses(placement, antenna, first, stop)}
        for begin, end in channel.shadows(antenna):
            scan = channel.next_scan(antenna, max(begin, first))
            while scan < min(end, stop) - 1e-9:
                missed.add(round((scan - first) / period))
                scan += period
        scans = round((stop - first) / period)
        uid = placement.uid
        out: list[tuple[float, tuple[bool, Antenna, str, float]]] = []
        seen = False
        # Walk the misses: runs of reads between them.
        cursor = 0
        for index in sorted(m for m in missed if m < scans):
            if index > cursor and not seen:
                out.append((first + cursor * period, (True, antenna, uid, strength)))
                seen = True
            if seen:
                out.append((first + index * period, (False, antenna, uid, strength)))
                seen = False
            cursor = index + 1
        if cursor < scans and not seen:
            out.append((first + cursor * period, (True, antenna, uid, strength)))
            seen = True
        if stays and not seen and out:
            out.append((stop, (True, antenna, uid, strength)))  # read again, and stays
        elif seen and not stays:
            out.append((stop, (False, antenna, uid, strength)))
        return out


def undetectable_kinds(params: RFParams) -> dict[str, str]:
    """The deal kinds these read conditions make undetectable as a whole, with why.

    An error that is the *absence* of a card (no burn, no 7th card) looks exactly like
    a card the channel did not read, so a table that raises no false alert cannot
    flag it once such reads fail; errors that put a card down are judged per hand
    instead (the injection is masked when its card was not read)."""
    out: dict[str, str] = {}
    stack = read_probability(params, ZoneKind.SEAT_DOWN, 3)
    if stack < 1.0 or params.dead_tag > 0:
        # Either leaves the table inferring the cards no reader read
        # (rf_channel.leaves_cards_unread), a 7th card not dealt among them.
        never = 1.0 - stack * (1.0 - params.dead_tag)
        why = "the third of its down stack or a dead tag" if stack < 1.0 else "a dead tag"
        out["short_hand"] = (
            f"a 7th-street card is never read with chance {never:.1%} ({why}): a card"
            " not dealt and a card not read look the same, and the table infers the"
            " unread ones")
    burns = [read_probability(params, ZoneKind.BURN, depth) for depth in range(1, 7)]
    if min(burns) < 1.0:
        out["missing_burn"] = (
            "the burn pile is not read to its full depth (burn_depth, pile_loss): a burn"
            " not read looks like no burn")
    return out
