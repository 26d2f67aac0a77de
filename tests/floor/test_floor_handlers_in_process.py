"""The floor's handlers called in process (``testing.asgi``), beside the real-port
tests of test_floor_service.py and test_floor_security.py: the login, the session,
and commands refused before anything is sent (the service is built, never started:
no server, socket or broker)."""

from __future__ import annotations

import json
import urllib.parse
from pathlib import Path

import pytest
from floor_rig import SUPERVISORS, write_config

from table_controller.floor.config import load_floor_config
from table_controller.floor.service import Floor
from table_controller.testing.asgi import AsgiResponse, request

UNUSED_PORT = 9  # the broker is never connected to: the service is not started
FORM = {"Content-Type": "application/x-www-form-urlencoded"}
NAME = "Maria Lopez"


@pytest.fixture
def floor(tmp_path: Path) -> Floor:
    """The floor for the test config's two supervisors, never started."""
    return Floor(load_floor_config(write_config(tmp_path, UNUSED_PORT)))


def _login(floor: Floor, password: str) -> AsgiResponse:
    body = urllib.parse.urlencode({"name": NAME, "password": password}).encode()
    return request(floor.app(), "POST", "/login", headers=FORM, body=body)


def _session(floor: Floor) -> dict[str, str]:
    answer = _login(floor, SUPERVISORS[NAME])
    assert answer.status == 303
    return {"Cookie": answer.headers["set-cookie"].split(";", 1)[0]}


def test_pages_and_the_api_need_a_login(floor: Floor) -> None:
    page = request(floor.app(), "GET", "/")
    assert (page.status, page.headers["location"]) == (303, "/login")
    assert request(floor.app(), "GET", "/api/view").status == 401


def test_a_wrong_password_gets_no_session(floor: Floor) -> None:
    refused = _login(floor, "not-the-password")
    assert refused.status == 401
    assert "set-cookie" not in refused.headers


def test_a_session_sees_the_view(floor: Floor) -> None:
    view = request(floor.app(), "GET", "/api/view", headers=_session(floor))
    assert view.status == 200
    assert view.json()["tables"] == []  # nothing followed: never started


def test_commands_are_refused_before_anything_is_sent(floor: Floor) -> None:
    session = _session(floor)
    no_header = request(floor.app(), "POST", "/api/cmd/ack",
                        headers={**session, "Content-Type": "application/json"}, body=b"{}")
    assert no_header.status == 400
    assert "X-Stud-Table" in no_header.json()["reason"]
    page = {**session, "Content-Type": "application/json", "X-Stud-Table": "1"}
    wrong = request(floor.app(), "POST", "/api/cmd/ack", headers=page,
                    body=json.dumps({"table": "t1", "alert_id": "x"}).encode())
    assert wrong.status == 400
    assert wrong.json()["code"] == "malformed"
    assert "the fields of ack are" in wrong.json()["reason"]
