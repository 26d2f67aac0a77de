"""Playing cards: ranks, suits and the two-character card code (``As``, ``Td``, ``2c``).

Cards are interned: there are exactly 52 :class:`Card` objects, so identity,
equality and hashing are cheap and a card can be used as a dict key anywhere.
``Card.index`` (0..51) is the seam for table-driven evaluators.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Final


class Suit(IntEnum):
    """Suits in bring-in order, low to high (RULES.md: clubs, diamonds, hearts, spades)."""

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


@dataclass(frozen=True, slots=True, order=True)
class Card:
    """One of the 52 cards. ``rank`` is 2..14 (ace high), ``suit`` a :class:`Suit`.

    Ordering is by rank, then suit: exactly the bring-in order of rule 1
    (the lowest card by suit brings it in).
    """

    rank: int
    suit: Suit

    @property
    def index(self) -> int:
        """Dense index 0..51: ``(rank - 2) * 4 + suit``."""
        return (self.rank - 2) * 4 + int(self.suit)

    @property
    def code(self) -> str:
        """The two-character code, e.g. ``As``."""
        return RANK_LETTERS[self.rank - 2] + self.suit.letter

    @property
    def name(self) -> str:
        """Readable name for dealer messages, e.g. ``ace of spades``."""
        return f"{RANK_NAMES[self.rank][0]} of {self.suit.noun}"

    def __hash__(self) -> int:
        # Cards key every dict of the engine: the generated field-tuple hash (which
        # hashes the Suit enum in Python) was a tenth of the engine's time.
        return self.rank * 4 + self.suit

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


def _make_deck() -> tuple[Card, ...]:
    return tuple(Card(rank, suit) for rank in range(2, 15) for suit in Suit)


DECK: Final[tuple[Card, ...]] = _make_deck()
"""The 52 cards in index order (2c 2d 2h 2s 3c ... As)."""

_BY_CODE: Final[dict[str, Card]] = {card.code: card for card in DECK}


def parse_cards(text: str) -> list[Card]:
    """Parse concatenated or space-separated codes: ``"AsKd"`` or ``"As Kd"``."""
    compact = "".join(text.split())
    if len(compact) % 2:
        raise CardParseError(f"bad card list {text!r}: odd number of characters")
    return [Card.parse(compact[i : i + 2]) for i in range(0, len(compact), 2)]
