"""The hand report of ``stud-table replay --json`` (docs/conformance.md "Report")."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from table_controller.domain.engine.dealing import HandState
from table_controller.domain.engine.variants import Game


def hand_report(hand: HandState) -> dict[str, Any]:
    """One hand as the contract's report object.

    A ``stud8`` hand also has ``winners_high`` and ``winners_low`` (docs/conformance.md);
    other games' reports are exactly as before the variants came.
    """
    report = {
        "players": {
            str(seat_no): {
                "down": [card.code for card in seat.down],
                "up": [card.code for card in seat.up],
                "status": seat.status.value,
            }
            for seat_no, seat in sorted(hand.seats.items())
        },
        "community": hand.community.code if hand.community is not None else None,
        "bring_in": hand.bring_in,
        "first_to_act": {str(street): seat for street, seat in sorted(hand.first_to_act.items())},
        "winners": list(hand.winners),
        "alerts": [alert.as_dict() for alert in hand.alerts],
        "notices": [notice.as_dict() for notice in hand.notices],
    }
    if hand.game is Game.STUD8:
        report["winners_high"] = list(hand.winners_high)
        report["winners_low"] = list(hand.winners_low)
    return report


def replay_report(hands: Sequence[HandState]) -> dict[str, Any]:
    """The whole report: every hand in script order."""
    return {"hands": [hand_report(hand) for hand in hands]}
