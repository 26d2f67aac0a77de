"""The newcomer's path (issue 12, "Done when"): ``stud-table demo --broadcast``, as the
README says, then the printed URLs in a real browser.

One real run: the demo (its own Mosquitto, emulated readers, the daemon, the broadcast
service, all child processes) in a subprocess; the test reads only what a newcomer
reads (the printed URLs and password) and opens the pages in headless Chromium:

* the overlay (delayed, reveal all) draws the players' names and their cards, down
  cards included;
* the venue (live, public) draws names and card backs but never a down card's identity,
  at every check while the demo deals;
* the producer page answers 401 without the password and 200 with the printed one;
* the demo exits 0 at ``--hands N`` and leaves no process (broker, daemon, service)
  and no work directory behind.
"""

from __future__ import annotations

import base64
import http.client
import re
import socket
import threading
from pathlib import Path

import pytest
from test_demo import DEMO, RUN_TIMEOUT, _assert_cleaned_up, _gone

from table_controller.broadcast.config import load_broadcast_config
from table_controller.broadcast.delay import Reveal
from table_controller.demo.broadcast import PREFERRED_PORT, SEAT_NAMES, DemoBroadcast
from table_controller.testing.broker import wait_until
from table_controller.testing.browser import CHROMIUM, Browser, seats
from table_controller.testing.process import collecting_output
from table_controller.tools.cli import main
from table_controller.web.passwords import check_password

needs_chromium = pytest.mark.skipif(CHROMIUM is None,
                                    reason="chromium not installed (scripts/setup)")

URL = re.compile(r"^  (overlay|venue|producer) +(http://127\.0\.0\.1:(\d+)/\S+)", re.MULTILINE)
PASSWORD = re.compile(r"^  producer \S+  password (\S+)  \(user producer", re.MULTILINE)
SERVICE_PID = re.compile(r"^broadcast pid (\d+) ", re.MULTILINE)
NAMES = {name for name, _country in SEAT_NAMES}


def _status(port: int, path: str, password: str | None) -> int:
    """The HTTP status of GET ``path`` (with the producer's Basic login if given)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {}
    if password is not None:
        headers["Authorization"] = "Basic " + base64.b64encode(
            f"producer:{password}".encode()).decode()
    try:
        conn.request("GET", path, headers=headers)
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


@needs_chromium
def test_demo_broadcast_newcomer_path(tmp_path: Path) -> None:
    """Issue 12 "Done when": one command, then the printed URLs work as printed."""
    browser: Browser | None = None
    demo = [*DEMO, "--broadcast", "--delay", "2", "--hands", "4", "--speed", "4", "--seed", "12"]
    with collecting_output(demo) as (proc, lines):
        try:
            wait_until(lambda: proc.poll() is not None or "  OBS: " in "".join(lines),
                       RUN_TIMEOUT, "the demo to print the broadcast URLs")
            printed = "".join(lines)
            found = list(URL.finditer(printed))
            urls = {m[1]: m[2] for m in found}
            assert set(urls) == {"overlay", "venue", "producer"}, printed
            password = PASSWORD.search(printed)
            assert password, printed
            port = int(found[0][3])
            assert "Browser source = overlay URL, 1920x1080" in printed, "OBS, in one line"
            assert "anonymous" in printed, "says the demo broker has no users"

            # The producer page is locked; the printed password opens it.
            assert _status(port, "/producer/demo", None) == 401
            assert _status(port, "/producer/demo", "not-" + password[1]) == 401
            assert _status(port, "/producer/demo", password[1]) == 200

            browser = page = Browser(tmp_path / "profile")
            page.open(urls["overlay"])
            # The delayed overlay reveals every hole card: names, up and down cards.
            wait_until(lambda: any(row["name"] in NAMES and row["up"] and row["down"]
                                   for row in seats(page)),
                       RUN_TIMEOUT, "the overlay to draw names and cards")

            page.open(urls["venue"])
            checks = backs = named = 0
            while proc.poll() is None:
                rows = seats(page)
                # The venue is live and public: a down card is a back, never a card.
                assert all(row["down"] == [] for row in rows), rows
                backs += sum(row["backs"] for row in rows)
                named += sum(row["name"] in NAMES for row in rows)
                checks += 1
                threading.Event().wait(0.2)
            assert checks >= 5, "the venue was checked while the demo dealt"
            assert backs > 0, "the venue drew hidden down cards (the check saw cards)"
            assert named > 0, "the venue drew the players' names"
            assert proc.wait(timeout=RUN_TIMEOUT) == 0, "".join(lines)
        finally:
            if browser is not None:
                browser.close()
    output = "".join(lines)
    service = SERVICE_PID.search(output)
    assert service, output
    wait_until(lambda: _gone(int(service[1])), 20, "the broadcast service to be gone")
    _assert_cleaned_up(output)


def test_demo_config_stores_only_the_password_hash(tmp_path: Path) -> None:
    """The generated broadcast.toml is valid, follows the demo table with the overlay
    delayed as asked and revealing all, and holds the password only as its hash."""
    demo = DemoBroadcast(tmp_path, 1883, delay=7.5)
    path = tmp_path / "broadcast.toml"
    path.write_text(demo.config_text())
    cfg = load_broadcast_config(path)
    assert cfg.tables == ["demo"]
    assert [(o.name, o.delay_s, o.reveal, o.locked) for o in cfg.outputs] == [
        ("overlay", 7.5, Reveal.ALL, False)]
    # The floor is the chosen delay: the producer's control may not shorten it.
    assert cfg.min_public_delay_s == 7.5
    assert (cfg.broker.host, cfg.broker.port, cfg.http.host) == ("127.0.0.1", 1883, "127.0.0.1")
    assert demo.password not in path.read_text()
    assert check_password(demo.password, cfg.producer.password_hash)
    assert DemoBroadcast(tmp_path, 1883).password != demo.password, "new at every run"


def test_bad_delay_options_are_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    """``--delay`` alone would be silently ignored, and one over the service's maximum
    would fail in the child: both are usage errors (exit 2) before anything starts."""
    assert main(["demo", "--delay", "5", "--hands", "1"]) == 2
    assert "--delay needs --broadcast" in capsys.readouterr().err
    assert main(["demo", "--broadcast", "--delay", "90000", "--hands", "1"]) == 2
    assert "--delay: at most 86400 s" in capsys.readouterr().err


def test_port_8480_when_free_else_any(tmp_path: Path) -> None:
    """The overlay URL stays the same from run to run (port 8480) so an OBS source set
    up once keeps working; a port already held never stops the demo (any free one)."""
    with socket.socket() as holder:
        try:
            holder.bind(("127.0.0.1", PREFERRED_PORT))
            holder.listen()
        except OSError:
            pass  # someone else holds it: the same case
        demo = DemoBroadcast(tmp_path, 1883)
        assert demo.http_port == 0
        assert "[http]\nhost = \"127.0.0.1\"\nport = 0\n" in demo.config_text()
