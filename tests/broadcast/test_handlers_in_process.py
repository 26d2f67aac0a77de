"""The broadcast service's handlers called in process (``testing.asgi``), beside the
real-port tests of test_service.py: the same answers, without a server, a socket or
a broker (the service is built, never started)."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from table_controller.broadcast.config import load_broadcast_config
from table_controller.broadcast.service import Broadcast
from table_controller.testing.asgi import AsgiResponse, request
from table_controller.testing.broadcast_rig import PASSWORD, write_config

UNUSED_PORT = 9  # the broker is never connected to: the service is not started
PRODUCER = {"Authorization": "Basic " + base64.b64encode(
    f"producer:{PASSWORD}".encode()).decode()}
POSTING = {**PRODUCER, "X-Stud-Table": "1", "Content-Type": "application/json"}


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Broadcast]:
    """The service for table t1, built from a test config, never started."""
    built = Broadcast(load_broadcast_config(write_config(tmp_path, UNUSED_PORT)))
    yield built
    built.store.close()


def _call(service: Broadcast, method: str, path: str, headers: dict[str, str] | None = None,
          body: object = None) -> AsgiResponse:
    data = b"" if body is None else body if isinstance(body, bytes) else json.dumps(body).encode()
    return request(service.app(), method, path, headers=headers, body=data)


def test_every_page_comes_with_the_security_headers(service: Broadcast) -> None:
    for path in ("/", "/overlay/t1", "/venue/t1", "/overlay/zz"):
        headers = _call(service, "GET", path).headers
        assert headers["x-content-type-options"] == "nosniff", path
        assert "default-src" in headers["content-security-policy"], path
        assert "referrer-policy" in headers, path


def test_the_index_lists_the_outputs_of_each_table(service: Broadcast) -> None:
    index = _call(service, "GET", "/")
    assert index.status == 200
    for link in ("/overlay/t1", "/venue/t1", "/producer/t1"):
        assert f'href="{link}"' in index.text


def test_the_producer_page_and_api_need_the_password(service: Broadcast) -> None:
    assert _call(service, "GET", "/producer/t1").status == 401
    wrong = {"Authorization": "Basic " + base64.b64encode(b"producer:nope").decode()}
    assert _call(service, "GET", "/producer/t1", wrong).status == 401
    assert _call(service, "GET", "/producer/t1", PRODUCER).status == 200
    assert _call(service, "GET", "/api/outputs").status == 401
    outputs = _call(service, "GET", "/api/outputs", PRODUCER)
    assert outputs.status == 200
    assert {o["output"] for o in outputs.json()} >= {"overlay", "venue"}


def test_an_unknown_table_or_file_is_not_found(service: Broadcast) -> None:
    assert _call(service, "GET", "/overlay/zz").status == 404
    assert _call(service, "GET", "/static/../broadcast.toml").status == 404


def test_a_post_without_the_pages_header_or_with_bad_json_changes_nothing(
        service: Broadcast) -> None:
    refused = _call(service, "POST", "/api/delay/overlay", PRODUCER, {"delay_s": 5})
    assert refused.status == 400
    assert "X-Stud-Table" in refused.text
    broken = _call(service, "POST", "/api/delay/overlay", POSTING, b"{not json")
    assert broken.status == 400
    before = {o["output"]: o["delay_s"] for o in _call(
        service, "GET", "/api/outputs", PRODUCER).json()}
    assert before["overlay"] == 2.0  # write_config's delay


def test_the_producer_sets_a_delay(service: Broadcast) -> None:
    done = _call(service, "POST", "/api/delay/overlay", POSTING, {"delay_s": 5})
    assert done.status == 200, done.text
    assert done.json()["delay_s"] == 5.0
    outputs = {o["output"]: o for o in _call(service, "GET", "/api/outputs", PRODUCER).json()}
    assert outputs["overlay"]["delay_s"] == 5.0
    assert outputs["overlay"]["delay_source"] == "producer"
