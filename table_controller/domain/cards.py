"""Playing cards: ranks, suits and the two-character card code (``As``, ``Td``, ``2c``).

Cards are interned: there are exactly 52 :class:`Card` objects, so identity,
equality and hashing are cheap and a card can be used as a dict key anywhere.
``Card.index`` (0..51) is the seam for table-driven evaluators.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Final


class Suit(IntEnum):
    """Suits in bring-in order, low to high (docs/rules.md: clubs, diamonds, hearts, spades)."""

    CLUBS = 0
    DIAMONDS = 1
    HEARTS = 2
    SPADES = 3

    @property
    def letter(self) -> str:
        """The one-letter code used in card codes: ``c d h s``."""
        return "cdhs"[self]

    @property
    def noun(self) -> str:
        """The plural English name, for dealer messages."""
        return ("clubs", "diamonds", "hearts", "spades")[self]


RANK_LETTERS: Final = "23456789TJQKA"
"""Rank letters from deuce (rank 2) to ace (rank 14)."""

RANK_NAMES: Final[dict[int, tuple[str, str]]] = {
    2: ("deuce", "deuces"),
    3: ("three", "threes"),
    4: ("four", "fours"),
    5: ("five", "fives"),
    6: ("six", "sixes"),
    7: ("seven", "sevens"),
    8: ("eight", "eights"),
    9: ("nine", "nines"),
    10: ("ten", "tens"),
    11: ("jack", "jacks"),
    12: ("queen", "queens"),
    13: ("king", "kings"),
    14: ("ace", "aces"),
}
"""Singular and plural English rank names, keyed by rank (2..14)."""


class CardParseError(ValueError):
    """A card code is not a rank letter followed by a suit letter."""


class Card:
    """One of the 52 cards. ``rank`` is 2..14 (ace high), ``suit`` a :class:`Suit`.

    Ordering is by rank, then suit: exactly the bring-in order of rule 1
    (the lowest card by suit brings it in).

    Interned: ``Card(rank, suit)`` returns the one object of :data:`DECK`, so
    equality is identity and the hash is the object's own. Both are then done in
    C: cards key every dict of the engine, and a Python ``__hash__`` (or the
    dataclass's field-tuple hash) was a tenth of its time (issue 10). Immutable,
    like the frozen dataclass it replaces; copies and pickles come back interned.
    """

    __slots__ = ("code", "index", "rank", "suit")

    rank: int
    suit: Suit
    index: int
    """Dense index 0..51: ``(rank - 2) * 4 + suit`` (the seam for table-driven evaluators)."""
    code: str
    """The two-character code, e.g. ``As``."""

    def __new__(cls, rank: int, suit: Suit | int) -> Card:
        if not (isinstance(rank, int) and 2 <= rank <= 14 and suit in _SUITS):
            raise ValueError(f"no card of rank {rank!r} and suit {suit!r}:"
                             " ranks are 2..14 (ace high), suits 0..3")
        if _INTERNED:
            return _INTERNED[(rank - 2) * 4 + int(suit)]
        card = object.__new__(cls)  # building DECK itself, once
        for name, value in (("rank", rank), ("suit", Suit(suit)),
                            ("index", (rank - 2) * 4 + int(suit)),
                            ("code", RANK_LETTERS[rank - 2] + Suit(suit).letter)):
            object.__setattr__(card, name, value)
        return card

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}: cards are immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}: cards are immutable")

    def __reduce__(self) -> tuple[type[Card], tuple[int, int]]:
        # pickle, copy and deepcopy all rebuild through __new__: the interned object.
        return (Card, (self.rank, int(self.suit)))

    def __copy__(self) -> Card:
        return self

    def __deepcopy__(self, memo: object) -> Card:
        return self

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Card):
            return NotImplemented
        return self.index < other.index

    def __le__(self, other: object) -> bool:
        if not isinstance(other, Card):
            return NotImplemented
        return self.index <= other.index

    def __gt__(self, other: object) -> bool:
        if not isinstance(other, Card):
            return NotImplemented
        return self.index > other.index

    def __ge__(self, other: object) -> bool:
        if not isinstance(other, Card):
            return NotImplemented
        return self.index >= other.index

    @property
    def name(self) -> str:
        """Readable name for dealer messages, e.g. ``ace of spades``."""
        return f"{RANK_NAMES[self.rank][0]} of {self.suit.noun}"

    def __str__(self) -> str:
        return self.code

    def __repr__(self) -> str:
        return f"Card({self.code})"

    @staticmethod
    def parse(code: str) -> Card:
        """Return the card for ``code`` (``As``, ``td`` and ``10d`` are accepted).

        Raises :class:`CardParseError` naming the bad code.
        """
        card = _BY_CODE.get(code)
        if card is not None:
            return card
        text = code.strip()
        if text[:2] == "10":
            text = "T" + text[2:]
        if len(text) == 2:
            card = _BY_CODE.get(text[0].upper() + text[1].lower())
            if card is not None:
                return card
        raise CardParseError(
            f"bad card code {code!r}: expected a rank (2-9 T J Q K A) then a suit (c d h s)"
        )

    @staticmethod
    def from_index(index: int) -> Card:
        """Return the card whose :attr:`index` is ``index`` (0..51)."""
        return DECK[index]


_SUITS: Final = frozenset(Suit)
_INTERNED: list[Card] = []
"""The 52 cards once built; empty while :data:`DECK` is being made."""


def _make_deck() -> tuple[Card, ...]:
    return tuple(Card(rank, suit) for rank in range(2, 15) for suit in Suit)


DECK: Final[tuple[Card, ...]] = _make_deck()
_INTERNED.extend(DECK)
"""The 52 cards in index order (2c 2d 2h 2s 3c ... As)."""

_BY_CODE: Final[dict[str, Card]] = {card.code: card for card in DECK}


def parse_cards(text: str) -> list[Card]:
    """Parse concatenated or space-separated codes: ``"AsKd"`` or ``"As Kd"``."""
    compact = "".join(text.split())
    if len(compact) % 2:
        raise CardParseError(f"bad card list {text!r}: odd number of characters")
    return [Card.parse(compact[i : i + 2]) for i in range(0, len(compact), 2)]
