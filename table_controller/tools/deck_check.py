"""Checking a deck against its file, as a pure state machine: antenna snapshots in, lines out.

The operator passes a deck over one antenna. Every tag that comes onto the antenna
(and was not there in the previous snapshot) is one read:

* a card of the deck, first read: counted (``Kd (17/52)``);
* a card of the deck read again after it left the antenna: *extra* (a card passed
  twice; a flaky antenna can also do it, so check that card again);
* a tag not in the deck: *foreign*, naming the other known deck and card it
  belongs to, or "in no known deck" (a card from another box, or a replaced tag).

:meth:`DeckCheck.report` gives missing, extra and foreign; the deck is *clean* when
nothing is missing, extra or foreign. No line or report holds a tag UID (foreign
tags of no known deck are only counted).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from table_controller.domain.cards import Card
from table_controller.table.deck import Deck, RegisteredCard
from table_controller.tools.deck_register import DECK_SIZE, REGISTRATION_ORDER, Line

__all__ = ["DeckCheck", "render_report"]


class DeckCheck:
    """The check of ``deck``; ``known`` looks a tag up in every other known deck."""

    def __init__(
        self,
        deck: Deck,
        known: Callable[[str], RegisteredCard | None] = lambda _uid: None,
    ) -> None:
        self.deck = deck
        self._known = known
        self._present: frozenset[str] = frozenset()
        self._reads: dict[Card, int] = {}
        self._foreign: dict[str, RegisteredCard | None] = {}

    @property
    def seen(self) -> int:
        """How many different cards of the deck were read."""
        return len(self._reads)

    @property
    def complete(self) -> bool:
        """True once all 52 cards of the deck were read."""
        return len(self._reads) == DECK_SIZE

    @property
    def clean(self) -> bool:
        """Complete, and nothing extra or foreign."""
        return self.complete and not self._foreign and all(n == 1 for n in self._reads.values())

    def snapshot(self, uids: Iterable[str]) -> list[Line]:
        """The antenna now reports ``uids``; every tag new since the last snapshot is a read."""
        now = frozenset(uid.upper() for uid in uids)
        new = sorted(now - self._present)
        self._present = now
        lines: list[Line] = []
        for uid in new:
            lines.append(self._read(uid))
        return lines

    def _read(self, uid: str) -> Line:
        card = self.deck.card_for(uid)
        if card is not None:
            reads = self._reads.get(card, 0) + 1
            self._reads[card] = reads
            if reads == 1:
                return Line("ok", f"{card.code} ({len(self._reads)}/{DECK_SIZE})")
            return Line("refused", f"extra: {card.code} read {reads} times (passed twice?)")
        first = uid not in self._foreign
        other = self._known(uid) if first else self._foreign[uid]
        self._foreign[uid] = other
        again = "" if first else " (again)"
        if other is None:
            return Line("refused", f"foreign: a tag in no known deck{again}: set the card aside")
        return Line("refused", f"foreign: {other.card.code} of deck {other.deck!r}{again}:"
                    " set the card aside")

    def report(self) -> dict[str, Any]:
        """Missing, extra and foreign cards, as the ``--json`` output (no UID)."""
        foreign_known = sorted(
            ({"deck": found.deck, "card": found.card.code}
             for found in self._foreign.values() if found is not None),
            key=lambda item: (item["deck"], REGISTRATION_ORDER.index(Card.parse(item["card"]))),
        )
        return {
            "deck": self.deck.name,
            "complete": self.complete,
            "clean": self.clean,
            "seen": len(self._reads),
            "missing": [card.code for card in REGISTRATION_ORDER if card not in self._reads],
            "extra": [{"card": card.code, "reads": self._reads[card]}
                      for card in REGISTRATION_ORDER if self._reads.get(card, 0) > 1],
            "foreign": foreign_known,
            "foreign_unknown": sum(1 for found in self._foreign.values() if found is None),
        }


def render_report(report: dict[str, Any]) -> list[str]:
    """The readable summary of :meth:`DeckCheck.report`."""
    verdict = "complete and clean" if report["clean"] else "NOT clean"
    lines = [f"deck {report['deck']}: {report['seen']}/{DECK_SIZE} cards read, {verdict}"]
    if report["missing"]:
        lines.append(f"missing {len(report['missing'])}: {' '.join(report['missing'])}")
    if report["extra"]:
        lines.append("extra: " + " ".join(f"{item['card']} x{item['reads']}"
                                          for item in report["extra"]))
    if report["foreign"]:
        lines.append("foreign: " + ", ".join(f"{item['card']} of deck {item['deck']!r}"
                                             for item in report["foreign"]))
    if report["foreign_unknown"]:
        lines.append(f"foreign: {report['foreign_unknown']} tag(s) in no known deck")
    return lines
