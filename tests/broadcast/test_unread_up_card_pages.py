"""An up card no reader read, on the pages (issue 19), in headless Chromium.

The state's ``up_row`` holds ``{"unread": true}`` for an up card the engine knows was
dealt but no reader read (docs/mqtt.md). The overlay, the venue and the producer page
draw it as a face-down-looking card marked NOT READ in its place in the row (the seat
is not shown a card short); the producer page also lists it under "Manual card" and
choosing it picks the place to enter. Checked at 1920x1080, 1280x720 and a 390x844
phone for 2, 5 and 8 seats with the layout tests' rules (inside the safe area, nothing
clipped or overlapping, the transparent overlay's margins empty), then end to end: the
real daemon (``unread_stacks``), Mosquitto and the service, the producer entering the
card by hand, the slot filled on the page. Screenshots: the test's tmp directory;
docs/broadcast-unread-*.png (``STUD_SCREENSHOTS=1``, the default).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from table_controller.domain.cards import Card
from table_controller.domain.events import CardPlaced, TableEvent
from table_controller.domain.zones import BURN, Zone
from table_controller.testing.broadcast_rig import Service, write_config
from table_controller.testing.broker import MosquittoBroker
from table_controller.testing.browser import CHROMIUM, Browser
from table_controller.testing.daemon_rig import TABLE, TableRig, subscribe, wait_state
from tests.broadcast.test_overlay_layout import (
    GEOMETRY,
    SIZES,
    Publisher,
    check_geometry,
    hand,
    opaque_outside_safe_area,
    viewport,
)
from tests.broadcast.test_producer_manual_card import _enter, _producer

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (scripts/setup)")

DOCS = Path(__file__).resolve().parents[2] / "docs"
UNREAD = {"unread": True}
UNREAD_CARDS = "document.querySelectorAll('#seats .card[data-face=\"unread\"]')"


def unread_hand(n: int) -> dict[str, Any]:
    """The layout tests' 7th-street hand of ``n`` seats, seat 1's second up card (and,
    from 5 seats, seat 3's fourth) never read: a slot in ``up_row``, not in ``up``."""
    state, _result = hand(n, showdown=False)
    for row in state["seats"]:
        up = list(row["up"])
        row["up_row"] = list(up)
        missing = {1: 1, 3: 3}.get(row["seat"]) if row["status"] == "active" else None
        if missing is not None and (row["seat"] == 1 or n >= 5):
            row["up_row"][missing] = UNREAD
            row["up"] = [c for i, c in enumerate(up) if i != missing]
    return state


def publish(table: Publisher, state: dict[str, Any]) -> None:
    """``state`` on ``state`` (public fields) and ``secure/state``."""
    public = {**state, "seats": [{k: v for k, v in row.items()
                                  if k not in ("down", "reading", "equity")}
                                 for row in state["seats"]]}
    table.send("events", {"table": "t1", "hand": 42, "kind": "hand_started"})
    table.send("secure/events", {"table": "t1", "hand": 42, "kind": "hand_started"})
    table.send("state", public, retain=True)
    table.send("secure/state", state, retain=True)


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Service, Publisher, Path]]:
    """One broker, one service (a live overlay, reveal all), a table publishing states."""
    tmp = tmp_path_factory.mktemp("unread")
    (tmp / "mq").mkdir()
    broker = MosquittoBroker(tmp / "mq")
    broker.start()
    svc = Service(write_config(tmp, broker.port, delay_s=0.0, reveal="all")).start()
    table = Publisher(broker.port)
    shots = tmp / "shots"
    shots.mkdir()
    try:
        yield svc, table, shots
    finally:
        table.close()
        svc.stop()
        broker.close()


def _open(browser: Browser, url: str, size: str, n: int) -> dict[str, Any]:
    viewport(browser, *SIZES[size])
    browser.open(url)
    want = 2 if n >= 5 else 1
    browser.wait_js(f"{UNREAD_CARDS}.length === {want} && document.body.dataset.fit !== undefined",
                    what=f"{want} unread cards drawn")
    time.sleep(0.2)  # fonts and layout settle (a frame or two)
    geo: dict[str, Any] = json.loads(browser.js(GEOMETRY))
    return geo


@pytest.mark.parametrize("n", [2, 5, 8])
def test_pages_draw_an_unread_up_card_in_its_place_at_every_size(
        rig: tuple[Service, Publisher, Path], tmp_path: Path, n: int) -> None:
    svc, table, shots = rig
    publish(table, unread_hand(n))
    browser = Browser(tmp_path / "profile")
    try:
        for page, size in (("overlay", "1080p"), ("overlay", "720p"), ("venue", "1080p"),
                           ("venue", "phone")):
            geo = _open(browser, f"http://127.0.0.1:{svc.port}/{page}/t1", size, n)
            check_geometry(geo, safe=size != "phone", scrolls=size == "phone")
            # (the screenshot first: it makes the page's background transparent)
            browser.screenshot(shots / f"{page}-{n}-{size}.png", transparent=page == "overlay")
            if page == "overlay":
                assert opaque_outside_safe_area(browser, *SIZES[size]) == 0
            # In its place: seat 1's row reads up card, NOT READ, then the rest.
            faces = browser.js("Array.from(document.querySelectorAll("
                               "'#seats .seat[data-seat=\"1\"] .card')).map(c => c.dataset.face)")
            assert faces[-4:] == ["up", "unread", "up", "up"], faces
    finally:
        browser.close()


def test_the_producer_page_lists_the_unread_cards_and_picks_the_place(
        rig: tuple[Service, Publisher, Path], tmp_path: Path) -> None:
    """Also a hole card no reader read (seat 4's third: counted in ``down_count``, in
    no list): the producer, who sees the down cards, sees it NOT READ too."""
    svc, table, shots = rig
    state = unread_hand(5)
    seat4 = state["seats"][3]
    seat4["down"] = seat4["down"][:2]  # down_count stays 3
    publish(table, state)
    page = _producer(Browser(tmp_path / "producer-profile"), svc.port)
    try:
        for width, height, name in ((1920, 1080, "1920"), (1280, 720, "1280"),
                                    (390, 844, "phone")):
            page.call("Emulation.setDeviceMetricsOverride",
                      {"width": width, "height": height, "deviceScaleFactor": 1,
                       "mobile": width < 760}, session=True)
            page.wait_js(f"{UNREAD_CARDS}.length === 3 && "
                         "!document.getElementById('m-unread').hidden"
                         f" && document.documentElement.scrollWidth <= {width}",
                         what=f"the producer page at {width} px")
            time.sleep(0.2)
            page.screenshot(shots / f"producer-{name}.png")
            if name == "1920" and os.environ.get("STUD_SCREENSHOTS", "1") == "1":
                page.screenshot(DOCS / "broadcast-unread-producer.png")
        listed = page.js("Array.from(document.querySelectorAll('#m-unread button'))"
                         ".map(b => b.dataset.zone)")
        assert listed == ["seat1.up", "seat3.up", "seat4.down"]
        assert "Manual card can enter it" in page.js(
            f"{UNREAD_CARDS}[0].getAttribute('title')")
        page.js("document.querySelector('#m-unread button[data-zone=\"seat3.up\"]').click(); 1")
        assert page.js("document.getElementById('m-zone').value") == "seat3.up"
    finally:
        page.close()


def test_screenshot_of_the_overlay_for_the_docs(
        rig: tuple[Service, Publisher, Path], tmp_path: Path) -> None:
    """docs/broadcast-unread-overlay.png: 8 seats, two up cards not read."""
    if os.environ.get("STUD_SCREENSHOTS", "1") != "1":
        pytest.skip("STUD_SCREENSHOTS=0")
    svc, table, _shots = rig
    publish(table, unread_hand(8))
    browser = Browser(tmp_path / "profile")
    try:
        _open(browser, f"http://127.0.0.1:{svc.port}/overlay/t1", "1080p", 8)
        browser.screenshot(DOCS / "broadcast-unread-overlay.png", transparent=True)
    finally:
        browser.close()


# ------------------------------------------------------------------- end to end

PLAYERS = (1, 2, 4)
THIRD = {1: ("Jc", "Td", "Kh"), 2: ("8h", "5s", "3c"), 4: ("6d", "4s", "Qd")}
FOURTH = {1: "9s", 2: "Ah", 4: "2d"}  # seat 2's Ah: a dead tag, never read


def test_the_producer_fills_the_unread_slot_by_hand_end_to_end(
        tmp_path: Path, mosquitto: MosquittoBroker) -> None:
    rig = TableRig(tmp_path, mosquitto)
    rig.config_path.write_text(rig.config_path.read_text().replace(
        "[stakes]", "unread_stacks = true\n[stakes]", 1))
    sub = subscribe(mosquitto.port)
    # The Chromiums first: one starting beside the table starves its emulated readers
    # (see test_producer_manual_card's ``browsers``).
    producer = Browser(tmp_path / "producer-profile")
    overlay = Browser(tmp_path / "overlay-profile")
    try:
        rig.start_thread()
        service = Service(write_config(tmp_path, mosquitto.port, delay_s=0.0,
                                       reveal="all")).start()
        try:
            page = _producer(producer, service.port)
            wait_state(sub, lambda s: s["hand"] is None)
            overlay.open(f"http://127.0.0.1:{service.port}/overlay/{TABLE}")
            cards: list[TableEvent] = [
                CardPlaced(Zone.parse(f"seat{seat}.{'up' if n == 2 else 'down'}"),
                           Card.parse(THIRD[seat][n]))
                for n in range(3) for seat in PLAYERS]
            cards.append(CardPlaced(BURN, Card.parse("7c")))
            cards += [CardPlaced(Zone.up(seat), Card.parse(FOURTH[seat]))
                      for seat in PLAYERS if seat != 2]
            rig.deal(cards, pace=0.05)
            wait_state(sub, lambda s: s["seats"][1]["up_row"] == ["3c", UNREAD])
            seat2 = ("'#seats .seat[data-seat=\"2\"] .card[data-face=\"up\"],"
                     " #seats .seat[data-seat=\"2\"] .card[data-face=\"unread\"]'")
            for browser in (page, overlay):
                browser.wait_js(f"Array.from(document.querySelectorAll({seat2}))"
                                ".map(c => c.dataset.card).join(' ') === '3c unread'",
                                what="seat 2's row with its unread up card")
            page.wait_js("!document.getElementById('m-unread').hidden", what="the unread list")
            page.js("document.querySelector('#m-unread button').click(); 1")
            assert page.js("document.getElementById('m-zone').value") == "seat2.up"
            out = _enter(page, "seat2.up", "Ah")
            assert out["accepted"] == "1", out
            wait_state(sub, lambda s: s["seats"][1]["up_row"] == ["3c", "Ah"])
            for browser in (page, overlay):
                browser.wait_js(f"Array.from(document.querySelectorAll({seat2}))"
                                ".map(c => c.dataset.card).join(' ') === '3c Ah'",
                                what="seat 2's slot filled")
            page.wait_js("document.getElementById('m-unread').hidden", what="the list emptied")
            assert [m for m in sub.snapshot() if m.topic.endswith("/alerts")] == []
        finally:
            service.stop()
            rig.stop()
    finally:
        producer.close()
        overlay.close()
