"""The floor dashboard's web edge under attack (issue 22, security items 4-8).

Real process, real Mosquitto, real HTTP; Chromium for the cross-origin form.
"""

from __future__ import annotations

import asyncio
import http.client
import http.server
import urllib.parse
from pathlib import Path
from typing import Any

import pytest
from floor_rig import HASHES, SUPERVISORS, FloorService, Page, write_config
from starlette.requests import Request

from table_controller.floor import service as floor_service
from table_controller.floor.config import load_floor_config
from table_controller.testing.broker import WAIT, MosquittoBroker
from table_controller.testing.browser import CHROMIUM, Browser
from table_controller.testing.web_edge import (
    AttackerPage,
    assert_one_line_exit_2,
    assert_unframable_and_not_stored,
    http_request,
    start_on_a_busy_port,
)
from table_controller.web import login as login_module
from table_controller.web import passwords


def logged_in(service: FloorService) -> Page:
    """A page logged in as Maria Lopez."""
    page = Page(service.port)
    assert page.login("Maria Lopez") == 303
    return page


def post(port: int, path: str, body: bytes, headers: dict[str, str],
         source: str = "127.0.0.1") -> tuple[int, dict[str, str], str]:
    """One POST from ``source``."""
    return http_request(port, path, method="POST", headers=headers, body=body, source=source)


def form(name: str, password: str) -> bytes:
    """A login form body."""
    return urllib.parse.urlencode({"name": name, "password": password}).encode()


FORM = {"Content-Type": "application/x-www-form-urlencoded"}


def test_every_response_has_a_strict_csp_and_no_store(floor: FloorService) -> None:
    """Pages, APIs, exports and the stream: unframable, never cached."""
    page = logged_in(floor)
    for path in ("/", "/login", "/api/view", "/api/search/hands", "/api/report",
                 "/api/hand/nope.json", "/api/hand/nope.phh"):
        status, got, _ = page.request("GET", path)
        assert status in (200, 404), path
        assert_unframable_and_not_stored(got, path)
    conn = http.client.HTTPConnection("127.0.0.1", floor.port, timeout=WAIT)
    conn.request("GET", "/sse", headers={"Cookie": page.cookie})
    resp = conn.getresponse()
    assert resp.getheader("cache-control") == "no-store"
    assert "frame-ancestors 'none'" in (resp.getheader("content-security-policy") or "")
    conn.close()
    _, got, _ = page.request("GET", "/static/floor.css")
    assert got["cache-control"] == "no-cache"


def test_state_changing_routes_refuse_another_origin(floor: FloorService) -> None:
    """Logout, login and commands from another origin (another port of the same host
    is the same *site*: SameSite cookies do not stop it) are 403 and change nothing."""
    page = logged_in(floor)
    evil = {"Origin": "http://127.0.0.1:1", "Cookie": page.cookie}
    status, _, _ = page.request("POST", "/logout", b"", evil)
    assert status == 403
    assert page.request("GET", "/api/view")[0] == 200, "still logged in"
    status, _, _ = page.request("POST", "/logout", b"",
                                {"Sec-Fetch-Site": "same-site", "Cookie": page.cookie})
    assert status == 403
    status, _, _ = page.request("POST", "/api/cmd/ack", b'{"table": "t1", "alert": "a"}',
                                {**evil, "X-Stud-Table": "1"})
    assert status == 403
    status, _, _ = post(floor.port, "/login", form("Maria Lopez", SUPERVISORS["Maria Lopez"]),
                        {**FORM, "Origin": "http://evil.example"})
    assert status == 403
    status, _, _ = page.request("POST", "/logout", b"",
                                {"Origin": f"http://127.0.0.1:{floor.port}"})
    assert status == 303
    assert page.request("GET", "/api/view")[0] == 401, "logged out by its own page"


def _logout_form(target: str) -> str:
    """A page that posts a form to the dashboard's /logout as soon as it loads."""
    return (f'<!doctype html><form id="f" method="post" action="{target}/logout"></form>'
            '<script>document.getElementById("f").submit()</script>')


@pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (scripts/setup)")
def test_a_cross_origin_form_cannot_log_the_supervisor_out(floor: FloorService,
                                                           tmp_path: Path) -> None:
    """In Chromium: logged in, the supervisor opens a page on another port that posts
    to /logout; the dashboard refuses it and the supervisor stays logged in."""
    base = f"http://127.0.0.1:{floor.port}"
    evil = AttackerPage(_logout_form(base))
    browser = Browser(tmp_path / "profile")
    try:
        browser.open(base + "/")
        browser.js(f"""document.querySelector('#name').value = 'Maria Lopez';
            document.querySelector('#password').value = '{SUPERVISORS["Maria Lopez"]}';
            document.querySelector('#login').submit(); 1""")
        browser.wait_js("location.pathname === '/' && !!document.querySelector('#tables')",
                        what="the dashboard")
        browser.open(f"http://127.0.0.1:{evil.port}/")
        browser.wait_js(f"location.href.startsWith({base!r})", what="the form posted")
        browser.wait_js("document.body && document.body.innerText.includes('refused')",
                        what="the refusal")
        browser.open(base + "/")
        browser.wait_js("location.pathname === '/' && !!document.querySelector('#tables')",
                        what="still logged in")
        assert "floor_cross_origin_refused" in floor.text()
    finally:
        browser.close()
        evil.close()


def test_login_guessing_is_throttled_per_client_and_logged_sparingly(
        floor: FloorService) -> None:
    """Wrong passwords: after the free tries the client gets 429 with Retry-After
    (nothing checked); another client logs in at once; failures are logged, not
    each one."""
    statuses = [post(floor.port, "/login", form("Maria Lopez", "wrong"), FORM)[0]
                for _ in range(12)]
    assert statuses[:4] == [401] * 4
    assert 429 in statuses
    status, got, text = post(floor.port, "/login",
                             form("Maria Lopez", SUPERVISORS["Maria Lopez"]), FORM)
    assert status == 429
    assert int(got["retry-after"]) >= 1
    assert "try again" in text
    status, _, _ = post(floor.port, "/login", form("Tom Reyes", SUPERVISORS["Tom Reyes"]),
                        FORM, source="127.0.0.2")
    assert status == 303
    logged = floor.text().count("floor_login_refused")
    assert 1 <= logged < statuses.count(401)
    assert "wrong" not in floor.text().replace("wrong password", "")


def test_an_unknown_name_costs_the_same_hash_as_a_known_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Constant work: a login with an unknown name checks a password against a hash
    of the same scrypt parameters as a supervisor's (the answer's timing does not say
    whether the name exists); known and unknown names are both refused the same way."""
    config = load_floor_config(write_config(tmp_path, 1883))
    service = floor_service.Floor(config)
    checked: list[str] = []
    real = passwords.check_password

    def counting(password: str, stored: str) -> bool:
        checked.append(stored)
        return real(password, stored)

    monkeypatch.setattr(login_module, "check_password", counting)

    async def login(name: str) -> int:
        body = form(name, "not-the-password")

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": body, "more_body": False}

        scope = {"type": "http", "method": "POST", "path": "/login", "headers": [
            (b"content-type", b"application/x-www-form-urlencoded"), (b"host", b"floor")],
            "client": (f"10.0.0.{len(checked) + 1}", 5000), "query_string": b""}
        response = await service.login(Request(scope, receive))
        return response.status_code

    assert asyncio.run(login("Nobody Here")) == 401
    assert asyncio.run(login("Maria Lopez")) == 401
    unknown, known = checked
    def params(stored: str) -> list[str]:  # N, r, p
        return stored.split("$")[1:4]

    assert params(unknown) == params(known) == params(HASHES["Maria Lopez"])
    assert unknown not in HASHES.values()


def test_a_port_in_use_is_one_line_and_exit_2(tmp_path: Path,
                                              mosquitto: MosquittoBroker) -> None:
    """Starting on a port in use: one line naming it, exit 2, no traceback."""
    run, port = start_on_a_busy_port(
        "floor", lambda port: write_config(tmp_path, mosquitto.port, http_port=port))
    assert_one_line_exit_2(run, port)
