"""End to end in a real browser (issue 12 step 5): emulated readers -> the daemon ->
Mosquitto -> ``stud-table broadcast`` -> headless Chromium.

* the pages draw names, cards, folded seats and the winner at several moments;
* the delayed overlay never shows a card placed less than D ago;
* the venue page never shows a down card (over random hands);
* a reloaded page, and a page whose service was ``kill -9``-ed and restarted,
  resume with nothing missing and nothing applied twice;
* screenshots go to docs/: overlay and producer in the middle of a hand dealt with
  the dealer's console (chips, bets, pot, live equity), venue and overlay at a showdown.
"""

from __future__ import annotations

import base64
import json
import os
import random
import socket
import time
from pathlib import Path
from typing import Any

import pytest

from table_controller.domain.events import CardPlaced, ConsoleAction, HandStarted, TableEvent
from table_controller.domain.zones import BURN, ZoneKind
from table_controller.mqtt.request import send_request
from table_controller.records.script import event_to_op
from table_controller.simulation import deal_random
from table_controller.simulation.players import deal_betting
from table_controller.testing.broadcast_rig import PASSWORD, Service, write_config
from table_controller.testing.broker import MosquittoBroker, RecordingSubscriber
from table_controller.testing.browser import CHROMIUM, Browser, seats
from table_controller.testing.daemon_rig import TableRig, clear_table, latest, subscribe, wait_state

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (scripts/setup)")

DELAY = 4.0
NAMES = {1: ("Ada Lovelace", "GB"), 3: ("Bo Svensson", "SE"), 4: ("Chen Wei", "CN"),
         6: ("Dara Okafor", "NG"), 8: ("Eve Moreau", "FR")}
DOCS = Path(__file__).resolve().parents[2] / "docs"


def free_port() -> int:
    """A free loopback port (a restarted service must come back on the same one)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def start_service(tmp: Path, broker: int, port: int) -> Service:
    """The service on ``port``: overlay delayed DELAY (reveal all) and a locked live
    ``program`` output."""
    program = ('[[outputs]]\nname = "program"\ndelay_s = 0\nreveal = "all"\nlocked = true\n')
    config = write_config(tmp, broker, delay_s=DELAY, reveal="all", extra_outputs=program)
    text = config.read_text().replace("[http]\nport = 0", f"[http]\nport = {port}")
    config.write_text(text)
    return Service(config).start()


def name_players(broker: int) -> None:
    """cmd/seat for every player of NAMES, through the real console path."""
    for seat, (name, country) in NAMES.items():
        reply = send_request("127.0.0.1", broker, "t1", "seat",
                             json.dumps({"seat": seat, "name": name,
                                         "country": country}).encode())
        assert reply.get("accepted") is True, reply


def deal_timed(rig: TableRig, events: tuple[TableEvent, ...] | list[Any],
               placed: dict[str, float], pace: float = 0.05) -> None:
    """Deal like rig.deal, noting when each card was placed at a seat."""
    for event in events:
        if isinstance(event, CardPlaced) and event.zone.kind in (ZoneKind.UP, ZoneKind.DOWN):
            placed.setdefault(event.card.code, time.time())
        rig.deal([event], pace=pace)


def check_overlay_not_early(browser: Browser, placed: dict[str, float]) -> int:
    """Every card the delayed overlay draws was placed at least DELAY ago."""
    view = seats(browser)
    # The clock is read after the DOM: a card drawn by then was drawn before ``now``
    # (read before, a card drawn during a slow DevTools call looked early: 3.90 s).
    now = time.time()
    drawn = 0
    for row in view:
        for card in row["up"] + row["down"]:
            drawn += 1
            assert card in placed, f"{card} drawn but never placed"
            assert placed[card] <= now - DELAY, f"{card} shown {now - placed[card]:.2f} s" \
                f" after it was placed, under the delay of {DELAY} s"
    return drawn


def _start_broadcast(tmp_path: Path, broker_port: int) -> tuple[RecordingSubscriber, Service, str]:
    """Once the table is idle: name the players, start the broadcast service; the
    state subscriber, the service and its base URL."""
    sub = subscribe(broker_port)
    wait_state(sub, lambda s: s["hand"] is None)
    name_players(broker_port)
    port = free_port()
    service = start_service(tmp_path, broker_port, port)
    return sub, service, f"http://127.0.0.1:{port}"


def _log_in_as_producer(producer: Browser) -> None:
    """Send the producer's basic-auth header with every request of ``producer``."""
    token = base64.b64encode(f"producer:{PASSWORD}".encode()).decode()
    producer.headers({"Authorization": "Basic " + token})


def test_pages_in_a_real_browser(tmp_path: Path, mosquitto: MosquittoBroker, table: TableRig,
                                 browser: Browser) -> None:
    """Overlay (delayed), venue and producer through a whole hand, with screenshots."""
    _sub, service, base = _start_broadcast(tmp_path, mosquitto.port)
    venue = Browser(tmp_path / "venue-profile")
    producer = Browser(tmp_path / "producer-profile")
    try:
        _log_in_as_producer(producer)
        browser.open(f"{base}/overlay/t1")
        venue.open(f"{base}/venue/t1")
        producer.open(f"{base}/producer/t1")
        # Names are on public state: every page draws them.
        for page in (venue, producer):
            page.wait_js("document.querySelector('.seat[data-name=\"Ada Lovelace\"]') !== null",
                         what="names on the page")
        browser.wait_js("document.querySelector('.seat[data-name=\"Ada Lovelace\"]') !== null",
                        timeout=DELAY + 30, what="names on the delayed overlay")

        deal = deal_random(sorted(NAMES), random.Random(12), folds={4: 4})
        placed: dict[str, float] = {}
        half = len(deal.events) // 2
        deal_timed(table, deal.events[:half], placed)
        drawn_early = check_overlay_not_early(browser, placed)
        # Mid-hand the venue shows backs for down cards, never an identity.
        venue_view = seats(venue)
        assert all(row["down"] == [] for row in venue_view)
        assert any(row["backs"] for row in venue_view)
        producer.wait_js("document.querySelectorAll('.card[data-face=down]').length > 0",
                         what="the producer sees down cards live")
        # A reloaded overlay resumes: same drawn table after the reload.
        before = seats(browser)
        browser.call("Page.reload", session=True)
        browser.wait_js(f"document.querySelectorAll('#seats .seat').length >= {len(before)}",
                        what="the reloaded overlay")
        deal_timed(table, deal.events[half:], placed)
        # The dealer's console closes the hand: the showdown result, cards still out.
        reply = send_request("127.0.0.1", mosquitto.port, "t1", "end", b"{}")
        assert reply.get("accepted") is True, reply
        # Showdown: producer at once, overlay after D; winner and shown hands drawn.
        producer.wait_js("document.querySelector('#result h2') !== null", what="result live")
        # While the overlay catches up, at every look: nothing younger than D.
        drawn, looks = drawn_early, 0
        deadline = time.monotonic() + DELAY + 30
        while browser.js("document.querySelector('#result h2') === null"):
            assert time.monotonic() < deadline, "no result on the delayed overlay"
            drawn += check_overlay_not_early(browser, placed)
            looks += 1
            time.sleep(0.1)
        assert drawn > 0
        assert looks > 5
        venue.wait_js("document.querySelector('#result h2') !== null", what="result venue")
        view = {row["seat"]: row for row in seats(browser)}
        assert view[4]["status"] == "folded"
        winners = browser.js("document.querySelector('#result h2').dataset.winners")
        assert winners, "no winner drawn"
        for seat in map(int, winners.split(",")):
            assert view[seat]["winner"]
        shown = browser.js("Array.from(document.querySelectorAll('#result .shown'))"
                           ".map(e => Number(e.dataset.shownSeat))")
        assert sorted(shown) == sorted(deal.live_seats)  # every hand shown down
        assert 4 not in shown  # the folded hand stays private
        # The venue never drew a down card identity as such; at showdown the hands shown
        # down are public and it turns them up (face "shown"), the folded one stays out.
        assert all(row["down"] == [] for row in seats(venue))
        venue.wait_js("document.querySelectorAll('.card[data-face=shown]').length > 0",
                      what="shown hands turned up on the venue")
        turned = venue.js("Array.from(document.querySelectorAll('.seat'))"
                          ".filter(e => e.querySelector('.card[data-face=shown]'))"
                          ".map(e => Number(e.dataset.seat))")
        assert sorted(turned) == sorted(deal.live_seats)
        if os.environ.get("STUD_SCREENSHOTS", "1") == "1":
            browser.screenshot(DOCS / "broadcast-showdown.png", transparent=True)
            venue.screenshot(DOCS / "broadcast-venue.png")
        # The producer's delay control, used as a person would: 4 s -> 7 s.
        producer.wait_js("document.querySelector('.out[data-out=overlay] input') !== null",
                         what="the delay control")
        producer.js("const d = document.querySelector('.out[data-out=overlay] input');"
                    " d.value = '7'; document.querySelector('.out[data-out=overlay] button')"
                    ".click(); true")
        producer.wait_js("document.querySelector('.out[data-out=overlay] .now')"
                         ".textContent === '7 s'", what="the new delay on the producer page")
        browser.wait_js("document.getElementById('title').textContent.includes('delay 7 s')",
                        what="the overlay told of its new delay")
        table.deal(clear_table(deal), pace=0.02)
    finally:
        venue.close()
        producer.close()
        service.stop()


def test_venue_never_draws_a_down_card_over_random_hands(
        tmp_path: Path, mosquitto: MosquittoBroker, table: TableRig, browser: Browser) -> None:
    """Several random hands: at every check the venue DOM holds no down card identity
    (up cards only), and nothing secret ever reached its stream."""
    sub = subscribe(mosquitto.port)
    wait_state(sub, lambda s: s["hand"] is None)
    service = start_service(tmp_path, mosquitto.port, free_port())
    try:
        browser.open(f"http://127.0.0.1:{service.port}/venue/t1")
        rng = random.Random(2612)
        checks = 0
        for _ in range(3):
            deal = deal_random(sorted(rng.sample(range(1, 9), rng.randint(2, 8))), rng,
                               fold_chance=0.2)
            secret = {c.code for s in deal.seats for c in deal.down(s)}
            for start in range(0, len(deal.events), 6):
                table.deal(deal.events[start:start + 6], pace=0.02)
                html = browser.js("document.body.innerHTML")
                for card in secret:
                    assert f'data-card="{card}" data-face="down"' not in html
                # The page may still draw the previous hand (it lags the table): the
                # up cards are compared with this hand's secrets only when it is this hand.
                state = latest(sub, "stud/v1/t1/state")
                same_hand = state is not None and browser.js(
                    "document.body.dataset.hand") == str(state["hand"])
                for row in seats(browser):
                    assert row["down"] == []
                    if same_hand and row["seat"] in deal.seats:
                        own = {c.code for c in deal.up(row["seat"])}
                        assert not set(row["up"]) & (secret - own)
                checks += 1
            table.deal(clear_table(deal), pace=0.02)
            wait_state(sub, lambda s: all(not x["up"] and not x["down_count"]
                                          for x in s["seats"]))
        assert checks >= 10
    finally:
        service.stop()


def test_page_resumes_after_the_service_is_killed(
        tmp_path: Path, mosquitto: MosquittoBroker, table: TableRig, browser: Browser) -> None:
    """kill -9 the service mid-hand and restart it on the same port: the open page
    reconnects by itself, catches up, and applies no message twice."""
    sub = subscribe(mosquitto.port)
    wait_state(sub, lambda s: s["hand"] is None)
    port = free_port()
    service = start_service(tmp_path, mosquitto.port, port)
    browser.headers({"Authorization": "Basic " + __import__("base64").b64encode(
        f"producer:{PASSWORD}".encode()).decode()})
    browser.open(f"http://127.0.0.1:{port}/overlay/t1/program")
    deal = deal_random([2, 5, 7], random.Random(5), fold_chance=0.0)
    half = len(deal.events) // 2
    table.deal(deal.events[:half], pace=0.03)
    browser.wait_js("document.querySelectorAll('.card').length > 0", what="cards")
    service.kill9()
    table.deal(deal.events[half:], pace=0.03)  # dealt while the service is down
    service.start()
    try:
        want = sum(len(deal.cards[s]) for s in deal.seats)
        browser.wait_js(f"document.querySelectorAll('#seats .card').length === {want}",
                        timeout=60, what="the page caught up after the restart")
        drawn = {row["seat"]: sorted(row["up"] + row["down"]) for row in seats(browser)}
        assert drawn == {s: sorted(c.code for c in deal.cards[s]) for s in deal.seats}
        assert browser.js("document.body.dataset.connected") == "1"
        assert int(browser.js("document.body.dataset.dupes || '0'")) == 0
    finally:
        service.stop()


def test_overlay_draws_pot_stacks_bets_equity_and_hides_it_per_mode(
        tmp_path: Path, mosquitto: MosquittoBroker, browser: Browser) -> None:
    """With the console's chips and the equity feed (issue 11's optional fields):
    pot, stacks, bets, equity and readings drawn in mode all; in mode showdown with
    the result unknown, no hole card and no equity (computed from hidden cards)."""
    from test_service import Table

    extra = ('[[outputs]]\nname = "hidden"\ndelay_s = 1\nreveal = "showdown"\n')
    config = write_config(tmp_path, mosquitto.port, delay_s=1, reveal="all",
                          extra_outputs=extra)
    service = Service(config).start()
    fake = Table(mosquitto.port)
    try:
        body = fake.state({1: ["Ah", "Kd"], 2: ["2c", "3c"]}, pot=240, to_act=2)
        body_seats = body["seats"]
        assert body_seats[0]["down"] == ["Ah", "Kd"]
        seats_json: list[dict[str, Any]] = []
        for published in body_seats:
            row = dict(published)
            if row["status"] == "active":
                row.update(bet=20, equity=0.7 if row["seat"] == 1 else 0.3, win=0.6, tie=0.1,
                           reading="ace high", showing="king high showing",
                           name=f"Player {row['seat']}")
            seats_json.append(row)
        fake.publish("secure/state", {"seats": seats_json, "street": 3, "bring_in": 2,
                                      "to_act": 2, "community": None, "alerts": [],
                                      "pot": 240}, retain=True)
        browser.open(f"http://127.0.0.1:{service.port}/overlay/t1")
        browser.wait_js("document.querySelector('.equity') !== null", what="equity drawn")
        view = {row["seat"]: row for row in seats(browser)}
        assert view[1]["equity"] == 0.7
        assert view[1]["down"] == ["Ah", "Kd"]
        assert browser.js("document.getElementById('pot').textContent") == "Pot 240"
        assert "bet 20" in browser.js("document.querySelector('.seat[data-seat=\"1\"]')"
                                      ".textContent")
        assert browser.js("document.querySelector('.seat[data-seat=\"2\"]')"
                          ".classList.contains('to-act')")
        browser.open(f"http://127.0.0.1:{service.port}/overlay/t1/hidden")
        browser.wait_js("document.querySelectorAll('.seat').length >= 2", what="hidden seats")
        html = browser.js("document.body.innerHTML")
        assert 'data-face="down"' not in html
        assert "equity" not in browser.js(
            "Array.from(document.querySelectorAll('.equity')).length ? 'equity' : ''")
        assert "ace high" not in html  # the reading is computed from the down cards
        assert "king high showing" in html  # what the up cards show is public
    finally:
        fake.close()
        service.stop()


def console_deal(rig: TableRig, broker: int, events: tuple[TableEvent, ...] | list[Any]) -> None:
    """Deal ``events`` as a dealer with the console does: ``hand`` and ``act`` through
    cmd/<name> (each must be accepted), cards on the emulated antennas."""
    for event in events:
        if isinstance(event, HandStarted | ConsoleAction):
            op = event_to_op(event)
            name = op.pop("op")
            reply = send_request("127.0.0.1", broker, "t1", name, json.dumps(op).encode())
            assert reply.get("accepted") is True, (op, reply)
        else:
            rig.deal([event], pace=0.05)


def test_screenshots_of_a_console_hand_with_chips_and_equity(
        tmp_path: Path, mosquitto: MosquittoBroker, table: TableRig, browser: Browser) -> None:
    """A hand started and bet at the dealer's console, stopped on 6th street: the live
    producer page and the delayed overlay draw stacks, bets, the pot and each live
    seat's equity (the overlay once D has passed); screenshots go to docs/."""
    sub, service, base = _start_broadcast(tmp_path, mosquitto.port)
    producer = Browser(tmp_path / "producer-profile")
    try:
        _log_in_as_producer(producer)
        deal = deal_betting(tuple(sorted(NAMES)), random.Random(5), folding=True)
        burns = [i for i, e in enumerate(deal.events)
                 if isinstance(e, CardPlaced) and e.zone == BURN]
        seventh = burns[3]  # the 4th burn opens 7th street (rule: one burn per round)
        console_deal(table, mosquitto.port, deal.events[:seventh])
        state = wait_state(sub, lambda s: s["street"] == 6 and s["to_act"] is None)
        live = [x for x in state["seats"] if x["status"] == "active"]
        assert len(live) >= 2, "the seed must leave two or more players on 6th street"
        assert state["pot"] > 0
        producer.open(f"{base}/producer/t1")
        browser.open(f"{base}/overlay/t1")
        producer.wait_js(f"document.querySelectorAll('.equity').length === {len(live)}",
                         what="equity of every live seat on the producer page")
        browser.wait_js(f"document.querySelectorAll('.equity').length === {len(live)}",
                        timeout=DELAY + 30, what="equity on the delayed overlay")
        # The equity can be drawn before the last call's pot (the overlay shows the
        # table D seconds late): wait for the pot text rather than read it once.
        for page in (producer, browser):
            page.wait_js(f"document.getElementById('pot').textContent === 'Pot {state['pot']}'",
                         timeout=DELAY + 30, what=f"Pot {state['pot']} on {page}")
        if os.environ.get("STUD_SCREENSHOTS", "1") == "1":
            browser.screenshot(DOCS / "broadcast-overlay.png", transparent=True)
            producer.screenshot(DOCS / "broadcast-producer.png")
    finally:
        producer.close()
        service.stop()
