"""Decks: which RFID tag UID is which card.

A deck file maps each of the 52 card codes to the UID of the tag glued into
that card (format in ``hardware/README.md``). A table may use several decks
(two-deck games swap decks between hands); :class:`DeckRegistry` joins them
into one UID -> (card, deck) lookup and rejects a UID registered twice.

The UID-to-card map is secret: anyone holding it can read hole cards off the
backs of the cards with a phone. So no ``repr``/``str`` here prints it, error
messages name the file and card code but never the UID, and nothing is logged
about UIDs at info level.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, NamedTuple

import structlog
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from table_controller.domain.cards import DECK, Card, CardParseError
from table_controller.table.config_file import (
    ConfigError,
    KeyedValueError,
    error_from_validation,
    read_toml,
)

__all__ = [
    "UID_BYTE_LENGTHS",
    "ConfigError",
    "Deck",
    "DeckRegistry",
    "RegisteredCard",
    "deck_file_exposure",
    "load_deck",
    "load_decks",
    "normalize_uid",
    "valid_deck_name",
]

_log = structlog.get_logger(__name__)

UID_BYTE_LENGTHS: Final = frozenset({4, 7, 8, 10})
"""Tag UID sizes: ISO14443A single/double/triple size (4, 7, 10) and ISO15693 (8)."""

_DECK_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,31}")
_HEX_DIGITS = frozenset("0123456789ABCDEF")


def valid_deck_name(name: str) -> bool:
    """True if ``name`` can name a deck: 1-32 letters, digits, ``_ . -``, not starting
    with a punctuation mark (it appears in zone events and topics' payloads)."""
    return _DECK_NAME.fullmatch(name) is not None


def normalize_uid(text: str) -> str:
    """Return ``text`` as a canonical UID (uppercase hex of 4, 7, 8 or 10 bytes).

    Raises ValueError describing the problem without echoing the UID (it may
    be a typo of a real, secret one).
    """
    uid = text.strip().upper()
    for position, char in enumerate(uid, start=1):
        if char not in _HEX_DIGITS:
            raise ValueError(f"UID has a non-hex character at position {position}")
    if len(uid) % 2 or len(uid) // 2 not in UID_BYTE_LENGTHS:
        raise ValueError(
            f"UID must be 4, 7, 8 or 10 bytes (8, 14, 16 or 20 hex digits), got {len(uid)} digits"
        )
    return uid


class RegisteredCard(NamedTuple):
    """What a registered tag is: the card and the name of its deck."""

    card: Card
    deck: str


class _DeckFile(BaseModel):
    """The schema of a deck file; checks happen here so errors carry their key."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str | None = Field(default=None)
    cards: dict[str, str]

    @model_validator(mode="after")
    def _check(self) -> _DeckFile:
        if self.name is not None and not _DECK_NAME.fullmatch(self.name):
            raise KeyedValueError(
                "name",
                "deck name must be 1-32 letters, digits, '_', '.' or '-', starting with a"
                " letter or digit",
            )
        owner: dict[str, str] = {}
        for code, raw_uid in self.cards.items():
            key = f"cards.{code}"
            try:
                card = Card.parse(code)
            except CardParseError as err:
                raise KeyedValueError(key, str(err)) from None
            if card.code != code:
                # Only the canonical spelling: "as" and "As" in one file would
                # otherwise be two keys for one card.
                raise KeyedValueError(key, f"write card code {code!r} as {card.code!r}")
            try:
                uid = normalize_uid(raw_uid)
            except ValueError as err:
                raise KeyedValueError(key, str(err)) from None
            if uid in owner:
                raise KeyedValueError(key, f"same UID as cards.{owner[uid]}")
            owner[uid] = code
        missing = [card.code for card in DECK if card.code not in self.cards]
        if missing:
            raise KeyedValueError(
                "cards",
                f"a deck needs all 52 cards; missing {len(missing)}: {' '.join(missing)}",
            )
        return self


@dataclass(frozen=True, slots=True)
class Deck:
    """One physical deck: its name, the file it came from, and its UID -> card map.

    The map is kept out of ``repr``; use :meth:`card_for` / :meth:`uid_for`.
    """

    name: str
    path: str
    _cards: Mapping[str, Card] = field(repr=False)

    def card_for(self, uid: str) -> Card | None:
        """The card whose tag has ``uid``, or None if the tag is not in this deck."""
        return self._cards.get(uid.upper())

    def uid_for(self, card: Card) -> str:
        """The UID of ``card``'s tag (for simulators and the reader emulator)."""
        for uid, known in self._cards.items():
            if known == card:  # cards are interned: equal is identical
                return uid
        raise KeyError(card.code)  # unreachable for a validated deck: all 52 are present

    def uids(self) -> Iterator[str]:
        """Every UID of this deck (secret: for the registry and simulators only)."""
        return iter(self._cards)

    def __len__(self) -> int:
        return len(self._cards)


def deck_file_exposure(path: Path | str) -> str | None:
    """One line if the deck file at ``path`` can be read by users other than its
    owner (whoever reads it reads hole cards through the card backs), else None.

    A warning, not a refusal: the shipped example decks are public on purpose,
    and an installed deck is put back to 0600 at every boot (deploy/tmpfiles.d).
    """
    try:
        mode = Path(path).stat().st_mode & 0o777
    except OSError:
        return None
    if not mode & 0o077:
        return None
    return (f"{path}: mode {mode:04o}: other users can read this deck (and hole cards"
            " through the card backs): chmod 0600 it, owned by the service user")


def load_deck(path: Path | str) -> Deck:
    """Load and validate the deck file at ``path``.

    The deck's name is the file's ``name`` key, else the file name without
    ``.toml``. Raises :class:`ConfigError` (file, key, problem; never the UID)
    for: unreadable file or bad TOML, a bad card code, a bad UID (not hex, wrong
    length), the same UID twice, or not exactly the 52 cards.
    """
    data: dict[str, Any] = read_toml(path)
    try:
        parsed = _DeckFile.model_validate(data)
    except ValidationError as err:
        raise error_from_validation(path, err) from None
    name = parsed.name if parsed.name is not None else Path(path).stem
    if not _DECK_NAME.fullmatch(name):
        raise ConfigError(path, "name", f"file name {name!r} is not a valid deck name; set name")
    cards = {normalize_uid(uid): Card.parse(code) for code, uid in parsed.cards.items()}
    _log.info("deck loaded", deck=name, path=str(path), cards=len(cards))
    exposure = deck_file_exposure(path)
    if exposure is not None:
        _log.warning("deck_file_readable_by_others", deck=name, path=str(path),
                     message=exposure)
    return Deck(name=name, path=str(path), _cards=cards)


class DeckRegistry:
    """All decks in play: UID -> :class:`RegisteredCard`, built from distinct decks.

    Raises :class:`ConfigError` if two decks share a name or a UID (naming the
    later deck's file and card, and the earlier deck; never the UID).
    """

    __slots__ = ("_by_uid", "_decks")

    def __init__(self, decks: Iterable[Deck]) -> None:
        self._decks: dict[str, Deck] = {}
        self._by_uid: dict[str, RegisteredCard] = {}
        for deck in decks:
            if deck.name in self._decks:
                raise ConfigError(
                    deck.path,
                    "name",
                    f"deck name {deck.name!r} is also used by {self._decks[deck.name].path}",
                )
            self._decks[deck.name] = deck
            for uid in deck.uids():
                card = deck.card_for(uid)
                assert card is not None  # iterating the deck's own UIDs
                earlier = self._by_uid.get(uid)
                if earlier is not None:
                    raise ConfigError(
                        deck.path,
                        f"cards.{card.code}",
                        f"deck {deck.name!r} shares this card's tag with"
                        f" cards.{earlier.card.code} of deck {earlier.deck!r}"
                        f" ({self._decks[earlier.deck].path}): a tag can be in one deck only",
                    )
                self._by_uid[uid] = RegisteredCard(card, deck.name)

    def lookup(self, uid: str) -> RegisteredCard | None:
        """The card and deck of the tag ``uid`` (any case), or None if unregistered."""
        found = self._by_uid.get(uid)
        if found is None:
            found = self._by_uid.get(uid.upper())
        return found

    def uid_for(self, card: Card, deck: str) -> str:
        """The UID of ``card`` in deck ``deck`` (for simulators); KeyError if no such deck."""
        return self._decks[deck].uid_for(card)

    @property
    def decks(self) -> tuple[str, ...]:
        """The deck names, in the order given."""
        return tuple(self._decks)

    def deck(self, name: str) -> Deck:
        """The deck called ``name``; KeyError if there is none."""
        return self._decks[name]

    def __contains__(self, uid: object) -> bool:
        return isinstance(uid, str) and self.lookup(uid) is not None

    def __len__(self) -> int:
        return len(self._by_uid)

    def __repr__(self) -> str:
        return f"DeckRegistry(decks={self.decks!r}, tags={len(self)})"

    __str__ = __repr__


def load_decks(paths: Iterable[Path | str]) -> DeckRegistry:
    """Load every deck file in ``paths`` and join them into one :class:`DeckRegistry`."""
    return DeckRegistry(load_deck(path) for path in paths)
