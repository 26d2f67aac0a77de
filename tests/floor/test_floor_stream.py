"""The dashboard's SSE stream without a network (the service object driven directly).

Regression (found by bench/bench_floor.py): every message sent a view to every page at
once, some 400 views a second per page with 20 busy tables, and the pages fell seconds
behind. Now a burst of messages is one view, and alert kinds are told apart from the
rest (they go out at once, the rest at most every THROTTLE_S).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from table_controller.floor.config import parse_floor_config
from table_controller.floor.live import LiveView
from table_controller.floor.service import Floor
from table_controller.web.passwords import hash_password

HASH = hash_password("floor-secret-1", salt=b"0123456789abcdef")


def floor() -> Floor:
    """A service object (its MQTT client is made but never connected)."""
    cfg = parse_floor_config({"supervisors": [{"name": "A", "password_hash": HASH}]},
                             Path("floor.toml"))
    return Floor(cfg)


def envelope(seq: int, **body: object) -> bytes:
    """A checked message's bytes."""
    return json.dumps({"table": "t1", "hand": 1, "seq": seq, "ts": 1.0e9 + seq,
                       **body}).encode()


def test_a_burst_of_state_messages_is_one_view_regression() -> None:
    """200 state updates taken before the stream runs again give one view, the newest."""
    service = floor()

    async def run() -> list[str]:
        stream = service.stream()
        out = [await anext(stream), await anext(stream)]  # retry, the first view
        for seq in range(200):
            service.take("stud/v1/t1/state", envelope(seq, street=3, pot=seq, seats=[]))
        out.append(await asyncio.wait_for(anext(stream), timeout=30))
        await stream.aclose()
        return out

    retry, first, burst = asyncio.run(run())
    assert retry.startswith("retry:")
    assert first.startswith("event: view")
    view = json.loads(burst.split("data: ", 1)[1])
    assert view["tables"][0]["pot"] == 199
    assert view["version"] == 200


def test_only_alert_kinds_count_as_alert_changes() -> None:
    """State, readers, dealer and hands do not move ``alert_version``; alerts do."""
    view = LiveView()
    for kind in ("state", "status", "reader", "dealer", "hand"):
        view.take("t1", kind, {"ts": 1.0})
    assert view.alert_version == 0
    for kind in ("alert", "alerts_open", "alert_change"):
        view.take("t1", kind, {"ts": 1.0})
    assert view.alert_version == 3
