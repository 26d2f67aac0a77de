"""Headless Debian Chromium driven over the DevTools protocol on a pipe (no extra package).

Why this and not playwright or chromedriver: ``--remote-debugging-pipe`` speaks the
DevTools protocol over file descriptors 3 and 4 (NUL-terminated JSON), so the
standard library is enough, nothing is downloaded (playwright fetches its own
browser builds, which an offline machine cannot), and the browser is the one
``scripts/setup`` installs from Debian.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
WAIT = 30.0


class BrowserError(RuntimeError):
    """The browser answered a command with an error, or did not answer."""


class Browser:
    """One headless Chromium with one page (tab), 1920x1080."""

    def __init__(self, profile: Path) -> None:
        if CHROMIUM is None:
            raise BrowserError("chromium is not installed (scripts/setup installs it)")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def wire() -> None:  # in the child: the pipe ends become fds 3 and 4
            os.dup2(to_browser_r, 3)
            os.dup2(from_browser_w, 4)

        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
             "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--no-first-run", "--disable-extensions",
             "--hide-scrollbars", "--mute-audio", "--window-size=1920,1080",
             "--remote-debugging-pipe", f"--user-data-dir={profile}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=wire, pass_fds=(3, 4), start_new_session=True,  # noqa: PLW1509
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._next = 0
        self._lock = threading.Lock()
        self._answers: dict[int, dict[str, Any]] = {}
        self._cond = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget",
                                 {"targetId": target, "flatten": True})["sessionId"]
        for method in ("Page.enable", "Runtime.enable", "Network.enable"):
            self.call(method, session=True)
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": 1920, "height": 1080, "deviceScaleFactor": 1, "mobile": False},
                  session=True)

    def _read(self) -> None:
        buffer = b""
        while True:
            try:
                chunk = os.read(self._from_browser, 1 << 16)
            except OSError:
                return
            if not chunk:
                return
            buffer += chunk
            while b"\0" in buffer:
                raw, buffer = buffer.split(b"\0", 1)
                message = json.loads(raw)
                if "id" in message:
                    with self._cond:
                        self._answers[message["id"]] = message
                        self._cond.notify_all()

    def call(self, method: str, params: dict[str, Any] | None = None, *,
             session: bool = False, timeout: float = WAIT) -> dict[str, Any]:
        """Send one DevTools command and return its result."""
        with self._lock:
            self._next += 1
            ident = self._next
        message: dict[str, Any] = {"id": ident, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self.session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        with self._cond:
            while ident not in self._answers:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise BrowserError(f"no answer to {method} in {timeout} s")
                self._cond.wait(left)
            answer = self._answers.pop(ident)
        if "error" in answer:
            raise BrowserError(f"{method}: {answer['error']}")
        result: dict[str, Any] = answer.get("result", {})
        return result

    def headers(self, headers: dict[str, str]) -> None:
        """Extra HTTP headers on every request of the page (e.g. Authorization)."""
        self.call("Network.setExtraHTTPHeaders", {"headers": headers}, session=True)

    def open(self, url: str) -> None:
        """Navigate and wait until the document has loaded."""
        self.call("Page.navigate", {"url": url}, session=True)
        self.wait_js("document.readyState === 'complete' && document.body !== null",
                     what=f"{url} to load")

    def js(self, expression: str) -> Any:
        """Evaluate ``expression`` in the page; return its JSON value."""
        result = self.call("Runtime.evaluate", {"expression": expression,
                                                "returnByValue": True}, session=True)
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression}: {result['exceptionDetails'].get('text')}")
        return result["result"].get("value")

    def wait_js(self, expression: str, timeout: float = WAIT, what: str = "") -> Any:
        """Poll ``expression`` until it is truthy; return its value."""
        deadline = time.monotonic() + timeout
        while True:
            with contextlib.suppress(BrowserError):
                value = self.js(expression)
                if value:
                    return value
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {timeout} s waiting for"
                                     f" {what or expression}")
            time.sleep(0.05)

    def screenshot(self, path: Path, transparent: bool = False) -> None:
        """Save the page as a 1920x1080 PNG (a transparent background if asked)."""
        if transparent:
            self.call("Emulation.setDefaultBackgroundColorOverride",
                      {"color": {"r": 0, "g": 0, "b": 0, "a": 0}}, session=True)
        data = self.call("Page.captureScreenshot", {"format": "png"}, session=True)["data"]
        path.write_bytes(base64.b64decode(data))

    def close(self) -> None:
        """Quit the browser."""
        with contextlib.suppress(BrowserError, OSError):
            self.call("Browser.close", timeout=5)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, 9)
            self.proc.wait(timeout=10)
        for fd in (self._to_browser, self._from_browser):
            with contextlib.suppress(OSError):
                os.close(fd)


# The DOM as the tests read it: seat -> what the page draws.
SEATS_JS = """JSON.stringify(Array.from(document.querySelectorAll('#seats .seat')).map(el => ({
  seat: Number(el.dataset.seat), status: el.dataset.status, name: el.dataset.name,
  winner: el.classList.contains('winner'),
  down: Array.from(el.querySelectorAll('.card[data-face=down]')).map(c => c.dataset.card),
  backs: el.querySelectorAll('.card[data-face=back]').length,
  up: Array.from(el.querySelectorAll('.card[data-face=up]')).map(c => c.dataset.card),
  equity: el.querySelector('.equity') ? Number(el.querySelector('.equity').dataset.equity) : null,
})))"""


def seats(browser: Browser) -> list[dict[str, Any]]:
    """Every drawn seat (see :data:`SEATS_JS`)."""
    value = browser.js(SEATS_JS)
    return json.loads(value) if value else []
