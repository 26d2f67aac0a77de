"""A small progress bar on stderr (no dependency for one line of output).

On a terminal the bar is redrawn in place at most :data:`REDRAW_PERIOD` apart; in
a log or a pipe it writes a plain line every tenth of the run instead, so CI logs
stay short. The clock is injectable so the output can be tested.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Final, TextIO

REDRAW_PERIOD: Final = 0.1
"""Seconds between two redraws on a terminal."""

WIDTH: Final = 30
"""Characters of the bar itself."""


class ProgressBar:
    """``update(done)`` as work goes on, ``close()`` at the end."""

    def __init__(self, total: int, stream: TextIO, *, label: str = "simulate",
                 interactive: bool | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.total = max(total, 1)
        self.stream = stream
        self.label = label
        self.interactive = stream.isatty() if interactive is None else interactive
        self._clock = clock
        self._start = clock()
        self._last_draw = -REDRAW_PERIOD
        self._last_tenth = 0
        self._done = 0

    def line(self, done: int) -> str:
        """The bar for ``done`` units of work."""
        fraction = min(done / self.total, 1.0)
        filled = int(WIDTH * fraction)
        elapsed = self._clock() - self._start
        rate = done / elapsed if elapsed > 0 else 0.0
        left = (self.total - done) / rate if rate > 0 else 0.0
        return (f"{self.label} [{'#' * filled}{'.' * (WIDTH - filled)}] {done}/{self.total}"
                f" {100 * fraction:3.0f}% {rate:,.{0 if rate >= 10 else 2}f} hands/s,"
                f" {left:,.0f} s left")

    def update(self, done: int) -> None:
        """Record progress; draw if it is time to."""
        self._done = done
        if self.interactive:
            now = self._clock()
            if now - self._last_draw >= REDRAW_PERIOD or done >= self.total:
                self._last_draw = now
                self.stream.write("\r" + self.line(done))
                self.stream.flush()
            return
        tenth = 10 * done // self.total
        if tenth > self._last_tenth:
            self._last_tenth = tenth
            self.stream.write(self.line(done) + "\n")
            self.stream.flush()

    def close(self) -> None:
        """Finish the line on a terminal."""
        if self.interactive:
            self.stream.write("\r" + self.line(self._done) + "\n")
            self.stream.flush()
