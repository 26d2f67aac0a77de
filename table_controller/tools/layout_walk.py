"""The layout walk: confirm, zone by zone, that the layout maps each antenna right.

Theory of operation
-------------------
Pure: sightings and clock values in, prompts and verdicts out; no I/O, no clock.
``stud-table readers --walk`` (:mod:`table_controller.tools.readers_view`) feeds it
what the readers report and prints what it returns.

For each zone of the layout in turn the walk asks the installer to put a card on
it (:class:`Prompt`) and waits for a tag that was not on any antenna when it asked.
From the first antenna that reports the new tag it collects, for
:attr:`LayoutWalk.settle` seconds, every antenna that reports the same tag, and
then gives a :class:`Verdict`:

* every antenna that saw it covers the zone: ``seat3.up: seen by reader 2 port 5 — OK``;
* only antennas of other zones saw it: the layout or the wiring is wrong
  (``seat3.up: card seen on reader 2 port 6 (seat3.down) — check the antenna wiring``);
* an antenna of the zone and one of another zone both saw it: the antennas overlap
  (the card would count in both zones);
* nothing new within :attr:`LayoutWalk.timeout` seconds: a dead antenna, a loose
  cable or an offline reader;
* two zones each read only by the other's antennas: a swapped pair of ports (two
  cables on each other's sockets, or two zones exchanged in the layout), named as a
  swap in the verdict of the second of the pair and in the summary.

After a verdict on a card, it asks for the card to be taken off
(:class:`TakeOff`) and waits until no antenna reports that tag, so the next zone
starts on a clear table. After the last zone: a :class:`Summary` (exit status 0
when every zone was confirmed, 1 otherwise).

Sightings come as the set of tags an antenna reports now
(:meth:`LayoutWalk.observe`), which is what the reader figures keep; arrivals and
departures are computed here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Final

Antenna = tuple[int, int]
"""(reader id, port)."""

DEFAULT_SETTLE: Final = 1.0
"""Seconds to collect antennas reporting a new card before judging: long enough for
a neighbour antenna's scan (150 ms) and inventory to report it too."""

DEFAULT_TIMEOUT: Final = 60.0
"""Seconds to wait for a card on a zone before calling its antenna dead."""


@dataclass(frozen=True, slots=True)
class Prompt:
    """Ask the installer to put a card on ``zone`` (the ``index``-th of ``total``)."""

    zone: str
    index: int
    total: int

    @property
    def text(self) -> str:
        """The line to show."""
        return f"[{self.index}/{self.total}] Put a card on {self.zone}"


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the walk found for ``zone``; ``seen`` are the antennas that saw the card."""

    zone: str
    ok: bool
    text: str
    seen: tuple[Antenna, ...] = ()
    seen_zones: tuple[str | None, ...] = ()
    """The layout's zone of each antenna in :attr:`seen` (None: an unmapped port)."""

    def swapped_with(self, other: Verdict) -> bool:
        """True if this zone and ``other`` were each read only by the other's antennas."""
        return (not self.ok and not other.ok and self.zone != other.zone
                and bool(self.seen) and bool(other.seen)
                and set(self.seen_zones) == {other.zone}
                and set(other.seen_zones) == {self.zone})


@dataclass(frozen=True, slots=True)
class TakeOff:
    """Ask the installer to take the card off ``zone`` before the next one."""

    zone: str

    @property
    def text(self) -> str:
        """The line to show."""
        return f"Take the card off {self.zone}"


@dataclass(frozen=True, slots=True)
class Summary:
    """The walk's end: every zone's verdict, in walk order."""

    verdicts: tuple[Verdict, ...]

    @property
    def ok(self) -> bool:
        """True when every zone was confirmed."""
        return all(verdict.ok for verdict in self.verdicts)

    @property
    def swaps(self) -> tuple[tuple[Verdict, Verdict], ...]:
        """Pairs of zones read by each other's antennas (walk order, each pair once)."""
        pairs: list[tuple[Verdict, Verdict]] = []
        for index, first in enumerate(self.verdicts):
            for second in self.verdicts[index + 1:]:
                if first.swapped_with(second):
                    pairs.append((first, second))
        return tuple(pairs)

    @property
    def lines(self) -> tuple[str, ...]:
        """The summary to show: the count, then each zone that failed, then each swap."""
        failed = [verdict for verdict in self.verdicts if not verdict.ok]
        head = f"{len(self.verdicts) - len(failed)} of {len(self.verdicts)} zones OK"
        if not failed:
            return (f"{head}: the layout matches the wiring",)
        swaps = tuple(f"  swap: {swap_text(a, b)}" for a, b in self.swaps)
        return (f"{head}; {len(failed)} to fix:", *(f"  {v.text}" for v in failed), *swaps)


def swap_text(first: Verdict, second: Verdict) -> str:
    """``seat3.up and seat3.down are swapped: ...`` for a pair found by the walk."""
    def ports(verdict: Verdict) -> str:
        return " and ".join(f"reader {r} port {p}" for r, p in verdict.seen)

    return (f"{first.zone} and {second.zone} are swapped: {first.zone}'s card was read on"
            f" {ports(first)} and {second.zone}'s on {ports(second)} — exchange those two"
            " cables, or the two ports' zones in the layout")


WalkOutput = Prompt | Verdict | TakeOff | Summary
"""Everything the walk asks the caller to show."""


class _Phase(Enum):
    WAITING = "waiting"  # a zone was prompted; no new card yet
    SETTLING = "settling"  # a new card seen; collecting every antenna that sees it
    CLEARING = "clearing"  # verdict given; waiting for the card to come off
    DONE = "done"


def describe(antenna: Antenna, zone: str | None) -> str:
    """``reader 2 port 6 (seat3.down)``, or ``(no zone in the layout)``."""
    reader, port = antenna
    return f"reader {reader} port {port} ({zone if zone is not None else 'no zone in the layout'})"


class LayoutWalk:
    """One walk over ``zones`` with the layout's ``antenna_zone`` map (see module doc)."""

    def __init__(
        self,
        zones: Sequence[str],
        antenna_zone: Mapping[Antenna, str],
        *,
        settle: float = DEFAULT_SETTLE,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        if not zones:
            raise ValueError("a walk needs at least one zone")
        if settle < 0 or timeout <= 0:
            raise ValueError("settle must not be negative and timeout must be positive")
        self.zones = tuple(zones)
        self.antenna_zone = dict(antenna_zone)
        self.settle = settle
        self.timeout = timeout
        self._present: dict[Antenna, frozenset[str]] = {}
        self._baseline: set[tuple[Antenna, str]] = set()
        self._phase = _Phase.WAITING
        self._index = -1
        self._since = 0.0
        self._card: str | None = None
        self._seen: dict[Antenna, None] = {}
        self._verdicts: list[Verdict] = []
        self._started = False

    @property
    def done(self) -> bool:
        """True once the summary has been given."""
        return self._phase is _Phase.DONE

    @property
    def zone(self) -> str | None:
        """The zone being walked, or ``None`` before the start and after the end."""
        if not self._started or self.done:
            return None
        return self.zones[self._index]

    def start(self, now: float) -> list[WalkOutput]:
        """Begin: the first prompt."""
        if self._started:
            raise RuntimeError("walk already started")
        self._started = True
        return self._next_zone(now)

    def observe(self, reader: int, port: int, tags: frozenset[str], now: float) -> list[WalkOutput]:
        """Antenna (``reader``, ``port``) reports exactly ``tags`` now."""
        antenna = (reader, port)
        self._present[antenna] = frozenset(tags)
        if not self._started or self.done:
            return []
        if self._phase is _Phase.WAITING:
            new = sorted(uid for uid in tags if (antenna, uid) not in self._baseline)
            if new:
                self._card = new[0]
                self._seen = {antenna: None}
                self._phase, self._since = _Phase.SETTLING, now
            return self.tick(now)
        if self._phase is _Phase.SETTLING and self._card in tags:
            self._seen[antenna] = None
            return self.tick(now)
        if self._phase is _Phase.CLEARING:
            return self.tick(now)
        return []

    def tick(self, now: float) -> list[WalkOutput]:
        """Let time pass: judge a settled card, time a zone out, move on once clear."""
        if not self._started or self.done:
            return []
        zone = self.zones[self._index]
        if self._phase is _Phase.WAITING and now - self._since >= self.timeout:
            expected = ", ".join(
                f"reader {r} port {p}" for (r, p), z in sorted(self.antenna_zone.items())
                if z == zone
            ) or "no antenna in the layout"
            self._verdicts.append(Verdict(
                zone, False,
                f"{zone}: no card seen in {self.timeout:g} s on any antenna ({expected}"
                " expected) — dead antenna, loose cable, or its reader offline",
            ))
            return [self._verdicts[-1], *self._next_zone(now)]
        if self._phase is _Phase.SETTLING and now - self._since >= self.settle:
            verdict = self._judge(zone)
            self._verdicts.append(verdict)
            self._phase, self._since = _Phase.CLEARING, now
            return [verdict, TakeOff(zone), *self._clear_check(now)]
        if self._phase is _Phase.CLEARING:
            return self._clear_check(now)
        return []

    def _clear_check(self, now: float) -> list[WalkOutput]:
        if any(self._card in tags for tags in self._present.values()):
            return []
        return self._next_zone(now)

    def _judge(self, zone: str) -> Verdict:
        seen = tuple(self._seen)
        zones = tuple(self.antenna_zone.get(a) for a in seen)
        right = [a for a in seen if self.antenna_zone.get(a) == zone]
        wrong = [a for a in seen if self.antenna_zone.get(a) != zone]
        if right and not wrong:
            where = " and ".join(f"reader {r} port {p}" for r, p in right)
            return Verdict(zone, True, f"{zone}: seen by {where} — OK", seen, zones)
        others = ", ".join(describe(a, self.antenna_zone.get(a)) for a in wrong)
        if right:
            return Verdict(
                zone, False,
                f"{zone}: seen by reader {right[0][0]} port {right[0][1]}, but also on"
                f" {others} — antennas overlap: move them apart or shield them",
                seen, zones,
            )
        verdict = Verdict(zone, False, f"{zone}: card seen on {others} — check the antenna"
                          " wiring", seen, zones)
        for earlier in self._verdicts:
            if earlier.swapped_with(verdict):
                return Verdict(zone, False, f"{zone}: card seen on {others} — a swap:"
                               f" {swap_text(earlier, verdict)}", seen, zones)
        return verdict

    def _next_zone(self, now: float) -> list[WalkOutput]:
        self._index += 1
        self._card, self._seen = None, {}
        if self._index >= len(self.zones):
            self._phase = _Phase.DONE
            return [Summary(tuple(self._verdicts))]
        # Tags already lying on antennas (a card left behind, a chip with a tag)
        # are not the installer's answer to this prompt.
        self._baseline = {(a, uid) for a, tags in self._present.items() for uid in tags}
        self._phase, self._since = _Phase.WAITING, now
        return [Prompt(self.zones[self._index], self._index + 1, len(self.zones))]
