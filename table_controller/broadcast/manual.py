"""Manual card entry from the producer page (issue 19): the checks, the limit, the words.

The producer page can enter a card whose tag no reader reads (a dead or damaged tag):
"seat 3 down As", "burn Kd". The service sends the dealer console's own ``card``
command (docs/console.md) to the table's daemon over MQTT, as the production user,
and shows the daemon's answer. This module is the pure part (no I/O, no clock: time
comes in as a value):

* :func:`parse_entry` checks what the page sent before anything is sent to the table
  (a zone the page offers, a card of the 52-card deck, the producer's confirmation);
* :class:`EntryLimiter` keeps a page (or a script holding the producer's cookie) from
  flooding the table's console: one entry at a time, a few a minute;
* :func:`producer_words` turns the daemon's reply into a sentence a producer reads.

The daemon decides whether the entry contradicts the readers (docs/console.md,
``card_seen``...): nothing here second-guesses it.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Final

from table_controller.domain.cards import Card, CardParseError
from table_controller.domain.zones import MAX_SEATS, Zone, ZoneKind, ZoneParseError

PER_MINUTE: Final = 12
"""Manual entries accepted for sending per rolling minute, all pages together (a
dealt hand has at most 56 cards; a dead tag is rare: a dozen a minute is plenty)."""
WINDOW_S: Final = 60.0
"""The rolling window of :data:`PER_MINUTE`."""

ZONE_KINDS: Final = (ZoneKind.DOWN, ZoneKind.UP, ZoneKind.BURN, ZoneKind.BOARD)
"""Zones a producer may enter a card in: a seat's down or up cards, the burn, the
board (rule 15's community card). Not the muck: a card there is out of play."""

_RANKS: Final = {"A": "ace", "K": "king", "Q": "queen", "J": "jack", "T": "ten",
                 "9": "nine", "8": "eight", "7": "seven", "6": "six", "5": "five",
                 "4": "four", "3": "three", "2": "two"}
_SUITS: Final = {"s": "spades", "h": "hearts", "d": "diamonds", "c": "clubs"}


class EntryError(ValueError):
    """What the page sent is not a manual entry the service may send (HTTP 400)."""


class ConfirmEntryError(EntryError):
    """A well-formed entry without the producer's confirmation (HTTP 409): the
    message is the question to ask."""


@dataclass(frozen=True, slots=True)
class Entry:
    """A checked manual entry: the console ``card`` command's two fields."""

    zone: str
    card: str

    def payload(self) -> dict[str, str]:
        """The ``cmd/card`` payload (docs/console.md)."""
        return {"zone": self.zone, "card": self.card}


def zone_words(name: str) -> str:
    """``seat3.down`` -> ``seat 3 (face down)``; ``burn`` -> ``the burn``."""
    found = re.fullmatch(r"seat(\d+)\.(down|up)", name)
    if found:
        return f"seat {found.group(1)} (face {found.group(2)})"
    return {"burn": "the burn", "board": "the board", "muck": "the muck"}.get(name, name)


def card_words(code: str) -> str:
    """``As`` -> ``ace of spades`` (the page's confirmation names the card in full)."""
    return f"{_RANKS.get(code[:1], code[:1])} of {_SUITS.get(code[1:], code[1:])}"


def parse_entry(body: object) -> Entry:
    """The entry of a ``POST /api/card/<table>`` body ``{"zone", "card", "confirm"}``.

    Raises :class:`EntryError` (a field missing, unknown or of the wrong type, a zone
    the page does not offer, a card not in the deck) or :class:`ConfirmEntryError`
    (no ``"confirm": true``: the producer must have confirmed on the page).
    """
    if not isinstance(body, dict):
        raise EntryError("the body must be a JSON object")
    extra = sorted(set(body) - {"zone", "card", "confirm"})
    if extra:
        raise EntryError(f"{str(extra[0])[:40]}: unexpected field (the fields are zone,"
                         " card, confirm)")
    zone_name, code, confirm = body.get("zone"), body.get("card"), body.get("confirm", False)
    if not isinstance(zone_name, str):
        raise EntryError("choose where the card is (a seat's down or up cards, the burn"
                         " or the board)")
    try:
        zone = Zone.parse(zone_name)
    except ZoneParseError:
        raise EntryError(f"{zone_name[:40]!r} is not a place on the table") from None
    if zone.kind not in ZONE_KINDS:
        raise EntryError(f"a card cannot be entered in {zone_words(zone.name)}")
    if zone.seat is not None and not 1 <= zone.seat <= MAX_SEATS:
        raise EntryError(f"there is no seat {zone.seat}")
    if not isinstance(code, str):
        raise EntryError("choose the card's rank and suit")
    try:
        card = Card.parse(code)
    except CardParseError:
        raise EntryError(f"{code[:10]!r} is not a card of the deck (rank A K Q J T"
                         " 9-2, suit s h d c, e.g. As)") from None
    if not isinstance(confirm, bool):
        raise EntryError("confirm must be true or false")
    entry = Entry(zone.name, card.code)
    if not confirm:
        raise ConfirmEntryError(f"Enter the {card_words(entry.card)} at"
                                f" {zone_words(entry.zone)} by hand?")
    return entry


@dataclass
class EntryLimiter:
    """One entry at a time, at most ``per_minute`` in any rolling ``window_s``.

    The daemon already sheds console floods (docs/daemon.md "Console floods"); this
    keeps the producer page's own traffic small before it gets there. Pure: ``now``
    comes in from the caller.
    """

    per_minute: int = PER_MINUTE
    window_s: float = WINDOW_S
    busy: bool = False
    _sent: deque[float] = field(default_factory=deque)

    def wait(self, now: float) -> float:
        """Seconds until an entry may be sent (0: now)."""
        while self._sent and self._sent[0] <= now - self.window_s:
            self._sent.popleft()
        if self.busy:
            return 1.0
        if len(self._sent) >= self.per_minute:
            return max(self._sent[0] + self.window_s - now, 0.001)
        return 0.0

    def begin(self, now: float) -> bool:
        """Take the slot for one entry sent at ``now``; False if it must wait."""
        if self.wait(now) > 0:
            return False
        self.busy = True
        self._sent.append(now)
        return True

    def end(self) -> None:
        """The entry's answer came (or did not): the next one may go."""
        self.busy = False


_CODE_WORDS: Final = {
    "card_seen": "Refused: it contradicts what the readers see",
    "unknown_seat": "Refused: that seat is not in the hand",
    "invalid_command": "Refused: the table did not take that entry",
    "hand_over": "Refused: the hand is over",
    "journal_unavailable": "Not entered: the table cannot write its journal just now;"
                           " try again in a moment",
    "busy": "Not entered: the table is busy; try again in a moment",
    "internal_error": "The table could not say whether it took the card: check the page",
}


def producer_words(reply: dict[str, Any], entry: Entry) -> str:
    """The daemon's ``reply`` to ``entry`` as one sentence for the producer page."""
    where = zone_words(entry.zone)
    if reply.get("accepted") is True:
        return (f"Entered: the {card_words(entry.card)} at {where}, marked manual."
                " Replace its tag after the hand.")
    code = str(reply.get("code") or "")
    reason = re.sub(r"seat(\d+)\.(down|up)", lambda m: zone_words(m.group(0)),
                    str(reply.get("reason") or ""))
    head = _CODE_WORDS.get(code, f"Refused ({code or 'no code'})")
    return f"{head}. The table says: {reason}." if reason else f"{head}."
