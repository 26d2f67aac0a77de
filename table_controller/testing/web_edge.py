"""What the web services' security tests share (the broadcast service's
tests/broadcast/test_web_security.py and the floor's tests/floor/test_floor_security.py):
raw HTTP requests from a chosen source address, an attacker's page on another
origin, the headers every response must carry, and the port-in-use start.

Each service keeps its own cases (its routes, its login); the checks that must
read the same for both services are written once here.
"""

from __future__ import annotations

import http.client
import http.server
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from table_controller.testing.broker import WAIT


def http_request(port: int, path: str, *, method: str = "GET",
                 headers: Mapping[str, str] | None = None, body: bytes | None = None,
                 source: str = "127.0.0.1") -> tuple[int, dict[str, str], str]:
    """One request to ``127.0.0.1:port`` from ``source``; (status, lower-cased headers,
    body). An SSE response is read only up to its headers (it never ends)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT,
                                      source_address=(source, 0))
    try:
        conn.request(method, path, body=body, headers=dict(headers or {}))
        resp = conn.getresponse()
        got = {k.lower(): v for k, v in resp.getheaders()}
        stream = got.get("content-type", "").startswith("text/event-stream")
        return resp.status, got, "" if stream else resp.read().decode()
    finally:
        conn.close()


def assert_unframable_and_not_stored(got: Mapping[str, str], what: str) -> None:
    """The headers every page, API and stream of a web service carries (issue 22): no
    framing by any origin, never cached."""
    assert "frame-ancestors 'none'" in got["content-security-policy"], what
    assert got["x-frame-options"] == "DENY", what
    assert got["cache-control"] == "no-store", what


class AttackerPage:
    """A page ``html`` served on another port of the same host: another origin, the
    same site (SameSite cookies do not stop its requests)."""

    def __init__(self, html: str) -> None:
        """Serve ``html`` at every path of a new port (:attr:`port`) until :meth:`close`."""
        body = html.encode()

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_args: Any) -> None:
                return

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port: int = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        """Stop serving."""
        self.server.shutdown()
        self.server.server_close()


def start_on_a_busy_port(command: str, config_for: Callable[[int], Path]
                         ) -> tuple[subprocess.CompletedProcess[str], int]:
    """Run ``python -m table_controller <command> --config <config_for(port)>`` while
    ``port`` is taken by another listener; (the finished run, the port)."""
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        config = config_for(port)
        run = subprocess.run([sys.executable, "-m", "table_controller", command,
                              "--config", str(config)], capture_output=True, text=True,
                             timeout=WAIT, check=False)
    return run, port


def assert_one_line_exit_2(run: subprocess.CompletedProcess[str], port: int) -> None:
    """A service that cannot listen on ``port``: exit 2, one line naming the address,
    no traceback (docs/floor.md, docs/broadcast.md)."""
    assert run.returncode == 2, run.stderr
    assert run.stderr.strip().count("\n") == 0, run.stderr
    assert f"cannot serve on 127.0.0.1:{port}" in run.stderr
    assert "Traceback" not in run.stderr
