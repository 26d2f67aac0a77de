"""Verifying a deck's faces, as a pure state machine: the faces asked, tag reads in, lines out.

``deck check`` proves that the 52 tags are there; it cannot see a face swap (a
registration where two cards were passed in each other's place stores the 7s's tag
under Kd and the other way round: every tag is present, two faces are wrong). Here the
operator is asked for given faces (a random sample, or all 52 in a random order), finds
the card with that face printed on it and puts it on the antenna; the machine confirms
that its tag is the asked face in the deck file.

Inputs, as for :class:`~table_controller.tools.deck_register.Registration`: the
antenna's whole tag set (:meth:`DeckVerify.inventory`), :meth:`~DeckVerify.settle`
once the antenna has been quiet, and the operator's lines (:meth:`~DeckVerify.answer`:
``skip``, ``done``, ``help``). At ``settle``, over the tags new since they were last
decided:

* one tag, the asked face: confirmed; the next face is asked;
* one tag of this deck but another card: a *mismatch* (the face printed and the deck
  file disagree): named (``asked Kd, this tag is 7s in the file``), recorded, and the
  next face asked. Two mismatches that name each other are reported as a swap;
* one tag not in this deck: *foreign*, naming the other known deck and card if any;
  the same face is asked again (the right card is still to find);
* several tags at once: refused, one card at a time;
* a card lifted before the antenna settled: said so, nothing decided.

No line or report holds a tag UID.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from table_controller.domain.cards import Card
from table_controller.table.deck import Deck, RegisteredCard
from table_controller.tools.deck_register import Line

__all__ = ["DeckVerify", "render_verify_report"]

HELP = "commands: skip (this face's card is not here: leave it unverified), done, help"


class DeckVerify:
    """The face check of ``deck`` over ``faces`` (asked in that order); ``known`` looks
    a tag up in every other known deck."""

    def __init__(
        self,
        deck: Deck,
        faces: Sequence[Card],
        known: Callable[[str], RegisteredCard | None] = lambda _uid: None,
    ) -> None:
        if not faces:
            raise ValueError("verify at least one face")
        if len(set(faces)) != len(faces):
            raise ValueError("a face asked twice")
        self.deck = deck
        self.faces = tuple(faces)
        self._known = known
        self._index = 0
        self._present: set[str] = set()
        self._decided: set[str] = set()
        self._lifted: set[str] = set()
        self._confirmed: list[Card] = []
        self._mismatched: dict[Card, Card] = {}
        self._skipped: list[Card] = []
        self._foreign = 0
        self._stopped = False

    # -- state ------------------------------------------------------------------------------

    @property
    def finished(self) -> bool:
        """Every face answered, or the operator said ``done``."""
        return self._stopped or self._index >= len(self.faces)

    @property
    def asked(self) -> Card | None:
        """The face to put on the antenna now (None when finished)."""
        return None if self.finished else self.faces[self._index]

    @property
    def clean(self) -> bool:
        """Every face asked was confirmed."""
        return len(self._confirmed) == len(self.faces)

    def prompt(self) -> Line:
        """What the operator should do now."""
        progress = f"[{self._index}/{len(self.faces)}]"
        card = self.asked
        if card is None:
            return Line("prompt", f"finished {progress}")
        return Line("prompt", f"put {card.code} ({card.name}) on the antenna {progress}")

    # -- antenna ----------------------------------------------------------------------------

    def inventory(self, uids: Iterable[str]) -> None:
        """The antenna's tags now."""
        now = {uid.upper() for uid in uids}
        self._lifted |= self._present - now - self._decided
        self._present = now
        self._decided &= now

    def settle(self) -> list[Line]:
        """The antenna has been quiet: decide about the tags new since the last time."""
        lifted, self._lifted = len(self._lifted - self._present), set()
        if self.finished:
            return []
        lines = [] if not lifted else [Line(
            "refused", "a card was lifted before the antenna settled: put it back and hold it"
            " still until its line appears")]
        new = sorted(self._present - self._decided)
        if not new:
            return [*lines, self.prompt()] if lines else []
        self._decided.update(new)
        if len(new) > 1:
            return [*lines, Line("refused", f"{len(new)} cards read at once: one card at a"
                                 " time"), self.prompt()]
        return [*lines, *self._one(new[0])]

    def _one(self, uid: str) -> list[Line]:
        asked = self.asked
        assert asked is not None  # not finished
        card = self.deck.card_for(uid)
        if card is None:
            self._foreign += 1
            other = self._known(uid)
            where = ("in no known deck" if other is None
                     else f"{other.card.code} of deck {other.deck!r}")
            return [Line("refused", f"not a card of deck {self.deck.name!r}: this tag is {where};"
                         f" set it aside and find {asked.code} of this deck"), self.prompt()]
        if card == asked:
            self._confirmed.append(asked)
            self._index += 1
            return [Line("ok", f"{asked.code} confirmed"), *self._then()]
        self._mismatched[asked] = card
        self._index += 1
        lines = [Line("refused", f"MISMATCH: asked {asked.code}, but this card's tag is"
                      f" {card.code} in {self.deck.path}: the printed face and the deck file"
                      " disagree")]
        if self._mismatched.get(card) == asked:
            lines.append(Line("refused", f"{asked.code} and {card.code} are swapped in the deck"
                              " file: register the deck again"))
        return [*lines, *self._then()]

    def _then(self) -> list[Line]:
        if self.finished:
            return [self._done_line()]
        return [self.prompt()]

    def _done_line(self) -> Line:
        verdict = "all confirmed" if self.clean else "NOT clean"
        return Line("done", f"{len(self._confirmed)}/{len(self.faces)} faces confirmed:"
                    f" {verdict}")

    # -- operator ---------------------------------------------------------------------------

    def answer(self, text: str) -> list[Line]:
        """A command typed by the operator."""
        word = text.strip().lower()
        if self.finished:
            return [Line("error", "verification is finished")]
        if not word:
            return [self.prompt()]
        if word == "help":
            return [Line("note", HELP), self.prompt()]
        if word == "skip":
            asked = self.asked
            assert asked is not None
            self._skipped.append(asked)
            self._index += 1
            return [Line("note", f"{asked.code} skipped: not verified"), *self._then()]
        if word == "done":
            self._stopped = True
            return [self._done_line()]
        return [Line("error", f"unknown command {text.strip()!r}; {HELP}"), self.prompt()]

    # -- the outcome ------------------------------------------------------------------------

    def report(self) -> dict[str, Any]:
        """What was verified, as the ``--json`` output (no UID)."""
        answered = {*self._confirmed, *self._mismatched, *self._skipped}
        mismatches = [{"asked": asked.code, "tag_is": found.code}
                      for asked, found in self._mismatched.items()]
        swaps = sorted({tuple(sorted((a.code, b.code))) for a, b in self._mismatched.items()
                        if self._mismatched.get(b) == a})
        return {
            "deck": self.deck.name,
            "asked": len(self.faces),
            "confirmed": [card.code for card in self._confirmed],
            "mismatched": mismatches,
            "swapped": [list(pair) for pair in swaps],
            "skipped": [card.code for card in self._skipped],
            "not_asked": [card.code for card in self.faces if card not in answered],
            "foreign_reads": self._foreign,
            "clean": self.clean,
        }


def render_verify_report(report: dict[str, Any]) -> list[str]:
    """The readable summary of :meth:`DeckVerify.report`."""
    verdict = "every face confirmed" if report["clean"] else "NOT clean"
    lines = [f"deck {report['deck']}: {len(report['confirmed'])}/{report['asked']} faces"
             f" confirmed, {verdict}"]
    if report["mismatched"]:
        lines.append("mismatched: " + ", ".join(
            f"{item['asked']} is {item['tag_is']} in the file" for item in report["mismatched"]))
    for first, second in report["swapped"]:
        lines.append(f"swapped: {first} <-> {second}: register the deck again")
    if report["skipped"]:
        lines.append(f"skipped {len(report['skipped'])}: {' '.join(report['skipped'])}")
    if report["not_asked"]:
        lines.append(f"not reached {len(report['not_asked'])}: {' '.join(report['not_asked'])}")
    if report["foreign_reads"]:
        lines.append(f"cards of other decks read: {report['foreign_reads']}")
    return lines
