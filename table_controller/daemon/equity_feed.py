"""Live equity off the engine thread: one worker, newest position only.

Theory of operation (docs/equity.md "Live equity", docs/daemon.md)
-----------------------------------------------------------------
After every card the engine thread publishes the card's event and the new
state first (the secure state says ``equity_info.ready: false``), then hands
the hand's new :class:`~table_controller.domain.equity.live.EquitySpot` to
:meth:`EquityWorker.submit` and goes on: it never waits for equity.

The worker holds **one** pending spot. A newer card replaces a spot not yet
started (it is *cancelled*: never computed); a computation already running for
an older spot finishes, but its result is *discarded* (never posted): the
worker compares it with the newest spot submitted. A result that is posted goes
through the daemon's queue (:class:`EquityReady`) and the engine thread checks
it once more against the hand's spot *now* before publishing it: so no number
of an older position is ever published after a newer card, whatever the
timing.

Where it computes (``compute``): in this worker thread
(:func:`~table_controller.domain.equity.live.compute_live`; numpy releases the GIL in
its sorts and array loops, the rest holds it) or, with :class:`ChildProcess`,
in a child process at a lower CPU priority (:mod:`.equity_child`, nice 19) that the
thread waits on without holding the GIL, so the engine thread and paho's never
wait for it. The daemon uses the child process (bench/bench_daemon_equity.py
compares both).

A failure (a bug in the computation, the child process dying) is logged with
its cause, counted, and that position gets no numbers; a dead child is started
again for the next position. A table is never stopped by its equity.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Final

import structlog

from table_controller.domain.equity.evaluate import Game
from table_controller.domain.equity.live import EquitySpot, LiveEquity, compute_live

log = structlog.get_logger(__name__)

__all__ = ["ChildProcess", "Compute", "EquityReady", "EquityWorker", "WorkerCounters"]

RESTART_DELAY: Final = 10.0
"""Seconds between two starts of the equity child process (one that cannot start
must not cost a process start per card)."""

STOP_TIMEOUT: Final = 5.0
"""Seconds :meth:`EquityWorker.stop` waits for a computation in progress."""


@dataclass(frozen=True, slots=True)
class EquityReady:
    """A computation finished (posted on the daemon's queue for the engine thread)."""

    result: LiveEquity


@dataclass(frozen=True, slots=True)
class WorkerCounters:
    """What the worker did (for tests, benchmarks and the log)."""

    submitted: int
    computed: int
    cancelled: int
    """Spots replaced by a newer one before their computation started."""
    discarded: int
    """Computations finished after a newer spot came: not posted."""
    failed: int


Compute = Callable[[EquitySpot], LiveEquity]
"""Computes one spot (blocking); :func:`compute_live` or a :class:`ChildProcess`."""


class EquityWorker:
    """A thread computing the newest submitted spot and posting its result."""

    def __init__(self, post: Callable[[EquityReady], None], compute: Compute = compute_live,
                 *, prepare: Callable[[], None] | None = None) -> None:
        """``post`` delivers a result to the engine thread (the daemon's queue put);
        ``compute`` computes one spot (see the module docstring); ``prepare`` runs
        first on the worker thread (starting the child process: the daemon's start
        does not wait for its tables)."""
        self._post = post
        self._compute = compute
        self._prepare = prepare
        self._cond = threading.Condition()
        self._pending: EquitySpot | None = None
        self._newest: EquitySpot | None = None
        self._stopping = False
        self._thread: threading.Thread | None = None
        self._submitted = self._computed = self._cancelled = 0
        self._discarded = self._failed = 0
        self._failing = 0  # consecutive failures

    def start(self) -> None:
        """Start the worker thread."""
        self._thread = threading.Thread(target=self._run, name="equity", daemon=True)
        self._thread.start()

    def submit(self, spot: EquitySpot | None) -> None:
        """Compute ``spot`` next, cancelling a spot still waiting; ``None``: the hand
        has no spot now (nothing pending is computed). Returns at once."""
        with self._cond:
            if self._pending is not None:
                self._cancelled += 1
            self._pending = spot
            self._newest = spot
            if spot is not None:
                self._submitted += 1
            self._cond.notify()

    @property
    def counters(self) -> WorkerCounters:
        """A snapshot of the counters."""
        with self._cond:
            return WorkerCounters(self._submitted, self._computed, self._cancelled,
                                  self._discarded, self._failed)

    def stop(self, timeout: float = STOP_TIMEOUT) -> None:
        """Stop the thread (a computation in progress is waited for, up to ``timeout``)."""
        with self._cond:
            self._stopping = True
            self._pending = None
            self._cond.notify()
        if self._thread is not None:
            self._thread.join(timeout)
        closer = getattr(self._compute, "close", None)
        if callable(closer):
            closer()

    def _run(self) -> None:
        if self._prepare is not None:
            try:
                self._prepare()
            except Exception as exc:
                # Equity is an extra: the table runs on (the next spot tries again).
                log.error("equity_worker_not_prepared", error=f"{type(exc).__name__}: {exc}")
        while True:
            with self._cond:
                while self._pending is None and not self._stopping:
                    self._cond.wait()
                if self._stopping:
                    return
                spot, self._pending = self._pending, None
            assert spot is not None
            try:
                result = self._compute(spot)
            except Exception as exc:
                # Never the cards (secret): the hand and the error only. Once per run
                # of failures (a dead child would otherwise log every card).
                with self._cond:
                    self._failed += 1
                    self._failing += 1
                    first = self._failing == 1
                (log.error if first else log.debug)(
                    "equity_failed", hand=spot.hand, error=f"{type(exc).__name__}: {exc}")
                continue
            if self._failing:
                log.warning("equity_recovered", failed=self._failing)
                self._failing = 0
            with self._cond:
                self._computed += 1
                if self._newest != spot:
                    self._discarded += 1  # a newer card came meanwhile: stale
                    continue
            self._post(EquityReady(result))


class ChildProcess:
    """Computes spots in a child process (``python -m
    table_controller.daemon.equity_child``: a fresh interpreter, not a ``fork`` of
    the threaded daemon), started again after it dies. Used as an
    :class:`EquityWorker`'s ``compute``; called from the worker thread only."""

    def __init__(self, game: Game) -> None:
        """Prepare (the child starts at :meth:`start` or the first spot)."""
        self._game = game
        self._process: subprocess.Popen[bytes] | None = None
        self._send: Connection | None = None
        self._recv: Connection | None = None
        self.starts = 0
        self._retry_at = 0.0

    def start(self) -> None:
        """Start the child and wait until its tables are built (about a second).
        After a failed start the next is tried :data:`RESTART_DELAY` s later at the
        earliest (until then a spot fails at once)."""
        wait = self._retry_at - time.monotonic()
        if wait > 0:
            raise RuntimeError(f"the equity process failed to start; next try in {wait:.0f} s")
        process = subprocess.Popen(
            [sys.executable, "-m", "table_controller.daemon.equity_child", self._game.value],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, close_fds=True,
            # Its own process group: a Ctrl-C at the terminal reaches the daemon only,
            # which stops the child by closing its input (no KeyboardInterrupt
            # traceback from the child, issue 24); it ends with its input anyway.
            start_new_session=True,
        )
        assert process.stdin is not None
        assert process.stdout is not None
        # The Connections own duplicates; the pipe objects are closed at once.
        self._send = Connection(os.dup(process.stdin.fileno()), readable=False)
        self._recv = Connection(os.dup(process.stdout.fileno()), writable=False)
        process.stdin.close()
        process.stdout.close()
        self._process = process
        self.starts += 1
        try:
            self._recv.recv()  # the ready signal (EOFError if it died building the tables)
        except (EOFError, OSError):
            self.close()
            self._retry_at = time.monotonic() + RESTART_DELAY
            raise

    def __call__(self, spot: EquitySpot) -> LiveEquity:
        """Compute ``spot`` in the child (blocking, without holding the GIL)."""
        if self._process is None or self._process.poll() is not None:
            self.close()
            self.start()
        assert self._send is not None
        assert self._recv is not None
        try:
            self._send.send(spot)
            answer = self._recv.recv()
        except (EOFError, OSError) as exc:
            self.close()  # dead: the next spot starts a new child
            raise RuntimeError(
                f"the equity process died ({exc or type(exc).__name__})") from None
        if isinstance(answer, str):
            raise RuntimeError(f"in the equity process: {answer}")
        if not isinstance(answer, LiveEquity):
            raise RuntimeError(f"the equity process answered a {type(answer).__name__}")
        return answer

    @property
    def pid(self) -> int | None:
        """The child's process id, while one runs."""
        return self._process.pid if self._process is not None else None

    def close(self) -> None:
        """Stop the child: it ends when its input closes (killed if it does not)."""
        send, recv, process = self._send, self._recv, self._process
        self._send = self._recv = None
        self._process = None
        for conn in (send, recv):
            if conn is not None:
                conn.close()
        if process is not None:
            try:
                process.wait(2.0)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(2.0)
