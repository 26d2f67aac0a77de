"""The pure core of the broadcast service: delay lines and the hole-card reveal filter.

No clock and no I/O here: the time comes in as a value (``now``), so the rules can
be tested with a clock the test controls (issue 12, "Security").

**Delay line.** Every message the service takes from a table keeps the table's own
timestamp ``ts`` (the envelope's publication time). An output with delay ``D`` and
board-sync offset ``offset_ms`` releases it at ``ts + D + offset_ms / 1000``, never
before. The condition is evaluated against the delay in force *at release time*,
so:

* lengthening ``D`` holds back what has not been released yet (what was released
  stays released: a page already drew it);
* shortening ``D`` releases at once what is now older than the new ``D`` and nothing
  produced less than the new ``D`` ago.

Messages are released strictly in the order they were logged (head of line): if a
table's clock steps back, a later message waits for the earlier ones rather than
overtaking them, so a page never sees a gap and nothing is released early.

The line keeps only ``(seq, ts)`` pairs in memory; the payloads stay in the
on-disk backlog (:mod:`.store`), so a 60-minute delay costs a few bytes per
message of RAM (docs/broadcast.md, figures).

**Reveal filter.** What a delayed output shows of the hole cards, per output:

* ``all``: every hole card as dealt, also of hands folded or mucked later;
* ``showdown`` (the default, no spoiler): the hole cards of a hand that is shown
  down, from the moment the *delayed* timeline reaches the showdown (the hand's
  result as released on this output) on. Until then the output shows no more than
  the public feed: a viewer cannot tell on 3rd street who will reach showdown;
* ``showdown_early`` (spoils the hand): because the output runs behind the table,
  the hand's result is often already known when its first cards are released;
  then the seats that will be shown down are revealed from the deal on. Viewers
  learn early who goes to showdown (the live hand is over by then: a spoiler, not
  a leak);
* ``never``: no hole card, only what the public feed carries (a hand shown
  down is public by then and appears in the result).

A hand folded, or mucked at showdown, stays hidden in both showdown modes.

Anything computed from a hidden down card is hidden with it: the seat's reading,
and every seat's equity, win, tie, standard error and outs, which are computed
from all live hands (a revealed seat's equity would tell the viewer about a
hidden one).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Final

MAX_DELAY_S: Final = 24 * 3600.0
"""Longest delay an output accepts: a day ("several hours" with room to spare)."""

MAX_OFFSET_MS: Final = 60_000
"""Largest board-sync offset: a minute lines up any video path."""

SECRET_SEAT_FIELDS: Final = ("down", "reading", "equity", "win", "tie", "stderr", "outs")
"""Secure seat fields that are, or are computed from, down cards (payloads.SecureSeat)."""

EQUITY_SEAT_FIELDS: Final = ("equity", "win", "tie", "stderr", "outs")
"""Seat fields computed from *every* live hand, not only the seat's own."""

SECRET_STATE_FIELDS: Final = ("equity_info",)
"""Secure state fields that describe the equity computation."""


class Reveal(StrEnum):
    """Which hole cards a delayed output shows (module docstring)."""

    ALL = "all"
    SHOWDOWN = "showdown"
    SHOWDOWN_EARLY = "showdown_early"
    NEVER = "never"

    @property
    def id_class(self) -> str:
        """The store's id class of an output in this mode (store module docstring):
        one that hides any hand leaves out the secure states that only add equity."""
        return "n_se" if self is Reveal.ALL else "n_vis"


class DelayError(ValueError):
    """A delay or offset out of range (the message names the value and the range)."""


def check_delay(delay_s: float) -> float:
    """``delay_s`` if it is a delay an output may use (0 s .. :data:`MAX_DELAY_S`)."""
    if not (0.0 <= delay_s <= MAX_DELAY_S):  # also refuses NaN
        raise DelayError(f"delay {delay_s!r} s is outside 0..{MAX_DELAY_S:.0f} s")
    return float(delay_s)


def check_offset(offset_ms: int) -> int:
    """``offset_ms`` if it is a board-sync offset an output may use."""
    if isinstance(offset_ms, bool) or not 0 <= offset_ms <= MAX_OFFSET_MS:
        raise DelayError(f"board-sync offset {offset_ms!r} ms is outside 0..{MAX_OFFSET_MS} ms")
    return int(offset_ms)


@dataclass(slots=True)
class DelayLine:
    """One output's release cursor over the service's message log (pure).

    ``released`` is the sequence number of the last message released (0: none);
    :meth:`push` logs a message, :meth:`release` returns the sequence numbers that
    are due at ``now``, in order.
    """

    delay_s: float = 0.0
    offset_ms: int = 0
    released: int = 0
    _pending: deque[tuple[int, float]] = field(default_factory=deque)
    _last_pushed: int = 0

    def __post_init__(self) -> None:
        check_delay(self.delay_s)
        check_offset(self.offset_ms)
        self._last_pushed = self.released

    def push(self, seq: int, ts: float) -> None:
        """Log message ``seq`` produced at table time ``ts``.

        Sequence numbers must grow; one at or below what the line already holds
        (a replay after a restart) is ignored, so nothing is released twice.
        """
        if seq <= self._last_pushed:
            return
        self._last_pushed = seq
        self._pending.append((seq, ts))

    def set_delay(self, delay_s: float) -> None:
        """Change ``D`` while running (takes effect at the next :meth:`release`)."""
        self.delay_s = check_delay(delay_s)

    def set_offset(self, offset_ms: int) -> None:
        """Change the board-sync offset while running."""
        self.offset_ms = check_offset(offset_ms)

    def due_at(self, ts: float) -> float:
        """When a message produced at ``ts`` may be released under the current settings."""
        return ts + self.delay_s + self.offset_ms / 1000.0

    def release(self, now: float) -> list[int]:
        """Release, in order, every message due at ``now``; return their sequence numbers."""
        out: list[int] = []
        pending = self._pending
        while pending and self.due_at(pending[0][1]) <= now:
            seq, _ts = pending.popleft()
            out.append(seq)
        if out:
            self.released = out[-1]
        return out

    def next_due(self) -> float | None:
        """When the next message falls due (``None``: nothing pending)."""
        return self.due_at(self._pending[0][1]) if self._pending else None

    @property
    def backlog(self) -> int:
        """Messages logged but not yet released."""
        return len(self._pending)


# --------------------------------------------------------------------------- reveal


def shown_seats(result: Mapping[str, Any] | None) -> frozenset[int] | None:
    """The seats a ``hand_result`` event shows down (``None``: the result is not known)."""
    if result is None:
        return None
    return frozenset(int(hand["seat"]) for hand in result.get("shown", []))


def _revealed(seat: int, mode: Reveal, shown: frozenset[int] | None) -> bool:
    if mode is Reveal.ALL:
        return True
    if mode in (Reveal.SHOWDOWN, Reveal.SHOWDOWN_EARLY):
        return shown is not None and seat in shown
    return False


def _hide_seat(row: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k not in SECRET_SEAT_FIELDS}


def filter_state(
    state: Mapping[str, Any], mode: Reveal, shown: frozenset[int] | None
) -> dict[str, Any]:
    """A secure ``state`` payload as an output with reveal ``mode`` may show it.

    ``shown``: the seats shown down in this hand (:func:`shown_seats`), or ``None``
    while the hand's result is not known. A hidden seat keeps its public fields
    (up cards, ``down_count``, ``showing``...) and loses every secret one.
    """
    seats = [dict(row) for row in state.get("seats", [])]
    hidden = {
        int(row["seat"]) for row in seats
        if "down" in row and not _revealed(int(row["seat"]), mode, shown)
    }
    # Equity is computed from every live hand: shown only when no hand is hidden.
    # A folded or empty seat's hidden cards are dead cards, not a live hand.
    equity_ok = not any(
        int(row["seat"]) in hidden and row.get("status") == "active" and row.get("down")
        for row in seats
    )
    out_seats: list[dict[str, Any]] = []
    for row in seats:
        if int(row["seat"]) in hidden:
            out_seats.append(_hide_seat(row))
        elif not equity_ok:
            out_seats.append({k: v for k, v in row.items() if k not in EQUITY_SEAT_FIELDS})
        else:
            out_seats.append(row)
    out = {k: v for k, v in state.items() if k != "seats"}
    if not equity_ok:
        for key in SECRET_STATE_FIELDS:
            out.pop(key, None)
    out["seats"] = out_seats
    return out


def filter_event(
    event: Mapping[str, Any], mode: Reveal, shown: frozenset[int] | None
) -> dict[str, Any]:
    """A secure ``events`` payload as an output with reveal ``mode`` may show it.

    A down card's identity stays only for a revealed seat; a burn's only in mode
    ``all``. The hand result's shown hands are public (rule: "others may show or
    muck": what was shown was seen by the room) and pass unchanged.
    """
    out = dict(event)
    kind = out.get("kind")
    hide_down = kind == "card_dealt_down" and not _revealed(int(out["seat"]), mode, shown)
    hide_burn = kind == "card_burned" and mode is not Reveal.ALL
    if hide_down or hide_burn:
        out.pop("card", None)
    return out


def filter_message(
    kind: str, payload: Mapping[str, Any], mode: Reveal, shown: frozenset[int] | None
) -> dict[str, Any] | None:
    """What an output with reveal ``mode`` passes of a secure message of ``kind``.

    ``state`` and ``event`` are filtered; every other kind (alerts, notices, reader
    health) is for the production room and never reaches a delayed output (``None``).
    """
    if kind == "state":
        return filter_state(payload, mode, shown)
    if kind == "event":
        return filter_event(payload, mode, shown)
    return None


def contains_down_card(payload: Mapping[str, Any], down_cards: Iterable[str]) -> bool:
    """True if any of ``down_cards`` appears as a *hole card* in ``payload``.

    For tests and the venue page's own guard: a state's ``down`` list, a down-card
    event's ``card`` or a ``reading``/``equity`` field all count.
    """
    secret = set(down_cards)
    for row in payload.get("seats", []) or []:
        if set(row.get("down", [])) & secret:
            return True
        if any(row.get(key) is not None for key in SECRET_SEAT_FIELDS if key != "down"):
            return True
    return payload.get("kind") == "card_dealt_down" and payload.get("card") in secret
