"""The overlay and the venue as a viewer sees them (issue 22, "an overlay a stream would
put on air"): headless Chromium at 1920x1080, 1280x720 and 390x844, for 2, 5 and 8 seats,
the overlay along the bottom, the left and the right.

For every case a DOM test (every plate, the pot box and the result inside the TV-safe
area — 5 % margins, title safe — none overlapping another, no name or card row clipped,
no sideways scrolling) and, for the transparent overlay, a pixel test: every pixel of the
screenshot outside the safe area is fully transparent. The screenshots of the cases the
README shows go to docs/ (``STUD_SCREENSHOTS=1``, the default); every case's is also kept
under the test's tmp directory to be looked at.
"""

from __future__ import annotations

import base64
import json
import os
import struct
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from table_controller.testing.broadcast_rig import Service, write_config
from table_controller.testing.broker import WAIT, MosquittoBroker
from table_controller.testing.browser import CHROMIUM, Browser

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (scripts/setup)")

DOCS = Path(__file__).resolve().parents[2] / "docs"
NAMES = [("Maximilian Oberhausen-Schwarz", "DE"), ("Ada Lovelace", "GB"), ("Chen Wei", "CN"),
         ("Bartholomew Featherstonehaugh", "GB"), ("Dara Okafor", "NG"),
         ("Giulia Bianchi-Ferraro", "IT"), ("Eve Moreau", "FR"), ("Kim", "KR")]
DECK = [r + s for s in "shdc" for r in "AKQJT98765432"]
SIZES = {"1080p": (1920, 1080), "720p": (1280, 720), "phone": (390, 844)}


def hand(n: int, *, showdown: bool) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """A 7th-street secure state of ``n`` seats (seat 2 folded on 4th when n >= 5, a
    seat named but not dealt in when n >= 5) and, at ``showdown``, its result."""
    cards = iter(DECK)
    seats = []
    live = []
    for seat in range(1, 9):
        if seat > n:
            seats.append({"seat": seat, "status": "empty", "up": [], "down_count": 0,
                          "stack": None, "bet": None, "showing": None, "name": None,
                          "country": None, "down": []})
            continue
        name, country = NAMES[seat - 1]
        if n >= 5 and seat == n:  # sat down after the deal: waiting for the next hand
            seats.append({"seat": seat, "status": "empty", "up": [], "down_count": 0,
                          "stack": 1500, "bet": None, "showing": None, "name": name,
                          "country": country, "down": []})
            continue
        folded = n >= 5 and seat == 2
        down = [next(cards), next(cards)] + ([] if folded else [next(cards)])
        up = [next(cards)] + ([] if folded else [next(cards), next(cards), next(cards)])
        row = {"seat": seat, "status": "folded" if folded else "active", "up": up,
               "down_count": len(down), "down": down, "stack": 12_400 - 1_150 * seat,
               "bet": None if folded or showdown else 200, "showing": "a pair of nines",
               "name": name, "country": country}
        if not folded:
            row["reading"] = "two pair, kings and nines"
            live.append(seat)
        seats.append(row)
    for k, seat in enumerate(live):
        row = next(r for r in seats if r["seat"] == seat)
        row["equity"] = round((k + 1) / sum(range(1, len(live) + 1)), 3)
    state = {"table": "t1", "hand": 42, "street": 7, "pot": 4_850, "bring_in": None,
             "to_act": None if showdown else live[0], "community": None, "alerts": [],
             "seats": seats}
    if not showdown:
        return state, None
    shown = [{"seat": s, "cards": next(r for r in seats if r["seat"] == s)["down"]
              + next(r for r in seats if r["seat"] == s)["up"],
              "description": d} for s, d in zip(live[:2], ("three of a kind, kings",
                                                           "two pair, aces and sevens"),
                                                strict=False)]
    result = {"table": "t1", "hand": 42, "kind": "hand_result", "winners": [live[0]],
              "shown": shown}
    return state, result


class Publisher:
    """Publishes states and events with the envelope, as the daemon does."""

    def __init__(self, port: int) -> None:
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="layout-table")
        self.client.connect("127.0.0.1", port)
        self.client.loop_start()
        self.seq = 0

    def send(self, topic: str, body: dict[str, Any], retain: bool = False) -> None:
        """One message on ``stud/v1/t1/<topic>``."""
        self.seq += 1
        payload = {**body, "seq": self.seq, "ts": time.time()}
        self.client.publish(f"stud/v1/t1/{topic}", json.dumps(payload), qos=1,
                            retain=retain).wait_for_publish(WAIT)

    def show(self, n: int, *, showdown: bool) -> None:
        """The hand of ``n`` seats (public and secure), then its result if any."""
        state, result = hand(n, showdown=showdown)
        public = {**state, "seats": [{k: v for k, v in row.items()
                                      if k not in ("down", "reading", "equity")}
                                     for row in state["seats"]]}
        self.send("events", {"table": "t1", "hand": 42, "kind": "hand_started"})
        self.send("secure/events", {"table": "t1", "hand": 42, "kind": "hand_started"})
        self.send("state", public, retain=True)
        self.send("secure/state", state, retain=True)
        if result is not None:
            self.send("events", result)
            self.send("secure/events", result)

    def close(self) -> None:
        """Disconnect."""
        self.client.loop_stop()
        self.client.disconnect()


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Service, Publisher, Browser,
                                                                    Path]]:
    """One broker, one service (a live overlay, reveal all), one browser for all cases."""
    tmp = tmp_path_factory.mktemp("layout")
    (tmp / "mq").mkdir()
    broker = MosquittoBroker(tmp / "mq")
    broker.start()
    svc = Service(write_config(tmp, broker.port, delay_s=0.0, reveal="all")).start()
    table = Publisher(broker.port)
    browser = Browser(tmp / "profile")
    shots = tmp / "shots"
    shots.mkdir()
    try:
        yield svc, table, browser, shots
    finally:
        browser.close()
        table.close()
        svc.stop()
        broker.close()


def viewport(browser: Browser, width: int, height: int) -> None:
    """Set the page's size (a phone: mobile emulation, as a phone's browser lays out)."""
    browser.call("Emulation.setDeviceMetricsOverride",
                 {"width": width, "height": height, "deviceScaleFactor": 1,
                  "mobile": width < 700}, session=True)


GEOMETRY = """JSON.stringify((() => {
  const r = (el) => { const b = el.getBoundingClientRect();
    return {l: b.left, t: b.top, r: b.right, b: b.bottom}; };
  const parts = Array.from(document.querySelectorAll(
      '#seats .seat, #board, #result:not([hidden])'));
  const clipped = Array.from(document.querySelectorAll(
      '#seats .seat, #seats .seat .name, #seats .seat .cards, #seats .seat .line2'))
    .filter(el => el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1)
    .map(el => el.className + ' of ' + (el.closest('.seat') || el).dataset.name);
  return {w: innerWidth, h: innerHeight, sw: document.documentElement.scrollWidth,
    sh: document.documentElement.scrollHeight, parts: parts.map(el => ({id: el.id ||
    el.dataset.name, ...r(el)})), clipped, fit: document.body.dataset.fit,
    names: Array.from(document.querySelectorAll('#seats .seat .name')).map(e => e.textContent)};
})())"""


def check_geometry(geo: dict[str, Any], *, safe: bool, scrolls: bool) -> None:
    """Inside the frame (the safe area if ``safe``), no overlap, nothing clipped, no
    sideways scrolling (nor downwards unless ``scrolls``)."""
    w, h = geo["w"], geo["h"]
    mx, my = (0.05 * w, 0.05 * h) if safe else (0, 0)
    assert geo["sw"] <= w, f"sideways scrolling: {geo['sw']} > {w}"
    if not scrolls:
        assert geo["sh"] <= h, f"the page is {geo['sh']} px high in {h}"
    parts = geo["parts"]
    for p in parts:
        assert p["l"] >= mx - 1, f"{p['id']} leaves the frame: {p}"
        assert p["r"] <= w - mx + 1, f"{p['id']} leaves the frame: {p}"
        if not scrolls:
            assert p["t"] >= my - 1, f"{p['id']} leaves the frame: {p}"
            assert p["b"] <= h - my + 1, f"{p['id']} leaves the frame: {p}"
    for i, a in enumerate(parts):
        for b in parts[i + 1:]:
            apart = (a["r"] <= b["l"] + 0.5 or b["r"] <= a["l"] + 0.5
                     or a["b"] <= b["t"] + 0.5 or b["b"] <= a["t"] + 0.5)
            assert apart, f"{a['id']} overlaps {b['id']}"
    assert geo["clipped"] == [], geo["clipped"]


def png_opaque(data: bytes) -> int:
    """How many pixels of the RGBA PNG ``data`` are not fully transparent (a small
    decoder on the standard library: the project has no image package)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width, height = 8, b"", 0, 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", chunk[:10])
            assert (depth, color) == (8, 6), "RGBA 8-bit expected"
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * 4
    prev = bytearray(stride)
    count = 0
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f:
            for i in range(stride):
                a = line[i - 4] if i >= 4 else 0
                b = prev[i]
                c = prev[i - 4] if i >= 4 else 0
                if f == 1:
                    line[i] = (line[i] + a) & 255
                elif f == 2:
                    line[i] = (line[i] + b) & 255
                elif f == 3:
                    line[i] = (line[i] + (a + b) // 2) & 255
                else:
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                    line[i] = (line[i] + pred) & 255
        prev = line
        count += sum(1 for v in line[3::4] if v)
    return count


def opaque_outside_safe_area(browser: Browser, width: int, height: int) -> int:
    """Pixels drawn in the 5 % margins of the transparent page (the four strips are
    captured on their own: small images, decoded quickly)."""
    mx, my = int(0.05 * width) - 2, int(0.05 * height) - 2
    strips = [(0, 0, width, my), (0, height - my, width, my), (0, my, mx, height - 2 * my),
              (width - mx, my, mx, height - 2 * my)]
    total = 0
    for x, y, w, h in strips:
        shot = browser.call("Page.captureScreenshot", {
            "format": "png", "clip": {"x": x, "y": y, "width": w, "height": h, "scale": 1}},
            session=True)["data"]
        total += png_opaque(base64.b64decode(shot))
    return total


def show(rig: tuple[Service, Publisher, Browser, Path], page: str, n: int, size: str, *,
         position: str = "bottom", showdown: bool = False) -> tuple[dict[str, Any], Path]:
    """Open ``page`` at ``size`` with the hand of ``n`` seats; (geometry, screenshot)."""
    svc, table, browser, shots = rig
    width, height = SIZES[size]
    viewport(browser, width, height)
    query = f"?position={position}" if page == "overlay" else ""
    table.show(n, showdown=showdown)
    browser.open(f"http://127.0.0.1:{svc.port}/{page}/t1{query}")
    want = n - (1 if n >= 5 else 0)  # the dealt-in seats, the waiting one drawn apart
    result = "document.querySelector('#result h2') !== null" if showdown else "true"
    browser.wait_js(f"document.querySelectorAll('#seats .seat:not(.waiting)').length === {want}"
                    f" && {result} && document.body.dataset.fit !== undefined",
                    what=f"{page} {n} seats")
    time.sleep(0.2)  # fonts and layout settle (a frame or two)
    browser.js("1")
    geo = json.loads(browser.js(GEOMETRY))
    shot = shots / f"{page}-{position}-{n}-{size}{'-showdown' if showdown else ''}.png"
    browser.screenshot(shot, transparent=page == "overlay")
    return geo, shot


@pytest.mark.parametrize("size", ["1080p", "720p"])
@pytest.mark.parametrize("n", [2, 5, 8])
@pytest.mark.parametrize("position", ["bottom", "left", "right"])
def test_overlay_fits_the_safe_area(rig: Any, position: str, n: int, size: str) -> None:
    """Plates, pot box and result inside the TV-safe area, apart, nothing clipped; every
    pixel outside the safe area transparent (the felt shows)."""
    for showdown in (False, True):
        geo, shot = show(rig, "overlay", n, size, position=position, showdown=showdown)
        check_geometry(geo, safe=True, scrolls=False)
        assert geo["fit"] == "1"
        assert any("Maximilian Oberhausen-Schwarz" in name for name in geo["names"])
        assert opaque_outside_safe_area(rig[2], *SIZES[size]) == 0, shot


def test_overlay_reads_the_hand_at_showdown(rig: Any) -> None:
    """At showdown a shown seat's plate says what the hand is (the result's words), the
    result box names the winner and how; a folded plate is greyed but legible."""
    show(rig, "overlay", 5, "1080p", showdown=True)
    browser = rig[2]
    plates = json.loads(browser.js("""JSON.stringify(Array.from(
        document.querySelectorAll('#seats .seat')).map(e => ({seat: Number(e.dataset.seat),
        cls: e.className, reading: e.querySelector('.reading').textContent,
        color: getComputedStyle(e.querySelector('.name')).color,
        bg: getComputedStyle(e).backgroundColor})))"""))
    by_seat = {p["seat"]: p for p in plates}
    assert by_seat[1]["reading"] == "three of a kind, kings"
    assert by_seat[3]["reading"] == "two pair, aces and sevens"
    assert "showing" not in by_seat[1]["reading"]
    assert "folded" in by_seat[2]["cls"]
    # light text on a dark plate: legible (contrast of the name's colour to the plate)
    rgb = [int(v) for v in by_seat[2]["color"][4:-1].split(",")[:3]]
    bg = [int(float(v)) for v in by_seat[2]["bg"][5:-1].split(",")[:3]]
    assert sum(rgb) > 500
    assert sum(bg) < 200
    assert "waiting" in by_seat[5]["cls"]
    assert browser.js("document.querySelector('#result .how').textContent") == (
        "with three of a kind, kings")
    assert "Pot 4,850" in browser.js("document.getElementById('pot').textContent")
    assert "7th street" in browser.js("document.getElementById('street').textContent")


@pytest.mark.parametrize("size", ["1080p", "720p", "phone"])
@pytest.mark.parametrize("n", [2, 5, 8])
def test_venue_room_screen_and_phone(rig: Any, n: int, size: str) -> None:
    """The venue at room-screen sizes fits the screen; on a phone it reads in one column
    without sideways scrolling. Waiting seats are drawn apart from folded ones."""
    geo, _shot = show(rig, "venue", n, size, showdown=n == 5)
    check_geometry(geo, safe=size != "phone", scrolls=size == "phone")
    if n >= 5:
        browser = rig[2]
        assert browser.js("document.querySelectorAll('#seats .seat.waiting').length") == 1
        assert browser.js("document.querySelectorAll('#seats .seat.folded').length") == 1


def test_screenshots_for_the_docs(rig: Any) -> None:
    """The README's pictures: the overlay (8 seats along the bottom, 5 down the left at
    showdown), the venue at showdown and on a phone."""
    if os.environ.get("STUD_SCREENSHOTS", "1") != "1":
        pytest.skip("STUD_SCREENSHOTS=0")
    cases = [("overlay", 8, "1080p", "bottom", False, "broadcast-overlay-8-bottom.png"),
             ("overlay", 5, "1080p", "left", True, "broadcast-overlay-5-left-showdown.png"),
             ("overlay", 8, "720p", "right", False, "broadcast-overlay-8-right-720p.png"),
             ("venue", 5, "1080p", "bottom", True, "broadcast-venue-room.png"),
             ("venue", 8, "phone", "bottom", False, "broadcast-venue-phone.png")]
    for page, n, size, position, showdown, name in cases:
        geo, shot = show(rig, page, n, size, position=position, showdown=showdown)
        check_geometry(geo, safe=size != "phone", scrolls=size == "phone")
        (DOCS / name).write_bytes(shot.read_bytes())
