"""What every page of the web services (broadcast, floor) sends and checks: headers, origin.

* :class:`SecurityHeaders` (ASGI middleware) puts a strict Content-Security-Policy
  on every response (scripts, styles, images and connections from this server
  only, no inline script or style attribute, and ``frame-ancestors 'none'``: no
  other page may frame ours, issue 22 "clickjacking"), ``X-Frame-Options``,
  ``X-Content-Type-Options: nosniff``, ``Referrer-Policy: same-origin``
  (``no-referrer`` makes Chromium send ``Origin: null`` on our own form posts) and
  ``Cache-Control: no-store`` on everything but the static CSS/script (an API
  answer, a view or an export never sits in a browser's or proxy's cache).
  A path may be given its own ``frame-ancestors`` (the broadcast overlay, for a
  production tool that frames it; OBS's browser source does not frame, so the
  default is ``'none'`` there too).
* :func:`cross_origin` tells a state-changing request sent by another origin (a
  form on another port of the same host is same-*site*, so a ``SameSite=Strict``
  cookie does not stop it) from one sent by our own page (issue 22 "CSRF").
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import Response

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

CSP_BASE: Final = ("default-src 'none'; script-src 'self'; style-src 'self';"
                   " img-src 'self' data:; connect-src 'self'; font-src 'self';"
                   " base-uri 'none'; form-action 'self'")
"""Everything from this server, nothing inline (no style attribute either)."""


def csp(frame_ancestors: str = "'none'") -> str:
    """The Content-Security-Policy value with ``frame-ancestors`` set."""
    return f"{CSP_BASE}; frame-ancestors {frame_ancestors}"


class SecurityHeaders:
    """ASGI middleware adding the module's headers to every HTTP response.

    ``frame_ancestors(path)`` may return a path's own ``frame-ancestors`` source
    list (``None``: ``'none'``); ``X-Frame-Options: DENY`` is sent only where it is
    ``'none'`` (the header cannot name origins).
    """

    def __init__(self, app: App,
                 frame_ancestors: Callable[[str], str | None] | None = None) -> None:
        self.app = app
        self.frame_ancestors = frame_ancestors

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Wrap ``send`` so the response start carries the headers."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = str(scope.get("path", ""))
        ancestors = (self.frame_ancestors(path) if self.frame_ancestors else None) or "'none'"
        static = path.startswith("/static/")

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", [])
                           if k.lower() not in (b"cache-control",) or static]
                headers += [
                    (b"content-security-policy", csp(ancestors).encode()),
                    (b"x-content-type-options", b"nosniff"),
                    (b"referrer-policy", b"same-origin"),
                    (b"cross-origin-opener-policy", b"same-origin"),
                ]
                if ancestors == "'none'":
                    headers.append((b"x-frame-options", b"DENY"))
                if not static:
                    headers.append((b"cache-control", b"no-store"))
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, sending)


def cross_origin(request: Request) -> str | None:
    """Why ``request`` (a state-changing one) is refused as cross-origin, else ``None``.

    A browser sends ``Origin`` with every POST; it must name this server (host and
    port as the request's ``Host``; the scheme is not compared, a TLS proxy may sit
    in front). Without ``Origin``, ``Sec-Fetch-Site`` must be ``same-origin`` or
    ``none`` (typed by the user); a client sending neither is not a browser (a
    script, curl), which cannot ride on a supervisor's cookie: it is let through.
    """
    host = request.headers.get("host", "").lower()
    origin = request.headers.get("origin")
    if origin is not None:
        if origin == "null":
            return "a request from an opaque origin (Origin: null) is refused"
        got = urlsplit(origin).netloc.lower()
        if got != host:
            return f"a request from another origin ({origin[:80]}) is refused"
        return None
    site = request.headers.get("sec-fetch-site")
    if site is not None and site not in ("same-origin", "none"):
        return f"a {site[:20]} request is refused (Sec-Fetch-Site)"
    return None


@dataclass(frozen=True, slots=True)
class PostRefusal:
    """Why a state-changing POST is refused: the HTTP status, a reply code, the reason."""

    status: int
    code: str
    """``cross_origin`` (403) or ``malformed`` (400)."""
    reason: str


Gate = Callable[[Request], Awaitable["Response | None"]]
"""A service's login check: ``None`` when logged in, else the answer to send (401...)."""


async def guard_post(request: Request, gate: Gate,
                     refuse: Callable[[PostRefusal], Response]) -> Response | None:
    """The answer refusing a state-changing POST of a logged-in page, or ``None``.

    The three checks of every such POST of broadcast and floor (issue 20), in this
    order: the origin (:func:`cross_origin`: another origin learns nothing, not even
    whether a login is needed), the service's login (``gate``), and the
    ``X-Stud-Table: 1`` header, which no cross-site form can set. ``refuse`` shapes a
    refusal in the service's own form (plain text, or a JSON reply with ``code``).
    """
    if (why := cross_origin(request)) is not None:
        return refuse(PostRefusal(403, "cross_origin", why))
    if (denied := await gate(request)) is not None:
        return denied
    if request.headers.get("x-stud-table") != "1":
        return refuse(PostRefusal(400, "malformed", "missing X-Stud-Table header"))
    return None


MAX_ID_DIGITS: Final = 18
"""An SSE event id is a decimal number below 10**18 (an SQLite integer)."""


def event_id(text: str | None) -> int | None:
    """A ``Last-Event-ID`` (or ``?last=``) as a number; ``None`` if absent or empty.

    Only ASCII digits, at most :data:`MAX_ID_DIGITS` of them; anything else is a
    ``ValueError`` naming the problem (``str.isdigit`` accepts ``²``, which ``int``
    refuses: that was an HTTP 500, issue 22).
    """
    if text is None or text == "":
        return None
    if len(text) > MAX_ID_DIGITS or not text.isascii() or not text.isdigit():
        raise ValueError("Last-Event-ID must be a decimal number of at most"
                         f" {MAX_ID_DIGITS} digits")
    return int(text)
