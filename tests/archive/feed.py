"""Hand records, alerts and alert changes shaped as the issue-14 contract says
(/work/wt/notes/i14-contract.md, docs/archive.md), and a publisher of them over a real
broker: the archive's test feed until the daemon's own ``hands`` topic is merged."""

from __future__ import annotations

import json
import os
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion, MQTTProtocolVersion

from table_controller.mqtt.topics import ROOT, SECURE_LEVEL

WAIT = 20.0


def hand_record(table: str, number: int, *, start: float = 1_800_000_000.0,
                dealer: dict[str, str] | None = None, secure: bool = False,
                ended: str = "fold", alerts: list[dict[str, Any]] | None = None,
                notices: list[dict[str, Any]] | None = None,
                seq: int = 0) -> dict[str, Any]:
    """A finished hand of ``table``: three players, a few actions; ``down_cards`` only
    when ``secure`` (the public record has ``null`` there)."""
    started = start + 120.0 * number
    return {
        "table": table, "hand": number, "seq": seq or number * 10, "ts": started + 90.0,
        "hand_id": f"{table}:{number}:{round(started * 1000)}", "game": "stud",
        "dealer": dealer if dealer is not None else {"id": "D17", "name": "Ann"},
        "started_ts": started, "ended_ts": started + 90.0,
        "players": [{"seat": s, "name": f"p{s}", "stack_start": 1000, "stack_end": 1000 + d}
                    for s, d in ((1, -40), (4, 80), (6, -40))],
        "actions": [{"street": 3, "seat": 4, "action": "bring_in", "amount": 10},
                    {"street": 3, "seat": 6, "action": "complete", "amount": 40},
                    {"street": 4, "seat": 1, "action": "fold", "amount": None}],
        "up_cards": {"1": ["7c"], "4": ["2d", "Ks"], "6": ["Qh", "Qs"]},
        "shown": {} if ended != "showdown" else {"4": ["Ah", "Ad", "2d", "Ks"]},
        "down_cards": ({"1": ["9c", "9d"], "4": ["Ah", "Ad"], "6": ["3c", "4c"]}
                       if secure else None),
        "pot": 120, "winners": [4], "winners_high": [], "winners_low": [],
        "alerts": alerts or [], "notices": notices or [], "ended": ended,
    }


def alert_message(table: str, seq: int, *, hand: int = 1, ts: float = 1_800_000_100.0,
                  code: str = "missing_burn", severity: str = "error",
                  dealer: dict[str, str] | None = None) -> dict[str, Any]:
    """An alert as raised on ``alerts`` (id ``<table>:<seq>``)."""
    return {"table": table, "hand": hand, "seq": seq, "ts": ts, "id": f"{table}:{seq}",
            "code": code, "severity": severity, "seat": None, "street": 4, "rule": 13,
            "message": "no burn card before 4th street",
            "dealer": dealer if dealer is not None else {"id": "D17", "name": "Ann"},
            "state": "open"}


def change_message(table: str, alert_id: str, state: str, *, seq: int, ts: float,
                   by: str = "Sam", note: str | None = None) -> dict[str, Any]:
    """One lifecycle change on ``alerts/changes``."""
    return {"table": table, "hand": 1, "seq": seq, "ts": ts, "id": alert_id, "state": state,
            "by": by, "note": note, "at_ts": ts}


def topic(table: str, kind: str) -> str:
    """The contract's topic of ``kind`` (hands, secure_hands, alerts, changes)."""
    suffix = {"hands": "hands", "secure_hands": f"{SECURE_LEVEL}/hands", "alerts": "alerts",
              "changes": "alerts/changes"}[kind]
    return f"{ROOT}/{table}/{suffix}"


class Feed:
    """A publisher standing in for the tables' daemons (QoS 1, waits for each PUBACK)."""

    def __init__(self, port: int) -> None:
        """Connect to the broker on ``port``."""
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2,
                                  client_id=f"feed-{os.getpid()}-{id(self)}",
                                  protocol=MQTTProtocolVersion.MQTTv5)
        self.client.connect("127.0.0.1", port)
        self.client.loop_start()

    def publish(self, table: str, kind: str, payload: Any, *, wait: bool = True) -> None:
        """Publish ``payload`` (JSON, or raw bytes) on ``table``'s ``kind`` topic."""
        raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        info = self.client.publish(topic(table, kind), raw, qos=1)
        if wait:
            info.wait_for_publish(WAIT)

    def publish_raw(self, topic_name: str, raw: bytes) -> None:
        """Publish bytes on any topic."""
        self.client.publish(topic_name, raw, qos=1).wait_for_publish(WAIT)

    def close(self) -> None:
        """Disconnect."""
        self.client.disconnect()
        self.client.loop_stop()
