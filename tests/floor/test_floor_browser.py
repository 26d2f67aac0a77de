"""The floor dashboard in a real headless Chromium (issue 14): a supervisor logs in,
sees four tables and their open alerts sorted and coloured by severity, hears the cue
of a new one, acknowledges and resolves (with a note) from the page, and prints the
shift report. Screenshots go to docs/floor-dashboard.png and docs/floor-report.png.

Tables are contract-shaped messages published by :class:`floor_rig.FakeTable`;
commands are answered by :class:`floor_rig.CommandResponder` (which also drives the
table's lifecycle messages, as the daemon would after accepting).
"""

from __future__ import annotations

import json
import random
import socket
import time
from pathlib import Path
from typing import Any

import pytest
from floor_rig import (
    SUPERVISORS,
    ArchiveProcess,
    CommandResponder,
    FakeTable,
    FloorService,
    Got,
    mqtt_client,
    write_config,
)

from table_controller.archive.store import ArchiveStore, sqlite_url
from table_controller.testing.broker import MosquittoBroker, wait_until
from table_controller.testing.browser import CHROMIUM, Browser

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (scripts/setup)")

DOCS = Path(__file__).resolve().parents[2] / "docs"
DEALERS = [("D11", "Ann Kim"), ("D12", "Bo Li"), ("D14", "Carla Montserrat Díaz-Villanueva"),
           ("D17", "Dev Patel")]
CODES = [("missing_burn", "error"), ("out_of_order", "error"), ("hole_card_exposed", "error"),
         ("illegal_bet", "warning"), ("too_many_cards", "critical"),
         ("premature_deal", "error")]

ALERT_ROWS = """JSON.stringify(Array.from(document.querySelectorAll('#alerts tbody tr')).map(r => ({
  table: r.dataset.table, severity: r.dataset.severity, state: r.dataset.state,
  colour: getComputedStyle(r).borderLeftColor})))"""


def shift(tables: list[FakeTable], now: float) -> list[dict[str, Any]]:
    """Eight hours of finished hands on four tables, dealers rotating each hour."""
    rng = random.Random(14)
    records = []
    start = (int(now) // 3600 - 7) * 3600
    for hour in range(8):
        for i, table in enumerate(tables):
            ident, name = DEALERS[(i + hour) % 4]
            table.dealer = {"id": ident, "name": name}
            for k in range(rng.randint(18, 30) if hour < 7 else 6):
                ended = start + hour * 3600 + k * 110 + i * 7
                if ended > now:
                    break
                alerts = []
                rate = 0.12 if ident == "D14" else 0.04
                if rng.random() < rate:
                    code, severity = rng.choice(CODES)
                    alerts.append({"id": f"{table.table}:{k}h{hour}", "code": code,
                                   "severity": severity})
                records.append(table.finish_hand(
                    ended_ts=ended, alerts=alerts,
                    game="razz" if table.table == "t4" else "stud"))
    return records


def on_a_phone(browser: Browser) -> None:
    """The dashboard at 390x844 (a phone): every tab reads without sideways scrolling;
    screenshots of the live tab and the report go to docs/."""
    browser.call("Emulation.setDeviceMetricsOverride",
                 {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True},
                 session=True)
    try:
        for tab in ("live", "search", "report"):
            browser.js(f"document.querySelector('#tabs button[data-tab={tab}]').click(); 1")
            browser.wait_js(f"!document.getElementById('{tab}').hidden", what=f"tab {tab}")
            if tab == "report":  # drawn again at the phone's width, as a phone would
                browser.js("document.querySelector('#report-body').dataset.ready = '';"
                           " document.querySelector('#report-form').requestSubmit(); 1")
                browser.wait_js("document.querySelector('#report-body').dataset.ready === '1'",
                                what="the report on the phone")
            time.sleep(0.2)  # a frame for the layout
            width = browser.js("document.documentElement.scrollWidth")
            assert width <= 390, f"the {tab} tab is {width} px wide on a 390 px phone"
            wide = browser.js("""Array.from(document.querySelectorAll('body *'))
                .filter(e => e.getBoundingClientRect().right > innerWidth + 1
                             && e.offsetParent !== null).map(e => e.tagName + '#' + e.id
                             + '.' + e.className).slice(0, 5)""")
            assert wide == [], wide
            if tab == "live":
                browser.js("window.scrollTo(0, 0); 1")
                browser.screenshot(DOCS / "floor-phone-live.png")
            elif tab == "report":  # the per-dealer chart, long names whole on a phone too
                labels = browser.js("""Array.from(document.querySelectorAll(
                    '#report-body svg.chart')[2].querySelectorAll('text.lbl'))
                    .map(t => t.getBBox().x)""")
                assert min(labels) >= 0
                browser.js("document.querySelectorAll('#report-body figure')[1]"
                           ".scrollIntoView(); 1")
                time.sleep(0.2)
                browser.screenshot(DOCS / "floor-phone-report.png")
    finally:
        browser.call("Emulation.setDeviceMetricsOverride",
                     {"width": 1920, "height": 1080, "deviceScaleFactor": 1, "mobile": False},
                     session=True)


def test_dashboard_in_a_real_browser(tmp_path: Path, mosquitto: MosquittoBroker,
                                     browser: Browser) -> None:
    """Login, live alerts across tables (order, colour, sound cue), acknowledge and
    resolve from the page, the shift report; nothing loaded from elsewhere."""
    client = mqtt_client(mosquitto.port, "tables")
    tables = [FakeTable(client, f"t{n}") for n in range(1, 5)]
    by_name = {t.table: t for t in tables}

    def decide(got: Got) -> tuple[bool, str | None, str]:
        # The daemon's part: accept, then publish the lifecycle change.
        table = by_name[got.table]
        if got.body["alert"] not in table.open:
            return False, "unknown_alert", "no such open alert"
        state = "acknowledged" if got.name == "ack" else "resolved"
        table.change(got.body["alert"], state, got.body["by"], got.body.get("note"))
        return True, None, ""

    responder = CommandResponder(mosquitto.port, decide)
    database = tmp_path / "archive.sqlite"
    archive = ArchiveProcess(tmp_path, mosquitto.port, database).start()
    now = time.time()
    for table in tables:
        table.online(readers=("r1", "r2", "r3"))
    tables[3].reader("r2", "offline")
    records = shift(tables, now)
    store = ArchiveStore(sqlite_url(str(database)), migrate=False)
    wait_until(lambda: store.counts()["hands"] == len(records), what="the shift archived")
    store.close()
    for n, (table, (ident, name)) in enumerate(zip(tables, DEALERS, strict=True)):
        table.sign_in(ident, name)
        table.state(street=3 + n, pot=40 + 35 * n)
    tables[0].raise_alert("missing_burn", "error", "5th street dealt without a burn",
                          ts=now - 240)
    tables[1].raise_alert("too_many_cards", "critical", "seat 3 received an 8th card",
                          ts=now - 95)
    acked = tables[2].raise_alert("illegal_bet", "warning", "a raise of 15 where 10 is the"
                                  " limit (refused)", ts=now - 400)
    tables[2].change(acked, "acknowledged", "Tom Reyes")
    tables[3].raise_alert("reader_offline", "critical", "reader r2 offline: zones seat5,"
                          " seat6 are not read", ts=now - 600)
    tables[0].raise_alert("out_of_order", "error", "a card went to seat 4 before seat 2",
                          ts=now - 30)

    with socket.socket() as sock:  # a fixed port: the restarted dashboard comes back on it
        sock.bind(("127.0.0.1", 0))
        http_port = sock.getsockname()[1]
    config = write_config(tmp_path, mosquitto.port, archive=database, http_port=http_port)
    service = FloorService(config).start()
    base = f"http://127.0.0.1:{service.port}"
    try:
        browser.open(base + "/")
        assert browser.js("location.pathname") == "/login"
        browser.js(f"""document.querySelector('#name').value = 'Maria Lopez';
            document.querySelector('#password').value = {json.dumps(SUPERVISORS['Maria Lopez'])};
            document.querySelector('#login').submit(); 1""")
        browser.wait_js("location.pathname === '/' && !!document.querySelector('#tables')",
                        what="the dashboard after login")
        browser.wait_js("document.querySelectorAll('#tables article').length === 4"
                        " && document.querySelectorAll('#alerts tbody tr').length === 5",
                        what="4 tables and 5 open alerts")
        rows = json.loads(browser.js(ALERT_ROWS))
        # Most severe first, oldest first within a severity.
        assert [(r["table"], r["severity"]) for r in rows] == [
            ("t4", "critical"), ("t2", "critical"), ("t1", "error"), ("t1", "error"),
            ("t3", "warning")]
        assert rows[4]["state"] == "acknowledged"
        colours = {r["severity"]: r["colour"] for r in rows}
        assert len(set(colours.values())) == 3, colours  # one colour per severity
        assert browser.js("document.querySelector('#tables article[data-table=t4]"
                          " .reader.bad').dataset.reader") == "r2"
        assert browser.js("document.querySelector('#tables article[data-table=t1]"
                          " .dealer').textContent") == "Ann Kim (D11)"

        # A new alert: a row and the audible cue (generated by the page).
        beeps = browser.js("window.floorBeeps")
        new = tables[2].raise_alert("hole_card_exposed", "error",
                                    "a 2nd card landed face up at seat 6")
        browser.wait_js(f"!!document.querySelector('#alerts tr[data-id=\"{new}\"]')",
                        what="the new alert's row")
        assert browser.js("window.floorBeeps") == beeps + 1

        # Acknowledge from the page: the command carries the logged-in name.
        first = tables[0].open and sorted(tables[0].open)[0]
        browser.js(f"document.querySelector('#alerts tr[data-id=\"{first}\"] button.ack')"
                   ".click(); 1")
        browser.wait_js(f"document.querySelector('#alerts tr[data-id=\"{first}\"]')"
                        ".dataset.state === 'acknowledged'", what="the acknowledgement")
        assert [(g.name, g.body) for g in responder.got] == [
            ("ack", {"alert": first, "by": "Maria Lopez"})]

        # Resolve asks for the note; an empty note is not sent.
        crit = next(iter(tables[1].open))
        browser.js(f"document.querySelector('#alerts tr[data-id=\"{crit}\"]"
                   " button.resolve').click(); 1")
        browser.wait_js("document.querySelector('#resolve-dialog').open", what="the dialog")
        browser.js("document.querySelector('#resolve-ok').click(); 1")
        assert browser.js("document.querySelector('#resolve-dialog').open") is True
        assert len(responder.got) == 1
        browser.js("""document.querySelector('#resolve-note').value =
            'seat 3 hand killed, ante returned';
            document.querySelector('#resolve-ok').click(); 1""")
        browser.wait_js(f"!document.querySelector('#alerts tr[data-id=\"{crit}\"]')",
                        what="the resolved alert gone")
        assert responder.got[-1].body == {"alert": crit, "by": "Maria Lopez",
                                          "note": "seat 3 hand killed, ante returned"}

        # The screenshot: live alerts across four tables (one just raised, one acked).
        tables[1].raise_alert("premature_deal", "error",
                              "6th street dealt before the betting round was complete",
                              ts=now - 15)
        browser.wait_js("document.querySelectorAll('#alerts tbody tr').length === 6",
                        what="the alerts of the screenshot")
        browser.screenshot(DOCS / "floor-dashboard.png")

        # Search: one table's hands with an alert code; JSON export link.
        browser.js("document.querySelector('#tabs button[data-tab=search]').click(); 1")
        code = next(a["code"] for r in records if r["hand_id"].startswith("t3:")
                    for a in r["alerts"])
        expected = sum(1 for r in records if r["hand_id"].startswith("t3:")
                       and code in [a["code"] for a in r["alerts"]])
        browser.js(f"""const f = document.querySelector('#search-form');
            f.table.value = 't3'; f.code.value = '{code}';
            f.requestSubmit(); 1""")
        browser.wait_js("document.querySelector('#search-note').textContent.includes('found')",
                        what="search results")
        found = browser.js("Array.from(document.querySelectorAll('#results tbody tr'))"
                           ".map(r => r.children[1].textContent + ' ' + r.children[8]"
                           ".textContent)")
        assert len(found) == expected
        assert all(r.startswith("t3 ") for r in found)  # the archive gives alert counts
        assert browser.js("document.querySelectorAll('#results a[href$=\".phh\"]').length") \
            == expected
        phh = browser.call("Runtime.evaluate", {"expression": """(async () => {
            const a = document.querySelector('#results a[href$=".phh"]');
            const r = await fetch(a.href); return r.status + ' ' + await r.text(); })()""",
            "awaitPromise": True, "returnByValue": True}, session=True)["result"]["value"]
        assert phh.startswith('200 variant = "F7S"'), phh[:200]

        # The shift report, drawn by the page.
        browser.js("document.querySelector('#tabs button[data-tab=report]').click(); 1")
        browser.wait_js("document.querySelector('#report-body').dataset.ready === '1'",
                        what="the shift report")
        hands = int(browser.js("document.querySelector('#kpi-hands').textContent"))
        assert hands > 400
        assert browser.js("document.querySelectorAll('#report-body svg.chart').length") == 4
        assert browser.js("document.querySelectorAll('#report-body svg.chart')[0]"
                          ".querySelectorAll('rect.bar').length") >= 8
        dealers = browser.js("Array.from(document.querySelectorAll('table.group')[0]"
                             ".querySelectorAll('tbody tr')).map(r => r.children[0]"
                             ".textContent)")
        assert "Carla Montserrat Díaz-Villanueva (D14)" in dealers
        # The per-dealer chart draws every name whole, inside the chart (they were cut
        # at its left edge).
        labels = json.loads(browser.js("""JSON.stringify(Array.from(
            document.querySelectorAll('#report-body svg.chart')[2].querySelectorAll('text.lbl'))
            .map(t => ({label: t.dataset.label, text: t.textContent, x: t.getBBox().x,
                        r: t.getBBox().x + t.getBBox().width})))"""))
        assert {lab["label"] for lab in labels} >= {"Carla Montserrat Díaz-Villanueva (D14)"}
        for lab in labels:
            assert lab["text"].replace(" ", "") == lab["label"].replace(" ", ""), lab
            assert lab["x"] >= 0, f"{lab['label']} starts outside the chart"
        browser.screenshot(DOCS / "floor-report.png")
        on_a_phone(browser)

        # Nothing was loaded from anywhere but the dashboard itself.
        urls = browser.js("performance.getEntries().map(e => e.name)"
                          ".filter(n => n.startsWith('http'))")
        assert urls
        assert all(u.startswith(base) for u in urls), urls
        assert browser.js("Array.from(document.querySelectorAll('[src],[href]'))"
                          ".map(e => e.getAttribute('src') || e.getAttribute('href'))"
                          ".filter(u => /^(https?:)?\\/\\//.test(u)).length") == 0

        # The dashboard restarts (logins are kept in memory only): the open page goes
        # back to the login form by itself instead of saying "retrying" forever.
        service.stop()
        service = FloorService(config).start()
        browser.wait_js("location.pathname === '/login'", what="the page back at /login")
    finally:
        service.stop()
        archive.stop()
        responder.close()
        client.disconnect()
