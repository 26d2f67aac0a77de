"""The broadcast service's web edge under attack (issue 22, security items 2-8).

Real process, real Mosquitto, real HTTP; the pages in headless Chromium where a
page is involved (framing by another origin, the producer's delay box).
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from table_controller.broadcast.config import parse_broadcast_config
from table_controller.broadcast.service import Broadcast
from table_controller.testing.broadcast_rig import (
    PASSWORD,
    PASSWORD_HASH,
    Service,
    SseReader,
    write_config,
)
from table_controller.testing.broker import WAIT, MosquittoBroker, wait_until
from table_controller.testing.browser import CHROMIUM, Browser
from table_controller.testing.web_edge import (
    AttackerPage,
    assert_one_line_exit_2,
    assert_unframable_and_not_stored,
    http_request,
    start_on_a_busy_port,
)
from table_controller.web.throttle import LoginThrottle

AUTH = "Basic " + base64.b64encode(f"producer:{PASSWORD}".encode()).decode()


def request(port: int, path: str, *, method: str = "GET", headers: dict[str, str] | None = None,
            body: Any = None, source: str = "127.0.0.1") -> tuple[int, dict[str, str], str]:
    """One request (from ``source``) with a JSON ``body``; see :func:`http_request`."""
    data = json.dumps(body).encode() if body is not None else None
    return http_request(port, path, method=method, headers=headers, body=data, source=source)


@pytest.fixture
def service(tmp_path: Path, mosquitto: MosquittoBroker) -> Iterator[Service]:
    """The service: overlay (30 s, showdown) and a locked live-capable output ``booth``."""
    booth = '[[outputs]]\nname = "booth"\ndelay_s = 30\nreveal = "never"\nlocked = true\n'
    svc = Service(write_config(tmp_path, mosquitto.port, delay_s=30.0,
                               extra_outputs=booth)).start()
    yield svc
    svc.stop()


def test_every_response_has_a_strict_csp_and_no_store(service: Service) -> None:
    """CSP with frame-ancestors 'none' and X-Frame-Options on every page, API and
    stream; Cache-Control: no-store on all but the static CSS/script."""
    auth = {"Authorization": AUTH}
    paths = [("/", {}), ("/venue/t1", {}), ("/overlay/t1", {}), ("/producer/t1", auth),
             ("/sse/venue/t1", {}), ("/sse/producer/t1", auth), ("/api/outputs", auth),
             ("/producer/t1", {}), ("/nowhere", {})]
    for path, headers in paths:
        status, got, _ = request(service.port, path, headers=headers)
        assert status in (200, 401, 404), path
        assert_unframable_and_not_stored(got, path)
        assert "script-src 'self'" in got["content-security-policy"], path
        assert got["x-content-type-options"] == "nosniff", path
    for name in ("page.css", "page.js"):
        _, got, _ = request(service.port, f"/static/{name}")
        assert got["cache-control"] == "no-cache"
        assert "frame-ancestors 'none'" in got["content-security-policy"]


def test_overlay_frame_ancestors_only_where_configured(tmp_path: Path,
                                                      mosquitto: MosquittoBroker) -> None:
    """``[http] overlay_frame_ancestors`` opens the overlay pages to the named origins
    only; the venue and producer pages stay unframable."""
    config = write_config(tmp_path, mosquitto.port, delay_s=30.0)
    config.write_text(config.read_text().replace(
        "[http]\nport = 0", '[http]\nport = 0\noverlay_frame_ancestors = ["http://switcher.lan:8080"]'))
    svc = Service(config).start()
    try:
        _, got, _ = request(svc.port, "/overlay/t1")
        assert "frame-ancestors http://switcher.lan:8080" in got["content-security-policy"]
        assert "x-frame-options" not in got
        _, got, _ = request(svc.port, "/venue/t1")
        assert "frame-ancestors 'none'" in got["content-security-policy"]
    finally:
        svc.stop()


def _frame_urls(browser: Browser) -> list[str]:
    tree = browser.call("Page.getFrameTree", session=True)["frameTree"]
    return [child["frame"].get("url", "") for child in tree.get("childFrames", [])]


@pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (scripts/setup)")
def test_another_origin_cannot_frame_the_producer_or_venue(service: Service,
                                                           tmp_path: Path) -> None:
    """Clickjacking: a page on another port frames the producer page (with the
    producer's credentials in the browser) and the venue: Chromium refuses both."""
    base = f"http://127.0.0.1:{service.port}"
    evil = AttackerPage(f'<!doctype html><iframe src="{base}/producer/t1"></iframe>'
                     f'<iframe src="{base}/venue/t1"></iframe>')
    browser = Browser(tmp_path / "profile")
    try:
        browser.headers({"Authorization": AUTH})
        browser.open(f"{base}/producer/t1")  # the producer is logged in (cookie)
        browser.wait_js("document.body.dataset.connected === '1'", what="producer page")
        browser.open(f"http://127.0.0.1:{evil.port}/")
        browser.wait_js("document.querySelectorAll('iframe').length === 2")
        wait_until(lambda: len(_frame_urls(browser)) == 2
                   and all(url.startswith("chrome-error:") for url in _frame_urls(browser)),
                   WAIT, "both frames blocked")
    finally:
        browser.close()
        evil.close()


def test_malformed_event_ids_are_a_400_not_a_traceback(service: Service) -> None:
    """``?last=%C2%B2`` (isdigit() accepted it, int() did not), a 5,000-digit id, a
    negative one and a word: one clear 400 each, nothing in the log."""
    for query in ("%C2%B2", "9" * 5000, "-1", "1e3", "abc", "%EF%BC%91"):
        status, _, text = request(service.port, f"/sse/venue/t1?last={query}")
        assert status == 400, query
        assert "Last-Event-ID" in text
    status, _, _ = request(service.port, "/sse/venue/t1",
                           headers={"Last-Event-ID": "²"})
    assert status == 400
    assert "Traceback" not in service.text()
    ok = SseReader(service.port, "/sse/venue/t1", last_id=0).start()
    assert ok.status == 200
    ok.close()


def test_delay_post_from_another_origin_is_refused(service: Service) -> None:
    """The producer's delay control: a POST whose Origin is another port is a 403."""
    headers = {"Authorization": AUTH, "X-Stud-Table": "1",
               "Content-Type": "application/json"}
    status, _, text = request(service.port, "/api/delay/overlay", method="POST",
                              headers={**headers, "Origin": "http://127.0.0.1:1"},
                              body={"delay_s": 40})
    assert status == 403, text
    status, _, text = request(service.port, "/api/delay/overlay", method="POST",
                              headers={**headers, "Origin": f"http://127.0.0.1:{service.port}"},
                              body={"delay_s": 40})
    assert status == 200, text
    status, _, text = request(service.port, "/api/delay/overlay", method="POST",
                              headers=headers, body={})
    assert status == 400  # nothing to set is not "set 0"


def test_password_guessing_is_throttled_per_client(service: Service) -> None:
    """Wrong producer passwords: after the free tries one client is answered 429
    with Retry-After (no hash computed), while another client's right password goes
    through at once; failures are logged, but not one line each."""
    wrong = {"Authorization": "Basic " + base64.b64encode(b"producer:guess").decode()}
    statuses = [request(service.port, "/api/outputs", headers=wrong)[0] for _ in range(12)]
    assert statuses[:4] == [401] * 4
    assert 429 in statuses
    status, got, text = request(service.port, "/api/outputs", headers={"Authorization": AUTH})
    assert status == 429, "the guessing client itself waits, even with the right password"
    assert int(got["retry-after"]) >= 1
    assert "try again" in text
    status, _, _ = request(service.port, "/api/outputs", headers={"Authorization": AUTH},
                           source="127.0.0.2")
    assert status == 200, "another client is not slowed by the guesser"
    logged = service.text().count("broadcast_login_refused")
    assert 1 <= logged < statuses.count(401)
    assert "guess" not in service.text()


def test_throttle_backs_off_then_locks_out_then_forgets() -> None:
    """The pure throttle with a controlled clock: free tries, doubling waits, lockout,
    a success clears, an old record is forgotten; logging at 1, 2, 4, 8 and lockout."""
    t = LoginThrottle(free_tries=3, base_s=1.0, max_wait_s=8.0, lockout_after=8,
                      lockout_s=900.0, forget_s=3600.0)
    now = 1000.0
    waits = []
    for _ in range(8):
        assert t.wait("a", now) == 0.0
        t.failed("a", now)
        waits.append(t.wait("a", now))
        now += waits[-1]
    assert waits == [0, 0, 0, 1, 2, 4, 8, 900]
    assert t.wait("b", now) == 0.0  # another client
    assert [n for n in range(1, 20) if t.should_log(n)][:5] == [1, 2, 4, 8, 16]
    t.succeeded("a")
    assert t.wait("a", now) == 0.0
    t.failed("c", now)
    t.failed("c", now)
    t.failed("c", now)
    t.failed("c", now)
    assert t.wait("c", now) > 0
    assert t.wait("c", now + 4000) == 0.0  # forgotten
    small = LoginThrottle(max_clients=3)
    for n in range(10):
        small.failed(str(n), now)
    assert len(small._clients) == 3


def test_a_second_instance_on_the_same_state_file_exits_2(service: Service) -> None:
    """It would take the stored MQTT client id and knock the running one off the broker:
    it stops before connecting, with one line and exit 2; the first goes on."""
    before = service.text().count("broadcast_mqtt_disconnected")
    run = subprocess.run([sys.executable, "-m", "table_controller", "broadcast", "--config",
                          str(service.config)], capture_output=True, text=True, timeout=WAIT,
                         check=False)
    assert run.returncode == 2, run.stderr
    line = run.stderr.strip()
    assert "\n" not in line, line
    assert "in use by another stud-table broadcast" in line, line
    assert "Traceback" not in run.stderr
    assert service.text().count("broadcast_mqtt_disconnected") == before
    assert request(service.port, "/venue/t1")[0] == 200


def test_a_port_in_use_is_one_line_and_exit_2(tmp_path: Path, mosquitto: MosquittoBroker
                                              ) -> None:
    """Starting on a port in use: one line naming it, exit 2, no traceback."""

    def config_for(port: int) -> Path:
        config = write_config(tmp_path, mosquitto.port)
        config.write_text(config.read_text().replace("[http]\nport = 0",
                                                     f"[http]\nport = {port}"))
        return config

    run, port = start_on_a_busy_port("broadcast", config_for)
    assert_one_line_exit_2(run, port)
    assert "closed database" not in run.stderr


def _in_process(tmp: Path, delay: float) -> Broadcast:
    cfg = parse_broadcast_config({
        "tables": ["t1"], "state_file": str(tmp / "bc.sqlite"), "min_public_delay_s": 0,
        "producer": {"password_hash": PASSWORD_HASH},
        "outputs": [{"name": "overlay", "delay_s": delay, "reveal": "showdown"}],
    }, tmp / "broadcast.toml")
    return Broadcast(cfg)


def test_which_delay_is_in_force(tmp_path: Path) -> None:
    """broadcast.toml's delay follows the file until the producer page sets one; that one
    survives a restart unless the file asks for longer, which always wins."""
    steps: list[tuple[str, float, str]] = []

    def restart(delay: float) -> Broadcast:
        svc = _in_process(tmp_path, delay)
        out = svc.outputs["overlay"]
        steps.append((f"config {delay:g}", out.line.delay_s, out.source))
        return svc

    restart(30).store.close()
    restart(60).store.close()   # nobody used the producer control: the file wins
    svc = restart(30)           # lowering the file, still nobody else: the file
    svc.set_delay("overlay", 45, None)
    assert "set on the producer page" in svc.outputs["overlay"].why()
    svc.store.close()
    restart(30).store.close()   # the producer's 45 survives a restart
    svc = restart(1800)         # a longer file delay always wins
    assert svc.delay_lines() == ["output overlay: delay 1800 s + 0 ms, from broadcast.toml"]
    svc.store.close()
    assert steps == [("config 30", 30, "config"), ("config 60", 60, "config"),
                     ("config 30", 30, "config"), ("config 30", 45, "producer"),
                     ("config 1800", 1800, "config")]


def test_the_start_line_says_which_delay_and_why(tmp_path: Path,
                                                 mosquitto: MosquittoBroker) -> None:
    """The process prints each delayed output's delay in force and its source."""
    svc = Service(write_config(tmp_path, mosquitto.port, delay_s=25.0)).start()
    try:
        assert "output overlay: delay 25 s + 0 ms, from broadcast.toml" in svc.text()
        _status, _got, text = request(svc.port, "/api/outputs", headers={"Authorization": AUTH})
        info = next(o for o in json.loads(text) if o["output"] == "overlay")
        assert (info["delay_source"], info["config_delay_s"]) == ("config", 25.0)
    finally:
        svc.stop()


@pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (scripts/setup)")
def test_the_delay_box_refuses_empty_and_asks_before_a_big_cut(service: Service,
                                                               tmp_path: Path) -> None:
    """On the producer page: an emptied box or a word is refused on the page (nothing
    sent); 0 s on an output whose minimum is 0 (a cut of 100 %) asks for a
    confirmation and is applied only once confirmed; the delay's source is shown."""
    browser = Browser(tmp_path / "profile")
    try:
        browser.headers({"Authorization": AUTH})
        browser.open(f"http://127.0.0.1:{service.port}/producer/t1")
        box = "document.querySelector('.out[data-out=booth]')"
        browser.wait_js(f"!!{box}", what="the booth output's control")
        assert "from broadcast.toml" in browser.js(f"{box}.querySelector('.why').textContent")

        def press(value: str) -> None:
            browser.js(f"{box}.querySelector('input').value = {json.dumps(value)};"
                       f" {box}.querySelector('button.set').click(); 1")

        def delay() -> float:
            _, _, text = request(service.port, "/api/outputs", headers={"Authorization": AUTH})
            return float(next(o for o in json.loads(text) if o["output"] == "booth")["delay_s"])

        for value in ("", "  ", "abc", "1e3", "-5"):
            press(value)
            browser.wait_js(f"{box}.querySelector('.err').textContent.includes('number')",
                            what=f"the refusal of {value!r}")
            assert delay() == 30.0
        press("0")
        browser.wait_js(f"!{box}.querySelector('.confirm').hidden", what="the confirmation")
        assert "confirm" in browser.js(f"{box}.querySelector('.confirm .ask').textContent")
        assert delay() == 30.0
        browser.js(f"{box}.querySelector('.confirm .yes').click(); 1")
        wait_until(lambda: delay() == 0.0, WAIT, "the confirmed cut")
        browser.wait_js("!!document.querySelector('.out[data-out=booth] .why')"
                        " && document.querySelector('.out[data-out=booth] .why')"
                        ".textContent.includes('producer page')", what="the new source")
    finally:
        browser.close()


def test_the_manual_card_post_is_guarded_like_the_delay_control(service: Service) -> None:
    """Issue 19: ``POST /api/card/<table>`` needs the producer, this server's Origin and
    the X-Stud-Table header; a bad entry or one without confirmation never leaves the
    service; a table that does not answer (no daemon here) is a 504 in words."""
    good = {"zone": "seat3.down", "card": "As", "confirm": True}
    headers = {"Authorization": AUTH, "X-Stud-Table": "1", "Content-Type": "application/json",
               "Origin": f"http://127.0.0.1:{service.port}"}
    path = "/api/card/t1"
    for changed, body, want in (
            ({"Origin": "http://127.0.0.1:1"}, good, 403),
            ({"Authorization": ""}, good, 401),
            ({"X-Stud-Table": ""}, good, 400),
            ({}, {**good, "card": "Zz"}, 400),
            ({}, {**good, "zone": "muck"}, 400),
            ({}, {"zone": "seat3.down", "card": "As"}, 409),
    ):
        sent = {k: v for k, v in {**headers, **changed}.items() if v}
        status, _, text = request(service.port, path, method="POST", headers=sent, body=body)
        assert status == want, (changed, body, status, text)
        if want == 409:
            assert text == "Enter the ace of spades at seat 3 (face down) by hand?"
    status, _, text = request(service.port, "/api/card/t9", method="POST", headers=headers,
                              body=good)
    assert status == 404
    status, _, text = request(service.port, path, method="POST", headers=headers, body=good)
    assert status == 504, text
    reply = json.loads(text)
    assert (reply["accepted"], reply["code"]) == (False, "no_reply")
    assert reply["words"].startswith("No answer from table t1")
    assert "As" not in service.text()  # the card is never logged
