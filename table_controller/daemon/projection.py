"""Engine state and outputs -> MQTT payload models (pure; docs/mqtt.md).

The public projections are the only place a down card could leak, so they are
built by code paths that never read a down card's identity: public seats get
``down_count``, public events get no card for a down deal or a burn, and a hand
result shows only the hands that won (a winner must show them). The payload
models forbid extra keys, so a secure field in a public payload fails loudly.
"""

from __future__ import annotations

from typing import Any

from table_controller.engine.alerts import Alert
from table_controller.engine.dealing import HandState
from table_controller.engine.outputs import GameEvent, GameEventKind
from table_controller.payloads import (
    PUBLIC_EVENT_ADAPTER,
    SECURE_EVENT_ADAPTER,
    AlertPayload,
    PublicEvent,
    PublicState,
    SecureEvent,
    SecureState,
)


def _envelope(table: str, hand: HandState | None) -> dict[str, Any]:
    # seq and ts are stamped by the publisher at publication time.
    return {"table": table, "hand": hand.number if hand else None, "seq": 0, "ts": 0.0}


def _alert_fields(alert: Alert) -> dict[str, Any]:
    return {
        "code": alert.code.value,
        "seat": alert.seat,
        "street": alert.street,
        "rule": alert.rule,
        "message": alert.message,
    }


def _state(table: str, seats: int, hand: HandState | None, secure: bool) -> dict[str, Any]:
    rows = []
    for seat_no in range(1, seats + 1):
        seat = hand.seats.get(seat_no) if hand else None
        row: dict[str, Any] = {
            "seat": seat_no,
            "status": seat.status.value if seat else "empty",
            "up": [card.code for card in seat.up] if seat else [],
            "down_count": len(seat.down) if seat else 0,
            "stack": seat.stack if seat else None,
        }
        if secure:
            row["down"] = [card.code for card in seat.down] if seat else []
        rows.append(row)
    return {
        **_envelope(table, hand),
        "seats": rows,
        "street": hand.street if hand else None,
        "bring_in": hand.bring_in if hand else None,
        "to_act": None,
        "community": hand.community.code if hand and hand.community else None,
        "alerts": [_alert_fields(alert) for alert in hand.alerts] if hand else [],
        "pot": None,
    }


def public_state(table: str, seats: int, hand: HandState | None) -> PublicState:
    """The retained public snapshot: up cards and the *number* of down cards."""
    return PublicState.model_validate(_state(table, seats, hand, secure=False))


def secure_state(table: str, seats: int, hand: HandState | None) -> SecureState:
    """The retained secure snapshot: the public one plus every seat's down cards."""
    return SecureState.model_validate(_state(table, seats, hand, secure=True))


def alert_payload(table: str, hand: HandState | None, alert: Alert) -> AlertPayload:
    """One alert for the ``alerts`` topic."""
    return AlertPayload.model_validate({**_envelope(table, hand), **_alert_fields(alert)})


def _event_fields(
    hand: HandState | None, event: GameEvent
) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """(public fields, secure fields) of ``event``, or ``None`` if it stays internal."""
    kind = event.kind
    card = event.card.code if event.card else None
    if kind is GameEventKind.HAND_STARTED:
        fields: dict[str, Any] = {"players": list(hand.players) if hand else []}
    elif kind is GameEventKind.CARD_DEALT_UP:
        fields = {"seat": event.seat, "card": card}
    elif kind is GameEventKind.CARD_DEALT_DOWN:
        return {"kind": kind.value, "seat": event.seat}, {
            "kind": kind.value, "seat": event.seat, "card": card,
        }
    elif kind is GameEventKind.CARD_BURNED:
        return {"kind": kind.value}, {"kind": kind.value, "card": card}
    elif kind is GameEventKind.COMMUNITY_CARD:
        fields = {"card": card}
    elif kind is GameEventKind.STREET_STARTED:
        fields = {"street": event.street}
    elif kind is GameEventKind.ANNOUNCEMENT:
        fields = {"text": event.text, "seat": event.seat}
    elif kind is GameEventKind.HAND_DEAD:
        return _both(
            "announcement",
            {"text": f"Seat {event.seat}'s hand is dead ({event.text}).", "seat": event.seat},
        )
    elif kind is GameEventKind.FOLD:
        fields = {"seat": event.seat}
    elif kind is GameEventKind.HAND_RESULT:
        fields = {
            "winners": list(event.winners),
            "shown": [
                {"seat": shown.seat, "cards": [c.code for c in shown.cards],
                 "description": shown.description}
                for shown in event.shown
                if shown.seat in event.winners  # only a winner must show
            ],
        }
    else:
        return None  # nothing else is published
    return _both(kind.value, fields)


def _both(kind: str, fields: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    both = {"kind": kind, **fields}
    return both, dict(both)


def event_payloads(
    table: str, hand: HandState | None, event: GameEvent
) -> tuple[PublicEvent, SecureEvent] | None:
    """The public and secure payloads of a game event, or ``None`` if not published."""
    fields = _event_fields(hand, event)
    if fields is None:
        return None
    env = _envelope(table, hand)
    public, secure = fields
    return (
        PUBLIC_EVENT_ADAPTER.validate_python({**env, **public}),
        SECURE_EVENT_ADAPTER.validate_python({**env, **secure}),
    )
