"""The dashboard under its real broker role: deploy/mosquitto.conf and deploy/acl as
shipped (paths and port rewritten as tests/table_controller/mqtt/test_acl.py does), the
dashboard logged in as ``stud-floor``, the table side as ``stud-daemon``.

The floor role reads what the dashboard needs (status, state, alerts, alerts/open,
alerts/changes, dealer, readers, hands) and may send cmd/ack, cmd/resolve, cmd/dealer
and read its own reply topic: discovery, an alert, an acknowledgement and its reply all
work. A down card published on ``secure/`` never reaches it (it does not ask, and the
ACL would not give it).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from floor_rig import (
    CommandResponder,
    FakeTable,
    FloorService,
    Page,
    SseView,
    mqtt_client,
    write_config,
)

from table_controller.testing.broker import BrokerUser, MosquittoBroker

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "table_controller"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "table_controller" / "mqtt"))
from test_acl import _deploy_config  # deploy/mosquitto.conf, paths rewritten

USERS = [BrokerUser("stud-daemon", "pw-daemon"), BrokerUser("stud-floor", "pw-floor")]


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[MosquittoBroker]:
    """Mosquitto with the shipped config and ACL."""
    (tmp_path / "mq").mkdir()
    with MosquittoBroker(tmp_path / "mq", users=USERS, config_text=_deploy_config) as running:
        yield running


def test_the_dashboard_works_as_the_floor_user_and_gets_no_down_card(
        tmp_path: Path, broker: MosquittoBroker) -> None:
    """Discovery, an alert, ack with its reply, all as stud-floor; no secure/ message."""
    daemon = mqtt_client(broker.port, "table-t1", "stud-daemon", "pw-daemon")
    table = FakeTable(daemon, "t1")
    table.online()
    table.sign_in("D17", "Ann Lee")
    responder = CommandResponder(broker.port, username="stud-daemon", password="pw-daemon")
    service = FloorService(write_config(tmp_path, broker.port, username="stud-floor",
                                        password="pw-floor")).start()
    page = Page(service.port)
    assert page.login("Maria Lopez") == 303
    sse = SseView(service.port, page.cookie).start()
    try:
        for suffix in ("secure/state", "secure/hands"):
            daemon.publish(f"stud/v1/t1/{suffix}", json.dumps(
                {"table": "t1", "hand": 1, "seq": 99, "ts": 1.0,
                 "down_cards": {"1": ["As", "Kd"]}}), qos=1).wait_for_publish(10)
        ident = table.raise_alert("missing_burn", "error")
        view = sse.wait(lambda v: [a["id"] for a in v["alerts"]] == [ident], "the alert")
        assert view["tables"][0]["dealer"] == {"id": "D17", "name": "Ann Lee"}
        status, reply = page.command("ack", {"table": "t1", "alert": ident})
        assert (status, reply["accepted"]) == (200, True), reply
        assert [(g.name, g.body) for g in responder.got] == [
            ("ack", {"alert": ident, "by": "Maria Lopez"})]
        view = page.view()
        assert view["refused"] == 0
        assert "As" not in json.dumps(view)
        assert "floor_mqtt_refused" not in service.text()
    finally:
        sse.close()
        service.stop()
        responder.close()
        daemon.disconnect()
