"""End to end with the real daemon (issue 14): a table dealt on emulated readers
through the real daemon and Mosquitto; a dealer signs in, a wrong card raises an alert,
the floor acknowledges and resolves it, the hand ends. A public and a secure archive
(SQLite) store the hand once each, with its dealer and alert; the alert's row carries
its whole lifecycle; only the secure archive holds the folded players' down cards."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "daemon"))

from test_archive_service import Running, config, status_of, status_sub
from test_console import accepted, command, start_and_deal_third

from table_controller.archive.store import ArchiveStore, sqlite_url
from table_controller.domain.cards import Card
from table_controller.domain.events import CardPlaced
from table_controller.domain.zones import Zone
from table_controller.testing.broker import RecordingSubscriber, wait_until
from table_controller.testing.daemon_rig import ROOT, TABLE, TableRig, subscribe, wait_state

ALERTS = f"{ROOT}/alerts"
HANDS = f"{ROOT}/hands"
ANN = {"id": "D17", "name": "Ann Lee"}


def wrong_card(rig: TableRig, sub: RecordingSubscriber, code: str) -> dict[str, Any]:
    """Deal ``code`` to seat 3, not in the hand: the alert card_to_inactive_seat (as
    tests/daemon/test_floor.py does; not imported: a second test_floor module exists)."""
    rig.table.apply(CardPlaced(Zone.up(3), Card.parse(code)))
    return sub.wait_topic(ALERTS, lambda a: a["code"] == "card_to_inactive_seat").json()


@pytest.fixture
def running() -> Iterator[Running]:
    services = Running()
    try:
        yield services
    finally:
        for service in services.services:
            service.stop()


def test_the_daemons_hand_and_alert_archived(rig: TableRig, running: Running,
                                             tmp_path: Path) -> None:
    port = rig.broker.port
    status = status_sub(port)
    public_path, secure_path = tmp_path / "public.sqlite", tmp_path / "secure.sqlite"
    running.start(config(port, {"path": str(public_path)}, instance="pub"))
    running.start(config(port, {"path": str(secure_path)}, instance="sec", secure=True))
    status_of(status, "pub", lambda s: s["status"] == "online")
    status_of(status, "sec", lambda s: s["status"] == "online")

    sub = subscribe(port)
    rig.start_thread()
    wait_state(sub, lambda s: s["hand"] is None)
    accepted(command(rig, "dealer", {"action": "in", "id": "D17", "name": "Ann Lee"}))
    start_and_deal_third(rig, sub)
    alert = wrong_card(rig, sub, "Ks")
    accepted(command(rig, "ack", {"alert": alert["id"], "by": "Bob"}))
    accepted(command(rig, "resolve", {"alert": alert["id"], "by": "Bob",
                                      "note": "card returned"}))
    for seat, action in ((2, "bring_in"), (4, "fold"), (1, "fold")):
        accepted(command(rig, "act", {"seat": seat, "action": action}))
    published = sub.wait_topic(HANDS).json()

    public = ArchiveStore(sqlite_url(str(public_path)))
    secure = ArchiveStore(sqlite_url(str(secure_path)), secure=True)
    try:
        for store in (public, secure):
            wait_until(lambda s=store: s.counts()["hands"] == 1, what="the hand archived")
            wait_until(lambda s=store: [a["state"] for a in s.search_alerts(
                code="card_to_inactive_seat")] == ["resolved"], what="the alert resolved")
            [row] = store.search_hands(table=TABLE)
            assert row["hand_id"] == published["hand_id"]
            assert (row["dealer"], row["ended"], row["winners"]) == (ANN, "fold", [2])
            [kept] = store.search_alerts(code="card_to_inactive_seat")
            assert (kept["id"], kept["dealer"], kept["severity"]) == (alert["id"], ANN,
                                                                      "error")
            assert (kept["acknowledged_by"], kept["resolved_by"], kept["resolved_note"]) == (
                "Bob", "Bob", "card returned")
        assert public.hand(published["hand_id"]) == published
        secure_record = secure.hand(published["hand_id"])
        assert secure_record is not None
        assert secure_record["down_cards"] == {"1": ["Jc", "Td"], "2": ["8h", "5s"],
                                               "4": ["6d", "4s"]}
        assert b'"Jc"' not in public_path.read_bytes()
    finally:
        public.close()
        secure.close()
    status.close()
    sub.close()
