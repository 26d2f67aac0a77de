"""Write :class:`StudHand` records as PHH text (TOML, variant ``F7S``, ``FR`` or ``F7S/8``).

The required fields come first, in the order PokerKit writes them, then the
optional ones this project knows (``seats``, ``seat_count``, ``hand``,
``finishing_stacks``), then what an import kept in :attr:`StudHand.extra`.
PHH user-defined fields start with ``_``; an export uses them to say honestly
what it had to make up (``_betting``, ``_stacks``) or could not express
(``_community_card``, ``_filled_cards``), and a hand the recording cut short
(``_unfinished``). Several hands go into one ``.phhs``
document as tables ``[1]``, ``[2]``, ... (PokerKit's ``HandHistory.loads_all``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from table_controller.domain.cards import Card
from table_controller.domain.engine.variants import variant
from table_controller.handhistory.model import Bet, Deal, HandItem, StudHand


def action_text(hand: StudHand, item: HandItem) -> str:
    """The PHH action string of one item (``d dh p1 As2c7d``, ``p3 cbr 10``...)."""
    if isinstance(item, Deal):
        if item.community:
            return f"d db {_cards(item.cards)}"
        return f"d dh p{hand.player(item.seat)} {_cards(item.cards)}"
    return _bet_text(hand, item)


def _bet_text(hand: StudHand, bet: Bet) -> str:
    player = f"p{hand.player(bet.seat)}"
    if bet.verb == "cbr":
        return f"{player} cbr {bet.amount}"
    if bet.verb == "sm":
        return f"{player} sm {_cards(bet.cards)}" if bet.cards else f"{player} sm"
    return f"{player} {bet.verb}"


def _cards(cards: Sequence[Card]) -> str:
    return "".join(card.code for card in cards)


def write_phh(hand: StudHand) -> str:
    """The PHH text of one hand (ends with a newline)."""
    return "\n".join(_lines(hand)) + "\n"


def write_phhs(hands: Iterable[StudHand]) -> str:
    """Several hands as one ``.phhs`` document: ``[1]``, ``[2]``, ... tables."""
    blocks = [f"[{n}]\n" + write_phh(hand) for n, hand in enumerate(hands, start=1)]
    return "\n".join(blocks)


def _lines(hand: StudHand) -> list[str]:
    fields: list[tuple[str, object]] = [
        ("variant", variant(hand.game).phh),
        ("ante_trimming_status", hand.ante_trimming_status),
        ("antes", list(hand.antes)),
        ("bring_in", hand.bring_in),
        ("small_bet", hand.small_bet),
        ("big_bet", hand.big_bet),
        ("starting_stacks", list(hand.starting_stacks)),
        ("actions", [action_text(hand, item) for item in hand.items]),
        ("seats", list(hand.seats)),
    ]
    if hand.seat_count is not None:
        fields.append(("seat_count", hand.seat_count))
    if hand.hand is not None:
        fields.append(("hand", hand.hand))
    if hand.finishing_stacks is not None:
        fields.append(("finishing_stacks", list(hand.finishing_stacks)))
    for key, value in hand.extra.items():
        if _writable(value):
            fields.append((key, value))
    if not hand.betting_known:
        fields.append(("_betting", "unknown"))
    if not hand.stacks_known:
        fields.append(("_stacks", "unknown"))
    if hand.community is not None:
        fields.append(("_community_card", hand.community.code))
    if hand.filled:
        fields.append(("_filled_cards", _cards(hand.filled)))
    if hand.unfinished:
        fields.append(("_unfinished", True))
    return [f"{_key(key)} = {_value(value)}" for key, value in fields]


def _writable(value: object) -> bool:
    if isinstance(value, list):
        return all(_writable(v) for v in value)
    return isinstance(value, bool | int | str)


def _key(key: str) -> str:
    bare = key and all(c.isalnum() or c in "_-" for c in key) and key.isascii()
    return key if bare else json.dumps(key, ensure_ascii=False)


def _value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        # JSON string escapes (\" \\ \n \uXXXX) are valid TOML basic-string escapes.
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {value!r} as a PHH value")  # pragma: no cover
