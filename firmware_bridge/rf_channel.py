"""The RF channel: which tags a card table's antennas actually read, and how strongly.

One pure, seeded model of what real HF RFID (ISO 14443, ISO 15693) gives a card
table, used by the reader emulator (per scan) and by the simulator (per placement,
event-driven). It does no I/O and reads no clock: every method takes ``now``.

Theory of operation
-------------------
Every antenna has a *zone kind* (:class:`ZoneKind`: seat down, seat up, burn, muck,
board) and a list of neighbouring antennas. A tag *placed* on an antenna gets, at
that moment, decisions that hold for as long as it lies there (a failed read is
persistent, not a per-scan coin: a detuned stack stays detuned):

* **dead tag** (:attr:`RFParams.dead_tag`): decided once per tag for the whole life
  of the channel; a dead tag is never read anywhere.
* **read at all**: at a seat or the board, the first tag on an antenna is read; the
  ``k``-th tag of a square stack (down cards, ``k >= 2``) is unread with probability
  ``stack_loss * stack_growth ** (k - 2)``, and never beyond ``max_stack``; up cards
  overlap in a row rather than lie square on each other, so every up card after the
  first is unread with the flat ``stack_loss * up_stack_factor``. On the burn and
  muck piles, the first ``burn_depth`` / ``muck_depth`` cards are read (0: no
  antenna there at all; None: all of them), each unread with ``pile_loss``; deeper
  cards are not.
* **cross-read** (``cross_read``): a tag that is read is also read, with that
  chance, by one neighbouring antenna, at a strength (an RSSI-like figure in dBm)
  ``cross_margin_db`` below its own (ties with ``cross_tie``: a card right on the
  boundary).

Per scan a read tag is still missed with ``flicker``, and every tag of an antenna is
missed while the dealer's hand passes over it (:meth:`RFChannel.shadow`, decided per
card dealt with ``hand_pass`` by :meth:`RFChannel.hand_pass`). Peeks (a hole card
lifted for ``peek_min``-``peek_max`` seconds in ``peek_rate`` of hands) are a
player's physical action: the simulator's dealer plans them with
:func:`plan_peek`; to the channel they are a removal and a placement again.

Randomness: each placement draws from its own small stream (splitmix64) seeded from
(channel seed, tag, placement number), and each (placement, antenna) has its own
stream for the per-scan draws, so the same calls give the same reads whatever the
order in which independent readers scan. :meth:`RFChannel.reads` serves one scan;
:meth:`RFChannel.misses` draws the flicker gaps of a whole interval at once (the
same Bernoulli process per scan, sampled by geometric gaps: the simulator's fast
path). Not thread-safe: the emulator serialises calls.
"""

from __future__ import annotations

import math
import random
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from enum import StrEnum
from typing import Final

__all__ = [
    "PROFILES",
    "ChannelError",
    "Placement",
    "RFChannel",
    "RFParams",
    "Read",
    "ZoneKind",
    "leaves_cards_unread",
    "parse_override",
    "plan_peek",
    "profile",
    "read_probability",
]


class ChannelError(ValueError):
    """A profile name or parameter that cannot be used; one line saying why."""


class ZoneKind(StrEnum):
    """What lies on an antenna, which decides how its tags are read."""

    SEAT_DOWN = "seat_down"
    SEAT_UP = "seat_up"
    BURN = "burn"
    MUCK = "muck"
    BOARD = "board"


PILES: Final = frozenset({ZoneKind.BURN, ZoneKind.MUCK})

MAX_PEEK: Final = 10.0
"""Seconds a peek may last at most (a player looking at a hole card, issue 19)."""


@dataclass(frozen=True, slots=True)
class RFParams:
    """Every parameter of the channel (module docstring); probabilities are in [0, 1]."""

    stack_loss: float = 0.0
    """Chance that the 2nd tag of a stack is never read while it lies there."""
    stack_growth: float = 2.0
    """Each further tag of a stack multiplies that chance (detuning grows with the stack)."""
    max_stack: int | None = None
    """Tags deeper than this in one stack are never read (None: no limit)."""
    up_stack_factor: float = 0.5
    """Up cards overlap in a row: their stack loss is this fraction of a square stack's."""
    muck_depth: int | None = None
    """Muck cards read: the first N on the pile (0: no muck antenna; None: all)."""
    burn_depth: int | None = None
    """Burn cards read: the first N on the pile (0: no burn antenna; None: all)."""
    pile_loss: float = 0.0
    """Chance that a card within a pile's read depth is still never read there."""
    flicker: float = 0.0
    """Chance per scan that a read tag is missed (a TAG_LEFT, then TAG_ARRIVED again)."""
    cross_read: float = 0.0
    """Chance per placement that one neighbouring antenna reads the tag too."""
    cross_margin_min: float = 3.0
    cross_margin_max: float = 15.0
    """dB by which a cross-read is weaker than the tag's own antenna (uniform)."""
    cross_tie: float = 0.0
    """Chance that a cross-read is exactly as strong as the own antenna (a tie)."""
    rssi_dbm: float = -45.0
    rssi_spread: float = 4.0
    """The own antenna's strength: ``rssi_dbm`` +- ``rssi_spread`` (uniform)."""
    dead_tag: float = 0.0
    """Chance that a tag is dead: never read by any antenna."""
    peek_rate: float = 0.0
    """Chance per hand that a player lifts a hole card to look at it."""
    peek_min: float = 0.5
    peek_max: float = 5.0
    """Seconds a peek lasts (uniform); at most :data:`MAX_PEEK`."""
    hand_pass: float = 0.0
    """Chance per card dealt that the dealer's hand shadows the antennas around it."""
    hand_pass_seconds: float = 0.3
    """How long such a shadow lasts (every tag of those antennas is missed)."""
    scan_period: float = 0.15
    """Seconds per scan cycle of a reader (all its antennas in turn)."""
    strength_reported: bool = True
    """Whether the reader reports each read's strength on the wire (a front end that
    measures RSSI); False: a reader that reports none, as the project's MFRC522 and
    PN5180 firmware today, and presence decides cross-reads without it."""

    def __post_init__(self) -> None:
        for name in ("stack_loss", "pile_loss", "flicker", "cross_read", "cross_tie",
                     "dead_tag", "peek_rate", "hand_pass", "up_stack_factor"):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and 0.0 <= value <= 1.0):
                raise ChannelError(f"{name} = {value!r}: a probability is between 0 and 1")
        for name in ("muck_depth", "burn_depth", "max_stack"):
            value = getattr(self, name)
            if value is not None and not (isinstance(value, int) and value >= 0):
                raise ChannelError(f"{name} = {value!r}: a depth is a whole number >= 0 or all")
        if not 1.0 <= self.stack_growth <= 100.0:
            raise ChannelError(f"stack_growth = {self.stack_growth!r}: between 1 and 100")
        if not 0.0 <= self.cross_margin_min <= self.cross_margin_max <= 60.0:
            raise ChannelError("cross margins: 0 <= cross_margin_min <= cross_margin_max <= 60")
        if not 0.0 < self.peek_min <= self.peek_max <= MAX_PEEK:
            raise ChannelError(f"peeks: 0 < peek_min <= peek_max <= {MAX_PEEK:g} s")
        if not 0.0 < self.scan_period <= 5.0:
            raise ChannelError(f"scan_period = {self.scan_period!r}: in (0, 5] s")
        if not 0.0 <= self.hand_pass_seconds <= 5.0:
            raise ChannelError(f"hand_pass_seconds = {self.hand_pass_seconds!r}: in [0, 5] s")
        if not (math.isfinite(self.rssi_dbm) and 0.0 <= self.rssi_spread <= 30.0):
            raise ChannelError("rssi_dbm must be finite and rssi_spread in [0, 30]")
        if not isinstance(self.strength_reported, bool):
            raise ChannelError(f"strength_reported = {self.strength_reported!r}: true or false")

    def with_overrides(self, overrides: Iterable[str]) -> RFParams:
        """These parameters with ``name=value`` overrides (``muck_depth=0``,
        ``muck_depth=all``, ``stack_loss=0.05``); :class:`ChannelError` if bad."""
        changes: dict[str, object] = {}
        for item in overrides:
            name, value = parse_override(item)
            changes[name] = value
        return replace(self, **changes)  # type: ignore[arg-type]

    def describe(self) -> dict[str, object]:
        """Every parameter by name (``None`` depths as ``"all"``), for reports."""
        out: dict[str, object] = {}
        for item in fields(self):
            value = getattr(self, item.name)
            out[item.name] = "all" if value is None else value
        return out


_DEPTHS: Final = frozenset({"muck_depth", "burn_depth", "max_stack"})
_SWITCHES: Final = frozenset({"strength_reported"})
_TRUTH: Final = {"1": True, "true": True, "yes": True, "on": True,
                 "0": False, "false": False, "no": False, "off": False}


def parse_override(item: str) -> tuple[str, object]:
    """One ``name=value`` override, checked against :class:`RFParams`' fields."""
    name, sep, text = item.partition("=")
    name = name.strip()
    known = {f.name: f for f in fields(RFParams)}
    if not sep or name not in known:
        raise ChannelError(f"bad --rf-param {item!r}: expected NAME=VALUE with NAME one of"
                           f" {', '.join(known)}")
    text = text.strip()
    if name in _DEPTHS:
        if text.lower() in ("all", "none"):
            return name, None
        if not text.isdecimal():
            raise ChannelError(f"bad --rf-param {item!r}: a depth is a whole number or all")
        return name, int(text)
    if name in _SWITCHES:
        if text.lower() not in _TRUTH:
            raise ChannelError(f"bad --rf-param {item!r}: expected true or false")
        return name, _TRUTH[text.lower()]
    try:
        value = float(text)
    except ValueError:
        raise ChannelError(f"bad --rf-param {item!r}: expected a number") from None
    if not math.isfinite(value):
        raise ChannelError(f"bad --rf-param {item!r}: expected a finite number")
    return name, value


# Defaults from published figures (docs/presence.md, "The RF channel"):
# * a "good" table: ISO 15693 (ICODE SLIX-class) inlays, true anticollision, a
#   commercial multiplexed reader; stacks of a seat's cards read, a muck antenna that
#   reads the bottom of the pile only, rare flicker and cross-reads;
# * "diy": ISO 14443 inlays on MFRC522/PN532-class readers; builders report two
#   cards in a stack read, a third "iffy", and readers hanging on a two-card stack;
# * "no-muck": the DIY table without a muck antenna (the issue-19 target conditions).
PROFILES: Final[dict[str, RFParams]] = {
    "good": RFParams(stack_loss=0.0, max_stack=None, muck_depth=10, burn_depth=None,
                     flicker=0.002, cross_read=0.01, dead_tag=0.0, peek_rate=0.10,
                     peek_max=5.0, hand_pass=0.05, scan_period=0.15),
    "diy": RFParams(stack_loss=0.05, stack_growth=3.0, max_stack=4, muck_depth=2,
                    burn_depth=None, flicker=0.01, cross_read=0.02, dead_tag=0.005,
                    peek_rate=0.10, peek_max=5.0, hand_pass=0.10, scan_period=0.15),
    "no-muck": RFParams(stack_loss=0.05, stack_growth=3.0, max_stack=4, muck_depth=0,
                        burn_depth=None, flicker=0.01, cross_read=0.02, dead_tag=0.005,
                        peek_rate=0.10, peek_max=5.0, hand_pass=0.10, scan_period=0.15),
}
"""The named profiles of ``--rf PROFILE``."""


def profile(name: str, overrides: Iterable[str] = ()) -> RFParams:
    """Profile ``name`` with ``name=value`` overrides; :class:`ChannelError` if unknown."""
    try:
        base = PROFILES[name]
    except KeyError:
        raise ChannelError(f"unknown RF profile {name!r}; known: {', '.join(PROFILES)}"
                           ) from None
    return base.with_overrides(overrides)


def read_probability(params: RFParams, kind: ZoneKind, depth: int) -> float:
    """Chance that a live tag placed as the ``depth``-th (1-based) on an antenna of
    ``kind`` is read while it lies there."""
    if depth < 1:
        raise ValueError("depth counts from 1")
    if kind in PILES:
        limit = params.muck_depth if kind is ZoneKind.MUCK else params.burn_depth
        if limit is not None and depth > limit:
            return 0.0
        return 1.0 - params.pile_loss
    if depth == 1:
        return 1.0
    if kind is ZoneKind.SEAT_UP:
        # A row of overlapping up cards, not a square stack: a flat, smaller loss.
        return 1.0 - params.stack_loss * params.up_stack_factor
    if params.max_stack is not None and depth > params.max_stack:
        return 0.0
    loss = params.stack_loss * params.stack_growth ** (depth - 2)
    return max(0.0, 1.0 - min(1.0, loss))


def leaves_cards_unread(params: RFParams) -> bool:
    """Whether these conditions leave some card dealt to a seat never read where it
    lies: a stack or a row that loses tags, a stack deeper than the reader reads, a
    dead tag. A table under them infers the unread cards (the engine's
    ``unread_stacks``, docs/engine.md "Reads that fail"); with every seat card read
    it need not, and a card missing is then a card not dealt."""
    if params.dead_tag > 0:
        return True
    return any(read_probability(params, kind, depth) < 1.0
               for kind in (ZoneKind.SEAT_DOWN, ZoneKind.SEAT_UP) for depth in range(2, 5))


AntennaKey = tuple[int, int]
"""An antenna: ``(reader_id, port)``."""


@dataclass(frozen=True, slots=True)
class Read:
    """One tag seen by one antenna in a scan, with its strength (dBm-like)."""

    uid: str
    strength: float


@dataclass(slots=True)
class Placement:
    """The decisions of one placement of a tag on an antenna (module docstring)."""

    uid: str
    antenna: AntennaKey
    kind: ZoneKind
    depth: int
    since: float
    number: int
    """How many times this tag was placed before (its placement counter)."""
    read: bool
    """Whether its own antenna reads it at all (False: dead, stack loss, pile depth)."""
    why_unread: str | None
    """``dead``, ``stack`` or ``pile`` when not read."""
    strength: float
    cross: tuple[AntennaKey, float] | None = None
    """The neighbouring antenna that reads it too, and at what strength."""
    _streams: dict[AntennaKey, _Stream] = field(default_factory=dict, repr=False)

    def reading(self) -> list[tuple[AntennaKey, float]]:
        """The antennas that read this placement, strongest first, with strengths."""
        if not self.read:
            return []
        out: list[tuple[AntennaKey, float]] = [(self.antenna, self.strength)]
        if self.cross is not None:
            out.append(self.cross)
        return out


def _seed_of(*parts: object) -> int:
    """A stable integer seed from ``parts`` (crc32 of their text: no hash randomisation)."""
    text = ":".join(str(p) for p in parts).encode()
    return zlib.crc32(text) | (zlib.crc32(text[::-1]) << 32)


_MASK: Final = (1 << 64) - 1


def _mix(*parts: int) -> int:
    """A stable 64-bit seed from integers (splitmix64 steps): cheap enough per scan."""
    z = 0
    for part in parts:
        z = ((z ^ (part & _MASK)) + 0x9E3779B97F4A7C15) & _MASK
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        z ^= z >> 31
    return z


def _uid_number(uid: str) -> int:
    """A UID as a number (canonical UIDs are hex; anything else is hashed stably)."""
    try:
        return int(uid, 16)
    except ValueError:
        return _seed_of(uid)


_PLACE, _DEAD, _SCAN, _PHASE = 1, 2, 3, 4


class _Stream:
    """A small seeded stream of uniform floats (splitmix64): one per placement and per
    (placement, antenna), cheap to create where :class:`random.Random` is not."""

    __slots__ = ("_state",)

    def __init__(self, seed: int) -> None:
        self._state = seed & _MASK

    def random(self) -> float:
        """The next float in [0, 1)."""
        self._state = (self._state + 0x9E3779B97F4A7C15) & _MASK
        z = self._state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return ((z ^ (z >> 31)) >> 11) / 9007199254740992.0

    def uniform(self, low: float, high: float) -> float:
        """A float between ``low`` and ``high``."""
        return low + (high - low) * self.random()

    def randrange(self, stop: int) -> int:
        """An integer in ``range(stop)``."""
        return min(stop - 1, int(self.random() * stop))


class RFChannel:
    """The reads a table's antennas give (module docstring).

    ``antennas`` maps each antenna to its zone kind; ``neighbours`` maps an antenna to
    the antennas a tag lying on it may be cross-read by. ``seed`` makes it repeatable.
    """

    def __init__(
        self,
        params: RFParams,
        antennas: Mapping[AntennaKey, ZoneKind],
        neighbours: Mapping[AntennaKey, Sequence[AntennaKey]] | None = None,
        *,
        seed: int | str = 0,
    ) -> None:
        self.params = params
        self._kinds = dict(antennas)
        self._neighbours = {a: tuple(n for n in (neighbours or {}).get(a, ()) if n in antennas)
                            for a in antennas}
        self._seed = seed
        self._base = _seed_of(seed)
        self._stacks: dict[AntennaKey, list[str]] = {a: [] for a in antennas}
        self._placements: dict[str, Placement] = {}
        self._counts: dict[str, int] = {}
        self._dead: dict[str, bool] = {}
        self._shadows: dict[AntennaKey, list[tuple[float, float]]] = {}
        self._phase = {a: _Stream(_mix(self._base, _PHASE, a[0], a[1])).random()
                       * params.scan_period for a in antennas}

    # ------------------------------------------------------------ physical world

    def is_dead(self, uid: str) -> bool:
        """Whether ``uid`` is a dead tag (decided once, for the channel's life)."""
        dead = self._dead.get(uid)
        if dead is None:
            draw = _Stream(_mix(self._base, _DEAD, _uid_number(uid))).random()
            dead = self._dead[uid] = draw < self.params.dead_tag
        return dead

    def place(self, uid: str, antenna: AntennaKey, now: float) -> Placement:
        """A tag is put on ``antenna`` at ``now``: decide how it is read there.

        A tag placed while it lies elsewhere is moved (its old placement ends)."""
        if antenna not in self._kinds:
            raise KeyError(f"unknown antenna {antenna!r}")
        if uid in self._placements:
            self.remove(uid, now)
        params = self.params
        kind = self._kinds[antenna]
        stack = self._stacks[antenna]
        stack.append(uid)
        depth = len(stack)
        number = self._counts.get(uid, 0)
        self._counts[uid] = number + 1
        rng = _Stream(_mix(self._base, _PLACE, _uid_number(uid), number))
        strength = params.rssi_dbm + rng.uniform(-params.rssi_spread, params.rssi_spread)
        why: str | None = None
        if self.is_dead(uid):
            why = "dead"
        elif rng.random() >= read_probability(params, kind, depth):
            why = "pile" if kind in PILES else "stack"
        placement = Placement(uid, antenna, kind, depth, now, number, why is None, why, strength)
        near = self._neighbours[antenna]
        if why is None and near and rng.random() < params.cross_read:
            other = near[rng.randrange(len(near))]
            if rng.random() < params.cross_tie:
                weaker = strength
            else:
                weaker = strength - rng.uniform(params.cross_margin_min, params.cross_margin_max)
            placement.cross = (other, weaker)
        self._placements[uid] = placement
        return placement

    def remove(self, uid: str, now: float) -> Placement | None:
        """The tag is taken off its antenna (None if it lay nowhere)."""
        del now  # nothing is dated: the placement simply ends
        placement = self._placements.pop(uid, None)
        if placement is not None:
            stack = self._stacks[placement.antenna]
            if uid in stack:
                stack.remove(uid)
        return placement

    def placement(self, uid: str) -> Placement | None:
        """The current placement of ``uid``, if it lies on an antenna."""
        return self._placements.get(uid)

    def lying(self, antenna: AntennaKey) -> tuple[str, ...]:
        """The tags physically on ``antenna``, in the order they were put there."""
        return tuple(self._stacks[antenna])

    def hand_pass(self, antenna: AntennaKey, now: float, rng: random.Random,
                  over: Sequence[AntennaKey] = ()) -> list[tuple[AntennaKey, float, float]]:
        """The dealer puts a card on ``antenna`` at ``now``; with ``hand_pass`` his hand
        shadows that antenna (and the antennas ``over``, e.g. the same seat's other
        zone) for ``hand_pass_seconds`` just before. Returns the shadows cast
        (antenna, start, end), already recorded."""
        params = self.params
        if params.hand_pass <= 0.0 or rng.random() >= params.hand_pass:
            return []
        start, end = now - params.hand_pass_seconds, now
        cast = []
        for key in (antenna, *over):
            self.shadow(key, start, end)
            cast.append((key, start, end))
        return cast

    def shadow(self, antenna: AntennaKey, start: float, end: float) -> None:
        """Nothing on ``antenna`` is read from ``start`` to ``end`` (a hand over it)."""
        if end > start:
            self._shadows.setdefault(antenna, []).append((start, end))

    def shadows(self, antenna: AntennaKey) -> tuple[tuple[float, float], ...]:
        """The shadows cast on ``antenna`` so far, as (start, end)."""
        return tuple(self._shadows.get(antenna, ()))

    def shadowed(self, antenna: AntennaKey, now: float) -> bool:
        """Whether a shadow covers ``antenna`` at ``now``."""
        return any(start <= now < end for start, end in self._shadows.get(antenna, ()))

    def forget_shadows(self, before: float) -> None:
        """Drop shadows that ended before ``before`` (keeps a long run small)."""
        for key, spans in self._shadows.items():
            self._shadows[key] = [s for s in spans if s[1] >= before]

    # ------------------------------------------------------------------ reads

    def reads(self, antenna: AntennaKey, now: float) -> list[Read]:
        """What ``antenna`` reads in a scan at ``now``: its own read tags and the tags
        of neighbours cross-read by it, each missed with ``flicker``, none while
        shadowed. Strongest first is not implied; order is by placement."""
        if self.shadowed(antenna, now):
            return []
        flicker = self.params.flicker
        out: list[Read] = []
        for placement in self._candidates(antenna):
            strength = self._strength_on(placement, antenna)
            if strength is None:
                continue
            if flicker > 0.0 and self._stream(placement, antenna).random() < flicker:
                continue
            out.append(Read(placement.uid, strength))
        return out

    def misses(self, placement: Placement, antenna: AntennaKey, start: float,
               end: float) -> list[float]:
        """Scan times in [``start``, ``end``) at which ``antenna`` misses ``placement``
        by flicker (each scan independently with ``flicker``; geometric gaps)."""
        flicker = self.params.flicker
        if flicker <= 0.0 or end <= start:
            return []
        rng = self._stream(placement, antenna)
        first = self.next_scan(antenna, start)
        period = self.params.scan_period
        out: list[float] = []
        log_keep = math.log1p(-flicker) if flicker < 1.0 else -math.inf
        index = 0
        while True:
            gap = 0.0 if flicker >= 1.0 else math.log(1.0 - rng.random()) / log_keep
            if gap >= (end - first) / period - index:
                return out  # the next miss is past the interval
            index += int(gap)
            at = first + index * period
            if at >= end:
                return out
            out.append(at)
            index += 1

    def next_scan(self, antenna: AntennaKey, now: float) -> float:
        """The first scan of ``antenna`` at or after ``now`` (readers scan on their own
        fixed cycle with a seeded phase)."""
        period = self.params.scan_period
        phase = self._phase[antenna]
        cycles = math.ceil((now - phase) / period - 1e-9)
        return phase + cycles * period

    def _candidates(self, antenna: AntennaKey) -> list[Placement]:
        own = [self._placements[uid] for uid in self._stacks[antenna]]
        for other in self._neighbours:
            if antenna in self._neighbours[other]:
                own += [p for uid in self._stacks[other]
                        if (p := self._placements[uid]).cross is not None
                        and p.cross[0] == antenna]
        return own

    @staticmethod
    def _strength_on(placement: Placement, antenna: AntennaKey) -> float | None:
        for key, strength in placement.reading():
            if key == antenna:
                return strength
        return None

    def _stream(self, placement: Placement, antenna: AntennaKey) -> _Stream:
        stream = placement._streams.get(antenna)
        if stream is None:
            stream = placement._streams[antenna] = _Stream(_mix(
                self._base, _SCAN, _uid_number(placement.uid), placement.number,
                antenna[0], antenna[1]))
        return stream


def plan_peek(params: RFParams, rng: random.Random) -> float | None:
    """Whether a player peeks in this hand, and for how long (seconds), or None."""
    if params.peek_rate <= 0.0 or rng.random() >= params.peek_rate:
        return None
    return rng.uniform(params.peek_min, params.peek_max)
