"""Call an ASGI app in process: the web handlers' fast tests, beside the tests that
run the services on a real port (issue 20).

No server, socket or thread: one HTTP request is handed to the app as uvicorn would
hand it (``http`` scope, one body message), and what the app sends back is collected.
Streams (server-sent events) are not for this: the client is gone once its request
is read, so a stream ends at once; the real-port tests read them.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit


@dataclass(frozen=True)
class AsgiResponse:
    """What the app answered: status, headers (names lower-cased) and body."""

    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def text(self) -> str:
        """The body as text (UTF-8)."""
        return self.body.decode()

    def json(self) -> Any:
        """The body parsed as JSON."""
        return json.loads(self.body)


async def request_async(app: Any, method: str, target: str, *,
                        headers: Mapping[str, str] | None = None,
                        body: bytes = b"") -> AsgiResponse:
    """One request to ``app``; ``target``: path and query (``/a/b?x=1``)."""
    url = urlsplit(target)
    raw_headers = [(b"host", b"testserver")]
    raw_headers += [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
    if body:
        raw_headers.append((b"content-length", str(len(body)).encode()))
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
        "method": method, "scheme": "http", "path": url.path,
        "raw_path": url.path.encode(), "query_string": url.query.encode(),
        "root_path": "", "headers": raw_headers,
        "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 80),
    }
    sent = False
    status = 0
    got_headers: dict[str, str] = {}
    parts: list[bytes] = []

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return {"type": "http.disconnect"}  # the request is over: a stream ends at once

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
            for name, value in message.get("headers", []):
                got_headers[name.decode().lower()] = value.decode()
        elif message["type"] == "http.response.body":
            parts.append(message.get("body", b""))

    await app(scope, receive, send)
    return AsgiResponse(status, got_headers, b"".join(parts))


def request(app: Any, method: str, target: str, *, headers: Mapping[str, str] | None = None,
            body: bytes = b"") -> AsgiResponse:
    """:func:`request_async` on a fresh event loop (for tests without one)."""
    return asyncio.run(request_async(app, method, target, headers=headers, body=body))
