"""Player statistics from the archive on the overlay's name plates and the producer page
(issue 22): a real service reading a real SQLite archive, headless Chromium.

The archive holds two console-driven stud hands (Ada: 2 hands, VPIP 1, 3rd-street
aggression 0, 2 bets, 3 calls, 1 showdown won; the counting is that of
tests/archive/test_archive_stats.py). One of them ended 10 minutes ago: an output
delayed by an hour must not count it yet (its players' numbers would spoil the hand it
is still showing).
"""

from __future__ import annotations

import base64
import http.client
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from table_controller.archive.store import ArchiveStore, parse_item, sqlite_url
from table_controller.testing.broadcast_rig import PASSWORD, Service, write_config
from table_controller.testing.broker import WAIT, MosquittoBroker
from table_controller.testing.browser import CHROMIUM, Browser

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (scripts/setup)")
AUTH = "Basic " + base64.b64encode(f"producer:{PASSWORD}".encode()).decode()
PLAYERS = [{"seat": 1, "name": "Ada", "stack_start": 1000, "stack_end": 1000},
           {"seat": 2, "name": "Bo", "stack_start": 1000, "stack_end": 1000},
           {"seat": 3, "name": "Chen", "stack_start": 1000, "stack_end": 1000}]


def act(street: int, seat: int, action: str, amount: int | None = None) -> dict[str, Any]:
    """One action of a record."""
    return {"street": street, "seat": seat, "action": action, "amount": amount}


def record(number: int, ended: float, actions: list[dict[str, Any]], winners: list[int],
           shown: dict[str, list[str]]) -> dict[str, Any]:
    """A public hand record of table t1."""
    return {"table": "t1", "hand": number, "seq": number, "ts": ended,
            "hand_id": f"t1:{number}:{round((ended - 90) * 1000)}", "game": "stud",
            "dealer": None, "started_ts": ended - 90, "ended_ts": ended, "players": PLAYERS,
            "actions": actions, "up_cards": {}, "shown": shown, "down_cards": None,
            "pot": 100, "winners": winners, "winners_high": winners, "winners_low": [],
            "alerts": [], "notices": [], "ended": "showdown" if shown else "fold"}


def archive(path: Path) -> None:
    """Hand 1 two hours ago (Ada wins a showdown), hand 2 ten minutes ago."""
    now = time.time()
    one = record(1, now - 7200, [act(3, 2, "bring_in", 2), act(3, 3, "complete", 5),
                                 act(3, 1, "call", 5), act(3, 2, "fold"), act(4, 1, "bet", 5),
                                 act(4, 3, "raise", 10), act(4, 1, "call", 10),
                                 act(5, 1, "check"), act(5, 3, "bet", 10), act(5, 1, "call", 10),
                                 act(7, 1, "bet", 10), act(7, 3, "call", 10)], [1],
                 {"1": ["Ah", "Ad", "Kc", "Kd", "7c", "2h", "8s"],
                  "3": ["Qh", "Qd", "Jc", "Jd", "5c", "4h", "3s"]})
    two = record(2, now - 600, [act(3, 1, "bring_in", 2), act(3, 2, "complete", 5),
                                act(3, 3, "raise", 10), act(3, 1, "fold"), act(3, 2, "call", 10),
                                act(4, 2, "check"), act(4, 3, "bet", 5), act(4, 2, "fold")],
                 [3], {})
    store = ArchiveStore(sqlite_url(str(path)))
    store.write([parse_item("hand", "t1", r, secure=False, now=now) for r in (one, two)])
    store.close()


def get(port: int, path: str, auth: bool = False) -> tuple[int, Any]:
    """GET a JSON path."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT)
    conn.request("GET", path, headers={"Authorization": AUTH} if auth else {})
    resp = conn.getresponse()
    text = resp.read().decode()
    conn.close()
    return resp.status, json.loads(text) if resp.status == 200 else text


@pytest.fixture
def service(tmp_path: Path, mosquitto: MosquittoBroker) -> Iterator[Service]:
    """Overlay live (stats all time), ``late`` delayed an hour (stats all time), archive."""
    archive(tmp_path / "archive.sqlite")
    late = ('[[outputs]]\nname = "late"\ndelay_s = 3600\nreveal = "never"\n'
            'stats = "all"\n')
    config = write_config(tmp_path, mosquitto.port, delay_s=0.0, reveal="all",
                          extra_outputs=late)
    text = config.read_text().replace('reveal = "all"\n', 'reveal = "all"\nstats = "all"\n', 1)
    text = text.replace('min_public_delay_s = 0.0', 'min_public_delay_s = 0.0\n'
                        'stats_session_hours = 1\n[archive]\npath = "archive.sqlite"\n', 1)
    config.write_text(text)
    svc = Service(config).start()
    yield svc
    svc.stop()


def test_stats_api_per_output_counts_only_what_it_may_show(service: Service) -> None:
    """The live overlay counts both hands; the output an hour behind only the first."""
    status, live = get(service.port, "/api/stats/overlay/t1")
    assert status == 200, live
    assert live["game"] == "stud"
    assert (live["players"]["Ada"]["hands"], live["players"]["Ada"]["vpip"]) == (2, 1)
    status, late = get(service.port, "/api/stats/late/t1")
    assert status == 200, late
    assert late["players"]["Ada"]["hands"] == 1
    assert late["players"]["Ada"]["won_at_showdown_pct"] == 100.0
    assert get(service.port, "/api/stats/venue/t1")[0] == 404  # the venue shows none
    assert get(service.port, "/api/stats/producer/t1")[0] == 401
    status, both = get(service.port, "/api/stats/producer/t1", auth=True)
    assert status == 200
    assert both["all"]["Ada"]["hands"] == 2
    assert both["session"]["Ada"]["hands"] == 1  # the last hour: hand 2 only


def test_stats_on_the_name_plates_and_the_producer_page(service: Service, mosquitto:
                                                        MosquittoBroker, tmp_path: Path) -> None:
    """The overlay's plate of a named player carries its line; the producer page has the
    session and all-time table."""
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="stats-table")
    client.connect("127.0.0.1", mosquitto.port)
    client.loop_start()
    seats = [{"seat": s, "status": "active", "up": ["Kd"], "down_count": 2, "down": ["2c", "3c"],
              "stack": 900, "bet": None, "showing": None, "name": n, "country": None}
             for s, n in ((1, "Ada"), (2, "Bo"), (3, "Chen"))]
    body = {"table": "t1", "hand": 3, "seq": 1, "ts": time.time(), "street": 3, "pot": 6,
            "bring_in": 1, "to_act": 2, "community": None, "alerts": [], "seats": seats}
    client.publish("stud/v1/t1/secure/state", json.dumps(body), qos=1,
                   retain=True).wait_for_publish(WAIT)
    browser = Browser(tmp_path / "profile")
    try:
        browser.open(f"http://127.0.0.1:{service.port}/overlay/t1")
        line = browser.wait_js("document.querySelector('.stat[data-stat-name=Ada]') &&"
                               " document.querySelector('.stat[data-stat-name=Ada]').textContent",
                               what="Ada's statistics on her plate")
        assert line == "VPIP 50% · 3rd 0% · AF 0.7 · SD 50% · W$SD 100% · 2 hands"
        assert browser.js("document.body.dataset.fit") == "1"
        browser.headers({"Authorization": AUTH})
        browser.open(f"http://127.0.0.1:{service.port}/producer/t1")
        row = browser.wait_js("document.querySelector('#stats tr[data-player=Ada]') &&"
                              " Array.from(document.querySelectorAll("
                              "'#stats tr[data-player=Ada] td')).map(t => t.textContent)",
                              what="the producer's statistics table")
        assert row[0] == "Ada"
        assert row[1] == "1 / 2"  # hands: this session / all time
        assert row[2] == "0 / 50"  # VPIP %
    finally:
        browser.close()
        client.loop_stop()
        client.disconnect()
