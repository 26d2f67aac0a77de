"""Read a PHH file (TOML, variant ``F7S``, ``FR`` or ``F7S/8``) into a :class:`StudHand`.

PHH (the phh-std project; PokerKit reads and writes it) numbers players
``p1..pN`` in position order, ``p1`` nearest the dealer's left. They become
seats 1..N, or the seats of the optional ``seats`` field when it is there
(our own exports write it, so a round trip keeps the seats).

Unknown cards (``??``) cannot be dealt on a physical table. By default they
are refused with a :class:`PhhError`. With ``fill_unknown`` a seat's unknown
cards are first taken from its own ``sm`` line when it showed them, and the
rest are drawn (with the caller's ``random.Random``) from cards that appear
nowhere in the hand; :attr:`StudHand.filled` lists the invented ones.
"""

from __future__ import annotations

import random
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from table_controller.domain.cards import DECK, Card, CardParseError
from table_controller.domain.engine.variants import VARIANTS, Game, bring_in_of
from table_controller.domain.zones import MAX_SEATS
from table_controller.handhistory.model import Bet, BetVerb, Deal, HandItem, PhhError, StudHand

VARIANT: Final = "F7S"
"""The PHH variant code of fixed-limit Seven Card Stud."""

GAMES: Final[dict[str, Game]] = {v.phh: game for game, v in VARIANTS.items()}
"""PHH variant code -> game: ``F7S`` stud, ``FR`` razz, ``F7S/8`` stud8 (RULES.md
"Variants"; the same deal and actions, so one reader serves them all)."""

UNKNOWN: Final = "??"
"""How PHH writes a card nobody saw."""

_CARD_RUN = re.compile(r"(?:(?:[2-9TJQKA][cdhs])|\?\?)+")  # fullmatch ("$" allows "\n")
_PLAYER = re.compile(r"p([1-9][0-9]{0,3})")  # ASCII, short: int() never sees 4,300 digits
_KNOWN_FIELDS: Final = frozenset({
    "variant", "antes", "bring_in", "small_bet", "big_bet", "starting_stacks", "actions",
    "finishing_stacks", "ante_trimming_status", "seats", "seat_count", "hand",
})

_FILL_TRIES: Final = 200
"""Draws of unknown cards tried until one keeps the recorded bring-in."""

Token = Card | None
"""A card as read: ``None`` stands for ``??``."""


def read_phh(text: str, *, fill_unknown: random.Random | None = None) -> StudHand:
    """Parse PHH ``text`` (one hand). Raises :class:`PhhError` saying what is wrong."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PhhError(f"not a PHH file (bad TOML: {exc})") from None
    except RecursionError:  # "[" nested 100,000 deep: tomllib recurses (issue 9)
        raise PhhError("not a PHH file (bad TOML: arrays nested too deeply)") from None
    except ValueError as exc:  # an int past Python's 4,300-digit limit (issue 9)
        raise PhhError(f"not a PHH file (bad TOML: {str(exc).split(';')[0]})") from None
    except UnicodeDecodeError:  # pragma: no cover - str input is already decoded
        raise PhhError("not UTF-8 text") from None
    return hand_from_fields(raw, fill_unknown=fill_unknown)


def hand_from_fields(
    raw: Mapping[str, Any], *, fill_unknown: random.Random | None = None
) -> StudHand:
    """Build a :class:`StudHand` from the fields of one parsed PHH hand."""
    variant = raw.get("variant")
    game = GAMES.get(variant) if isinstance(variant, str) else None
    if game is None:
        known = ", ".join(f"{code!r} ({VARIANTS[g].name})" for code, g in GAMES.items())
        raise PhhError(f"variant {variant!r} is not supported: only {known}")
    stacks = _int_list(raw, "starting_stacks")
    count = len(stacks)
    if not 2 <= count <= MAX_SEATS:
        raise PhhError(f"a stud hand has 2 to {MAX_SEATS} players, not {count}")
    seats = tuple(_int_list(raw, "seats")) if "seats" in raw else tuple(range(1, count + 1))
    if len(seats) != count or len(set(seats)) != count:
        raise PhhError("\"seats\" must list one distinct seat per player")
    if any(not 1 <= seat <= MAX_SEATS for seat in seats) or list(seats) != sorted(seats):
        raise PhhError(f"\"seats\" must be increasing seat numbers 1..{MAX_SEATS}")
    antes_raw = raw.get("antes")
    antes = [antes_raw] * count if isinstance(antes_raw, int) else _int_list(raw, "antes")
    if len(antes) != count:
        raise PhhError(f"\"antes\" has {len(antes)} entries for {count} players")
    actions = raw.get("actions")
    if not isinstance(actions, list) or not all(isinstance(a, str) for a in actions):
        raise PhhError("\"actions\" must be a list of strings")
    pending = _parse_actions(actions, seats)
    items, filled = _resolve_unknown(pending, fill_unknown)
    for _ in range(_FILL_TRIES):
        if fill_unknown is None or not filled or _keeps_bring_in(items, seats, game):
            break
        # An invented 3rd-street up card must not take the bring-in from the
        # recorded ``pb`` seat (stud-hi-lo-hand-53: p5's three cards are ``??``).
        items, filled = _resolve_unknown(pending, fill_unknown)
    finishing = _int_list(raw, "finishing_stacks") if "finishing_stacks" in raw else None
    if finishing is not None and len(finishing) != count:
        raise PhhError(f"\"finishing_stacks\" has {len(finishing)} entries for {count} players")
    seat_count = raw.get("seat_count")
    hand = raw.get("hand")
    community = next((d.cards[0] for d in items if isinstance(d, Deal) and d.community), None)
    return StudHand(
        seats=seats,
        antes=tuple(antes),
        bring_in=_int(raw, "bring_in"),
        small_bet=_int(raw, "small_bet"),
        big_bet=_int(raw, "big_bet"),
        starting_stacks=tuple(stacks),
        items=items,
        finishing_stacks=tuple(finishing) if finishing is not None else None,
        ante_trimming_status=bool(raw.get("ante_trimming_status", False)),
        seat_count=seat_count if isinstance(seat_count, int) else None,
        hand=hand if isinstance(hand, int | str) else None,
        filled=filled,
        community=community,
        extra={k: v for k, v in raw.items() if k not in _KNOWN_FIELDS},
        game=game,
    )


# --------------------------------------------------------------------- fields


def _int(raw: Mapping[str, Any], key: str) -> int:
    value = raw.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise PhhError(f"\"{key}\" must be a whole number of chips >= 0, not {value!r}")
    return value


def _int_list(raw: Mapping[str, Any], key: str) -> list[int]:
    value = raw.get(key)
    if not isinstance(value, list) or not all(
        isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value
    ):
        raise PhhError(f"\"{key}\" must be a list of whole numbers >= 0")
    return list(value)


# -------------------------------------------------------------------- actions


def _tokens(text: str, where: str) -> list[Token]:
    if not _CARD_RUN.fullmatch(text):
        raise PhhError(f"{where}: bad cards {text!r}")
    out: list[Token] = []
    for i in range(0, len(text), 2):
        code = text[i:i + 2]
        try:
            out.append(None if code == UNKNOWN else Card.parse(code))
        except CardParseError as exc:  # pragma: no cover - the regex admits only cards
            raise PhhError(f"{where}: {exc}") from None
    return out


@dataclass(slots=True)
class _PendingDeal:
    """A deal as read, unknown cards (``None``) still in it."""

    seat: int
    street: int
    tokens: list[Token]
    community: bool


@dataclass(slots=True)
class _PendingShow:
    """An ``sm`` line as read, possibly with unknown cards."""

    seat: int
    street: int
    tokens: list[Token]


_Pending = _PendingDeal | _PendingShow | Bet


def _parse_actions(actions: Sequence[str], seats: Sequence[int]) -> list[_Pending]:
    out: list[_Pending] = []
    received = dict.fromkeys(seats, 0)
    street = 3

    def seat_of(label: str, where: str) -> int:
        match = _PLAYER.fullmatch(label)
        if not match or int(match.group(1)) > len(seats):
            raise PhhError(f"{where}: unknown player {label!r}")
        return seats[int(match.group(1)) - 1]

    for number, action in enumerate(actions, start=1):
        where = f"action {number} ({action!r})"
        words = action.split("#", 1)[0].split()
        match words:
            case ["d", "dh", player, cards]:
                seat = seat_of(player, where)
                tokens = _tokens(cards, where)
                received[seat] += len(tokens)
                if received[seat] > 7:
                    raise PhhError(f"{where}: player {player} gets more than seven cards")
                street = 3 if received[seat] <= 3 else received[seat]
                if street > 3 and len(tokens) != 1:
                    raise PhhError(f"{where}: one card per player on street {street}")
                out.append(_PendingDeal(seat, street, tokens, community=False))
            case ["d", "db", cards]:
                tokens = _tokens(cards, where)
                if len(tokens) != 1:
                    raise PhhError(f"{where}: a stud board card is one community card")
                street = 7
                out.append(_PendingDeal(0, 7, tokens, community=True))
            case [player, "pb" | "cc" | "f" as verb]:
                out.append(Bet(seat_of(player, where), street, _verb(verb)))
            case [player, "cbr", amount]:
                # ASCII digits only ('²'.isdigit() is true, int() refuses it), and no
                # more than 18 of them (int() refuses past 4,300; no table has 10^18 chips).
                if not (amount.isascii() and amount.isdigit()) or len(amount) > 18:
                    raise PhhError(f"{where}: the amount must be a whole number of at most"
                                   " 18 digits")
                out.append(Bet(seat_of(player, where), street, "cbr", int(amount)))
            case [player, "sm"] | [player, "sm", "-"]:
                out.append(Bet(seat_of(player, where), street, "sm"))
            case [player, "sm", cards]:
                out.append(_PendingShow(seat_of(player, where), street, _tokens(cards, where)))
            case []:
                continue  # a comment-only action
            case _:
                raise PhhError(f"{where}: not a Seven Card Stud action")
    return out


def _keeps_bring_in(items: Sequence[HandItem], seats: Sequence[int], game: Game) -> bool:
    """Whether the 3rd-street up cards make the recorded ``pb`` seat the bring-in
    (rule 1; razz: the highest card), as the deal's order and the actions need."""
    posted = next((i.seat for i in items if isinstance(i, Bet) and i.verb == "pb"), None)
    ups = {i.seat: i.cards[2] for i in items
           if isinstance(i, Deal) and i.street == 3 and len(i.cards) == 3}
    if posted is None or posted not in ups:
        return True
    return bring_in_of(VARIANTS[game], ups, list(seats), "suit") == posted


def _verb(text: str) -> BetVerb:
    verbs: dict[str, BetVerb] = {"pb": "pb", "cc": "cc", "f": "f"}
    return verbs[text]


def _resolve_unknown(
    pending: list[_Pending], fill: random.Random | None
) -> tuple[tuple[HandItem, ...], tuple[Card, ...]]:
    """Replace ``??`` cards (see the module docstring) and check for duplicates."""
    known = [t for p in pending if not isinstance(p, Bet) for t in p.tokens if t is not None]
    shown = {p.seat: p.tokens for p in pending if isinstance(p, _PendingShow)}
    has_unknown = any(
        t is None for p in pending if isinstance(p, _PendingDeal) for t in p.tokens
    )
    if has_unknown and fill is None:
        raise PhhError(
            "the hand has unknown cards (??): a physical deal needs every card;"
            " fill them with unused cards (--fill-unknown) to import it anyway"
        )
    seen_deals = {c for p in pending if isinstance(p, _PendingDeal) for c in p.tokens if c}
    if len(seen_deals) != sum(
        1 for p in pending if isinstance(p, _PendingDeal) for c in p.tokens if c
    ):
        raise PhhError("a card is dealt twice")
    free = [card for card in DECK if card not in set(known)]
    if fill is not None:
        fill.shuffle(free)
    filled: list[Card] = []
    position: dict[int, int] = {}
    items: list[HandItem] = []
    for p in pending:
        if isinstance(p, Bet):
            items.append(p)
            continue
        if isinstance(p, _PendingShow):
            cards = tuple(t for t in p.tokens if t is not None)
            items.append(Bet(p.seat, p.street, "sm", None, cards))
            continue
        cards_out: list[Card] = []
        for token in p.tokens:
            index = position.get(p.seat, 0)
            position[p.seat] = index + 1
            if token is not None:
                cards_out.append(token)
                continue
            reveal = shown.get(p.seat)
            candidate = reveal[index] if reveal and index < len(reveal) else None
            if candidate is not None and candidate not in seen_deals:
                seen_deals.add(candidate)
                cards_out.append(candidate)
                continue
            if not free:
                raise PhhError("not enough unused cards to fill the unknown ones")
            card = free.pop()
            filled.append(card)
            cards_out.append(card)
        items.append(Deal(p.seat, p.street, tuple(cards_out), p.community))
    return tuple(items), tuple(filled)
