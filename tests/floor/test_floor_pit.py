"""A floor instance that follows one pit (``tables`` in floor.toml): it asks the broker
for those tables' topics only, and sees them and no other table (docs/scaling.md "How to
scale": one floor per pit, issue 25)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from floor_rig import FakeTable, FloorService, Page, SseView, mqtt_client, write_config

from table_controller.floor.live import ALERT_FOLLOWED, FOLLOWED
from table_controller.floor.service import ALERTS_ROLE, REST_ROLE, subscriptions
from table_controller.mqtt.topics import TopicError, every_table, pit_filters
from table_controller.testing.broker import MosquittoBroker


def test_pit_filters_name_each_table_and_default_to_every_table() -> None:
    """One filter per table of the pit, in its order; no table: ``+`` as before."""
    assert pit_filters("alerts/open") == [every_table("alerts/open")] == [
        "stud/v1/+/alerts/open"]
    assert pit_filters("readers/+", ("t02", "t01")) == [
        "stud/v1/t02/readers/+", "stud/v1/t01/readers/+"]


@pytest.mark.parametrize(("suffix", "tables"), [
    ("secure/state", ("t1",)), ("secure/#", ("t1",)), ("", ("t1",)),
    ("state", ("t1", "+")), ("state", ("#",)), ("state", ("t1/secure",)),
])
def test_pit_filters_never_leave_a_tables_public_subtree(suffix: str,
                                                         tables: tuple[str, ...]) -> None:
    """A secure suffix or a table id that is no single level (a wildcard, a ``/``) is
    refused: the floor's role must not ask for anything outside its tables' public
    topics."""
    with pytest.raises(TopicError):
        pit_filters(suffix, tables)


def test_every_followed_topic_of_each_table_on_its_connection() -> None:
    """A pit's subscriptions are the every-table ones with ``+`` replaced by each of
    its tables: the alert topics on the alerts' connection, the rest on the other,
    ``state`` and ``readers/+`` at QoS 0."""
    pit = ("t1", "t2")
    everything = subscriptions(ALERTS_ROLE) + subscriptions(REST_ROLE)
    assert sorted(t for t, _ in everything) == sorted(every_table(s) for s in FOLLOWED)
    for role in (ALERTS_ROLE, REST_ROLE):
        wanted = [(topic.replace("/+/", f"/{table}/", 1), qos)
                  for topic, qos in subscriptions(role) for table in pit]
        assert subscriptions(role, pit) == wanted
    alerts = {t for t, _ in subscriptions(ALERTS_ROLE, pit)}
    assert alerts == {f"stud/v1/{t}/{s}" for t in pit for s in ALERT_FOLLOWED}
    qos = dict(subscriptions(REST_ROLE, pit))
    assert qos["stud/v1/t2/state"] == 0
    assert qos["stud/v1/t2/readers/+"] == 0
    assert qos["stud/v1/t2/hands"] == 1
    assert not [t for t, _ in everything + subscriptions(REST_ROLE, pit) if "secure" in t]


def test_a_pit_floor_sees_its_tables_and_not_the_others(
        tmp_path: Path, mosquitto: MosquittoBroker) -> None:
    """Tables t1, t2, t3 on one broker, retained and live; the floor following the pit
    ``["t3", "t1"]`` shows t1 and t3 with their alerts, and nothing of t2 (not even as
    a refused or ignored message: the broker never sent it)."""
    client = mqtt_client(mosquitto.port, "tables")
    t1, t2, t3 = (FakeTable(client, t) for t in ("t1", "t2", "t3"))
    now = time.time()
    for table in (t1, t2, t3):
        table.online()
    t2.sign_in("D20", "Bo Lin")
    t2.raise_alert("missing_burn", "error", ts=now - 300)        # rule 13, retained
    t1.raise_alert("illegal_bet", "warning", ts=now - 200)       # rule 3
    service = FloorService(write_config(tmp_path, mosquitto.port,
                                        extra='tables = ["t3", "t1"]')).start()
    try:
        assert '"tables": "t3,t1"' in service.text()  # the floor_following line
        page = Page(service.port)
        assert page.login("Maria Lopez") == 303
        sse = SseView(service.port, page.cookie).start()
        sse.wait(lambda v: len(v["tables"]) == 2 and len(v["alerts"]) == 1,
                 "t1 and t3 and t1's retained open alert")
        # Live: t2 first, then the pit's tables; when t3's last alert is on the page,
        # t2's (published before it by the same client) would have been too.
        t2.raise_alert("reader_offline", "critical", ts=now - 20)
        t2.reader("r1", "offline")
        t1.raise_alert("out_of_order", "error", ts=now - 10)
        t3.raise_alert("too_many_cards", "critical", ts=now - 5)  # rule 18
        view = sse.wait(lambda v: len(v["alerts"]) == 3, "the pit's 3 open alerts")
        assert sorted(t["table"] for t in view["tables"]) == ["t1", "t3"]
        assert sorted((a["table"], a["code"]) for a in view["alerts"]) == [
            ("t1", "illegal_bet"), ("t1", "out_of_order"), ("t3", "too_many_cards")]
        assert view["refused"] == 0
        assert view["ignored"] == 0
        sse.close()
    finally:
        service.stop()
        client.disconnect()
