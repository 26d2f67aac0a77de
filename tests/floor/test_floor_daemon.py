"""The floor dashboard with the real daemon (i14-alerts' side of the contract): emulated
readers, the daemon, real Mosquitto, ``stud-table floor`` as a process.

A real alert is raised by a card dealt to a seat not in the hand (rule 7,
``card_to_inactive_seat``); the dashboard shows it with its id, severity and the dealer
signed in from the dashboard; a supervisor acknowledges and resolves it through the
dashboard's API; the daemon accepts, publishes the change, and the dashboard follows. An
acknowledgement of an unknown alert is refused by the daemon and its reason reaches the
page; a malformed one never leaves the dashboard.
"""

from __future__ import annotations

from pathlib import Path

from floor_rig import FloorService, Page, SseView, write_config
from test_console import start_and_deal_third

from table_controller.domain.cards import Card
from table_controller.domain.events import CardPlaced
from table_controller.domain.zones import Zone
from table_controller.testing.broker import MosquittoBroker
from table_controller.testing.daemon_rig import TABLE, TableRig, subscribe, wait_state


def test_ack_and_resolve_a_real_alert_through_the_dashboard(
        tmp_path: Path, mosquitto: MosquittoBroker, table: TableRig) -> None:
    """Dealer sign-in, a rule-7 alert, acknowledge, resolve: all from the dashboard,
    all carried out by the real daemon and reflected back on the page."""
    sub = subscribe(mosquitto.port)
    wait_state(sub, lambda s: s["hand"] is None)
    service = FloorService(write_config(tmp_path, mosquitto.port)).start()
    page = Page(service.port)
    assert page.login("Maria Lopez") == 303
    sse = SseView(service.port, page.cookie).start()
    try:
        sse.wait(lambda v: [t["table"] for t in v["tables"]] == [TABLE]
                 and v["tables"][0]["status"] == "online", "the table discovered")
        status, reply = page.command("dealer", {"table": TABLE, "action": "in",
                                                "id": "D17", "name": "Ann Lee"})
        assert (status, reply["accepted"]) == (200, True), reply
        sse.wait(lambda v: v["tables"][0]["dealer"] == {"id": "D17", "name": "Ann Lee"},
                 "the dealer signed in")

        start_and_deal_third(table, sub)
        table.table.apply(CardPlaced(Zone.up(3), Card.parse("Ah")))  # seat 3 is not in
        view = sse.wait(lambda v: any(a["code"] == "card_to_inactive_seat"
                                      for a in v["alerts"]), "the rule-7 alert")
        alert = next(a for a in view["alerts"] if a["code"] == "card_to_inactive_seat")
        assert alert["severity"] == "error"
        assert alert["dealer"] == {"id": "D17", "name": "Ann Lee"}
        assert alert["id"].startswith(f"{TABLE}:")

        status, reply = page.command("ack", {"table": TABLE, "alert": "no-such-alert"})
        assert (status, reply["accepted"]) == (200, False), reply
        assert reply["code"]
        assert reply["reason"]
        status, reply = page.command("resolve", {"table": TABLE, "alert": alert["id"]})
        assert status == 400  # no note: refused by the dashboard, never sent
        assert "note" in reply["reason"]

        status, reply = page.command("ack", {"table": TABLE, "alert": alert["id"]})
        assert reply["accepted"] is True, reply
        view = sse.wait(lambda v: any(a["id"] == alert["id"] and a["state"] == "acknowledged"
                                      for a in v["alerts"]), "the acknowledgement")
        acked = next(a for a in view["alerts"] if a["id"] == alert["id"])
        assert acked["acknowledged_by"] == "Maria Lopez"

        status, reply = page.command("resolve", {"table": TABLE, "alert": alert["id"],
                                                 "note": "card returned to the deck"})
        assert reply["accepted"] is True, reply
        sse.wait(lambda v: all(a["id"] != alert["id"] for a in v["alerts"]),
                 "the alert resolved")
        rows = page.get_json(f"/api/search/alerts?table={TABLE}")["rows"]
        done = next(r for r in rows if r["id"] == alert["id"])
        assert (done["state"], done["resolved_by"], done["note"]) == (
            "resolved", "Maria Lopez", "card returned to the deck")
    finally:
        sse.close()
        service.stop()
