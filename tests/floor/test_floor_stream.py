"""The dashboard's SSE stream without a network (the service object driven directly).

Regression (found by bench/bench_floor.py): every message sent a view to every page at
once, some 400 views a second per page with 20 busy tables, and the pages fell seconds
behind. Now a burst of messages is one view, and alert kinds are told apart from the
rest (they go out at once, the rest at most every THROTTLE_S).

Regression (issue 25, bench/bench_room.py at 100 tables): each alert sent the whole
view, 130 KB with 100 tables, and the page's p99 was 13 times its median. Now the
whole view goes once, then only what changed: the open alerts of the tables whose
alerts changed (``alerts``), the cards that changed (``tables``).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt

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


def data(event: str) -> dict[str, Any]:
    """An SSE event's JSON."""
    return dict(json.loads(event.split("data: ", 1)[1]))


def test_a_burst_of_state_messages_is_one_view_regression() -> None:
    """200 state updates taken before the stream runs again give one ``tables`` event
    with the newest card."""
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
    assert burst.startswith("event: tables")
    tables = data(burst)
    assert [t["pot"] for t in tables["tables"]] == [199]
    assert tables["version"] == 200


def test_an_alert_goes_at_once_with_only_its_tables_alerts_regression() -> None:
    """With 100 tables known, an alert is sent at once (the cards wait out the throttle)
    as its own table's open alerts, not the room: the event stays small."""
    service = floor()
    for n in range(100):
        service.take(f"stud/v1/t{n}/state", envelope(n, street=3, pot=n, seats=[]))
        service.take(f"stud/v1/t{n}/alerts", envelope(1000 + n, id=f"t{n}:a", code="x",
                                                      severity="warning"))

    async def run() -> list[str]:
        stream = service.stream()
        out = [await anext(stream), await anext(stream)]
        service.take("stud/v1/t7/state", envelope(2000, street=4, pot=1, seats=[]))
        service.take("stud/v1/t7/alerts", envelope(2001, id="t7:b", code="missing_burn",
                                                   severity="critical"))
        out.append(await asyncio.wait_for(anext(stream), timeout=30))  # the alert
        out.append(await asyncio.wait_for(anext(stream), timeout=30))  # the card, later
        await stream.aclose()
        return out

    _, first, alerts, tables = asyncio.run(run())
    assert len(data(first)["alerts"]) == 100
    assert alerts.startswith("event: alerts")
    body = data(alerts)
    assert list(body["open"]) == ["t7"]
    assert [a["id"] for a in body["open"]["t7"]] == ["t7:b", "t7:a"]  # critical first
    assert body["alert_version"] == service.view.alert_version
    assert len(alerts) < 1000
    assert tables.startswith("event: tables")
    assert [(t["table"], t["pot"], t["open_alerts"]) for t in data(tables)["tables"]] == [
        ("t7", 1, 2)]


def test_a_resolution_sends_the_tables_remaining_alerts() -> None:
    """The last alert of a table resolved: its open alerts are sent as an empty list."""
    service = floor()
    service.take("stud/v1/t1/alerts", envelope(1, id="t1:a", code="x", severity="error"))

    async def run() -> str:
        stream = service.stream()
        await anext(stream)
        await anext(stream)
        service.take("stud/v1/t1/alerts/changes", envelope(2, id="t1:a", state="resolved",
                                                           by="A"))
        event = await asyncio.wait_for(anext(stream), timeout=30)
        await stream.aclose()
        return event

    assert data(asyncio.run(run()))["open"] == {"t1": []}


def test_a_batch_reads_only_the_newest_state_of_each_table() -> None:
    """A floor behind the broker reads a table's newest ``state`` and reader status of a
    batch and skips the older ones (each is the whole retained snapshot); every other
    message is taken, in order."""
    service = floor()
    batch = [("stud/v1/t1/state", envelope(1, pot=1, seats=[])),
             ("stud/v1/t2/state", b"not json: never read"),
             ("stud/v1/t1/alerts", envelope(2, id="t1:a", code="x", severity="error")),
             ("stud/v1/t1/readers/r1", envelope(3, reader="r1", state="offline")),
             ("stud/v1/t1/state", envelope(4, pot=2, seats=[])),
             ("stud/v1/t2/state", envelope(5, pot=9, seats=[])),
             ("stud/v1/t1/readers/r1", envelope(6, reader="r1", state="online")),
             ("stud/v1/t1/alerts/changes", envelope(7, id="t1:a", state="acknowledged",
                                                    by="A", at_ts=8.0))]
    service.take_batch(batch)
    assert service.refused == 0
    t1, t2 = service.view.tables["t1"], service.view.tables["t2"]
    assert (t1.pot, t2.pot) == (2, 9)
    assert t1.readers["r1"]["state"] == "online"
    assert t1.open["t1:a"]["state"] == "acknowledged"


def test_only_a_change_of_the_open_alerts_counts_as_an_alert_change() -> None:
    """State, readers, dealer and hands do not move ``alert_version``; an alert message
    that changes a table's open alerts does, and one that repeats what the floor has
    (the retained ``alerts/open`` after its ``alerts``, a second resolution, an
    acknowledgement seen twice) does not: no page is sent the same alerts twice."""
    view = LiveView()
    for kind in ("state", "status", "reader", "dealer", "hand"):
        view.take("t1", kind, {"ts": 1.0})
    assert view.alert_version == 0
    for kind in ("alert", "alerts_open", "alert_change"):
        view.take("t1", kind, {"ts": 1.0})  # no alert in it: nothing changes
    assert view.alert_version == 0
    alert = {"id": "t1:a", "code": "missing_burn", "severity": "error", "ts": 2.0}  # rule 13
    view.take("t1", "alert", alert)
    assert view.alert_version == 1
    view.take("t1", "alert", alert)
    assert view.alert_version == 1
    # The retained set that follows holds the same alert (its time as raised_ts).
    item = {**alert, "raised_ts": 2.0}
    del item["ts"]
    view.take("t1", "alerts_open", {"ts": 2.1, "alerts": [item]})
    assert view.alert_version == 1
    version = view.alert_version
    ack = {"id": "t1:a", "state": "acknowledged", "by": "Maria", "at_ts": 3.0, "ts": 3.0}
    view.take("t1", "alert_change", ack)
    view.take("t1", "alert_change", ack)
    assert view.alert_version == version + 1
    resolved = {"id": "t1:a", "state": "resolved", "by": "Maria", "ts": 4.0}
    view.take("t1", "alert_change", resolved)
    view.take("t1", "alert_change", resolved)
    view.take("t1", "alerts_open", {"ts": 4.1, "alerts": []})
    assert view.alert_version == version + 2
    assert view.tables["t1"].open == {}


def test_alerts_are_taken_before_the_states_received_with_them() -> None:
    """The alerts' own connection is drained first; the states and the rest follow, in
    the order received across drains (a newer state never before an older one)."""
    service = floor()

    def message(topic: str, seq: int, **body: object) -> mqtt.MQTTMessage:
        msg = mqtt.MQTTMessage(topic=topic.encode())
        msg.payload = envelope(seq, **body)
        return msg

    async def run() -> list[tuple[int | None, int]]:
        service._loop = asyncio.get_running_loop()
        seen: list[tuple[int | None, int]] = []
        for seq in range(3):
            service._on_message(service.clients["rest"], "rest", message(
                "stud/v1/t1/state", seq, pot=seq, seats=[]))
        service._on_message(service.clients["alerts"], "alerts", message(
            "stud/v1/t1/alerts", 9, id="t1:a", code="x", severity="error"))
        for _ in range(4):
            await asyncio.sleep(0)
            table = service.view.tables.get("t1")
            seen.append((table.pot if table else None, len(table.open) if table else 0))
        return seen

    seen = asyncio.run(run())
    assert seen[0] == (None, 1)  # the alert first, no state yet
    assert seen[-1] == (2, 1)    # then the newest state
