"""``stud-table demo``: a simulated 8-seat table, live, over a real broker.

Starts a :class:`DemoTable` (mosquitto, emulated readers, the real daemon as a
child process), a :class:`TableFeed` watching the public topics, and a
:class:`VirtualDealer` dealing random clean hands. The main thread only prints:
it redraws the table in place when the output is a terminal, and writes plain
lines otherwise (CI logs, pipes). SIGINT/SIGTERM stop everything and exit 0.
"""

from __future__ import annotations

import json
import queue
import random
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Final, TextIO

from firmware_bridge.rf_channel import RFParams
from table_controller.daemon.logging import configure_logging
from table_controller.demo.broadcast import DEFAULT_DELAY, SEAT_NAMES, DemoBroadcast
from table_controller.demo.dealer import VirtualDealer
from table_controller.demo.feed import TableFeed
from table_controller.mqtt.local_broker import BrokerError, find_mosquitto
from table_controller.mqtt.request import NoReplyError, send_request
from table_controller.mqtt.topics import SECURE_LEVEL, TableTopics
from table_controller.simulation.session import TABLE_ID, DemoError, DemoTable

EXIT_OK: Final = 0
EXIT_FAILURE: Final = 1

READY_TIMEOUT: Final = 60.0
"""Seconds to wait for the daemon's first state and every reader online."""

REDRAW_PERIOD: Final = 0.1
"""Seconds between two checks for something new to print or redraw."""

_CLEAR_SCREEN: Final = "\x1b[2J\x1b[H"
_HOME: Final = "\x1b[H"
_CLEAR_EOL: Final = "\x1b[K"
_CLEAR_BELOW: Final = "\x1b[J"


def scan_period_for(speed: float) -> float:
    """Reader scan cycle for a dealing ``speed``: well below the time between two
    cards (readers scan independently, so only cards further apart than a scan
    reach the daemon in order), but no faster than a real board needs."""
    return min(0.05, max(0.02, 0.1 / speed))


def public_filters(topics: TableTopics) -> list[str]:
    """Every public topic of a table, for a watcher who must not see hole cards.

    Listed one by one: MQTT has no "everything but ``secure/``" filter, and the
    table's ``#`` would include the secure topics (every down card, live).
    """
    return [topics.status, topics.state, topics.events, topics.alerts, topics.readers_filter]


def watch_lines(port: int) -> list[str]:
    """How to watch the demo's topics with ``mosquitto_sub``: the public topics
    first (what anyone may see), then the secure ones, clearly marked as such."""
    topics = TableTopics(TABLE_ID)
    public = " ".join(f"-t '{name}'" for name in public_filters(topics))
    return [
        "watch (public topics, as a broadcast overlay sees them; no hole card):",
        f"  mosquitto_sub -h 127.0.0.1 -p {port} {public} -v",
        "SECURE - every hole card live, production room only (deploy/acl keeps the"
        " public out; this private demo broker does not):",
        f"  mosquitto_sub -h 127.0.0.1 -p {port} -t '{topics.base}/{SECURE_LEVEL}/#' -v",
    ]


class Console:
    """The demo's output: plain lines, or a screen redrawn in place on a terminal.

    Other threads only queue lines (:meth:`say`); the main thread writes
    (:meth:`refresh`), so output never interleaves.
    """

    def __init__(self, out: TextIO, interactive: bool) -> None:
        self.out = out
        self.interactive = interactive
        self.header: list[str] = []
        self.feed: TableFeed | None = None
        self._lines: queue.SimpleQueue[str] = queue.SimpleQueue()
        self._drawn = -1

    def say(self, line: str) -> None:
        """Queue a line (any thread). On a terminal it joins the table's recent lines."""
        if self.interactive and self.feed is not None:
            self.feed.note(line)
        else:
            self._lines.put(line)

    def say_all(self, lines: Sequence[str]) -> None:
        """Queue several lines (the feed's sink in plain mode)."""
        for line in lines:
            self._lines.put(line)

    def write(self, text: str) -> None:
        """Write now (main thread only)."""
        self.out.write(text)
        self.out.flush()

    def refresh(self) -> None:
        """Print queued lines, or redraw the screen if the table changed (main thread)."""
        if not self.interactive or self.feed is None:
            while True:
                try:
                    line = self._lines.get_nowait()
                except queue.Empty:
                    break
                self.out.write(line + "\n")
            self.out.flush()
            return
        if self._drawn == -1:
            self.out.write(_CLEAR_SCREEN)
        changes = self.feed.changes
        if changes == self._drawn:
            return
        self._drawn = changes
        # Cut to the terminal: a screen taller than the window would scroll, and
        # going "home" would then no longer redraw in place.
        size = shutil.get_terminal_size()
        screen = self.feed.screen(self.header, height=size.lines - 1)
        screen = [line[: size.columns] for line in screen][: max(1, size.lines - 1)]
        self.write(_HOME + "".join(f"{line}{_CLEAR_EOL}\n" for line in screen) + _CLEAR_BELOW)


@contextmanager
def _stop_on_signals(stop: threading.Event) -> Iterator[None]:
    """SIGINT and SIGTERM set ``stop`` instead of raising; restored afterwards."""
    def handler(signum: int, frame: FrameType | None) -> None:
        del signum, frame
        stop.set()

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def _wait(condition: Callable[[], bool], stop: threading.Event, timeout: float,
          alive: Callable[[], bool], tick: Callable[[], None]) -> bool:
    """Poll ``condition`` (calling ``tick`` meanwhile) until true; False on stop,
    timeout or ``alive()`` false."""
    deadline = time.monotonic() + timeout
    while not condition():
        tick()
        if stop.wait(REDRAW_PERIOD) or time.monotonic() > deadline or not alive():
            return False
    return True


def run_demo(
    *,
    hands: int | None = None,
    speed: float = 1.0,
    seed: int | None = None,
    out: TextIO | None = None,
    interactive: bool | None = None,
    keep: bool = False,
    broadcast: bool = False,
    delay: float = DEFAULT_DELAY,
    rf: RFParams | None = None,
) -> int:
    """Run the demo until ``hands`` hands are done (None: until Ctrl-C); exit code.

    ``speed`` makes the dealer N times faster; ``seed`` makes the hands
    repeatable (random if None, and printed). ``interactive`` (default: whether
    ``out`` is a terminal) redraws the table in place. ``keep`` keeps the work
    directory (the daemon's journal and log) instead of deleting it; either way
    the last line says where it is or was. ``broadcast`` also runs the broadcast
    service (overlay delayed ``delay`` seconds, venue and producer pages) and
    names the players (:mod:`table_controller.demo.broadcast`). ``rf``: the emulated
    readers read through this RF channel (``--rf PROFILE``, docs/presence.md).
    """
    if speed <= 0:
        raise ValueError("speed must be positive")
    if delay < 0:
        raise ValueError("delay must be zero or positive")
    stream = out if out is not None else sys.stdout
    console = Console(stream, stream.isatty() if interactive is None else interactive)
    # Warnings only from this process: the daemon's own logs go to its file.
    configure_logging("console", "warning")
    if seed is None:
        seed = random.SystemRandom().randrange(1_000_000)
    if find_mosquitto() is None:
        # Said first, in one line: nothing else is worth starting without a broker.
        print("stud-table demo: mosquitto is not installed: run scripts/setup (it installs"
              " the Debian package 'mosquitto')", file=sys.stderr)
        return EXIT_FAILURE
    stop = threading.Event()
    workdir = Path(tempfile.mkdtemp(prefix="stud-demo-"))
    with _stop_on_signals(stop):
        try:
            return _run(console, workdir, stop, hands=hands, speed=speed, seed=seed, keep=keep,
                        broadcast=delay if broadcast else None, rf=rf)
        except (BrokerError, DemoError) as exc:
            print(f"stud-table demo: {exc}", file=sys.stderr)
            return EXIT_FAILURE
        finally:
            if not keep:
                shutil.rmtree(workdir, ignore_errors=True)
            # Written after the daemon has stopped: the journal is complete.
            console.write(_leftovers_line(workdir, keep) + "\n")


def _leftovers_line(workdir: Path, keep: bool) -> str:
    """Where the demo's journal and daemon log are (``keep``), or that they are gone."""
    journal = workdir / "journal" / f"{TABLE_ID}.journal.jsonl"
    if keep:
        return (f"demo: kept {workdir}: journal {journal}, daemon log {workdir / 'daemon.log'}"
                f" (try: stud-table phh export {journal})")
    return f"demo: removed {workdir} (journal and daemon log); --keep keeps them"


def _run(console: Console, workdir: Path, stop: threading.Event, *,
         hands: int | None, speed: float, seed: int, keep: bool = False,
         broadcast: float | None = None, rf: RFParams | None = None) -> int:
    """The demo itself; ``broadcast``: the overlay's delay, or None for no service."""
    table = DemoTable(workdir, scan_period=scan_period_for(speed), rf=rf)
    feed: TableFeed | None = None
    dealer: VirtualDealer | None = None
    service: DemoBroadcast | None = None
    try:
        table.start()
        if broadcast is not None:
            # Before the first card: the delayed overlay then has the whole first hand.
            service = DemoBroadcast(workdir, table.port, delay=broadcast).start(stop.is_set)
        feed = TableFeed("127.0.0.1", table.port, TABLE_ID, console.say_all).start()
        console.feed = feed
        console.header = [
            f"stud-table demo: 8-seat table, virtual dealer (seed {seed}, speed {speed:g}x)"
            " - Ctrl-C to stop",
            f"broker 127.0.0.1:{table.port} (pid {table.broker.pid}),"
            f" daemon pid {table.daemon_pid}, log {table.log_path}",
            f"journal {table.journal_path}"
            + ("" if keep else " (deleted on exit; --keep keeps it)"),
            *watch_lines(table.port),
            *(service.lines() if service is not None else []),
        ]
        console.write("\n".join(console.header) + "\n")
        readers = len(table.layout.readers)
        ready = _wait(lambda: feed is not None and feed.ready and feed.readers_online(readers),
                      stop, READY_TIMEOUT, table.daemon_alive, console.refresh)
        if stop.is_set():
            console.say("demo: stopped")
            console.refresh()
            return EXIT_OK
        if not ready:
            return _daemon_failed(console, table, "the daemon did not publish its table with"
                                  f" every reader online within {READY_TIMEOUT:.0f} s")
        if service is not None:
            _name_players(console, table.port)
        assert table.table is not None
        dealer = VirtualDealer(
            table.table, feed, seed=seed, speed=speed, hands=hands,
            settle_time=table.presence_hold + 0.5, say=console.say,
        ).start()
        while not stop.is_set() and not dealer.done.is_set():
            console.refresh()
            if not table.daemon_alive():
                return _daemon_failed(console, table, "the daemon stopped unexpectedly")
            if service is not None and not service.alive():
                console.write("stud-table demo: the broadcast service stopped unexpectedly;"
                              f" its log ends with:\n{service.log_tail()}\n")
                return EXIT_FAILURE
            stop.wait(REDRAW_PERIOD)
        dealer.stop()
        console.refresh()
        if dealer.failure is not None:
            return _daemon_failed(console, table, dealer.failure)
        console.say(f"demo: stopped after {dealer.hands_completed} complete hand(s)")
        console.refresh()
        return EXIT_OK
    finally:
        if dealer is not None:
            dealer.stop()
        try:
            # The service first: it follows the broker, which goes last.
            if service is not None:
                service.stop()
        finally:
            _close_table(table, feed)
        if console.interactive:
            console.write("\n")


def _close_table(table: DemoTable, feed: TableFeed | None) -> None:
    """Stop the daemon, readers and broker, then the feed (each even if one failed)."""
    try:
        table.close()
    finally:
        if feed is not None:
            feed.stop()


def _daemon_failed(console: Console, table: DemoTable, why: str) -> int:
    """Say what went wrong, with the end of the daemon's log; the exit code."""
    code = table.daemon_exit_code()
    status = f" (daemon exit code {code})" if code is not None else ""
    console.write(f"stud-table demo: {why}{status}; the daemon's log ends with:\n"
                  f"{table.daemon_log_tail()}\n")
    return EXIT_FAILURE


def _name_players(console: Console, port: int) -> None:
    """Seat the demo's players by name (``cmd/seat``), so the broadcast pages show
    names. A refusal or no answer is said and the demo goes on without that name."""
    for seat, (name, country) in enumerate(SEAT_NAMES, start=1):
        payload = json.dumps({"seat": seat, "name": name, "country": country}).encode()
        try:
            reply = send_request("127.0.0.1", port, TABLE_ID, "seat", payload)
        except NoReplyError as exc:
            console.say(f"demo: seat {seat} not named: {exc}")
            continue
        if not reply.get("accepted"):
            console.say(f"demo: seat {seat} not named: {reply.get('reason')}")
