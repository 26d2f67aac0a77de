"""A finished hand's public record (the ``hands`` topic) as a PHH hand history.

Pure: :func:`record_to_hand` builds a :class:`~table_controller.handhistory.model.StudHand`
and :mod:`table_controller.handhistory.writer` writes it, with the project's own honest
markers for what the record does not hold:

* down cards that were never shown (the floor never has them): the PHH file needs a card
  there, so the deck's lowest cards not seen in the hand stand in and are listed in
  ``_filled_cards`` (the convention of ``stud-table phh import``);
* antes and stakes: the record has no table settings. The table's stakes come from
  ``floor.toml`` (``[stakes.<table>]``) when configured (``_stakes = "table"``); else
  they are read from the record's bets: the bring-in is the ``bring_in`` action's
  amount; the small bet the first completion (3rd street) or bet on 4th; the big bet the
  first bet on 5th street or later (else twice the small bet); antes 0
  (``_stakes = "from the bets"``); a record without any amount says
  ``_stakes = "unknown"`` (they used to be invented: 2/4 on a 5/10 table, issue 22).
  Stacks: ``stack_start`` (after the ante) when every player has one, else
  placeholders with ``_stacks = "unknown"``;
* betting: a hand whose only actions are folds (a card-only table: the engine sees a
  fold from the cards reaching the muck) has **unknown betting**: the file holds the
  deals, each fold on its street, the hands shown down, and ``_betting = "unknown"``;
  ``stud-table phh import`` turns such a file into a card-only table script (no ``act``
  line: a fold is the seat's cards going to the muck), which replays with the same
  folds and the same winner. It is not a complete PokerKit hand (PokerKit needs every
  bet). ``_winners`` always lists the record's winners (PHH has no such field).

Card order within a seat: the 3rd street deal is the two down cards then the first up
card; 4th to 6th one up card each; 7th the last down card.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from table_controller.domain.cards import Card
from table_controller.domain.hands import Game
from table_controller.handhistory.model import STREETS, Bet, BetVerb, Deal, HandItem, StudHand

_VERBS: Final[dict[str, BetVerb]] = {
    "bring_in": "pb", "complete": "cbr", "bet": "cbr", "raise": "cbr", "call": "cc",
    "check": "cc", "fold": "f",
}
PLACEHOLDER_STACK: Final = 1000


class ExportError(ValueError):
    """A record that cannot be exported as PHH; ``str()`` says why."""


def _cards(values: Any) -> list[Card]:
    if not isinstance(values, list):
        return []
    return [Card.parse(v) for v in values if isinstance(v, str)]


def _stakes(actions: list[Mapping[str, Any]]) -> tuple[int, int, int]:
    bring_in = next((a.get("amount") or 0 for a in actions if a.get("action") == "bring_in"), 0)
    small = next((a["amount"] for a in actions if isinstance(a.get("amount"), int) and (
        (a.get("street") == 3 and a.get("action") == "complete")
        or (a.get("street") == 4 and a.get("action") == "bet"))), None)
    big = next((a["amount"] for a in actions if isinstance(a.get("amount"), int)
                and isinstance(a.get("street"), int) and a["street"] >= 5
                and a.get("action") == "bet"), None)
    if small is None:
        small = big // 2 if big else max(2 * bring_in, 2)
    return int(bring_in), int(small), int(big if big else 2 * small)


STAKES_TABLE: Final = "table"
STAKES_FROM_BETS: Final = "from the bets"
STAKES_UNKNOWN: Final = "unknown"


def record_to_hand(record: Mapping[str, Any],
                   stakes: tuple[int, int, int, int] | None = None) -> StudHand:
    """The PHH hand of a public hand record (see the module docstring); ``stakes``:
    the table's ``(ante, bring_in, small_bet, big_bet)`` if known."""
    players = [p for p in record.get("players") or () if isinstance(p, Mapping)]
    seats = tuple(sorted(int(p["seat"]) for p in players if isinstance(p.get("seat"), int)))
    if len(seats) < 2:
        raise ExportError("a hand history needs at least two players")
    try:
        up = {s: _cards((record.get("up_cards") or {}).get(str(s))) for s in seats}
        shown = {s: _cards((record.get("shown") or {}).get(str(s))) for s in seats}
    except ValueError as exc:
        raise ExportError(f"a card of the record cannot be read: {exc}") from None
    actions = [a for a in record.get("actions") or () if isinstance(a, Mapping)
               and a.get("seat") in seats and a.get("action") in _VERBS]
    folded = {a["seat"]: a.get("street") or 3 for a in actions if a["action"] == "fold"}
    seen = {c for cards in (*up.values(), *shown.values()) for c in cards}
    spare = iter(c for c in sorted(Card.parse(r + s) for r in "23456789TJQKA" for s in "cdhs")
                 if c not in seen)
    filled: list[Card] = []

    def hidden() -> Card:
        card = next(spare)
        filled.append(card)
        return card

    hands: dict[int, list[Card]] = {}
    for seat in seats:
        ups = up[seat][:4]
        downs = [c for c in shown[seat] if c not in ups]
        reached_7th = len(ups) == 4 and folded.get(seat, 8) >= 7
        need = 2 + (1 if reached_7th else 0)
        downs = downs[:need] + [hidden() for _ in range(need - len(downs[:need]))]
        cards = downs[:2] + ups + downs[2:3]
        hands[seat] = cards
    items: list[HandItem] = []
    for street in STREETS:
        for seat in seats:
            cards = hands[seat]
            got = tuple(cards[0:3]) if street == 3 else tuple(cards[street - 1:street])
            if got:
                items.append(Deal(seat, street, got))
        for a in actions:
            if a.get("street") == street:
                verb = _VERBS[a["action"]]
                amount = a.get("amount") if verb in ("cbr",) else None
                items.append(Bet(int(a["seat"]), street, verb, amount))
    for seat in seats:
        if shown[seat]:
            items.append(Bet(seat, 7, "sm", None, tuple(hands[seat])))
    betting_known = any(a["action"] != "fold" for a in actions)
    if stakes is not None:
        ante, bring_in, small, big = stakes
        source = STAKES_TABLE
    else:
        ante = 0
        bring_in, small, big = _stakes(actions)
        amounts = any(isinstance(a.get("amount"), int) and a["amount"] > 0 for a in actions)
        source = STAKES_FROM_BETS if amounts else STAKES_UNKNOWN
    stacks = {int(p["seat"]): p.get("stack_start") for p in players}
    stacks_known = all(isinstance(stacks.get(s), int) for s in seats)
    # PHH stacks are before the ante; the record's stack_start is after it.
    starting = tuple(int(stacks[s]) + ante if stacks_known  # type: ignore[arg-type]
                     else PLACEHOLDER_STACK for s in seats)
    game = record.get("game")
    hand_id = str(record.get("hand_id", ""))
    number = hand_id.split(":")[1] if hand_id.count(":") >= 2 else None
    dealer = record.get("dealer") if isinstance(record.get("dealer"), Mapping) else None
    extra: dict[str, object] = {"_hand_id": hand_id, "_stakes": source}
    winners = [int(w) for w in record.get("winners") or () if isinstance(w, int)]
    extra["_winners"] = winners
    table = record.get("table") or hand_id.split(":", 1)[0]
    if table:
        extra["table"] = str(table)
    if dealer:
        extra["_dealer"] = f"{dealer.get('name') or ''} ({dealer.get('id') or ''})"
    names = [str(next((p.get("name") for p in players if p.get("seat") == s), "") or "")
             for s in seats]
    if any(names):
        extra["players"] = names
    return StudHand(
        seats=seats, antes=(ante,) * len(seats), bring_in=bring_in, small_bet=small,
        big_bet=big, starting_stacks=starting, items=tuple(items),
        hand=int(number) if number and number.isascii() and number.isdigit() else None,
        filled=tuple(filled), betting_known=betting_known, stacks_known=stacks_known,
        extra=extra, game=Game(game) if game in {g.value for g in Game} else Game.STUD)
