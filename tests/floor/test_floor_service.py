"""The floor dashboard against a real Mosquitto, as a real process (issue 14, floor).

Tables are published contract-shaped by :class:`floor_rig.FakeTable` (the daemon side
of the contract is the i14-alerts branch); commands are answered by
:class:`floor_rig.CommandResponder` the way the daemon's console answers them, and
record what reached the broker.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from floor_rig import (
    CommandResponder,
    FakeTable,
    FloorService,
    Got,
    Page,
    SseView,
    mqtt_client,
    write_config,
)

from table_controller.handhistory.reader import read_phh
from table_controller.testing.broker import MosquittoBroker, wait_until


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, FloorService]]:
    """(broker port, service) shared by the tests that leave no state behind (commands
    that change nothing, logins): one start instead of four on a loaded CI machine."""
    tmp = tmp_path_factory.mktemp("floor-shared")
    (tmp / "mq").mkdir()
    broker = MosquittoBroker(tmp / "mq")
    broker.start()
    service = FloorService(write_config(tmp, broker.port)).start()
    try:
        yield broker.port, service
    finally:
        service.stop()
        broker.close()


def logged_in(service: FloorService, name: str = "Maria Lopez") -> Page:
    """A page logged in as ``name``."""
    page = Page(service.port)
    assert page.login(name) == 303
    return page


def order(view: dict[str, Any]) -> list[tuple[str, str]]:
    """(table, code) of the open alerts as the dashboard sorts them."""
    return [(a["table"], a["code"]) for a in view["alerts"]]


def test_discovers_every_table_and_sorts_alerts_by_severity_then_age(
        tmp_path: Path, mosquitto: MosquittoBroker) -> None:
    """Three tables, some retained before the dashboard starts (discovery from the
    retained set), some raised live; most severe first, oldest first within one."""
    client = mqtt_client(mosquitto.port, "tables")
    t1, t2, t3 = (FakeTable(client, t) for t in ("t1", "t2", "t3"))
    now = time.time()
    for table in (t1, t2, t3):
        table.online()
    t1.sign_in("D17", "Ann Kim")
    t1.raise_alert("missing_burn", "error", ts=now - 300)        # rule 13
    t2.raise_alert("illegal_bet", "warning", ts=now - 600)       # rule 3
    service = FloorService(write_config(tmp_path, mosquitto.port)).start()
    try:
        page = logged_in(service)
        sse = SseView(service.port, page.cookie).start()
        sse.wait(lambda v: len(v["tables"]) == 3 and len(v["alerts"]) == 2,
                 "3 tables and the 2 retained open alerts")
        t3.raise_alert("too_many_cards", "critical", ts=now - 10)  # rule 18
        t2.raise_alert("reader_offline", "critical", ts=now - 60)
        t3.raise_alert("out_of_order", "error", ts=now - 30)
        view = sse.wait(lambda v: len(v["alerts"]) == 5, "the 5 open alerts")
        assert order(view) == [("t2", "reader_offline"), ("t3", "too_many_cards"),
                               ("t1", "missing_burn"), ("t3", "out_of_order"),
                               ("t2", "illegal_bet")]
        tables = {t["table"]: t for t in view["tables"]}
        assert sorted(tables) == ["t1", "t2", "t3"]
        assert tables["t1"]["dealer"] == {"id": "D17", "name": "Ann Kim"}
        assert tables["t1"]["status"] == "online"
        assert tables["t1"]["hand"] == 1
        assert tables["t3"]["open_alerts"] == 2
        assert [r["reader"] for r in tables["t2"]["readers"]] == ["r1", "r2"]
        t2.reader("r2", "offline")
        view = sse.wait(lambda v: not next(t for t in v["tables"] if t["table"] == "t2")
                        ["readers_ok"], "t2's reader r2 offline")
        # An alert's dealer is the one on duty when it was raised.
        assert next(a for a in view["alerts"] if a["code"] == "missing_burn")["dealer"] == {
            "id": "D17", "name": "Ann Kim"}
        sse.close()
    finally:
        service.stop()
        client.disconnect()


def test_ack_reaches_the_broker_with_the_supervisor_as_by(
        floor: FloorService, mosquitto: MosquittoBroker) -> None:
    """Acknowledge, resolve (with its note) and dealer sign-in/out go out as the
    table's console commands with the logged-in supervisor's name as ``by``."""
    responder = CommandResponder(mosquitto.port)
    client = mqtt_client(mosquitto.port, "tables")
    table = FakeTable(client, "t7")
    table.online()
    ident = table.raise_alert("missing_burn", "error")
    page = logged_in(floor, "Tom Reyes")
    sse = SseView(floor.port, page.cookie).start()
    sse.wait(lambda v: len(v["alerts"]) == 1, "the alert")
    try:
        status, reply = page.command("ack", {"table": "t7", "alert": ident})
        assert (status, reply["accepted"]) == (200, True), reply
        status, reply = page.command("resolve", {"table": "t7", "alert": ident,
                                                 "note": "  burn card found, hand goes on "})
        assert (status, reply["accepted"]) == (200, True), reply
        status, reply = page.command("dealer", {"table": "t7", "action": "in", "id": "D3",
                                                "name": "Bo Li"})
        assert reply["accepted"] is True
        status, reply = page.command("dealer", {"table": "t7", "action": "out"})
        assert reply["accepted"] is True
        assert [(g.name, g.table, g.body) for g in responder.got] == [
            ("ack", "t7", {"alert": ident, "by": "Tom Reyes"}),
            ("resolve", "t7", {"alert": ident, "by": "Tom Reyes",
                               "note": "burn card found, hand goes on"}),
            ("dealer", "t7", {"action": "in", "id": "D3", "name": "Bo Li"}),
            ("dealer", "t7", {"action": "out"}),
        ]
        # The table's lifecycle messages drive the view (not the button press).
        table.change(ident, "acknowledged", "Tom Reyes")
        view = sse.wait(lambda v: v["alerts"] and v["alerts"][0]["state"] == "acknowledged",
                        "the acknowledgement")
        assert view["alerts"][0]["acknowledged_by"] == "Tom Reyes"
        table.change(ident, "resolved", "Tom Reyes", note="burn card found")
        sse.wait(lambda v: not v["alerts"], "the alert resolved")
        found = page.get_json("/api/search/alerts?table=t7")["rows"]
        assert [(a["id"], a["state"], a["note"]) for a in found] == [
            (ident, "resolved", "burn card found")]
    finally:
        sse.close()
        responder.close()
        client.disconnect()


MALFORMED: list[tuple[str, Any, str]] = [
    # The table's own words (parse_command, issue 20) for the fields; the dashboard's
    # for what only a page can get wrong (table, by, the body itself).
    ("ack", {"table": "t7"}, "ack: alert: is missing"),
    ("ack", {"table": "t7", "alert": ""}, "ack: alert: must not be empty"),
    ("ack", {"table": "t7", "alert": "x" * 101}, "alert: is longer than 100 characters"),
    ("ack", {"table": "t7", "alert": "t7:5", "by": "Someone Else"}, "by is set by the dashboard"),
    ("ack", {"table": "t7", "alert": "t7:5", "extra": 1}, "extra: unexpected field"),
    ("ack", {"table": "t7/#", "alert": "t7:5"}, "bad table id"),
    ("ack", {"alert": "t7:5"}, "table is required"),
    ("ack", ["t7", "t7:5"], "must be a JSON object"),
    ("ack", b"{not json", "not JSON"),
    ("resolve", {"table": "t7", "alert": "t7:5"}, "resolve: note: is missing"),
    ("resolve", {"table": "t7", "alert": "t7:5", "note": "   "}, "note: must not be empty"),
    ("resolve", {"table": "t7", "alert": "t7:5", "note": "x" * 201}, "longer than 200"),
    ("dealer", {"table": "t7", "action": "in", "id": "D3"}, "dealer: name: is missing"),
    ("dealer", {"table": "t7", "action": "in", "id": "D3", "name": "x" * 41},
     "name: is longer than 40 characters"),
    ("dealer", {"table": "t7", "action": "in", "id": "D 3", "name": "Ann"}, "must be one word"),
    ("dealer", {"table": "t7", "action": "sideways"}, 'action: must be "in" or "out"'),
    ("dealer", {"table": "t7", "action": "out", "id": "D3"}, "not given when a dealer signs out"),
    ("dealer", {"table": "t7", "action": "in", "id": "D3", "name": "A\x1bB"},
     "cannot be shown"),
    ("shutdown", {"table": "t7"}, "unknown command"),
    ("ack", b"{" + b" " * 5000 + b"}", "larger than 4096 bytes"),
]


def test_a_malformed_command_from_a_page_is_refused_with_the_reason_and_not_sent(
        shared: tuple[int, FloorService]) -> None:
    """Nothing malformed reaches the table: the page gets 400 and the reason; the good
    command sent after all of them is the first thing the table receives."""
    port, floor = shared
    responder = CommandResponder(port)
    try:
        page = logged_in(floor)
        for name, body, reason in MALFORMED:
            status, reply = page.command(name, body)
            assert (status, reply["accepted"], reply["code"]) == (400, False, "malformed"), body
            assert reason in reply["reason"], (body, reply)
        status, reply = page.command("ack", {"table": "t7", "alert": "t7:9"})
        assert reply["accepted"] is True
        wait_until(lambda: len(responder.got) >= 1, what="the good command")
        assert [(g.name, g.body) for g in responder.got] == [
            ("ack", {"alert": "t7:9", "by": "Maria Lopez"})]
    finally:
        responder.close()


def test_the_tables_rejection_reaches_the_page(shared: tuple[int, FloorService]) -> None:
    """An ack of an unknown or resolved alert is refused by the table; the page shows
    the table's code and reason as given."""
    def decide(got: Got) -> tuple[bool, str | None, str]:
        return False, "unknown_alert", f"no open alert {got.body['alert']!r} at {got.table}"

    port, floor = shared
    responder = CommandResponder(port, decide)
    try:
        page = logged_in(floor)
        status, reply = page.command("ack", {"table": "t7", "alert": "t7:404"})
        assert status == 200
        assert (reply["accepted"], reply["code"]) == (False, "unknown_alert")
        assert "t7:404" in reply["reason"]
    finally:
        responder.close()


def test_no_table_answering_is_a_clear_failure(shared: tuple[int, FloorService]) -> None:
    """No daemon on the topic: the page is told nobody answered (504), after the timeout."""
    page = logged_in(shared[1])
    status, reply = page.command("ack", {"table": "nobody", "alert": "nobody:1"})
    assert status == 504
    assert reply["code"] == "no_reply"
    assert "no reply from table 'nobody'" in reply["reason"]


def test_login_is_required_and_checked(shared: tuple[int, FloorService]) -> None:
    """Without a login: redirected to /login, 401 on the API and the stream; a wrong
    password or an unknown name is refused."""
    page = Page(shared[1].port)
    status, headers, _ = page.request("GET", "/")
    assert status == 303
    assert headers["location"] == "/login"
    for path in ("/api/view", "/sse", "/api/report", "/api/search/hands"):
        assert page.request("GET", path)[0] == 401, path
    assert page.request("POST", "/api/cmd/ack", b"{}", {"X-Stud-Table": "1"})[0] == 401
    assert page.login("Maria Lopez", "wrong password") == 401
    assert page.login("Nobody", "floor-secret-1") == 401
    assert not page.cookie
    assert page.login("Maria Lopez") == 303
    status, _, html = page.request("GET", "/")
    assert status == 200
    assert 'data-supervisor="Maria Lopez"' in html
    assert page.request("POST", "/logout")[0] == 303
    assert page.request("GET", "/api/view")[0] == 401
    # A command without the header a cross-site form cannot send is refused.
    page.login("Maria Lopez")
    status, _, text = page.request("POST", "/api/cmd/ack", json.dumps(
        {"table": "t1", "alert": "t1:1"}).encode(), {"Content-Type": "application/json"})
    assert status == 400
    assert "X-Stud-Table" in text


def test_bad_messages_on_the_broker_are_refused_and_change_nothing(
        floor: FloorService, mosquitto: MosquittoBroker) -> None:
    """Not JSON, no envelope, an alert without an id, a hostile alerts/open: counted
    and logged, the dashboard goes on, the good table still shows."""
    client = mqtt_client(mosquitto.port, "hostile")
    page = logged_in(floor)
    sse = SseView(floor.port, page.cookie).start()
    try:
        for topic, payload in (("stud/v1/t1/alerts", b"\xff\xfe not json"),
                               ("stud/v1/t1/alerts", b"[1, 2]"),
                               ("stud/v1/t1/alerts/open", b'{"alerts": []}'),  # no envelope
                               ("stud/v1/t1/status", b"x" * 300_000)):
            client.publish(topic, payload, qos=1).wait_for_publish(10)
        client.publish("stud/v1/t1/alerts/open", json.dumps(
            {"table": "t1", "hand": 1, "seq": 1, "ts": 1.0,
             "alerts": ["not an object", {"code": "no id"}, {"id": 7}]}),
            qos=1).wait_for_publish(10)
        client.publish("stud/v1/t1/alerts", json.dumps(
            {"table": "t1", "hand": 1, "seq": 2, "ts": 2.0, "code": "missing_burn",
             "severity": "error"}), qos=1).wait_for_publish(10)
        good = FakeTable(client, "t2")
        good.online()
        good.raise_alert("missing_burn", "error")
        view = sse.wait(lambda v: v["refused"] >= 4 and v["alerts"], "refusals and t2's alert")
        assert [(a["table"], a["code"]) for a in view["alerts"]] == [("t2", "missing_burn")]
        assert "floor_message_refused" in floor.text()
        assert floor.process is not None
        assert floor.process.poll() is None
    finally:
        sse.close()
        client.disconnect()


def test_search_report_and_export_from_the_hands_seen(
        floor: FloorService, mosquitto: MosquittoBroker) -> None:
    """Hands published on ``hands`` are searchable by table, time, dealer and code,
    counted in the shift report and exported as JSON (no down card field kept) and PHH."""
    client = mqtt_client(mosquitto.port, "tables")
    t1, t2 = FakeTable(client, "t1"), FakeTable(client, "t2")
    hour = (int(time.time()) // 3600 - 2) * 3600
    t1.sign_in("D1", "Ann Kim")
    t2.sign_in("D2", "Bo Li")
    burn = [{"id": "t1:x", "code": "missing_burn", "severity": "error"}]
    records = [t1.finish_hand(ended_ts=hour + 100, alerts=burn),
               t1.finish_hand(ended_ts=hour + 200),
               t1.finish_hand(ended_ts=hour + 3700,
                              alerts=[{"id": "t1:y", "code": "illegal_bet",
                                       "severity": "warning"}]),
               t2.finish_hand(ended_ts=hour + 3800, alerts=burn)]
    page = logged_in(floor)
    wait_until(lambda: len(page.get_json("/api/search/hands")["rows"]) == 4,
               what="the 4 hands")
    rows = page.get_json("/api/search/hands?table=t1")["rows"]
    assert [r["hand_id"] for r in rows] == [r["hand_id"] for r in records[2::-1]]
    rows = page.get_json("/api/search/hands?code=missing_burn")["rows"]
    assert {r["table"] for r in rows} == {"t1", "t2"}
    rows = page.get_json(f"/api/search/hands?dealer=bo&since={hour + 3600}")["rows"]
    assert [r["hand_id"] for r in rows] == [records[3]["hand_id"]]
    report = page.get_json(f"/api/report?since={hour}&until={hour + 7200}")
    assert report["hands"] == 4
    assert report["errors"] == 2
    assert [h["hands"] for h in report["hours"]] == [2, 2]
    assert {d["dealer"]: d["errors_per_100"] for d in report["dealers"]} == {
        "Ann Kim (D1)": 33.33, "Bo Li (D2)": 100.0}
    status, headers, text = page.request("GET", f"/api/hand/{records[0]['hand_id']}.json")
    assert status == 200
    assert "attachment" in headers["content-disposition"]
    exported = json.loads(text)
    assert exported["hand_id"] == records[0]["hand_id"]
    assert "down_cards" not in exported
    status, headers, text = page.request("GET", f"/api/hand/{records[0]['hand_id']}.phh")
    assert status == 200
    assert 'filename="t1_1_' in headers["content-disposition"]
    phh = read_phh(text)
    assert phh.seats == (1, 3, 5)
    assert [c.code for c in phh.cards_of(1)][2:] == ["Qs"]  # the up card; two stand-ins
    assert page.request("GET", "/api/hand/t1:999:0.phh")[0] == 404
    assert page.request("GET", "/api/search/hands?since=yesterday")[0] == 400
    client.disconnect()


def test_an_unreachable_broker_is_logged_and_shown(tmp_path: Path) -> None:
    """No broker: one error line in the log (not one per retry) and the page says the
    broker is lost; the dashboard still serves."""
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    service = FloorService(write_config(tmp_path, port)).start(connected=False)
    try:
        wait_until(lambda: "floor_mqtt_unreachable" in service.text(),
                   what="the unreachable broker logged")
        page = logged_in(service)
        assert page.view()["connected"] is False
        assert service.text().count("floor_mqtt_unreachable") == 1
    finally:
        service.stop()


def test_a_missing_archive_file_is_reported_not_created(tmp_path: Path,
                                                        shared: tuple[int, FloorService]
                                                        ) -> None:
    """A mistyped ``[archive] path``: search and report answer 503 with the reason and no
    empty database file appears (it would look like an archive without hands)."""
    missing = tmp_path / "nowhere" / "archive.sqlite"
    service = FloorService(write_config(tmp_path, shared[0], archive=missing)).start()
    try:
        page = logged_in(service)
        for path in ("/api/search/hands", "/api/search/alerts", "/api/report",
                     "/api/hand/t1:1:0.json"):
            status, _, text = page.request("GET", path)
            assert status == 503, (path, status, text)
            assert "no archive at" in text
        assert not missing.exists()
    finally:
        service.stop()
