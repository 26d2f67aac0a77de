"""``stud-table emulate``: a layout's readers emulated on ptys, driven by hand or by a script.

Runs one :class:`~firmware_bridge.emulator.ReaderEmulator` per reader of a layout
(through :class:`~table_controller.simulation.emulated_table.EmulatedTable`, as the
demo and the tests do), each behind a stable symlink ``DIR/reader-<id>``, writes
``DIR/layout.toml`` (the layout with every device pointing at its emulator) and
prints how to start the daemon on it. Anyone can then run the daemon, the console
and the pages against a table without hardware.

The table is driven by commands, typed or from ``--script FILE`` (one per line,
``#`` starts a comment)::

    place seat3.up Ah [DECK]     put the card's tag on the zone's first antenna
    remove seat3.up Ah [DECK]    take it off
    tag burn 04A1B2C3D4E5F6      an unregistered tag (e.g. a card of another box)
    untag burn 04A1B2C3D4E5F6
    clear [ZONE]                 take every tag off (the zone's antennas, or all)
    offline 2 / online 2         unplug / replug reader 2 (the host sees EIO, then HELLO)
    silent 2 / awake 2           freeze reader 2's firmware (no frames) / wake it
    wait 1.5                     pause (scripts)
    wait connected               until a host has opened every reader
    show                         what lies on the table
    help, quit

A script is checked whole before anything starts: a bad line is one message
``FILE:LINE: problem`` and exit 2. After the script (and when input closes) the
readers stay up until Ctrl-C or SIGTERM.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Final, TextIO

from firmware_bridge.messages import MessageError
from firmware_bridge.messages import normalize_uid as wire_uid
from firmware_bridge.rf_channel import PROFILES, ChannelError, RFParams, profile
from table_controller.daemon.logging import configure_logging
from table_controller.domain.cards import Card, CardParseError
from table_controller.domain.events import CardPlaced, CardRemoved
from table_controller.domain.zones import Zone, ZoneParseError
from table_controller.simulation.emulated_table import EmulatedTable
from table_controller.table.config_file import ConfigError
from table_controller.table.deck import DeckRegistry, load_decks
from table_controller.table.layout import TableLayout, load_layout

__all__ = ["Command", "EmulateError", "add_emulate_parser", "parse_command", "run_emulate"]

EXAMPLE_DECK: Final = Path(__file__).resolve().parents[2] / "hardware" / "decks" / (
    "example-deck.toml")
"""The made-up deck used when no --deck is given (a checkout's hardware/)."""

EXIT_OK: Final = 0
EXIT_BAD_INPUT: Final = 2

HELP: Final = (
    "commands: place ZONE CARD [DECK], remove ZONE CARD [DECK], tag ZONE UID, untag ZONE UID,"
    " clear [ZONE], offline ID, online ID, silent ID, awake ID, wait SECONDS,"
    " wait connected, show, help, quit"
)

_ARITY: Final = {
    "place": (2, 3), "remove": (2, 3), "tag": (2, 2), "untag": (2, 2), "clear": (0, 1),
    "offline": (1, 1), "online": (1, 1), "silent": (1, 1), "awake": (1, 1), "wait": (1, 1),
    "show": (0, 0), "help": (0, 0), "quit": (0, 0),
}


class EmulateError(ValueError):
    """A command that cannot be run; the message says why (one line)."""


@dataclass(frozen=True, slots=True)
class Command:
    """One parsed command: its verb and checked arguments."""

    verb: str
    zone: Zone | None = None
    card: Card | None = None
    deck: str | None = None
    uid: str | None = None
    reader: int | None = None
    seconds: float | None = None


def parse_command(text: str, layout: TableLayout, decks: Sequence[str]) -> Command | None:
    """Parse one line (None for a blank line or a comment); :class:`EmulateError` if bad."""
    words = text.split("#", 1)[0].split()
    if not words:
        return None
    verb = words[0].lower()
    if verb not in _ARITY:
        raise EmulateError(f"unknown command {words[0]!r}; {HELP}")
    low, high = _ARITY[verb]
    arguments = words[1:]
    if not low <= len(arguments) <= high:
        raise EmulateError(f"{verb}: expected {low if low == high else f'{low} to {high}'}"
                           f" argument(s), got {len(arguments)}")
    if verb in ("place", "remove"):
        deck = arguments[2] if len(arguments) == 3 else None
        if deck is not None and deck not in decks:
            raise EmulateError(f"{verb}: no deck {deck!r} (decks: {', '.join(decks)})")
        return Command(verb, zone=_zone(arguments[0], layout), card=_card(arguments[1]),
                       deck=deck)
    if verb in ("tag", "untag"):
        try:
            uid = wire_uid(arguments[1])
        except MessageError as err:
            raise EmulateError(f"{verb}: {err}") from None
        return Command(verb, zone=_zone(arguments[0], layout), uid=uid)
    if verb == "clear":
        return Command(verb, zone=_zone(arguments[0], layout) if arguments else None)
    if verb in ("offline", "online", "silent", "awake"):
        if not arguments[0].isdecimal() or layout.reader(int(arguments[0])) is None:
            known = ", ".join(str(reader.id) for reader in layout.readers)
            raise EmulateError(f"{verb}: no reader {arguments[0]!r} (readers: {known})")
        return Command(verb, reader=int(arguments[0]))
    if verb == "wait":
        if arguments[0] == "connected":
            return Command(verb)
        try:
            seconds = float(arguments[0])
        except ValueError:
            raise EmulateError(f"wait: expected seconds or 'connected', got"
                               f" {arguments[0]!r}") from None
        if not 0 <= seconds <= 3600:
            raise EmulateError(f"wait: {seconds} s is outside 0..3600")
        return Command(verb, seconds=seconds)
    return Command(verb)


def _zone(text: str, layout: TableLayout) -> Zone:
    try:
        zone = Zone.parse(text)
    except ZoneParseError as err:
        raise EmulateError(str(err)) from None
    if not layout.antennas_of(zone):
        raise EmulateError(f"zone {zone.name} has no antenna in this layout")
    return zone


def _card(text: str) -> Card:
    try:
        return Card.parse(text)
    except CardParseError as err:
        raise EmulateError(str(err)) from None


def parse_script(path: Path, layout: TableLayout, decks: Sequence[str]) -> list[Command]:
    """Every command of the script at ``path``; :class:`EmulateError` ``FILE:LINE: ...``."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise EmulateError(f"{path}: cannot read: {getattr(err, 'strerror', None) or err}"
                           ) from None
    commands: list[Command] = []
    for number, line in enumerate(text.splitlines(), start=1):
        try:
            command = parse_command(line, layout, decks)
        except EmulateError as err:
            raise EmulateError(f"{path}:{number}: {err}") from None
        if command is not None:
            commands.append(command)
    return commands


class Driver:
    """Runs commands on an :class:`EmulatedTable`; returns one line per command."""

    def __init__(self, table: EmulatedTable) -> None:
        self.table = table
        self.quit = threading.Event()

    def run(self, command: Command) -> str:
        """Do ``command``; the line to print."""
        table = self.table
        verb = command.verb
        if verb in ("place", "remove"):
            assert command.zone is not None
            assert command.card is not None
            event_type = CardPlaced if verb == "place" else CardRemoved
            table.apply(event_type(command.zone, command.card, deck=command.deck))
            return f"ok {verb} {command.zone.name} {command.card.code}"
        if verb in ("tag", "untag"):
            assert command.zone is not None
            assert command.uid is not None
            reader_id, port = table.layout.antennas_of(command.zone)[0]
            reader = table.readers[reader_id]
            if verb == "tag":
                reader.place(port, command.uid)
            else:
                reader.remove(port, command.uid)
            return f"ok {verb} {command.zone.name}"
        if verb == "clear":
            removed = 0
            for reader_id, port in self._antennas(command.zone):
                reader = table.readers[reader_id]
                for uid in reader.model.placed(port):
                    reader.remove(port, uid)
                    removed += 1
            return f"ok clear: {removed} tag(s) taken off"
        if verb in ("offline", "online", "silent", "awake"):
            assert command.reader is not None
            reader = table.readers[command.reader]
            if verb == "offline":
                reader.unplug()
            elif verb == "online":
                reader.replug()
            else:
                reader.set_silent(verb == "silent")
            return f"ok reader {command.reader} {verb}"
        if verb == "wait":
            if command.seconds is None:
                while not self.quit.is_set() and not all(
                        reader.commands_received for reader in table.readers.values()):
                    self.quit.wait(0.05)
                return "ok every reader opened by a host"
            self.quit.wait(command.seconds)
            return f"ok waited {command.seconds:g} s"
        if verb == "show":
            return self._show()
        if verb == "quit":
            self.quit.set()
            return "ok quit"
        return HELP

    def _antennas(self, zone: Zone | None) -> Iterable[tuple[int, int]]:
        if zone is not None:
            return self.table.layout.antennas_of(zone)
        return [(reader.id, port) for reader in self.table.layout.readers
                for port in reader.antennas]

    def _show(self) -> str:
        table = self.table
        parts: list[str] = []
        for zone in table.layout.zones:
            names: list[str] = []
            for reader_id, port in table.layout.antennas_of(zone):
                for uid in table.readers[reader_id].model.placed(port):
                    found = table.registry.lookup(uid)
                    names.append(f"{found.card.code}({found.deck})" if found else "unknown-tag")
            if names:
                parts.append(f"{zone.name}: {' '.join(names)}")
        return "; ".join(parts) if parts else "the table is empty"


def add_emulate_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``emulate`` to the ``stud-table`` subcommands."""
    emulate = commands.add_parser(
        "emulate", help="run a layout's readers emulated on ptys, driven by hand or a script",
        description="Emulated readers on ptys with stable names DIR/reader-<id>, a copy of"
        " the layout pointing at them (DIR/layout.toml), and a small command language"
        " (type 'help'). Ctrl-C stops.")
    emulate.add_argument("--layout", type=Path, required=True, help="the table's layout file")
    emulate.add_argument("--dir", type=Path, required=True,
                         help="directory for the reader links and the layout copy")
    emulate.add_argument("--deck", type=Path, action="append", default=None,
                         help="deck file (repeatable; default the example deck 'red')")
    emulate.add_argument("--script", type=Path, default=None, help="commands to run first")
    emulate.add_argument("--scan-period", type=float, default=0.05,
                         help="seconds per scan cycle of the emulated readers (default 0.05)")
    emulate.add_argument("--rf", choices=tuple(PROFILES), default=None, metavar="PROFILE",
                         help="read the tags through a realistic RF channel: "
                         + ", ".join(PROFILES) + " (docs/presence.md; default: every tag"
                         " on an antenna read in every scan)")
    emulate.add_argument("--rf-param", action="append", default=[], metavar="NAME=VALUE",
                         help="override one channel parameter, e.g. muck_depth=0 (repeatable)")
    emulate.add_argument("--rf-seed", type=int, default=0,
                         help="seed of the channel's draws (dead tags, stack losses; default 0)")


def run_emulate(args: argparse.Namespace, stdin: TextIO | None = None,
                out: TextIO | None = None) -> int:
    """Run ``stud-table emulate`` with parsed ``args``; the exit code."""
    source = sys.stdin if stdin is None else stdin
    # The link's own log lines would repeat what the command prints (on stderr, errors only).
    configure_logging("console", "error")
    sink = sys.stdout if out is None else out
    deck_paths: list[Path] = args.deck or [EXAMPLE_DECK]
    try:
        layout = load_layout(args.layout)
        registry: DeckRegistry = load_decks(deck_paths)
        script = ([] if args.script is None
                  else parse_script(args.script, layout, registry.decks))
        if not 0 < args.scan_period <= 5:
            raise EmulateError(f"--scan-period {args.scan_period} is outside (0, 5]")
        rf = _rf_params(args)
    except (ConfigError, EmulateError, ChannelError) as exc:
        print(f"stud-table emulate: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    directory: Path = args.dir.resolve()  # the layout copy names absolute devices
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        print(f"stud-table emulate: cannot create {directory}: {exc.strerror or exc}",
              file=sys.stderr)
        return EXIT_BAD_INPUT
    previous = signal.signal(signal.SIGTERM, _stop_on_sigterm)
    table = EmulatedTable(layout, registry, directory, scan_period=args.scan_period, rf=rf,
                          seed=getattr(args, "rf_seed", 0)).start()
    try:
        layout_copy = table.write_layout(args.layout, directory / "layout.toml")
        _announce(sink, table, layout_copy, deck_paths)
        driver = Driver(table)
        for command in script:
            print(driver.run(command), file=sink, flush=True)
            if driver.quit.is_set():
                return EXIT_OK
        _interactive(driver, layout, registry, source, sink)
    except KeyboardInterrupt:
        print("stopping", file=sink, flush=True)
    finally:
        table.stop()
        signal.signal(signal.SIGTERM, previous)
    return EXIT_OK


def _rf_params(args: argparse.Namespace) -> RFParams | None:
    """``--rf PROFILE`` with its ``--rf-param`` overrides, or None."""
    rf_name = getattr(args, "rf", None)
    overrides = getattr(args, "rf_param", None) or []
    if rf_name is None:
        if overrides:
            raise EmulateError("--rf-param needs --rf PROFILE")
        return None
    return profile(rf_name, overrides)


def _stop_on_sigterm(_signum: int, _frame: FrameType | None) -> None:
    raise KeyboardInterrupt  # the same orderly stop as Ctrl-C


def _announce(out: TextIO, table: EmulatedTable, layout_copy: Path,
              decks: Sequence[Path]) -> None:
    for reader_id, reader in sorted(table.readers.items()):
        print(f"reader {reader_id}: {reader.path} -> {reader.pty_name}", file=out)
    deck_list = ", ".join(f'"{path.resolve()}"' for path in decks)
    print(f"layout: {layout_copy}", file=out)
    print("start the daemon on it: in its table.toml set", file=out)
    print(f'  [table] layout = "{layout_copy.resolve()}"', file=out)
    print(f"          decks = [{deck_list}]", file=out)
    print("then: stud-table run --config table.toml", file=out)
    print("ready (type 'help')", file=out, flush=True)


def _interactive(driver: Driver, layout: TableLayout, registry: DeckRegistry,
                 source: TextIO, out: TextIO) -> None:
    for line in source:
        try:
            command = parse_command(line, layout, registry.decks)
        except EmulateError as err:
            print(f"error: {err}", file=out, flush=True)
            continue
        if command is None:
            continue
        print(driver.run(command), file=out, flush=True)
        if driver.quit.is_set():
            return
    print("input closed: the readers stay up until Ctrl-C", file=out, flush=True)
    while True:  # until SIGINT / SIGTERM
        time.sleep(3600)
