"""A small builder of table scripts (docs/conformance.md) for the engine's rule tests.

Tests read like a dealer's hands: ``t.deal("seat2.down", "As")``, ``t.burn("9h")``,
``t.fold(5)``. ``report()`` runs the script through the same parser and engine
as ``stud-table replay --json`` and returns the first hand's report.
"""

from __future__ import annotations

import json
from typing import Any

from table_controller.domain.engine.dealing import DealingEngine, replay_events
from table_controller.domain.engine.report import replay_report
from table_controller.records.script import parse_script


class Table:
    """Build a one-hand (or more) table script line by line."""

    def __init__(self, players: list[int], *, stacks: dict[int, int] | None = None,
                 **table: Any) -> None:
        self.lines: list[dict[str, Any]] = []
        if table:
            self.lines.append({"op": "table", **table})
        self.hand(players, stacks=stacks)

    def hand(self, players: list[int], *, stacks: dict[int, int] | None = None) -> Table:
        """Start a new hand with ``players`` anted in."""
        line: dict[str, Any] = {"op": "hand", "players": players}
        if stacks is not None:
            line["stacks"] = {str(k): v for k, v in stacks.items()}
        self.lines.append(line)
        return self

    def place(self, zone: str, card: str) -> Table:
        """A card arrives in ``zone``."""
        self.lines.append({"op": "place", "zone": zone, "card": card})
        return self

    def remove(self, zone: str, card: str) -> Table:
        """A card leaves ``zone``."""
        self.lines.append({"op": "remove", "zone": zone, "card": card})
        return self

    def down(self, seat: int, card: str) -> Table:
        """Deal ``card`` face down to ``seat``."""
        return self.place(f"seat{seat}.down", card)

    def up(self, seat: int, card: str) -> Table:
        """Deal ``card`` face up to ``seat``."""
        return self.place(f"seat{seat}.up", card)

    def burn(self, card: str) -> Table:
        """Burn ``card``."""
        return self.place("burn", card)

    def round(self, face: str, cards: dict[int, str]) -> Table:
        """Deal one round: ``cards`` by seat, in seat order, all with ``face``."""
        for seat in sorted(cards):
            self.place(f"seat{seat}.{face}", cards[seat])
        return self

    def muck(self, seat: int, zone_cards: list[tuple[str, str]]) -> Table:
        """Fold ``seat``: each (face, card) leaves its zone and lands in the muck."""
        for face, card in zone_cards:
            self.remove(f"seat{seat}.{face}", card)
            self.place("muck", card)
        return self

    def act(self, seat: int, action: str, amount: int | None = None) -> Table:
        """A betting action entered at the dealer's console."""
        line: dict[str, Any] = {"op": "act", "seat": seat, "action": action}
        if amount is not None:
            line["amount"] = amount
        self.lines.append(line)
        return self

    def engine(self) -> DealingEngine:
        """Run the script through an engine (hand left open) and return the engine."""
        script = parse_script(self.text().splitlines())
        engine = DealingEngine(script.settings)
        for _, event in script.events:
            engine.apply(event)
        return engine

    def text(self) -> str:
        """The script as JSON Lines."""
        return "\n".join(json.dumps(line) for line in self.lines) + "\n"

    def report(self, hand: int = 0) -> dict[str, Any]:
        """Run the script; return hand ``hand`` of the report."""
        script = parse_script(self.text().splitlines())
        hands = replay_events((e for _, e in script.events), script.settings)
        result: dict[str, Any] = replay_report(hands)["hands"][hand]
        return result


def codes(report: dict[str, Any]) -> list[str]:
    """The alert codes of a hand report, in order."""
    return [alert["code"] for alert in report["alerts"]]


def notice_codes(report: dict[str, Any]) -> list[str]:
    """The notice codes of a hand report, in order (what needed no action)."""
    return [notice["code"] for notice in report["notices"]]


# A clean three-handed hand used as the base of many rule tests: seats 2, 4, 5.
# Seat 4's 2c is the low card; the burn cards are never dealt.
THIRD = {
    1: {2: "As", 4: "Kd", 5: "7h"},
    2: {2: "Ah", 4: "Kc", 5: "7c"},
    3: {2: "3d", 4: "2c", 5: "Qs"},
}
STREETS = {
    4: {2: "4d", 4: "Ks", 5: "Js"},
    5: {2: "5d", 4: "8c", 5: "Jh"},
    6: {2: "6d", 4: "8h", 5: "Jc"},
    7: {2: "Td", 4: "Kh", 5: "2d"},
}
BURNS = {4: "9h", 5: "9c", 6: "9d", 7: "9s"}


def deal_third(t: Table, third: dict[int, dict[int, str]] | None = None) -> Table:
    """Deal 3rd street cleanly (down, down, up)."""
    third = third or THIRD
    t.round("down", third[1]).round("down", third[2]).round("up", third[3])
    return t


def deal_street(t: Table, street: int, cards: dict[int, str] | None = None,
                burn: bool = True) -> Table:
    """Burn and deal one of 4th..7th street cleanly."""
    if burn:
        t.burn(BURNS[street])
    return t.round("down" if street == 7 else "up", cards or STREETS[street])


def clean_hand(players: list[int] | None = None, **table: Any) -> Table:
    """The whole clean three-handed hand to 7th street."""
    t = deal_third(Table(players or [2, 4, 5], **table))
    for street in (4, 5, 6, 7):
        deal_street(t, street)
    return t
