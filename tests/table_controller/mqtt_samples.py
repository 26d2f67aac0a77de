"""Sample payloads for MQTT tests: a 3-seat hand on 4th street."""

from __future__ import annotations

from table_controller.mqtt.payloads import (
    AlertPayload,
    CardDealtUpEvent,
    OpenAlert,
    PublicCardDealtDownEvent,
    PublicSeat,
    PublicState,
    ReaderStatus,
    SecureCardDealtDownEvent,
    SecureSeat,
    SecureState,
)

TABLE = "t1"
DOWN = {1: ["As", "Kd"], 3: ["7h", "7c"], 6: ["2c", "9s"]}
UP = {1: ["Qs", "Jd"], 3: ["4h", "4d"], 6: ["Tc", "8s"]}


def states(hand: int = 1, table: str = TABLE) -> tuple[PublicState, SecureState]:
    """The public and secure snapshot of the sample hand (seq/ts left for the publisher)."""
    alerts = [OpenAlert(code="missing_burn", street=4, rule=13, message="no burn for 4th street")]
    common = {
        "table": table, "hand": hand, "seq": 0, "ts": 0.0, "street": 4, "bring_in": 3,
        "to_act": 3, "community": None, "alerts": alerts, "pot": None,
    }
    public = PublicState(
        **common,
        seats=[
            PublicSeat(seat=s, status="active", up=UP[s], down_count=len(DOWN[s]))
            for s in sorted(UP)
        ],
    )
    secure = SecureState(
        **common,
        seats=[
            SecureSeat(seat=s, status="active", up=UP[s], down_count=len(DOWN[s]), down=DOWN[s])
            for s in sorted(UP)
        ],
    )
    return public, secure


def down_event(seat: int = 6, card: str = "9s", hand: int = 1) -> tuple[
    PublicCardDealtDownEvent, SecureCardDealtDownEvent
]:
    """A face-down deal, public and secure."""
    env = {"table": TABLE, "hand": hand, "seq": 0, "ts": 0.0}
    return PublicCardDealtDownEvent(**env, seat=seat), SecureCardDealtDownEvent(
        **env, seat=seat, card=card
    )


def up_event(seat: int = 1, card: str = "Jd") -> CardDealtUpEvent:
    """A face-up deal (identical on both streams)."""
    return CardDealtUpEvent(table=TABLE, hand=1, seq=0, ts=0.0, seat=seat, card=card)


def alert(n: int = 1, code: str = "out_of_order") -> AlertPayload:
    """An alert whose message carries ``n`` so tests can tell alerts apart."""
    return AlertPayload(
        table=TABLE, hand=1, seq=0, ts=0.0, code=code, seat=3, street=4, rule=None,
        message=f"alert {n}",
    )


def reader(reader_id: str = "1", state: str = "online") -> ReaderStatus:
    """A reader status."""
    return ReaderStatus(
        table=TABLE, hand=1, seq=0, ts=0.0, reader=reader_id, state=state,
        last_heartbeat=1_790_000_000.25, frame_errors={"crc": 0, "framing": 1},
        zones=["seat1.down", "seat1.up", "seat2.down", "seat2.up"],
    )
