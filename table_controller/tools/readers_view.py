"""``stud-table readers``: what every reader of a layout sees, live; and the layout walk.

For the person fitting antennas under the felt (hardware/README.md, "Fitting
antennas"). The command opens every reader of the layout itself, through the same
:class:`~firmware_bridge.link.ReaderLink` the daemon uses, so it must run while
the daemon does not (the daemon holds the ports, exclusively).

* The live view redraws the terminal twice a second: per reader its link state
  (and why it is not being read), firmware, heartbeat age, frame errors; per
  antenna port its zone, the tags it sees now (with their UIDs: this is the
  installer's own screen, nothing is published or logged; with the decks known,
  from ``--config`` or ``--deck``, the card each tag is, ``Kd/red``), reads per
  second and dropouts. A reader that is not online keeps its last figures on
  screen, each port marked ``(stale)``. Figures: :mod:`firmware_bridge.figures`.
  Ctrl-C quits.
* ``--walk`` runs the layout walk (:mod:`table_controller.tools.layout_walk`):
  one line per prompt and verdict on stdout, a summary, exit 0 when every zone
  was confirmed and 1 otherwise.

* ``--broker HOST:PORT``: while the daemon runs, the same figures (counts only,
  no UIDs) from its ``readers/<id>`` topics (:mod:`table_controller.tools.readers_remote`).

Exit 2 with one line on a bad layout or configuration file.
"""

from __future__ import annotations

import argparse
import os
import queue
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, TextIO

from firmware_bridge.figures import FigureCounter, ReaderFigures
from firmware_bridge.kinds import open_link
from firmware_bridge.link import ConnectionState, LinkStats, problem_hint
from firmware_bridge.messages import (
    FaultCode,
    Inventory,
    ReaderFault,
    ReaderMessage,
    TagArrived,
    TagLeft,
)
from table_controller.daemon.config import load_config
from table_controller.daemon.logging import configure_logging
from table_controller.mqtt.topics import check_level
from table_controller.table.config_file import ConfigError
from table_controller.table.deck import DeckRegistry, load_decks
from table_controller.table.layout import TableLayout, load_layout
from table_controller.tools.console_client import PASSWORD_ENV
from table_controller.tools.layout_walk import (
    DEFAULT_SETTLE,
    DEFAULT_TIMEOUT,
    LayoutWalk,
    Prompt,
    Summary,
    TakeOff,
    Verdict,
    WalkOutput,
)
from table_controller.tools.readers_remote import draw, run_remote_view

EXIT_OK: Final = 0
EXIT_WALK_FAILED: Final = 1
EXIT_BAD_INPUT: Final = 2

REDRAW_PERIOD: Final = 0.5
"""Seconds between two drawings of the live view."""

DEFAULT_HEARTBEAT_PERIOD: Final = 2.0
"""The daemon's default ``[table] heartbeat_period`` when no ``--config`` is given."""

ONLINE_WAIT: Final = 10.0
"""Seconds the walk waits for every reader to come online before it starts anyway
(the zones of a reader still offline then fail as dead antennas, with the reason
printed first)."""

_POLL: Final = 0.1
"""Seconds a loop waits for the readers' next message: bounds the walk's timing."""


@dataclass(frozen=True, slots=True)
class _Message:
    reader: int
    message: ReaderMessage
    at: float


@dataclass(frozen=True, slots=True)
class _State:
    reader: int
    state: ConnectionState
    stats: LinkStats


class ReaderBank:
    """One :class:`ReaderLink` per reader of ``layout``, their reports on one queue,
    and each reader's :class:`FigureCounter`, fed on the caller's thread by :meth:`pump`."""

    def __init__(self, layout: TableLayout, heartbeat_period: float) -> None:
        self.layout = layout
        self._inbox: queue.SimpleQueue[_Message | _State] = queue.SimpleQueue()
        self.figures = {reader.id: FigureCounter() for reader in layout.readers}
        self.states = {reader.id: ConnectionState.CONNECTING for reader in layout.readers}
        self.faults: dict[int, tuple[ReaderFault, float]] = {}
        """Each reader's last READER_FAULT and when it came (the daemon alerts on them)."""
        self.links = {
            reader.id: open_link(reader.kind, reader.device, reader.id, self._on_message,
                                 self._on_state, antennas=reader.antennas,
                                 heartbeat_period=heartbeat_period)
            for reader in layout.readers
        }

    def _on_message(self, reader: int, message: ReaderMessage, at: float) -> None:
        self._inbox.put(_Message(reader, message, at))

    def _on_state(self, reader: int, state: ConnectionState, stats: LinkStats) -> None:
        self._inbox.put(_State(reader, state, stats))

    def start(self) -> None:
        """Open every reader (each link retries by itself)."""
        for link in self.links.values():
            link.start()

    def stop(self) -> None:
        """Close every reader."""
        for link in self.links.values():
            link.stop()

    def pump(self, timeout: float) -> tuple[list[tuple[int, int]], list[int]]:
        """Take what the readers reported (waiting up to ``timeout`` for the first):
        the antennas whose tags may have changed, and the readers whose state did."""
        antennas: dict[tuple[int, int], None] = {}
        readers: dict[int, None] = {}
        try:
            item = self._inbox.get(timeout=timeout)
            while True:
                if isinstance(item, _State):
                    self.states[item.reader] = item.state
                    readers[item.reader] = None
                else:
                    self.figures[item.reader].feed(item.message, item.at)
                    if isinstance(item.message, ReaderFault):
                        self.faults[item.reader] = (item.message, item.at)
                    if isinstance(item.message, TagArrived | TagLeft | Inventory):
                        antennas[(item.reader, item.message.antenna)] = None
                item = self._inbox.get_nowait()
        except queue.Empty:
            pass
        return list(antennas), list(readers)

    def snapshot(self, now: float) -> dict[int, tuple[ConnectionState, LinkStats, ReaderFigures]]:
        """Every reader's state, link counters and figures as of ``now``."""
        return {
            reader: (self.states[reader], link.stats, self.figures[reader].snapshot(now))
            for reader, link in self.links.items()
        }


def state_line(reader: int, state: ConnectionState, stats: LinkStats) -> str:
    """``reader 2: offline — port missing: <detail> — <what to do>`` and the like."""
    if state is ConnectionState.ONLINE or stats.problem is None:
        return f"reader {reader}: {state.value}"
    shown = "offline" if state is ConnectionState.DISCONNECTED else state.value
    reason = stats.problem.value.replace("_", " ")
    return (f"reader {reader}: {shown} — {reason}: {stats.problem_detail}"
            f" — {problem_hint(stats.problem)}")


def fault_line(fault: ReaderFault, age: float) -> str:
    """``last fault 12 s ago: antenna 3: antenna open: <text>``."""
    try:
        kind = FaultCode(fault.code).name.lower().replace("_", " ")
    except ValueError:
        kind = f"code {fault.code}"
    where = f"antenna {fault.antenna}: " if fault.antenna is not None else ""
    return f"last fault {age:.0f} s ago: {where}{kind}{': ' + fault.text if fault.text else ''}"


def render(
    layout: TableLayout,
    readers: Mapping[int, tuple[ConnectionState, LinkStats, ReaderFigures]],
    *,
    faults: Mapping[int, tuple[ReaderFault, float]] | None = None,
    now: float = 0.0,
    now_text: str = "",
    card_of: Callable[[str], str | None] | None = None,
) -> list[str]:
    """The live view's lines (pure): a block per reader, a line per antenna port;
    ``faults`` are each reader's last READER_FAULT with its monotonic time;
    ``card_of`` names the card of a tag UID (None: not in a known deck), and the
    tags of a known deck are then shown by card instead of UID."""
    lines = [f"stud-table readers — {layout.name or 'layout'}: {len(layout.readers)} readers,"
             f" {layout.seats} seats   {now_text}   Ctrl-C quits", ""]
    for config in layout.readers:
        state, stats, figures = readers[config.id]
        heartbeat = (f"heartbeat {figures.heartbeat_age:.1f} s ago"
                     if figures.heartbeat_age is not None else "no heartbeat yet")
        lines.append(f"{state_line(config.id, state, stats)}   {config.device}")
        lines.append(
            f"  firmware {figures.firmware_text or '?'}   {heartbeat}   frames {stats.frames_ok}"
            f"   errors: crc {stats.crc_errors}, framing {stats.framing_errors},"
            f" other {stats.errors - stats.crc_errors - stats.framing_errors}"
            f"   missed {stats.frames_missed}   reconnects {stats.reconnects}"
        )
        if faults and config.id in faults:
            fault, at = faults[config.id]
            lines.append(f"  {fault_line(fault, max(0.0, now - at))}")
        # Not online: what is shown is what the reader said last, not what lies on
        # its antennas now.
        stale = state is not ConnectionState.ONLINE and bool(figures.antennas)
        if stale:
            lines.append("  not online: the figures below are its last ones (stale)")
        lines.append(
            f"  {'port':>4}  {'zone':<11} {'tags':>4} {'reads/s':>8} {'dropouts':>8}  "
            + ("cards" if card_of is not None else "UIDs")
        )
        ports = sorted({a.port for a in figures.antennas} | set(config.antennas))
        for port in ports:
            zone = config.antennas.get(port)
            seen = figures.antenna(port)
            tags = seen.tags if seen is not None else ()
            shown = [(card_of(uid) if card_of is not None else None) or uid for uid in tags]
            lines.append(
                f"  {port:>4}  {zone.name if zone else '(unmapped)':<11} {len(tags):>4}"
                f" {seen.reads_per_s if seen else 0.0:>8.1f} {seen.dropouts if seen else 0:>8}"
                f"  {' '.join([*shown, *(['(stale)'] if stale else [])])}"
            )
        lines.append("")
    return lines


def card_namer(registry: DeckRegistry) -> Callable[[str], str | None]:
    """``Kd`` (one deck) or ``Kd/red`` (several) for a tag of ``registry``, else None."""
    several = len(registry.decks) > 1

    def card_of(uid: str) -> str | None:
        found = registry.lookup(uid)
        if found is None:
            return None
        return f"{found.card.code}/{found.deck}" if several else found.card.code

    return card_of


def run_view(layout: TableLayout, heartbeat_period: float, out: TextIO,
             *, clock: Callable[[], float] = time.monotonic,
             card_of: Callable[[str], str | None] | None = None) -> int:
    """The live view until Ctrl-C."""
    bank = ReaderBank(layout, heartbeat_period)
    bank.start()
    try:
        next_draw = 0.0
        while True:
            bank.pump(_POLL)
            now = clock()
            if now >= next_draw:
                next_draw = now + REDRAW_PERIOD
                draw(out, render(layout, bank.snapshot(now), faults=bank.faults, now=now,
                                 now_text=time.strftime("%H:%M:%S"), card_of=card_of))
    except KeyboardInterrupt:
        return EXIT_OK
    finally:
        bank.stop()


def _say(out: TextIO, outputs: Sequence[WalkOutput]) -> Summary | None:
    summary = None
    for output in outputs:
        if isinstance(output, Prompt | TakeOff):
            out.write(f"{output.text}\n")
        elif isinstance(output, Verdict):
            out.write(f"  {output.text}\n")
        else:
            summary = output
            out.write("".join(f"{line}\n" for line in output.lines))
    out.flush()
    return summary


def run_walk(layout: TableLayout, heartbeat_period: float, out: TextIO, *,
             settle: float = DEFAULT_SETTLE, timeout: float = DEFAULT_TIMEOUT,
             online_wait: float = ONLINE_WAIT,
             clock: Callable[[], float] = time.monotonic) -> int:
    """The layout walk; exit 0 when every zone was confirmed, 1 otherwise."""
    bank = ReaderBank(layout, heartbeat_period)
    bank.start()
    try:
        out.write(f"Layout walk: {len(layout.zones)} zones. Waiting for the readers...\n")
        out.flush()
        deadline = clock() + online_wait
        while clock() < deadline and any(
            state is not ConnectionState.ONLINE for state in bank.states.values()
        ):
            bank.pump(_POLL)
        for reader, state in sorted(bank.states.items()):
            out.write(f"{state_line(reader, state, bank.links[reader].stats)}\n")
        bank.pump(_POLL)  # the inventories asked for on coming online
        walk = LayoutWalk([zone.name for zone in layout.zones],
                          {a: zone.name for a, zone in layout.antenna_map.items()},
                          settle=settle, timeout=timeout)
        for reader, counter in bank.figures.items():
            for figures in counter.snapshot(clock()).antennas:
                walk.observe(reader, figures.port, counter.tags(figures.port), clock())
        summary = _say(out, walk.start(clock()))
        while summary is None:
            antennas, readers = bank.pump(_POLL)
            now = clock()
            for reader in readers:  # a reader going away mid-walk: say so at once
                line = state_line(reader, bank.states[reader], bank.links[reader].stats)
                out.write(f"  ({line})\n")
            outputs: list[WalkOutput] = []
            for reader, port in antennas:
                tags = bank.figures[reader].tags(port)
                outputs += walk.observe(reader, port, tags, now)
            outputs += walk.tick(now)
            summary = _say(out, outputs)
        return EXIT_OK if summary.ok else EXIT_WALK_FAILED
    except KeyboardInterrupt:
        out.write("Walk interrupted.\n")
        return EXIT_WALK_FAILED
    finally:
        bank.stop()


# ------------------------------------------------------------------ command line


def add_readers_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``readers`` subcommand to ``stud-table``."""
    readers = commands.add_parser(
        "readers",
        help="see live what every reader and antenna of a layout reads; walk the layout",
        description="Open every reader of a layout (run it while the daemon is stopped: the"
        " daemon holds the ports) and show, live, each reader's link state, firmware,"
        " heartbeat and frame errors and each antenna's tags, reads per second and dropouts."
        " --walk: put a card on each zone in turn and confirm the layout maps it right"
        " (exit 0 all confirmed, 1 not, 2 bad file).",
    )
    readers.add_argument("--layout", type=Path, default=None,
                         help="layout file (default: the one of --config)")
    readers.add_argument("--config", type=Path, default=None,
                         help="table.toml: its layout and heartbeat_period")
    readers.add_argument("--walk", action="store_true", help="run the layout walk")
    readers.add_argument("--deck", type=Path, nargs="+", default=[], metavar="DECK",
                         help="deck files: their tags are shown by card (default: the"
                         " decks of --config)")
    readers.add_argument("--broker", default=None, metavar="HOST:PORT",
                         help="while the daemon runs: show what it publishes on the table's"
                         " readers/<id> topics instead of opening the readers (counts only)")
    readers.add_argument("--table", default=None,
                         help="with --broker: the table id (default: the one of --config)")
    readers.add_argument("--username", default=None, help="with --broker: broker user name")
    readers.add_argument("--password", default=None,
                         help=f"with --broker: broker password (default: ${PASSWORD_ENV})")
    readers.add_argument("--settle", type=float, default=DEFAULT_SETTLE,
                         help=f"walk: seconds to watch a new card before judging"
                         f" (default {DEFAULT_SETTLE:g})")
    readers.add_argument("--zone-timeout", type=float, default=DEFAULT_TIMEOUT,
                         help=f"walk: seconds to wait for a card on a zone"
                         f" (default {DEFAULT_TIMEOUT:g})")
    readers.add_argument("--online-wait", type=float, default=ONLINE_WAIT,
                         help="walk: seconds to wait for every reader to come online before"
                         f" starting anyway (default {ONLINE_WAIT:g})")
    readers.add_argument("--heartbeat-period", type=float, default=None,
                         help="seconds between reader heartbeats (default: the config's,"
                         f" else {DEFAULT_HEARTBEAT_PERIOD:g})")


def _run_broker_view(args: argparse.Namespace) -> int:
    """``--broker``: the view from the daemon's topics (the daemon holds the ports)."""
    host, _, port_text = args.broker.rpartition(":")
    table = args.table
    try:
        if args.walk:
            raise ValueError("--walk opens the readers itself: stop the daemon, drop --broker")
        if not host or not port_text.isdecimal() or not 0 < int(port_text) < 65536:
            raise ValueError(f"--broker: expected HOST:PORT, not {args.broker!r}")
        if table is None and args.config is not None:
            table = load_config(args.config).table.id
        if table is None:
            raise ValueError("--broker needs --table (or --config)")
        check_level(table, "table id")
    except (ValueError, ConfigError) as exc:  # TopicError is a ValueError
        print(f"stud-table readers: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    configure_logging("console", "error")
    password = args.password if args.password is not None else os.environ.get(PASSWORD_ENV)
    return run_remote_view(host, int(port_text), table, sys.stdout,
                           username=args.username, password=password)


def run_readers(args: argparse.Namespace) -> int:
    """Run ``stud-table readers`` with parsed ``args``."""
    heartbeat = args.heartbeat_period
    if args.broker is not None:
        return _run_broker_view(args)
    try:
        if args.layout is None and args.config is None:
            print("stud-table readers: give --layout or --config", file=sys.stderr)
            return EXIT_BAD_INPUT
        layout_path = args.layout
        deck_paths = list(args.deck)
        if args.config is not None:
            config = load_config(args.config)
            layout_path = layout_path or config.table.layout
            heartbeat = heartbeat or config.table.heartbeat_period
            deck_paths = deck_paths or list(config.table.decks)
        layout = load_layout(layout_path)
        card_of = card_namer(load_decks(deck_paths)) if deck_paths else None
    except ConfigError as exc:
        print(f"stud-table readers: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    for name, value in (("--settle", args.settle), ("--zone-timeout", args.zone_timeout),
                        ("--online-wait", args.online_wait),
                        ("--heartbeat-period", heartbeat or 1.0)):
        if not value > 0:
            print(f"stud-table readers: {name} must be a positive number of seconds",
                  file=sys.stderr)
            return EXIT_BAD_INPUT
    # The view says why a reader is offline on screen; the link's log lines would
    # scroll it away (errors only, on stderr).
    configure_logging("console", "error")
    period = heartbeat or DEFAULT_HEARTBEAT_PERIOD
    if args.walk:
        return run_walk(layout, period, sys.stdout, settle=args.settle,
                        timeout=args.zone_timeout, online_wait=args.online_wait)
    return run_view(layout, period, sys.stdout, card_of=card_of)
