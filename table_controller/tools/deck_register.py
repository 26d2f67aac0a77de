"""Deck registration as a pure state machine: tag reads and operator answers in, lines out.

Theory of operation
-------------------
The operator passes the 52 cards of a new deck, one at a time, over one antenna.
The I/O side (:mod:`table_controller.tools.deck_command`) feeds this machine with
what the antenna sees (:meth:`Registration.arrived`, :meth:`~Registration.left`,
:meth:`~Registration.inventory`), calls :meth:`~Registration.settle` once the
antenna has been quiet for a moment, and passes every line the operator types to
:meth:`~Registration.answer`. Each call returns the :class:`Line` s to show. No
clock, no I/O: the hypothesis tests drive it directly.

Decisions are taken at ``settle``, over the tags that arrived since they were last
decided ("new" tags); a tag lying still on the antenna is decided once:

* one new tag, the expected card (or, with ``any_order``, a face typed next):
  registered; the prompt moves to the next card not registered yet;
* one new tag already registered in this session: a double read, ignored with a
  note (a card passed twice, or a reader dropout);
* one new tag that another known deck has: refused, naming that deck and card
  (a tag belongs to one deck only, or the daemon could not tell the decks apart);
* two or more new tags together: all refused ("pass one at a time"); they count
  again only after they have left the antenna and come back;
* a tag that left before it was decided (the card lifted before the antenna
  settled): nothing is registered, and the next ``settle`` says so, so the operator
  knows to pass that card again rather than believe it was taken.

The operator's commands: ``back`` (unregister the last card and expect it again),
``skip`` (leave the expected card missing and go on), ``goto CARD`` (expect CARD
next, unregistering it if it was registered: re-pass a card; with ``any_order`` it
only unregisters), ``done`` (finish
now; the missing faces are named), ``help``. With ``any_order`` the operator
types the face of each card read (``Ah``, ``10h`` or ``Th``); ``skip`` then sets
the card just read aside.

Secrecy: no line ever contains a tag UID. The deck built (:meth:`cards`) is the
secret map; only the file writer sees it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Final, Literal, NamedTuple

from table_controller.domain.cards import Card, CardParseError, Suit
from table_controller.table.deck import RegisteredCard, normalize_uid

__all__ = ["REGISTRATION_ORDER", "Line", "Registration"]

REGISTRATION_ORDER: Final[tuple[Card, ...]] = tuple(
    Card.parse(Card(rank, suit).code) for suit in Suit for rank in range(2, 15)
)
"""The order the cards are asked for: 2c..Ac, 2d..Ad, 2h..Ah, 2s..As (a new deck's box)."""

DECK_SIZE: Final = len(REGISTRATION_ORDER)

LineKind = Literal["ok", "note", "refused", "prompt", "error", "done"]


class Line(NamedTuple):
    """One line for the operator: its kind (for colour and tests) and its text."""

    kind: LineKind
    text: str


HELP: Final = (
    "commands: back (unregister the last card), skip (leave the expected card missing),"
    " goto CARD (expect CARD next; re-pass it), done (finish now), help"
)


class Registration:
    """The registration of one deck (module docstring).

    ``known`` looks a tag up in the other decks (e.g. ``DeckRegistry.lookup``);
    ``any_order``: the operator types each card's face instead of following
    :data:`REGISTRATION_ORDER`.
    """

    def __init__(
        self,
        *,
        any_order: bool = False,
        known: Callable[[str], RegisteredCard | None] = lambda _uid: None,
    ) -> None:
        self.any_order = any_order
        self._known = known
        self._cards: dict[Card, str] = {}
        self._owner: dict[str, Card] = {}
        self._history: list[Card] = []
        self._cursor: Card | None = None if any_order else REGISTRATION_ORDER[0]
        self._present: set[str] = set()
        self._decided: set[str] = set()
        self._pending: str | None = None
        self._finished = False
        self._lifted: set[str] = set()

    # -- what the machine knows ----------------------------------------------------

    @property
    def finished(self) -> bool:
        """True once all 52 are registered or the operator said ``done``."""
        return self._finished

    @property
    def complete(self) -> bool:
        """True when every card of the deck has its tag."""
        return len(self._cards) == DECK_SIZE

    @property
    def registered(self) -> int:
        """How many cards have a tag."""
        return len(self._cards)

    @property
    def expected(self) -> Card | None:
        """The card to pass next (None with ``any_order`` or when finished)."""
        return None if self._finished else self._cursor

    @property
    def waiting_for_face(self) -> bool:
        """True (``any_order``) while a card was read and its face is not typed yet."""
        return self._pending is not None

    def missing(self) -> list[Card]:
        """The cards without a tag, in registration order."""
        return [card for card in REGISTRATION_ORDER if card not in self._cards]

    def cards(self) -> Mapping[Card, str]:
        """The card -> UID map so far (secret: for the deck file writer only)."""
        return dict(self._cards)

    def prompt(self) -> Line:
        """What the operator should do now."""
        progress = f"[{len(self._cards)}/{DECK_SIZE}]"
        if self._finished:
            return Line("prompt", f"finished {progress}")
        if self._pending is not None:
            return Line("prompt", f"type the face of the card just read (e.g. Ah, 10h) {progress}")
        if self._cursor is None:
            return Line("prompt", f"pass any card not registered yet {progress}")
        return Line("prompt", f"pass {self._cursor.code} ({self._cursor.name}) {progress}")

    def preload(self, cards: Mapping[Card, str]) -> list[Line]:
        """Start from cards registered before (a partial file, ``--resume``).

        Raises ValueError if a UID is given twice (the caller has checked each
        UID and the other decks); the lines say where the registration resumes.
        """
        if self._cards:
            raise ValueError("preload only before the first card")
        uids = [uid.upper() for uid in cards.values()]
        if len(set(uids)) != len(uids):
            raise ValueError("the same tag for two cards")
        for card in REGISTRATION_ORDER:
            if card in cards:
                uid = cards[card].upper()
                self._cards[card] = uid
                self._owner[uid] = card
                self._history.append(card)
        first = self.missing()
        return self._then([Line("note", f"resumed with {len(self._cards)}/{DECK_SIZE} cards")],
                          first[0] if first else None)

    # -- antenna inputs ------------------------------------------------------------------

    def arrived(self, uid: str) -> None:
        """A tag came onto the antenna (decided at the next :meth:`settle`)."""
        self._present.add(uid.upper())

    def left(self, uid: str) -> None:
        """A tag left the antenna: if it comes back it counts as a new read."""
        upper = uid.upper()
        if upper in self._present and upper not in self._decided:
            self._lifted.add(upper)
        self._present.discard(upper)
        self._decided.discard(upper)

    def inventory(self, uids: Iterable[str]) -> None:
        """The reader's full list of the antenna's tags (after a reconnect or a gap)."""
        now = {uid.upper() for uid in uids}
        self._lifted |= self._present - now - self._decided
        self._present = now
        self._decided &= self._present

    def settle(self) -> list[Line]:
        """The antenna has been quiet: decide about the tags read since the last time."""
        # A tag back on the antenna by now was a reader dropout, not a lifted card.
        lifted, self._lifted = len(self._lifted - self._present), set()
        if self._finished:
            return []
        warning = [] if not lifted else [Line(
            "refused", ("a card was" if lifted == 1 else f"{lifted} cards were")
            + " lifted before the antenna settled: nothing registered for it; hold each"
            " card still until its line appears, and pass it again")]
        new = sorted(self._present - self._decided)
        if not new:
            return [*warning, self.prompt()] if warning else []
        self._decided.update(new)
        if len(new) > 1:
            return [
                *warning,
                Line("refused", f"{len(new)} cards read at once: take them all away and pass"
                     " one card at a time"),
                self.prompt(),
            ]
        return [*warning, *self._one_tag(new[0])]

    def _one_tag(self, uid: str) -> list[Line]:
        try:
            normalize_uid(uid)
        except ValueError as err:
            return [Line("refused", f"this card's tag cannot be in a deck file ({err}):"
                         " set the card aside"), self.prompt()]
        registered = self._owner.get(uid)
        if registered is not None:
            return [Line("note", f"{registered.code} read again: ignored (already registered)"),
                    self.prompt()]
        other = self._known(uid)
        if other is not None:
            return [Line("refused", f"this tag is already {other.card.code} of deck"
                         f" {other.deck!r}: set the card aside (a tag can be in one deck only)"),
                    self.prompt()]
        if self.any_order:
            if self._pending is not None:
                return [Line("refused", "type the face of the card read before (or 'skip') first;"
                             " then pass this card again"), self.prompt()]
            self._pending = uid
            return [self.prompt()]
        assert self._cursor is not None  # not finished, ordered mode
        return self._assign(self._cursor, uid)

    def _assign(self, card: Card, uid: str) -> list[Line]:
        self._cards[card] = uid
        self._owner[uid] = card
        self._history.append(card)
        return self._then([Line("ok", f"{card.code} registered ({len(self._cards)}/{DECK_SIZE})")],
                          self._next_missing(card))

    def _then(self, lines: list[Line], following: Card | None) -> list[Line]:
        """After cards were registered: finish if all are, else expect ``following``."""
        if self.complete:
            self._finished = True
            self._cursor = None
            return [*lines, Line("done", f"all {DECK_SIZE} cards registered")]
        if not self.any_order:
            self._cursor = following
        return [*lines, self.prompt()]

    def _next_missing(self, after: Card) -> Card | None:
        start = REGISTRATION_ORDER.index(after)
        for step in range(1, DECK_SIZE + 1):
            card = REGISTRATION_ORDER[(start + step) % DECK_SIZE]
            if card not in self._cards:
                return card
        return None

    def _unregister(self, card: Card) -> None:
        uid = self._cards.pop(card)
        del self._owner[uid]
        self._history.remove(card)
        # The tag may still lie on the antenna: it counts again only once it has
        # left and come back, as for any other read.

    # -- operator inputs -------------------------------------------------------------------

    def answer(self, text: str) -> list[Line]:
        """A line typed by the operator: a command, or (``any_order``) a card's face."""
        words = text.split()
        if self._finished:
            return [Line("error", "registration is finished")]
        if not words:
            return [self.prompt()]
        command = words[0].lower()
        if command == "help":
            return [Line("note", HELP), self.prompt()]
        if command == "done":
            self._finished = True
            self._pending = None
            missing = self.missing()
            if not missing:
                return [Line("done", f"all {DECK_SIZE} cards registered")]
            return [Line("done", f"stopped with {len(self._cards)}/{DECK_SIZE} cards; missing"
                         f" {len(missing)}: {' '.join(card.code for card in missing)}")]
        if command == "back" and len(words) == 1:
            return self._back()
        if command == "skip" and len(words) == 1:
            return self._skip()
        if command == "goto" and len(words) == 2:
            return self._goto(words[1])
        if self.any_order and len(words) == 1:
            return self._face(words[0])
        return [Line("error", f"unknown command {text.strip()!r}; {HELP}")]

    def _back(self) -> list[Line]:
        if self._pending is not None:
            self._pending = None
            return [Line("note", "the card just read is set aside: pass it again"),
                    self.prompt()]
        if not self._history:
            return [Line("error", "nothing registered yet"), self.prompt()]
        card = self._history[-1]
        self._unregister(card)
        if not self.any_order:
            self._cursor = card
        return [Line("note", f"{card.code} unregistered: pass it again"), self.prompt()]

    def _skip(self) -> list[Line]:
        if self.any_order:
            if self._pending is None:
                return [Line("error", "no card waiting for its face"), self.prompt()]
            self._pending = None
            return [Line("note", "the card just read is set aside"), self.prompt()]
        assert self._cursor is not None
        skipped = self._cursor
        following = self._next_missing(skipped)
        if following is None or following == skipped:
            return [Line("error", f"{skipped.code} is the only card left: pass it or type done"),
                    self.prompt()]
        self._cursor = following
        return [Line("note", f"{skipped.code} skipped: it stays missing until passed"
                     f" (goto {skipped.code})"), self.prompt()]

    def _goto(self, text: str) -> list[Line]:
        try:
            card = Card.parse(text)
        except CardParseError as err:
            return [Line("error", str(err)), self.prompt()]
        lines: list[Line] = []
        if card in self._cards:
            self._unregister(card)
            lines.append(Line("note", f"{card.code} unregistered: pass it again"))
        if not self.any_order:
            self._cursor = card
        return [*lines, self.prompt()]

    def _face(self, text: str) -> list[Line]:
        if self._pending is None:
            return [Line("error", "no card waiting for its face: pass a card first"),
                    self.prompt()]
        try:
            card = Card.parse(text)
        except CardParseError as err:
            return [Line("error", str(err)), self.prompt()]
        if card in self._cards:
            return [Line("error", f"{card.code} is already registered to another tag: check the"
                         f" face and type it again ('goto {card.code}' unregisters the other)"),
                    self.prompt()]
        uid, self._pending = self._pending, None
        return self._assign(card, uid)
